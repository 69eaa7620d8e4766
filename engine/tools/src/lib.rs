//! What the `lanegraph` binary runs besides the demo: the quick bench suites behind `lanegraph
//! bench SUITE --quick --json` ([`bench`]), the stress harness behind `lanegraph stress`
//! ([`stress`]), and the budget controller's deterministic simulator ([`budget_sim`]) that
//! the `budget` suite and the controller's tests run.
//!
//! Owns: the suites and the harness, each figure beside the baseline it is measured against in
//! the same run. Must never: be a dependency of the runtime (a game links `lanegraph` without
//! any of this), or depend on the test and bench crates (the product builds without them; they
//! depend on this).

#![deny(unreachable_pub, missing_docs)]

pub mod bench;
pub mod budget_sim;
pub mod stress;
