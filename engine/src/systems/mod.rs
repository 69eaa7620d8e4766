//! Systems: definitions, registration, per-system timing windows and budget enforcement.
//!
//! Owns: what a system is ([`SystemDef`], [`Budget`], [`SystemId`]), the system table, the timed
//! schedule run (`World::run_systems`), the rolling windows, the budget check and its
//! rate-limited events, and the profiler queries. Must never: let a measurement enter world
//! state or the state hash, allocate or log on the success path, or gate a system's execution
//! on its timing (an over-budget system still runs).
//!
//! The contract, point by point, is in `docs/systems.md`.
//!
//! Import cycle with `world`, kept on purpose: the World owns its system table (a system gets
//! one `&mut World` and reads everything from it, and `World::run_systems` runs the schedule),
//! and systems are closures over that `&mut World`. The game loop left the cycle when the fixed
//! step (`fixed_step`) and the engine's events (`engine_events`) became modules of their own;
//! the World's schedule as a type apart is what would end it.
//!
//! - `def`: definitions, budgets, ids, the run context.
//! - `registry`: registration and validation.
//! - `run`: the timed schedule and the cold breach path.
//! - `window`: the 64-sample rolling window and nearest-rank statistics.
//! - `events`: the event catalogue and the rate limiter.
//! - `stats`: the O(1) stats query and the window query.
//!
//! | file | idea |
//! |------|------|
//! | `def` | What a system is: its definition, its exact budget, its id and the context it runs with |
//! | `order` | System order: before/after constraints on systems and named sets, and the deterministic topological order the schedule runs in |
//! | `registry` | The system table: registration, validation and lookup |
//! | `run` | Running the schedule: per-system timing, the budget check, and the frame boundary |
//! | `run_tests` | Unit tests of the budget check and its events, with a capturing `tracing` subscriber |
//! | `stats` | The profiler feed: per-system timing statistics and windows, as pure queries |
//! | `test_capture` | Test support: capture `tracing` events (level and fields) from a closure |
//! | `window` | The rolling timing window: the last `N` samples of one system, and their statistics |

pub(crate) mod def;
pub(crate) mod order;
pub(crate) mod registry;
pub(crate) mod run;
pub(crate) mod stats;
#[cfg(test)]
pub(crate) mod test_capture;
pub(crate) mod window;

pub(crate) use def::Budget;
pub use def::{
    every, when_changed, when_strategy, BudgetError, BudgetSpec, SystemContext, SystemDef, SystemId,
};
pub use registry::RegisterError;
pub use stats::SystemTimingStats;

/// A run at this many times its budget or more is an error, not just a warning.
pub(crate) const BUDGET_CRITICAL_MULTIPLIER: u64 = 3;
