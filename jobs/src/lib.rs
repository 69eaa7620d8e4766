//! # lanegraph-jobs
//!
//! Pinned lanes and the job graphs that run on them.
//!
//! A [`LanePlan`] names the lanes (physics, render, asset, and any the game adds), their
//! workers and the cores they are pinned to. `Lanes` starts those workers. Work reaches them
//! as prebuilt graphs (built once, validated, run every frame) or as scoped jobs that
//! borrow from the caller's stack. See `docs/jobs.md` for the model and its guarantees.
//!
//! | file | idea |
//! |------|------|
//! | `clock` | The runtime's timestamp source: the cheapest monotonic clock that is correct here |
//! | `deque` | A lane worker's own run queue: a fixed-capacity Chase-Lev work-stealing deque of jobs |
//! | `error` | Errors of the job runtime, one small type per failure |
//! | `graph` | Prebuilt job graphs: a DAG of named nodes, each tied to a lane, built once and run every frame with a shared context |
//! | `job` | A type-erased reference to one unit of work on a lane |
//! | `lanes` | The lane runtime: one set of pinned worker threads per lane, each serving its lane's queue |
//! | `latch` | A counting completion latch: the caller of a graph run, a scope or a parallel-for waits on one until every job it published has finished |
//! | `parallel` | Data-parallel helpers on a lane: a parallel for over an index range, and over disjoint `&mut` chunks of a slice |
//! | `plan` | Lane plans: which lanes exist, how many workers each has, and which core each worker is pinned to |
//! | `queue` | A lane's run queues, and how its workers find work, sleep and wake (its own table) |
//! | `scope` | Scoped jobs: closures that borrow from the caller's stack, spawned onto lanes, each optionally after earlier jobs; the scope returns ... |
//! | `sync` | The one seam between lanegraph-jobs and its concurrency primitives |

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
