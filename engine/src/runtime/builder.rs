//! Building an [`Engine`]: lane plan, fixed step, Vulkan on or off, telemetry, frame target.
//!
//! Owns: [`EngineBuilder`] and [`BuildError`]. Must never: leave half-started lanes or a GPU
//! behind on an error (everything is built in order and dropped on the way out).

use lanegraph_jobs::{LaneOptions, LanePlan, Lanes, PlanError, StartError};

use super::config::{ConfigError, EngineConfig};
use super::engine::Engine;
use crate::budget::config::ConfigError as BudgetConfigError;
use crate::budget::RegisterError as AgentRegisterError;
use crate::game_loop::{InvalidStep, LoopOptionsError};
use crate::world::World;

/// Why an engine could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The lane plan is invalid.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The lanes could not start.
    #[error(transparent)]
    Start(#[from] StartError),
    /// The fixed step is invalid.
    #[error(transparent)]
    Step(#[from] InvalidStep),
    /// The loop options are invalid.
    #[error(transparent)]
    Loop(#[from] LoopOptionsError),
    /// The budget controller refused its configuration.
    #[error(transparent)]
    Budget(#[from] BudgetConfigError),
    /// A built-in agent could not be registered.
    #[error(transparent)]
    Agent(#[from] AgentRegisterError),
}

/// Configures and builds an [`Engine`] (`Engine::builder()`).
#[derive(Debug, Default)]
pub struct EngineBuilder {
    config: EngineConfig,
    plan: Option<LanePlan>,
    world: Option<World>,
    lockstep: bool,
    gpu_validation: bool,
}

impl EngineBuilder {
    /// Starts from `config` (e.g. [`EngineConfig::from_file`]); later calls override it.
    pub fn config(mut self, config: EngineConfig) -> Self {
        self.config = config;
        self
    }

    /// Uses this lane plan instead of the automatic one (custom lanes go here).
    pub fn lane_plan(mut self, plan: LanePlan) -> Self {
        self.plan = Some(plan);
        self
    }

    /// Uses a `name=workers,...` lane spec (checked in `build`).
    pub fn lanes_spec(mut self, spec: &str) -> Self {
        self.config.lanes = Some(spec.to_string());
        self
    }

    /// The default fixed step, Hz.
    pub fn fixed_step_hz(mut self, hz: u32) -> Self {
        self.config.fixed_step_hz = hz;
        self
    }

    /// The frame-time target, frames per second.
    pub fn target_fps(mut self, fps: f64) -> Self {
        self.config.target_fps = fps;
        self
    }

    /// Vulkan on or off (on: used when a driver is present; the engine says when it is not).
    pub fn vulkan(mut self, on: bool) -> Self {
        self.config.vulkan = on;
        self
    }

    /// Vulkan validation layers on (tests and the demo's `--validation`).
    pub fn gpu_validation(mut self, on: bool) -> Self {
        self.gpu_validation = on;
        self
    }

    /// Trace spans on or off, and how many frames of them to keep.
    pub fn telemetry(mut self, spans: bool, trace_frames: usize) -> Self {
        self.config.spans = spans;
        self.config.trace_frames = trace_frames;
        self
    }

    /// Let the budget controller adapt (false: every agent keeps its first strategy).
    pub fn adaptive(mut self, on: bool) -> Self {
        self.config.adaptive = on;
        self
    }

    /// Lockstep time: every frame simulates exactly one fixed step, whatever the wall clock
    /// says (same inputs, same world, on any machine: `--frames` runs of the demo).
    pub fn lockstep(mut self, on: bool) -> Self {
        self.lockstep = on;
        self
    }

    /// Starts from an existing world (components and systems already registered).
    pub fn world(mut self, world: World) -> Self {
        self.world = Some(world);
        self
    }

    /// Validates everything, starts the lanes, brings up the GPU when asked, registers the
    /// built-in agents.
    pub fn build(self) -> Result<Engine, BuildError> {
        self.config.validate()?;
        let plan = match (self.plan, &self.config.lanes) {
            (Some(p), _) => p,
            (None, Some(spec)) => owner_serves_physics(LanePlan::from_spec(
                spec,
                &lanegraph_jobs::plan::machine_cores(),
            )?),
            (None, None) => owner_serves_physics(LanePlan::auto()),
        };
        let lanes = Lanes::start_with(
            plan,
            LaneOptions {
                pin: self.config.pin,
                spin: true,
            },
        )?;
        Engine::assemble(
            self.config,
            lanes,
            self.world.unwrap_or_default(),
            self.lockstep,
            self.gpu_validation,
        )
    }
}

/// The engine's own plans let the owner thread serve the physics lane: physics is fork-join on
/// the owner's critical path, so while the owner waits for a physics step it runs physics chunks
/// beside the lane's workers instead of sleeping. Measured by `bench simd` (`engine_path` against
/// `engine_path ..._owner_waits`): 1.22x -> 0.62-0.74x the bare kernel's time at 1 Mi particles,
/// 7.9x -> 1.1-1.4x at 64 Ki (docs/benchmarks.md). A plan given with [`EngineBuilder::lane_plan`] is
/// used as given.
fn owner_serves_physics(plan: LanePlan) -> LanePlan {
    match plan.lane_id(lanegraph_jobs::plan::names::PHYSICS) {
        Some(_) if plan.owner_lane().is_none() => plan
            .clone()
            .with_owner_lane(lanegraph_jobs::plan::names::PHYSICS)
            .unwrap_or(plan),
        _ => plan,
    }
}
