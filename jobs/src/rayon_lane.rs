//! A background lane as a pinned rayon pool.
//!
//! Owns: building a `rayon::ThreadPool` whose threads are pinned to a lane's cores and run at
//! background priority. Must never: be used from frame-critical lanes: calling into a rayon
//! pool from outside costs a ~8 µs round trip, and rayon's work stealing would let frame work
//! queue behind long background jobs. For the asset lane, where jobs are long and per-job
//! allocation does not matter, rayon's dynamic spawning and parallel iterators serve well.

use crate::plan::{LaneId, LaneKind, LanePlan};

/// Builds a rayon pool with one thread per worker of `lane`, pinned as the plan says, at
/// background priority when the lane is a background lane.
pub fn pinned_pool(
    plan: &LanePlan,
    lane: LaneId,
) -> Result<rayon::ThreadPool, rayon::ThreadPoolBuildError> {
    let spec = plan.lane(lane).cloned();
    let (cores, kind, name) = match spec {
        Some(s) => (s.worker_cores, s.kind, s.name),
        None => (vec![None], LaneKind::Background, "rayon".to_string()),
    };
    let n = cores.len();
    let thread_name = name.clone();
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .thread_name(move |i| format!("lg-{thread_name}-rayon-{i}"))
        .start_handler(move |i| {
            if let Some(Some(core)) = cores.get(i) {
                let _pinned: bool = crate::lanes::pin_current(*core);
            }
            if kind == LaneKind::Background {
                let _lowered: bool = crate::lanes::lower_priority_current();
            }
        })
        .build()
}
