//! Assembling an [`Engine`] from its builder's parts: the lanes and the world it was given,
//! the render and asset lanes, the controller with the built-in agents the game asked for, and
//! the engine's metrics.
//!
//! Owns: `Engine::assemble` and [`BuildError`], what it refuses. Must never: start a frame or read a clock for the simulation.

use super::*;

use crate::game_loop::InvalidStep;
use crate::runtime::config::ConfigError;
use lanegraph_budget::hooks::ControllerDriver;
use lanegraph_budget::RegisterError as AgentRegisterError;
use lanegraph_jobs::{PlanError, StartError};
use lanegraph_telemetry::hooks::TraceHistoryHooks;

/// Why an engine could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The configuration is invalid (also what the game loop or the budget controller refused
    /// of what the engine derived from it, named by the key it came from).
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
    /// A built-in agent's ladder is not one the engine can run.
    #[error(
        "{agent} agent: rung `{rung}`: {why} (fix: give every rung settings in range, best rung \
         first)"
    )]
    Ladder {
        /// `physics`, `render` or `asset`.
        agent: &'static str,
        /// The rung's name (empty: the ladder itself).
        rung: String,
        /// What is wrong.
        why: &'static str,
    },
    /// A built-in agent could not be registered.
    #[error(transparent)]
    Agent(#[from] AgentRegisterError),
}

impl Engine {
    /// Puts an engine together from the builder's parts: lanes (already started), the world,
    /// the loop, the controller and the built-in agents the game asked for, the render and
    /// asset lanes, the metrics. The parts are built in dependency order and a failure at any
    /// step returns through `?`, dropping what was built so far in reverse (the lanes stop,
    /// nothing is half-registered).
    pub(in crate::runtime) fn assemble(
        config: EngineConfig,
        lanes: Lanes,
        world: World,
        lockstep: bool,
        render: Option<RenderSetup>,
        agents: crate::runtime::agents::BuiltinAgents,
        loaders: crate::runtime::loaders::Loaders,
    ) -> Result<Engine, BuildError> {
        clock::init();
        lanes.register_owner();
        telemetry::spans::set_enabled(config.spans);
        telemetry::spans::name_current_thread("owner", telemetry::TrackKind::Owner);
        let step = FixedStep::from_hz(config.fixed_step_hz)?;
        let stepper = Stepper::build(&config, world, lockstep, step)?;
        let (view, pass) = match render {
            Some(r) => (Some(r.source), Some(r.pass)),
            None => (None, None),
        };
        let has_gpu = pass.as_ref().is_some_and(|p| p.device().name.is_some());
        let mut budget = BudgetSide::build(&config, agents, has_gpu, step)?;
        let registry = Registry::default();
        let render = RenderLane::new(
            &lanes,
            lanes.lane(lanegraph_jobs::plan::names::RENDER),
            pass,
            budget.builtins.render_settings(&budget.controller),
            registry.clone(),
            config.gpu_churn_alert_per_second,
        );
        // The render pass's GPU memory readings reach the controller as its GPU memory signal.
        budget.controller.set_gpu_memory_provider(Box::new(
            crate::runtime::gpu_memory::GpuMemoryProvider(render.gpu_memory_pressure()),
        ));
        let assets = AssetStream::new(
            &lanes,
            lanes.lane(lanegraph_jobs::plan::names::ASSET),
            lanes.lane(lanegraph_jobs::plan::names::RENDER),
            render.texture_sink(),
            loaders,
        );
        let meter = Meter::build(&config, &lanes, registry)?;
        let physics_lane = lanes.lane(lanegraph_jobs::plan::names::PHYSICS);
        log_start(&lanes, config.fixed_step_hz, has_gpu);
        let mut engine = Engine {
            config,
            frame: 0,
            stepper,
            budget,
            render: RenderSide {
                view,
                last_view: None,
                lane: render,
            },
            assets: AssetSide {
                stream: assets,
                completions: Vec::new(),
                loaded: std::collections::VecDeque::new(),
                failures: Vec::new(),
            },
            meter,
            tape: Tape::default(),
            physics_lane,
            lanes: Arc::new(lanes),
        };
        // The world's parallel queries run where physics does.
        if let Some(lane) = engine.physics_lane {
            let lanes = Arc::clone(&engine.lanes);
            engine
                .stepper
                .game
                .world_mut()
                .set_parallel_lane(&lanes, lane);
        }
        Ok(engine)
    }
}

/// Says the engine started: its lanes, its step rate and whether a GPU came up.
fn log_start(lanes: &Lanes, fixed_step_hz: u32, gpu: bool) {
    tracing::info!(
        target: "lanegraph",
        lanes = %lanes.plan().lanes().iter().map(|l| format!("{}={}", l.name, l.worker_cores.len())).collect::<Vec<_>>().join(","),
        fixed_step_hz,
        gpu,
        "engine started"
    );
}

/// A config value the loop or the controller refused, named by the config key it came from (a
/// validated config passes both; they hold the line for a caller that built it by hand).
fn refused(key: &str, e: &dyn std::fmt::Display, fix: &str) -> ConfigError {
    ConfigError::at_key(key, e.to_string(), fix)
}

impl Stepper {
    /// The game loop over `world` at `step`, on the lockstep clock or the real one.
    fn build(
        config: &EngineConfig,
        world: World,
        lockstep: bool,
        step: FixedStep,
    ) -> Result<Stepper, BuildError> {
        let manual = lockstep.then(ManualClock::new);
        let clk = match &manual {
            Some(m) => EngineClock::Lockstep(m.clone()),
            None => EngineClock::Real(MonotonicClock),
        };
        let mut world = world;
        world.set_system_spans(config.system_spans);
        let game = GameLoop::with_clock(
            world,
            clk,
            LoopOptions {
                default_step: step,
                ..LoopOptions::default()
            },
        )
        .map_err(|e| refused("engine.fixed_step_hz", &e, "a step rate of 1 to 1000 Hz"))?;
        Ok(Stepper {
            game,
            lockstep: manual,
            lockstep_base: (0, 0, step),
            configured: step,
            physics: None,
            sync_test: config
                .sync_test
                .map(|n| (crate::world::SyncTest::new(n), None)),
        })
    }
}

impl BudgetSide {
    /// The controller at the config's target, with the built-in agents the game installed
    /// registered (the physics ladder's divisors checked against `step`).
    fn build(
        config: &EngineConfig,
        agents: crate::runtime::agents::BuiltinAgents,
        has_gpu: bool,
        step: FixedStep,
    ) -> Result<BudgetSide, BuildError> {
        let mut controller = Controller::new(ControllerConfig {
            frame_budget_ms: 1000.0 / config.target_fps,
            ..ControllerConfig::default()
        })
        .map_err(|e| refused("engine.target_fps", &e, "a target of 4 to 1000 fps"))?;
        let physics_agent = agents.physics.map(PhysicsAgent::new);
        let render_agent = agents.render.map(|l| RenderAgent::new(has_gpu, l));
        let asset_agent = agents.asset.map(AssetAgent::new);
        let builtins = Builtins {
            physics: physics_agent
                .as_ref()
                .map(|a| {
                    crate::runtime::agents::check_step_divisors(step, a)?;
                    controller.register(Box::new(a.clone()))
                })
                .transpose()?,
            render: render_agent
                .as_ref()
                .map(|a| controller.register(Box::new(a.clone())))
                .transpose()?,
            asset: asset_agent
                .as_ref()
                .map(|a| controller.register(Box::new(a.clone())))
                .transpose()?,
            physics_agent,
            render_agent,
            asset_agent,
        };
        if !config.adaptive {
            controller.set_mode(AdaptationMode::Manual);
        }
        Ok(BudgetSide {
            controller,
            builtins,
            custom: Vec::new(),
            readings: None,
            reported: Vec::new(),
            samples: Vec::new(),
            last_render_sample: 0,
            last_gpu_frame: 0,
            render_on_gpu: has_gpu,
        })
    }
}

impl Meter {
    /// The engine's metrics in `registry`, the lane meter for the plan's lanes, the trace
    /// history and the run record, sized by the config.
    fn build(
        config: &EngineConfig,
        lanes: &Lanes,
        registry: Registry,
    ) -> Result<Meter, BuildError> {
        let metrics = Metrics::new(&registry, lanes).map_err(|e| {
            BuildError::Config(ConfigError::at_key(
                "(metrics)",
                e.to_string(),
                "rename the lane so its metric names are valid",
            ))
        })?;
        let plan = lanes.plan().lanes();
        let n = plan.len();
        Ok(Meter {
            registry,
            metrics,
            history: TraceHistory::new(config.trace_frames),
            #[cfg(feature = "puffin")]
            puffin: None,
            record: RunRecorder::new(config.record_frames),
            recording: true,
            system_series: Vec::new(),
            agent_series: Vec::new(),
            lane: LaneMeter {
                ids: plan.iter().map(|l| lanes.lane(&l.name)).collect(),
                workers: plan
                    .iter()
                    .map(|l| l.worker_cores.len().max(1) as f64)
                    .collect(),
                busy_now: vec![0.0; n],
                busy_prev: vec![0; n],
                jobs_prev: vec![0; n],
                panics_prev: vec![0; n],
            },
        })
    }
}
