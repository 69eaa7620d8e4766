//! The integration suite of lanegraph-simd: every kernel test in one binary (one link instead of
//! one per file). `scripts/simd-levels` runs it at each build level.

mod common;

mod aos;
mod dispatch;
mod elementwise;
mod grid;
mod proptests;
mod reductions;
mod table_jobs;
