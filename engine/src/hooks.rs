//! The one named home for what the runtime's own tools, tests and benches call and a game does
//! not: fault injection for the stress harness, the untimed scheduler baseline, the budget
//! controller's per-frame tick, replay and simulator, and telemetry's span-store plumbing.
//!
//! Owns: nothing of its own (each item is defined where it works and only gathered here).
//! Must never: be needed for a game to run, appear in the prelude, or be named by the docs a
//! game reads except to say what lives here. Nothing here carries a stability promise.

pub use crate::runtime::hooks::inject_asset_panics;
pub use crate::systems::hooks::run_systems_untimed;
/// The budget crate whole (`lanegraph-budget`), internals included: `FrameInput`,
/// `StepReport`, `sim`, the cost model.
pub use lanegraph_budget as budget;
/// The controller's calls for an engine, a replay tool or a test.
pub use lanegraph_budget::hooks::ControllerDriver;
/// The telemetry crate whole (`lanegraph-telemetry`), span-store plumbing included.
pub use lanegraph_telemetry as telemetry;
