//! Building an [`Engine`]: lane plan, fixed step, telemetry, frame target, the game's render
//! view and pass.
//!
//! Owns: [`EngineBuilder`] and `Engine::builder()`. Must never: leave half-started lanes behind on an
//! error (everything is built in order and dropped on the way out).

use super::agents::BuiltinAgents;
use lanegraph_jobs::{LaneOptions, LanePlan, Lanes};

use super::config::EngineConfig;
use super::engine::Engine;
use super::loaders::{AssetLoader, Loaders};
use super::render::{RenderPass, TypedPass};
use super::view::ViewCache;
use crate::world::{DomainSet, World};

pub use super::engine::BuildError;

/// Configures and builds an [`Engine`] (`Engine::builder()`).
#[derive(Debug, Default)]
pub struct EngineBuilder {
    config: EngineConfig,
    plan: Option<LanePlan>,
    world: Option<World>,
    lockstep: bool,
    render: Option<RenderSetup>,
    loaders: Loaders,
    agents: BuiltinAgents,
}

use super::view::RenderSetup;

impl Engine {
    /// A builder with the default configuration (automatic lanes, 60 Hz step, 60 fps target,
    /// Vulkan when available, spans on).
    pub fn builder() -> EngineBuilder {
        EngineBuilder::default()
    }
}

impl EngineBuilder {
    /// Starts from `config` (e.g. `EngineConfig::from_file`, feature `toml-config`); later calls override it.
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

    /// What the render lane draws: each frame the engine derives the game's view `V` from the
    /// world with `derive` (only when one of `domains` changed since the last derivation: see
    /// [`ViewCache`]) and publishes it to the render lane, where `pass` draws it while the owner
    /// simulates the next frame. Without this call the render lane draws nothing.
    ///
    /// The render agent's cost is the GPU frame when `pass` reports a device
    /// ([`RenderPass::device`]), else the render job's CPU time.
    pub fn render<V, P>(
        mut self,
        domains: DomainSet,
        derive: impl FnMut(&World, &mut V) + Send + 'static,
        pass: P,
    ) -> Self
    where
        V: Default + Send + Sync + 'static,
        P: RenderPass<V>,
    {
        self.render = Some(RenderSetup {
            source: Box::new(ViewCache::<V>::new(domains, Box::new(derive))),
            pass: Box::new(TypedPass::new(pass)),
        });
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

    /// Installs the built-in budget agents the game wants adapted, each on the game's ladder
    /// ([`BuiltinAgents`]; none by default). A game's own agents are added with
    /// [`Engine::add_agent`].
    pub fn builtin_agents(mut self, agents: BuiltinAgents) -> Self {
        self.agents = agents;
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

    /// Decodes files with extension `extension` (without the dot, any case) with `loader` on
    /// the asset lane, replacing any loader before it (with feature `png`, the provided `PngLoader` is
    /// registered for `png`).
    pub fn asset_loader(mut self, extension: &str, loader: impl AssetLoader) -> Self {
        self.loaders.register(extension, loader);
        self
    }

    /// Validates everything, starts the lanes, registers the built-in agents asked for.
    pub fn build(self) -> Result<Engine, BuildError> {
        self.config.validate()?;
        self.agents.validate()?;
        let limits = self.config.asset_limits;
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
            self.render,
            self.agents,
            {
                let mut loaders = self.loaders;
                loaders.limits = limits;
                // The provided PNG loader, unless the game registered its own for `png`.
                #[cfg(feature = "png")]
                if !loaders.handles("png") {
                    loaders.register("png", super::png_loader::PngLoader);
                }
                loaders
            },
        )
    }
}

/// The engine's own plans let the owner thread serve the physics lane: physics is fork-join on
/// the owner's critical path, so while the owner waits for a physics step it runs physics chunks
/// beside the lane's workers instead of sleeping. Measured by `bench simd` (`engine_path` against
/// `engine_path ..._owner_waits`; the figures are in docs/benchmarks.md). A plan given with
/// [`EngineBuilder::lane_plan`] is used as given.
fn owner_serves_physics(plan: LanePlan) -> LanePlan {
    match plan.lane_id(lanegraph_jobs::plan::names::PHYSICS) {
        Some(_) if plan.owner_lane().is_none() => plan
            .clone()
            .with_owner_lane(lanegraph_jobs::plan::names::PHYSICS)
            .unwrap_or(plan),
        _ => plan,
    }
}
