//! Where the game loop reads time from: the real clock, or a manual one tests drive exactly.
//!
//! Owns: the [`FrameClock`] trait, [`MonotonicClock`] and [`ManualClock`]. Must never: go
//! backwards (a clock that does is treated as a zero delta, never as negative time).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use lanegraph_jobs::clock;

/// A monotonic nanosecond clock the loop reads once per frame.
pub trait FrameClock {
    /// Nanoseconds since an arbitrary, fixed origin; never decreasing.
    fn now_ns(&mut self) -> u64;
}

/// The real clock: `lanegraph_jobs::clock` (calibrated invariant TSC, or `Instant`).
#[derive(Debug, Clone, Copy, Default)]
pub struct MonotonicClock;

impl FrameClock for MonotonicClock {
    #[inline]
    fn now_ns(&mut self) -> u64 {
        clock::now().as_ns()
    }
}

/// A clock that moves only when told to: tests and replays drive frame times exactly.
///
/// Clones share one time (an `Arc<AtomicU64>`), so a test keeps a handle while the loop owns
/// another. Relaxed ordering suffices: the value is the only shared datum and both handles are
/// used from one thread in practice; across threads it is still a single atomic value.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    ns: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves time forward by `d`.
    pub fn advance(&self, d: Duration) {
        self.advance_ns(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    }

    /// Moves time forward by `ns` nanoseconds (saturating).
    pub fn advance_ns(&self, ns: u64) {
        let now = self.ns.load(Ordering::Relaxed);
        self.ns.store(now.saturating_add(ns), Ordering::Relaxed);
    }

    /// Sets the time to `ns`; a value earlier than now is ignored (the clock is monotonic).
    pub fn set_ns(&self, ns: u64) {
        self.ns.fetch_max(ns, Ordering::Relaxed);
    }

    /// The current time.
    pub fn get_ns(&self) -> u64 {
        self.ns.load(Ordering::Relaxed)
    }
}

impl FrameClock for ManualClock {
    fn now_ns(&mut self) -> u64 {
        self.get_ns()
    }
}
