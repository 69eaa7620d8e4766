//! The benchmark suites of lanegraph: the quick suites behind `lanegraph bench SUITE --quick
//! --json` ([`quick`]) and the shared helpers of the criterion benches in `benches/benches/`.
//!
//! Owns: every benchmark, each figure beside the baseline it is measured against in the same run.
//! Must never: be a dependency of the runtime (a game links `lanegraph` without any of this).

pub mod quick;
