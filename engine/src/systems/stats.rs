//! The profiler feed: per-system timing statistics and windows, as pure queries.
//!
//! Owns: [`SystemTimingStats`] and the `World` queries over the timing records and the event
//! counters. Must never: allocate, log, or change anything (an invalid id is an error, silently).

use super::def::SystemId;
use super::window::{ns_to_ms, RollingWindow, SYSTEM_TIMING_WINDOW_SAMPLES};
use crate::engine_events::{EngineEvent, EventCounts};
use crate::world::World;
use crate::world::WorldError;

/// One system's timing counters since the world was made (a `Copy` snapshot).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SystemTimingStats {
    /// Runs measured.
    pub runs: u64,
    /// The last run's measured time in nanoseconds (0 before the first run; 0 is also a
    /// legitimate reading of a run shorter than the clock's resolution).
    pub last_ns: u64,
    /// `last_ns` in milliseconds.
    pub last_ms: f64,
    /// Runs strictly over budget (every one, whether its event was emitted or suppressed).
    pub warns: u64,
    /// Runs at 3x budget or more (every one).
    pub errors: u64,
    /// The declared budget, whole nanoseconds (exact: a budget declared in ms is rounded to
    /// the nanosecond once, at registration).
    pub budget_ns: u64,
    /// The latest workload size (declared, or reported by the system).
    pub workload: Option<u64>,
}

impl World {
    /// The timing counters of `id`. O(1), no allocation, no side effects; an invalid id is an
    /// error and logs nothing.
    pub fn system_timing_stats(&self, id: SystemId) -> Result<SystemTimingStats, WorldError> {
        let r = self.system_record(id)?;
        Ok(SystemTimingStats {
            runs: r.runs,
            last_ns: r.last_ns,
            last_ms: ns_to_ms(r.last_ns),
            warns: r.warns,
            errors: r.errors,
            budget_ns: r.budget.as_nanos(),
            workload: r.workload,
        })
    }

    /// The body of [`WorldHooks::system_timing_window`](crate::hooks::WorldHooks::system_timing_window), which documents it.
    pub(crate) fn system_timing_window(
        &self,
        id: SystemId,
    ) -> Result<&RollingWindow<SYSTEM_TIMING_WINDOW_SAMPLES>, WorldError> {
        Ok(&self.system_record(id)?.window)
    }

    /// The body of [`WorldHooks::event_counts`](crate::hooks::WorldHooks::event_counts), which documents it.
    pub(crate) fn event_counts(&self, kind: EngineEvent) -> EventCounts {
        self.events.counts(kind)
    }
}
