//! The backend's own memory ledger: every allocation and free through it, live bytes and churn
//! per allocation name (one per device; the memory monitor reads it).
//!
//! Owns: [`MemoryLedger`]. Must never: depend on the device (the device holds it).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Most distinct allocation names tracked for churn (the backend and a game use a few dozen).
pub const MAX_TRACKED_NAMES: usize = 256;

/// What every allocation and free through the backend adds to (one per device).
#[derive(Debug, Default)]
pub struct MemoryLedger {
    pub(crate) live_bytes: AtomicU64,
    pub(crate) live_allocations: AtomicU64,
    pub(crate) allocations: AtomicU64,
    pub(crate) frees: AtomicU64,
    /// Per allocation name, allocations + frees (cold path: resource creation and drop).
    pub(crate) by_name: Mutex<Vec<(&'static str, u64)>>,
}

impl MemoryLedger {
    pub(crate) fn allocated(&self, name: &'static str, bytes: u64) {
        self.live_bytes.fetch_add(bytes, Ordering::Relaxed);
        self.live_allocations.fetch_add(1, Ordering::Relaxed);
        self.allocations.fetch_add(1, Ordering::Relaxed);
        self.count(name);
    }

    pub(crate) fn freed(&self, name: &'static str, bytes: u64) {
        self.live_bytes.fetch_sub(bytes, Ordering::Relaxed);
        self.live_allocations.fetch_sub(1, Ordering::Relaxed);
        self.frees.fetch_add(1, Ordering::Relaxed);
        self.count(name);
    }

    fn count(&self, name: &'static str) {
        let mut t = self.by_name.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, c)) = t.iter_mut().find(|(n, _)| *n == name) {
            *c += 1;
        } else if t.len() < MAX_TRACKED_NAMES {
            t.push((name, 1));
        }
    }
}
