//! What the runtime crate (`lanegraph`) calls into telemetry for, beyond what a game uses: the
//! system scheduler records the spans it timed itself through [`Here`], and names them with
//! [`intern_name`].
//!
//! Owns: nothing of its own (thin handles on the span store). Must never: be needed by a game
//! (`span`, `span_n`, `span!` and `record_span` are the game's way to record spans).

use lanegraph_jobs::clock::Stamp;

use crate::spans::ring::Ring;
use crate::spans::{is_enabled, store, TrackId, NO_WORKLOAD};

/// The calling thread's ring and track while recording is on: for a loop that records spans
/// it timed itself (the scheduler's system runs), looked up once per loop, not per span.
#[derive(Clone, Copy)]
pub struct Here(&'static Ring, TrackId);

impl Here {
    /// `None` while recording is off.
    #[inline]
    pub fn now() -> Option<Here> {
        if !is_enabled() {
            return None;
        }
        store::current_ring().map(|r| Here(r, store::home_track(r)))
    }

    /// Pushes a span timed by the caller onto this thread's track.
    #[inline(always)]
    pub fn record(self, name: &'static str, start: Stamp, end: Stamp) {
        self.0.push(name, self.1, start, end, NO_WORKLOAD);
    }
}

/// A `&'static str` equal to `name`: span names are static, and a run-time name (a system's)
/// is interned once per distinct name (a bounded set: names a game registers, not data).
pub fn intern_name(name: &str) -> &'static str {
    type Names = std::sync::Mutex<std::collections::HashSet<&'static str>>;
    static NAMES: std::sync::OnceLock<Names> = std::sync::OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(&n) = names.get(name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(n);
    n
}
