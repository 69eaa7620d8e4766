//! # lanegraph
//!
//! An engine runtime for native games. One owner thread keeps the simulation [`world`] on a fixed
//! timestep ([`game_loop`]); pinned lanes run job graphs on their own cores ([`jobs`], re-exported
//! from `lanegraph-jobs`); every system, lane, job and GPU pass is timed ([`systems`],
//! [`telemetry`]) and fed to the [`budget`] controller, which picks strategies so the frame holds
//! its target. The [`runtime`] ties them together: [`Engine::frame`] is one frame.
//!
//! This crate is the runtime only. The `lanegraph` binary (the demo game, the report, the bench
//! and stress commands) lives in `engine/app` and `engine/demo` and uses nothing but this API.
//!
//! | module | what it owns |
//! |---|---|
//! | [`runtime`] | [`Engine`]: one frame end to end, its builder and config, the render and asset lanes' plumbing, the run record and summary |
//! | [`world`] | entities, components (AoS or field-SoA), domains and epochs, the state hash |
//! | [`systems`] | system definitions, the schedule, per-system budgets and timing |
//! | [`game_loop`] | the fixed step, the accumulator, clocks |
//! | [`input`] | the window's events as the per-frame queue systems read, recorded for replays |
//! | [`budget`] | agents, strategies, cost models and the budget controller (`lanegraph-budget`) |
//! | [`telemetry`] | metrics, spans, the tracking allocator and the export formats (`lanegraph-telemetry`) |
//! | [`jobs`] | lanes, lane plans, job graphs, scopes (`lanegraph-jobs`) |
//! | [`simd`] | aligned field-SoA columns and `f32x8` kernels (`lanegraph-simd`) |
//! | `vk` | the Vulkan backend (`lanegraph-vk`, feature `vulkan`) |
//! | `window` | a winit window, its event loop and input (feature `window`) |
//!
//! Start with `docs/concepts.md`.

// Everything public is reachable and documented; what a game does not call is `pub(crate)`.
#![deny(unreachable_pub, missing_docs)]

mod engine_events;
mod files;
mod fixed_step;
pub mod game_loop;
pub mod input;
pub mod runtime;
pub mod systems;
#[cfg(feature = "window")]
pub mod window;
pub mod world;

// The derives name the runtime as `::lanegraph`, which this crate's own tests must resolve too.
extern crate self as lanegraph;

pub mod hooks;
pub use lanegraph_jobs as jobs;

/// The adaptive budget controller (`lanegraph-budget`) as a game sees it: agents, strategies,
/// cost quotes, the providers a game installs, and the controller an [`Engine`] feeds every
/// frame, with its decision log. The per-frame tick, replay and the simulator are the
/// runtime's ([`hooks::budget`]).
pub mod budget {
    pub use lanegraph_budget::providers::{BatteryState, MemoryState, Readings, ThermalState};
    pub use lanegraph_budget::{
        AdaptationMode, Agent, AgentId, Controller, CostLaw, InputError, PinError, Pool, Quote,
        RegisterError, Strategy, StrategyIndex, GPU_READ_LAG_FRAMES,
    };
}

/// Telemetry (`lanegraph-telemetry`) as a game uses it: spans, metrics and their registry, the
/// tracking allocator, and the export formats and servers. The span store's plumbing is the
/// runtime's ([`hooks::telemetry`]).
pub mod telemetry {
    #[cfg(feature = "metrics-facade")]
    pub use lanegraph_telemetry::MetricsRecorder;
    #[cfg(feature = "tracing-layer")]
    pub use lanegraph_telemetry::SpanLayer;
    pub use lanegraph_telemetry::{
        memory_stats, Buckets, Counter, EndpointError, Gauge, GpuFrame, GpuPass, Histogram,
        MemoryStats, MetricKind, RegisterError, Registry, SpanGuard, TrackingAllocator, Unit,
    };
    #[cfg(feature = "metrics-http")]
    pub use lanegraph_telemetry::{EndpointOptions, MetricsEndpoint};
}
/// `span!("name")` / `span!("name", n)`: a trace span named by a literal, checked at compile time,
/// recorded on the calling thread's track until the returned guard drops (`docs/telemetry.md`).
pub use lanegraph_telemetry::span;

/// Aligned field-SoA columns and `f32x8` kernels (`lanegraph-simd`), plus
/// `#[derive(SoaComponent)]`.
pub mod simd {
    /// `#[derive(SoaComponent)]`: one column per named `f32` field, in declaration order.
    pub use lanegraph_derive::SoaComponent;
    #[doc(inline)]
    pub use lanegraph_simd::*;
}
#[cfg(feature = "vulkan")]
pub use lanegraph_vk as vk;

pub use runtime::{Engine, EngineBuilder, EngineConfig, FrameError, FrameOutcome};

/// What a game uses every day, in one import: `use lanegraph::prelude::*;`.
///
/// ```
/// use lanegraph::prelude::*;
///
/// #[derive(Clone, Copy, Component, StateHash)]
/// #[component(domains(TRANSFORM))]
/// struct Pos(f32);
///
/// let mut engine = Engine::builder().lockstep(true).build()?;
/// let w = engine.world_mut();
/// let e = w.spawn();
/// w.insert(e, Pos(0.0))?;
/// w.register_system(SystemDef::new("drift", 1.0, move |w: &mut World, ctx| {
///     if w.input().is_down(KeyCode::Space) {
///         ctx.commands().despawn(e);
///     }
/// }))?;
/// engine.frame()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub mod prelude {
    pub use crate::input::{InputEvent, KeyCode, MouseButton};
    pub use crate::runtime::{AgentCost, BuiltinAgents, DecisionEntry, Engine, RunLog, RunSummary};
    pub use crate::systems::{every, when_changed, when_strategy, SystemContext, SystemDef};
    pub use crate::world::{
        Bundle, Changed, Commands, Component, Components, Domain, Entity, Event, EventCursor,
        Query, Resource, StateHash, With, Without, World,
    };
    pub use lanegraph_budget::{Agent, AgentId, CostLaw, Pool, Quote, Strategy, StrategyIndex};
}
