//! The `gpu` bench suite (see `docs/benchmarks.md`).
//!
//! Owns: the quick form of this suite's benchmarks. Must never: assert on timing.

use super::{BenchError, BenchOptions, Figure};

/// Runs the suite.
pub fn run(_opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    Err(BenchError::Unavailable {
        suite: "gpu",
        why: "this suite is not built yet".into(),
        fix: "see the open issue for the gpu suite".into(),
    })
}
