//! The one named home for what the runtime's own tools, tests and benches call and a game does
//! not: the standalone fixed-step loop (`GameLoop`, its clocks and accumulator), the World's
//! scheduler plumbing and its older column and pair/triple queries ([`WorldHooks`]), the
//! Engine's internal counters ([`EngineHooks`]), the run record's and summary's detail that the
//! report and the app's CI gate read ([`RunRecorderHooks`], [`RunSummaryHooks`]), the budget
//! controller's per-frame tick, replay, configuration, decision log and simulator
//! ([`ControllerDriver`], [`CostLawHooks`], [`budget`]), telemetry's span-store and exporter
//! plumbing ([`telemetry`] and its `*Hooks` traits), fault injection for the stress harness and
//! the untimed scheduler baseline; the metadata `#[derive(Component)]` and `#[derive(Resource)]`
//! write for the runtime ([`ComponentMeta`], [`ResourceMeta`]) and the parts of handles a game
//! treats as opaque ([`EntityHooks`], [`AgentIdHooks`], [`SnapshotHooks`]).
//!
//! A method here is still its type's own (`pub(crate)` there); the trait only names it outside
//! the crate, so a caller adds one `use` (`use lanegraph::hooks::WorldHooks;`).
//!
//! Owns: nothing of its own (each item is defined where it works and only gathered here).
//! Must never: be needed for a game to run (the one exception: a component or resource written
//! by hand instead of derived implements `ComponentMeta`/`ResourceMeta`), appear in the
//! prelude, or be named by the docs a game reads except to say what lives here. Nothing here
//! carries a stability promise.
//!
//! | file | idea |
//! |------|------|
//! | `engine_hooks` | `EngineHooks`: the Engine's methods that only the runtime's app, tools and tests call, and fault injection for the stress harness ... |
//! | `world_hooks` | `WorldHooks`: the World's methods that only the runtime, its tools and its tests call, and the untimed scheduler baseline ... |

/// The budget crate whole (`lanegraph-budget`), internals included: `FrameInput`,
/// `StepReport`, `sim`, the cost model.
pub use lanegraph_budget as budget;
/// The controller's calls for an engine, a replay tool or a test.
pub use lanegraph_budget::hooks::{AgentIdHooks, ControllerDriver, CostLawHooks};
/// The telemetry crate whole (`lanegraph-telemetry`), span-store plumbing included.
pub use lanegraph_telemetry as telemetry;
#[cfg(feature = "metrics-http")]
pub use lanegraph_telemetry::hooks::EndpointHooks;
#[cfg(feature = "metrics-facade")]
pub use lanegraph_telemetry::hooks::MetricsRecorderHooks;
#[cfg(feature = "puffin")]
pub use lanegraph_telemetry::hooks::PuffinHooks;
/// The telemetry types' calls for the engine, the exporters and tests.
pub use lanegraph_telemetry::hooks::{
    AllocatorHooks, BucketsHooks, HandleHooks, HistogramHooks, RegistryHooks, TraceHistoryHooks,
};

/// What `#[derive(Component)]` and `#[derive(Resource)]` write and the runtime reads (name,
/// domains, snapshot and savegame hooks): a hand-written component or resource implements it.
pub use crate::world::component::ComponentMeta;
pub use crate::world::resource::ResourceMeta;

pub use crate::world::access::{ColumnAccess, ColumnLayout};
pub use crate::world::epoch::{Epochs, WorldId, MAX_DOMAINS};
pub use crate::world::query::data::MAX_QUERY_COMPONENTS;
pub use crate::world::query::parallel::{MAX_CHUNKS, MIN_CHUNK_ROWS};
pub use crate::world::query::PAR_CHUNK_MIN_NS;
pub use crate::world::resource_set::ResourceParam;
#[cfg(feature = "savegame")]
pub use crate::world::savegame::SAVE_FORMAT;
pub use crate::world::soa::SoaMut;

pub use crate::engine_events::{EngineEvent, EventCounts, Severity};
pub use crate::systems::def::{Budget, RunCondition, SystemFn};
pub use crate::systems::registry::MAX_SYSTEMS;
pub use crate::systems::window::{RollingWindow, WindowStats, SYSTEM_TIMING_WINDOW_SAMPLES};

pub use crate::runtime::adaptation::{adaptation_of, AdaptationEntry, AgentAdaptation};
pub use crate::runtime::engine::PhysicsFn;
pub use crate::runtime::gpu_memory::{CHURN_ALERT_EVERY, DEFAULT_CHURN_ALERT_PER_SECOND};
/// The provided PNG loader (registered for `.png` by every engine with feature `png`) and its
/// decoder, for decoding outside the asset lane.
#[cfg(feature = "png")]
pub use crate::runtime::png_loader::{decode_png, PngLoader};
pub use crate::runtime::record::{FrameRow, RunRecorder, RunRecorderHooks, SystemRecord};
pub use crate::runtime::render::{RenderPulse, MAX_RENDER_ERRORS};
pub use crate::runtime::summary::{
    gpu_memory_of, layout_rows, AssetEntry, BudgetBreach, GpuEntry, GpuHeapEntry, GpuMemoryEntry,
    LaneEntry, LayoutRow, PresentEntry, RunDetail, RunSummaryHooks, SystemEntry,
};
pub use crate::runtime::view::{DeriveView, ViewCache, ViewCacheStats, VIEW_BUFFERS};

pub use crate::game_loop::accumulator::{
    Accumulator, StepPlan, MAX_FRAME_DELTA, MAX_STEPS_PER_FRAME,
};
pub use crate::game_loop::clock::{FrameClock, ManualClock, MonotonicClock};

/// `base` made `divisor` times longer, exactly: how the engine turns the finest step divisor in
/// force (`budget::finest_step_divisor`) into the step (the simulator and tools that drive a
/// `GameLoop` themselves do the same). Over 10 s is refused.
pub fn divided_step(
    base: crate::game_loop::FixedStep,
    divisor: std::num::NonZeroU32,
) -> Result<crate::game_loop::FixedStep, crate::game_loop::InvalidStep> {
    base.divided(divisor)
}
pub use crate::game_loop::runner::{
    FrameReport, GameLoop, LoopOptions, LoopOptionsError, LoopTotals, StepInfo,
};

pub(crate) mod engine_hooks;
pub(crate) mod world_hooks;

#[cfg(feature = "testing")]
pub use engine_hooks::inject_asset_panics;
pub use engine_hooks::EngineHooks;
pub use world_hooks::{
    run_systems_untimed, EntityHooks, QueryHooks, SnapshotHooks, SystemIdHooks, WorldHooks,
};
