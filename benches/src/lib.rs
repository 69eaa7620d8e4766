//! The criterion benches of lanegraph (`benches/benches/`), each against the obvious alternative.
//! The quick suites behind `lanegraph bench SUITE --quick --json` live in `lanegraph-tools`
//! (`engine/tools/src/bench`) and are re-exported here as [`quick`] for the criterion benches.
//!
//! Owns: the criterion benches. Must never: be a dependency of the runtime or of the
//! `lanegraph` binary.

#![deny(unreachable_pub, missing_docs)]

pub use lanegraph_tools::bench as quick;
