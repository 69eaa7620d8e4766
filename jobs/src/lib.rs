//! # lanegraph-jobs
//!
//! Pinned lanes and the job graphs that run on them.
//!
//! A [`LanePlan`] names the lanes (physics, render, asset, and any the game adds), their
//! workers and the cores they are pinned to. `Lanes` starts those workers. Work reaches them
//! as prebuilt graphs (built once, validated, run every frame) or as scoped jobs that
//! borrow from the caller's stack. See `docs/jobs.md` for the model and its guarantees.

// Opted back in from the workspace's `unsafe_code = "deny"`: scoped jobs erase the lifetime of
// borrowed closures (the scope outlives every job, proven by its latch), and the clock reads the TSC.
// Every block carries a `// SAFETY:` checklist.
#![allow(unsafe_code)]
// Every `pub` item is reachable from the crate root, one of the surface limits
// `scripts/surface` checks: what a user cannot name is `pub(crate)`.
#![deny(unreachable_pub, missing_docs)]

pub mod clock;
mod deque;
pub mod error;
pub mod graph;
mod job;
pub mod lanes;
mod latch;
pub mod parallel;
pub mod plan;
mod queue;
pub mod scope;
mod sync;

pub use error::{JobPanicked, UnknownLane};
pub use graph::{Graph, GraphBuilder, GraphError, NodeCtx, NodeId, NodeTiming};
pub use job::{thread_index, WorkerInfo};
pub use lanes::{LaneOptions, LaneStats, Lanes, PinOutcome, RepeatableJob, StartError, MAX_TICK};
pub use parallel::ParallelError;
pub use plan::{
    max_workers_per_lane, CoreIndex, LaneId, LaneKind, LanePlan, LaneSpec, PlanError,
    MAX_LANE_NAME, MAX_WORKERS_PER_LANE,
};
pub use scope::{JobHandle, Scope, SpawnError};
