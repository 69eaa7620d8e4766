//! lanegraph's cross-crate tests: the integration suite (`tests/it`, one test binary) and the
//! stress harness behind `lanegraph stress` ([`stress`]).
//!
//! Owns: tests that need more than one crate, and the tools they share. Must never: be a
//! dependency of the runtime.

pub mod stress;
