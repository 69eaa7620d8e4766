//! The integration suite of lanegraph-jobs in one binary (one link instead of one per file).
//! Two tests stay their own binaries: `zero_alloc` installs a process-wide counting allocator
//! (nothing may run beside it), and `loom_lanes` builds only under `--cfg loom`.

#[path = "../common.rs"]
mod common;

mod graph;
mod lanes;
mod random_dags;
mod scope_parallel;
