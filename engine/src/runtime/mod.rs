//! The engine runtime end to end: what a game links and calls once per frame.
//!
//! Owns: [`Engine`] and its builder, the configuration (also from TOML), the built-in agents'
//! building blocks (fixed-step physics, render scale, asset throughput, each on a ladder the
//! game installs), the run log and its replay, the RenderView and its epoch cache, the render lane's mailbox, the
//! asset stream and the bounded run record every engine keeps. Must never: hold game
//! logic (the demo, in its own crate `lanegraph-demo`, is a game like any other), keep
//! per-frame figures beyond the run record's bounded ring, or let timing enter world state.
//!
//! | file | idea |
//! |------|------|
//! | `builder` | `Engine::builder()`: lanes, step, telemetry, target, the game's render pass |
//! | `config` | the settings and their validation, errors naming key and line |
//! | `config_file` | the settings from a TOML file (feature `toml-config`) |
//! | `engine` | the `Engine` and one frame |
//! | `view` | the game's view and its epoch cache |
//! | `render` | the render lane: mailbox, the render job, GPU timings |
//! | `render_pass` | what the game's [`RenderPass`] implements and reports |
//! | `render_trace` | the render lane's spans: presents and GPU passes on the engine's clock |
//! | `gpu_memory` | the GPU memory monitor's runtime side: metrics, a churn alert, a pressure signal for the budget |
//! | `assets` | the asset stream: decode on the asset lane, completions to the owner |
//! | `loaders` | asset loaders per file extension, the limits |
//! | `png_loader` | the provided PNG loader and encoder (feature `png`) |
//! | `agents` | the built-in agents' building blocks: settings, rungs, ladder-driven agents |
//! | `record` | the bounded run record: each frame's figures, lent to it by reference |
//! | `adaptation` | the run's adaptation in figures: overrun probes, flips after settling, hitches after a change |
//! | `summary` | the run summary built from the engine and its run record |
//! | `verdict` | the one-sentence verdict on the frame target |
//! | `run_log` | the run log: decisions and inputs, what a replay reads |
//!
//! # A minimal game
//! A few systems, one custom agent, one custom lane; it runs three frames.
//!
//! ```
//! use lanegraph::budget::{Agent, Quote, Strategy, StrategyIndex};
//! use lanegraph::runtime::{AgentCost, Engine};
//! use lanegraph::jobs::LanePlan;
//! use lanegraph::systems::SystemDef;
//! use lanegraph::world::{Domain, Resource, StateHash, World};
//!
//! // Game state every system can reach: a resource (hashed, replayed, epoch-tracked).
//! #[derive(Debug, PartialEq, Resource, StateHash)]
//! #[resource(domains(GAMEPLAY))]
//! struct Thoughts(u64);
//!
//! // A custom agent: how many AI agents think each step.
//! struct Thinkers;
//! impl Agent for Thinkers {
//!     fn name(&self) -> &str { "ai" }
//!     fn strategies(&self) -> Vec<Strategy> {
//!         vec![
//!             Strategy::new("all", 2, Quote::constant(0.2)),
//!             Strategy::new("half", 1, Quote::constant(0.1)),
//!         ]
//!     }
//! }
//!
//! // The built-in lanes plus the game's own `ai` lane.
//! let plan = LanePlan::from_spec("physics=1,render=1,asset=1,ai=1", &[0])?;
//! let mut engine = Engine::builder()
//!     .lane_plan(plan)
//!     .lockstep(true)
//!     .build()?;
//!
//! let world = engine.world_mut();
//! world.insert_resource(Thoughts(0))?;
//! world.register_system(SystemDef::new("input", 0.5, |_, _| {}))?;
//! let think = world.register_system(SystemDef::new("think", 1.0, |w: &mut World, ctx| {
//!     if let Ok(t) = w.resource_mut::<Thoughts>() {
//!         t.0 += 1;
//!     }
//!     ctx.report_workload(64);
//! }))?;
//! let ai = engine.add_agent(Box::new(Thinkers), AgentCost::System(think))?;
//!
//! // The physics hook fans out to the game's `ai` lane too.
//! let ai_lane = engine.lanes().lane("ai").expect("declared in the plan");
//! engine.set_physics(move |_world, step| {
//!     step.lanes.parallel_for(ai_lane, 0..64, 16, |_, _| {}).expect("no panics");
//! });
//!
//! for _ in 0..3 {
//!     engine.frame()?;
//! }
//! assert_eq!(engine.world().resource::<Thoughts>()?, &Thoughts(3)); // one step per frame
//! assert!(engine.strategy(ai).is_some());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod adaptation;
pub(crate) mod agents;
pub(crate) mod assets;
pub(crate) mod builder;
pub(crate) mod config;
#[cfg(feature = "toml-config")]
mod config_file;
pub(crate) mod engine;
pub(crate) mod gpu_memory;
pub(crate) mod loaders;
#[cfg(feature = "png")]
pub(crate) mod png_loader;
pub(crate) mod record;
pub(crate) mod render;
pub(crate) mod render_pass;
pub(crate) mod render_trace;
pub(crate) mod run_log;
pub(crate) mod summary;
pub(crate) mod verdict;

pub(crate) mod view;

pub use agents::{AssetSettings, BuiltinAgents, PhysicsSettings, RenderSettings, Rung};
pub use assets::{AssetError, AssetTotals};

pub use builder::{BuildError, EngineBuilder};
pub use config::{ConfigError, EngineConfig};
pub use engine::{AgentCost, Engine, FrameError, FrameOutcome, PhysicsStep, ReplayError};
pub use gpu_memory::{ChurnFigures, GpuHeap, GpuMemoryFigures};
pub use lanegraph_telemetry::{GpuFrame, GpuPass};
pub use loaders::{Asset, AssetLimits, AssetLoader, DecodedImage};
#[cfg(feature = "png")]
pub use png_loader::encode_png;
pub use render::{DrawOutput, PresentFigures, RenderDevice, RenderPass, RenderStats};
pub use summary::{DecisionEntry, FrameMs, RunLog, RunSummary};
