//! The [`Engine`]: one frame of the runtime, as `docs/concepts.md` tells it.
//!
//! Owns: the running lanes, the game loop and its world, the budget controller with the
//! built-in and custom agents, the render lane, the asset stream, the metrics registry, the
//! trace history and the run record. Must never: let a timing enter world state (the physics
//! hook, systems and gameplay only see the fixed step), or block on the render or asset lanes
//! inside a frame.
//!
//! # One frame (`frame()`, owner thread)
//! 1. Asset completions: at most the asset strategy's jobs per frame are drained; decoded images
//!    go to the render lane for upload; new requests are issued to the asset lane.
//! 2. Fixed steps: the accumulator says how many; per step the systems run (timed), then the
//!    physics hook (the physics graph: fork-join on the physics lane).
//! 3. The RenderView is published to the render lane's mailbox, re-derived only when the epochs
//!    of the domains it reads moved (cache hits counted); the lane draws it while the owner
//!    simulates the next frame.
//! 4. Telemetry: spans collected into the trace history, metrics updated, and the frame's
//!    figures lent to every installed [`FrameObserver`] (the app's run record is one).
//! 5. The budget controller ticks on the frame's measurements. Its decisions, a manual pin
//!    made between frames, and replayed decisions all take effect at the next frame's start,
//!    through one path (`apply_strategies`): the installed built-in agents' settings (physics:
//!    fixed step and detail pass; render: resolution and instance cap; asset: jobs per frame)
//!    and every agent's choice where systems read it (`World::agent_strategy`). Then the lanes
//!    rest until the next frame's first push (`Lanes::rest`).

use std::sync::Arc;

use lanegraph_jobs::{clock, LaneId, Lanes};

use super::agents::{
    AssetAgent, AssetSettings, PhysicsAgent, PhysicsSettings, RenderAgent, RenderSettings,
};
use super::assets::{AssetCompletion, AssetStream};
use super::builder::RenderSetup;
use super::builder::{BuildError, EngineBuilder};
use super::config::EngineConfig;
use super::loaders::Asset;
use super::observer::{FrameFigures, FrameObserver, HeldObserver, ObserverId};
use super::render::{Published, RenderDevice, RenderLane};
use super::summary::{DecisionEntry, RunLog};
use super::view::{ViewCacheStats, ViewSource};
use crate::budget::{
    AdaptationMode, Agent, AgentId, AgentSample, Controller, ControllerConfig, FrameInput,
    GpuTiming, InputError, PinError, RegisterError, StepReport, StrategyIndex, GPU_READ_LAG_FRAMES,
};
use crate::game_loop::{FixedStep, FrameClock, GameLoop, LoopOptions, ManualClock, MonotonicClock};
use crate::input::{InputEvent, RecordedInput, MAX_LOGGED_INPUTS};
use crate::systems::SystemId;
use crate::telemetry::{self, Buckets, Counter, Gauge, Histogram, Registry, TraceHistory, Unit};
use crate::world::World;

/// The physics hook: runs once per fixed step after the systems, on the owner thread, and
/// fans its work out to the physics lane through [`PhysicsStep::lanes`].
pub type PhysicsFn = Box<dyn FnMut(&mut World, &PhysicsStep<'_>) + Send>;

/// What the physics hook gets besides the world.
#[derive(Debug, Clone, Copy)]
pub struct PhysicsStep<'a> {
    /// The running lanes (for `scope`, `parallel_for`, graphs).
    pub lanes: &'a Lanes,
    /// The physics lane, when the plan has one.
    pub lane: Option<LaneId>,
    /// The fixed step, seconds.
    pub dt: f32,
    /// The world's tick after this step's systems.
    pub tick: u64,
    /// What the physics strategy in force asks for.
    pub settings: PhysicsSettings,
}

/// How a custom agent's cost reaches the controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentCost {
    /// The agent's cost is this system's run time each frame (its workload is the system's).
    System(SystemId),
    /// The game reports it with [`Engine::report_cost`].
    Reported,
}

/// What a replay refused ([`Engine::replay_run`], [`Engine::replay`],
/// [`Engine::replay_inputs`]): nothing of a refused log is applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// An entry comes before the one listed ahead of it.
    #[error("replay: a {what} for frame {frame} follows one for frame {after} (fix: pass the log in the order the run log gives it)")]
    OutOfOrder {
        /// `decision` or `input`.
        what: &'static str,
        /// The out-of-order entry's frame.
        frame: u64,
        /// The frame of the entry listed before it.
        after: u64,
    },
    /// An entry would take effect in a frame the engine has already run. A decision made at
    /// frame `N` takes effect at frame `N + 1`; an input at its own frame.
    #[error("replay: a {what} recorded at frame {frame} takes effect at frame {effective}, but the engine has already run {now} frames (fix: start the replay on a fresh engine, before its first frame)")]
    AlreadyRun {
        /// `decision` or `input`.
        what: &'static str,
        /// The entry's recorded frame.
        frame: u64,
        /// The frame it would take effect in.
        effective: u64,
        /// Frames run.
        now: u64,
    },
    /// An input for frame 0: frames are numbered from 1, so no frame can deliver it.
    #[error("replay: an input is recorded for frame 0, which no run has (frames are numbered from 1) (fix: pass an input log an engine wrote: `input_log`, or summary.json `inputs`)")]
    FrameZeroInput,
    /// A decision names an agent this engine does not have.
    #[error("replay: no agent named `{0}` (fix: replay a run log made by this game, with the same agents installed)")]
    UnknownAgent(String),
    /// A decision names a strategy its agent does not have.
    #[error("replay: agent `{agent}` has no strategy `{strategy}` (fix: one of {known})")]
    UnknownStrategy {
        /// The agent.
        agent: String,
        /// The name asked for.
        strategy: String,
        /// The names it has.
        known: String,
    },
}

/// `OutOfOrder` at the first entry (`what`: `decision` or `input`) whose frame is before the
/// one listed ahead of it: decisions and inputs are checked the same way.
fn in_frame_order(
    what: &'static str,
    frames: impl Iterator<Item = u64>,
) -> Result<(), ReplayError> {
    let mut prev: Option<u64> = None;
    for frame in frames {
        if let Some(after) = prev.filter(|&p| frame < p) {
            return Err(ReplayError::OutOfOrder { what, frame, after });
        }
        prev = Some(frame);
    }
    Ok(())
}

/// What one frame did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameOutcome {
    /// Frame number (1-based).
    pub frame: u64,
    /// Owner-thread wall time, ms.
    pub frame_ms: f64,
    /// Fixed steps run.
    pub steps: u32,
    /// Steps dropped by the cap.
    pub dropped_steps: u64,
    /// Strategy switches the controller made this frame.
    pub decisions: usize,
}

/// A frame failed.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The controller refused the frame's measurements (a bug in a cost report).
    #[error(transparent)]
    Budget(#[from] InputError),
}

/// The clock the loop reads: real, or lockstep (one step per frame).
#[derive(Debug, Clone)]
pub(super) enum EngineClock {
    Real(MonotonicClock),
    Lockstep(ManualClock),
}

impl FrameClock for EngineClock {
    fn now_ns(&mut self) -> u64 {
        match self {
            EngineClock::Real(c) => c.now_ns(),
            EngineClock::Lockstep(c) => c.get_ns(),
        }
    }
}

struct Metrics {
    frame_time: Histogram,
    completed: Counter,
    steps: Counter,
    dropped: Counter,
    target: Gauge,
    over_target: Counter,
    multiplier: Gauge,
    switches: Counter,
    asset_loaded: Counter,
    asset_failed: Counter,
    asset_pending: Gauge,
    gpu_frame: Gauge,
    alpha: Gauge,
    lane_busy: Vec<Gauge>,
    lane_jobs: Vec<Counter>,
    lane_queued: Vec<Gauge>,
    lane_panics: Vec<Counter>,
}

impl Metrics {
    fn new(r: &Registry, lanes: &Lanes) -> Result<Metrics, telemetry::RegisterError> {
        let _ = telemetry::register_memory_metrics(r);
        let _ = telemetry::spans::register_metrics(r);
        let (mut lane_busy, mut lane_jobs) = (Vec::new(), Vec::new());
        let (mut lane_queued, mut lane_panics) = (Vec::new(), Vec::new());
        for l in lanes.plan().lanes() {
            // One family per quantity, the lane a label (OpenMetrics: `..{lane="physics"}`).
            let lane: &[(&str, &str)] = &[("lane", &l.name)];
            lane_busy.push(r.register_gauge_with(
                "lane.busy",
                lane,
                Unit::Ratio,
                "Share of the last frame the lane's workers were busy.",
            )?);
            lane_jobs.push(r.register_counter_with(
                "lane.jobs",
                lane,
                Unit::None,
                "Jobs the lane's workers popped.",
            )?);
            lane_queued.push(r.register_gauge_with(
                "lane.queue_depth",
                lane,
                Unit::None,
                "Jobs waiting on the lane at the frame's end.",
            )?);
            lane_panics.push(r.register_counter_with(
                "lane.panics",
                lane,
                Unit::None,
                "Detached jobs on the lane that panicked (the lane lives on).",
            )?);
        }
        Ok(Metrics {
            frame_time: r.register_histogram(
                "frame.time",
                Unit::Seconds,
                "Wall time of one frame on the owner thread.",
                Buckets::frame_time_seconds(),
            )?,
            completed: r.register_counter("frame.completed", Unit::None, "Frames completed.")?,
            steps: r.register_counter(
                "frame.sim_steps",
                Unit::None,
                "Fixed simulation steps taken.",
            )?,
            dropped: r.register_counter(
                "frame.steps_dropped",
                Unit::None,
                "Fixed steps dropped by the 5-step cap (slow motion).",
            )?,
            target: r.register_gauge(
                "frame.target",
                Unit::Seconds,
                "The budget controller's current frame-time target.",
            )?,
            over_target: r.register_counter(
                "frame.over_target",
                Unit::None,
                "Frames whose wall time exceeded the target.",
            )?,
            multiplier: r.register_gauge(
                "budget.multiplier",
                Unit::Ratio,
                "The PID's global budget multiplier.",
            )?,
            switches: r.register_counter(
                "budget.switches",
                Unit::None,
                "Strategy switches, each logged with its reason.",
            )?,
            asset_loaded: r.register_counter(
                "asset.loaded",
                Unit::None,
                "Assets loaded and applied.",
            )?,
            asset_failed: r.register_counter(
                "asset.failed",
                Unit::None,
                "Asset requests that ended in an error.",
            )?,
            asset_pending: r.register_gauge(
                "asset.pending",
                Unit::None,
                "Asset requests in flight.",
            )?,
            gpu_frame: r.register_gauge(
                "gpu.frame.time",
                Unit::Seconds,
                "GPU time of the whole frame (EMA-smoothed).",
            )?,
            alpha: r.register_gauge(
                "frame.interpolation_alpha",
                Unit::Ratio,
                "Leftover of the fixed-step accumulator, 0..1.",
            )?,
            lane_busy,
            lane_jobs,
            lane_queued,
            lane_panics,
        })
    }
}

/// Frames between copies of the systems' counters into their metrics.
pub(crate) const SYSTEM_METRICS_EVERY: u64 = 30;

/// One system's labelled series (`system="<name>"`).
struct SystemSeries {
    runs: Counter,
    over: Counter,
    last: Gauge,
    runs_seen: u64,
    over_seen: u64,
}

impl SystemSeries {
    fn register(r: &Registry, name: &str) -> Result<SystemSeries, telemetry::RegisterError> {
        let label: &[(&str, &str)] = &[("system", name)];
        Ok(SystemSeries {
            runs: r.register_counter_with(
                "system.runs",
                label,
                Unit::None,
                "Runs of the system.",
            )?,
            over: r.register_counter_with(
                "system.over_budget",
                label,
                Unit::None,
                "Runs strictly above the system's budget.",
            )?,
            last: r.register_gauge_with(
                "system.last_time",
                label,
                Unit::Seconds,
                "The system's last run time.",
            )?,
            runs_seen: 0,
            over_seen: 0,
        })
    }
}

/// Asset failure messages kept for the report; later failures are counted, not kept.
pub(crate) const MAX_ASSET_FAILURES: usize = 64;

/// The built-in agents the game installed ([`super::BuiltinAgents`]); `None`: not installed,
/// and the runtime runs that work at its first (full) strategy, never changing it.
struct Builtins {
    physics: Option<AgentId>,
    render: Option<AgentId>,
    asset: Option<AgentId>,
    /// The installed agents' ladders, read back for the settings of the strategy in force
    /// (not installed: `PhysicsSettings::FULL`, `RenderSettings::FULL`,
    /// `AssetSettings::DEFAULT`).
    physics_agent: Option<PhysicsAgent>,
    render_agent: Option<RenderAgent>,
    asset_agent: Option<AssetAgent>,
}

impl Builtins {
    fn physics_settings(&self, c: &Controller, base_hz: u32) -> PhysicsSettings {
        match (self.physics, &self.physics_agent) {
            (Some(id), Some(a)) => a.settings(c.current(id).unwrap_or_default()),
            _ => PhysicsSettings {
                step_hz: base_hz,
                ..PhysicsSettings::FULL
            },
        }
    }

    fn render_settings(&self, c: &Controller) -> RenderSettings {
        match (self.render, &self.render_agent) {
            (Some(id), Some(a)) => a.settings(c.current(id).unwrap_or_default()),
            _ => RenderSettings::FULL,
        }
    }

    fn asset_settings(&self, c: &Controller) -> AssetSettings {
        match (self.asset, &self.asset_agent) {
            (Some(id), Some(a)) => a.settings(c.current(id).unwrap_or_default()),
            _ => AssetSettings::DEFAULT,
        }
    }
}

/// The engine runtime (see the module docs for one frame). Build it with [`Engine::builder`].
pub struct Engine {
    config: EngineConfig,
    game: GameLoop<EngineClock>,
    lockstep: Option<ManualClock>,
    /// Lockstep: the frame and clock reading at which the step in force was adopted.
    lockstep_base: (u64, u64, FixedStep),
    /// Recorded strategy decisions to apply instead of the live controller's, in frame order.
    replay: Option<std::collections::VecDeque<DecisionEntry>>,
    controller: Controller,
    builtins: Builtins,
    custom: Vec<(AgentId, AgentCost)>,
    reported: Vec<AgentSample>,
    samples: Vec<AgentSample>,
    physics: Option<PhysicsFn>,
    /// The SyncTest mode ([`Engine::set_sync_test`]): written by the game between frames, run
    /// by `frame` around each fixed step; the first desync it found.
    sync_test: Option<(crate::world::SyncTest, Option<crate::world::SyncTestError>)>,
    view: Option<Box<dyn ViewSource>>,
    last_view: Option<Published>,
    render: RenderLane,
    last_render_sample: u64,
    last_gpu_frame: u64,
    /// The render agent is on the GPU pool (a device came up).
    render_on_gpu: bool,
    assets: AssetStream,
    completions: Vec<AssetCompletion>,
    /// Decoded data assets waiting for the game ([`Engine::take_loaded`]).
    loaded: std::collections::VecDeque<(std::path::PathBuf, Arc<dyn std::any::Any + Send + Sync>)>,
    /// The first [`MAX_ASSET_FAILURES`] failures' messages (the count is in the asset totals).
    asset_failures: Vec<String>,
    registry: Registry,
    metrics: Metrics,
    history: TraceHistory,
    /// The live view, when started ([`Engine::serve_puffin`]).
    #[cfg(feature = "puffin")]
    puffin: Option<telemetry::PuffinServer>,
    observers: Vec<Box<dyn HeldObserver>>,
    /// Each plan lane's id, in plan order (looked up once, not per frame).
    lane_ids: Vec<Option<LaneId>>,
    /// Each plan lane's worker count.
    lane_workers: Vec<f64>,
    /// The last frame's busy share per lane (lent to observers).
    lane_busy_now: Vec<f64>,
    lane_busy_prev: Vec<u64>,
    lane_jobs_prev: Vec<u64>,
    lane_panics_prev: Vec<u64>,
    /// Per system (schedule order), its labelled series; `None` when the registry refused the
    /// system's name as a label value (over 256 bytes).
    system_series: Vec<Option<SystemSeries>>,
    /// Per agent (id order), its `budget.strategy{agent}` gauge (`None`: name refused).
    agent_series: Vec<Option<Gauge>>,
    frame: u64,
    /// Input pushed since the last frame began ([`Engine::push_input`]).
    pending_input: Vec<InputEvent>,
    /// Every event handed to the world, with its frame (at most [`MAX_LOGGED_INPUTS`]).
    input_log: Vec<RecordedInput>,
    /// Events not logged because the log was full.
    input_log_dropped: u64,
    /// Recorded input to hand over instead of live input, in frame order.
    input_replay: Option<std::collections::VecDeque<RecordedInput>>,
    /// Live events ignored because a replay was running.
    live_input_ignored: u64,
    physics_lane: Option<LaneId>,
    /// Declared last so it drops last: every detached job (render, asset) finishes before the
    /// workers are joined, and nothing above outlives the lanes it borrows.
    /// Shared with the asset pipeline's detached job, which runs the load graph through it
    /// (see `assets`: the job never holds the last handle at shutdown).
    lanes: Arc<Lanes>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("frame", &self.frame)
            .field("lanes", &self.lanes)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// A builder with the default configuration (automatic lanes, 60 Hz step, 60 fps target,
    /// Vulkan when available, spans on).
    pub fn builder() -> EngineBuilder {
        EngineBuilder::default()
    }

    pub(super) fn assemble(
        config: EngineConfig,
        lanes: Lanes,
        world: World,
        lockstep: bool,
        render: Option<RenderSetup>,
        agents: super::agents::BuiltinAgents,
        loaders: super::loaders::Loaders,
    ) -> Result<Engine, BuildError> {
        clock::init();
        lanes.register_owner();
        telemetry::spans::set_enabled(config.spans);
        telemetry::spans::name_current_thread("owner", telemetry::TrackKind::Owner);
        let step = FixedStep::from_hz(config.fixed_step_hz)?;
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
        )?;
        let mut controller = Controller::new(ControllerConfig {
            frame_budget_ms: 1000.0 / config.target_fps,
            ..ControllerConfig::default()
        })?;
        let (view, pass) = match render {
            Some(r) => (Some(r.source), Some(r.pass)),
            None => (None, None),
        };
        let has_gpu = pass.as_ref().is_some_and(|p| p.device().name.is_some());
        let config_hz = config.fixed_step_hz;
        let physics_agent = agents
            .physics
            .map(|l| PhysicsAgent::new(config.fixed_step_hz, l));
        let render_agent = agents.render.map(|l| RenderAgent::new(has_gpu, l));
        let asset_agent = agents.asset.map(AssetAgent::new);
        let builtins = Builtins {
            physics: physics_agent
                .as_ref()
                .map(|a| controller.register(Box::new(a.clone())))
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
        let registry = Registry::new();
        let render = RenderLane::new(
            &lanes,
            lanes.lane(lanegraph_jobs::plan::names::RENDER),
            pass,
            builtins.render_settings(&controller),
            registry.clone(),
            config.gpu_churn_alert_per_second,
        );
        // The render pass's GPU memory readings reach the controller as its GPU memory signal.
        controller.set_providers(crate::budget::Providers {
            gpu_memory: Some(Box::new(super::gpu_memory::GpuMemoryProvider(
                render.gpu_memory_pressure(),
            ))),
            ..Default::default()
        });
        let assets = AssetStream::new(
            &lanes,
            lanes.lane(lanegraph_jobs::plan::names::ASSET),
            lanes.lane(lanegraph_jobs::plan::names::RENDER),
            render.texture_sink(),
            loaders,
        );
        let metrics = Metrics::new(&registry, &lanes).map_err(|e| {
            BuildError::Config(super::config::ConfigError {
                file: None,
                key: "(metrics)".into(),
                line: None,
                message: e.to_string(),
                fix: "rename the lane so its metric names are valid".into(),
            })
        })?;
        let n = lanes.plan().lanes().len();
        let lane_ids = lanes
            .plan()
            .lanes()
            .iter()
            .map(|l| lanes.lane(&l.name))
            .collect();
        let lane_workers = lanes
            .plan()
            .lanes()
            .iter()
            .map(|l| l.worker_cores.len().max(1) as f64)
            .collect();
        let physics_lane = lanes.lane(lanegraph_jobs::plan::names::PHYSICS);
        let mut engine = Engine {
            history: TraceHistory::new(config.trace_frames),
            #[cfg(feature = "puffin")]
            puffin: None,
            config,
            game,
            lockstep: manual,
            lockstep_base: (0, 0, step),
            replay: None,
            controller,
            builtins,
            custom: Vec::new(),
            reported: Vec::new(),
            samples: Vec::new(),
            physics: None,
            sync_test: None,
            view,
            last_view: None,
            render,
            last_render_sample: 0,
            last_gpu_frame: 0,
            render_on_gpu: has_gpu,
            assets,
            completions: Vec::new(),
            loaded: std::collections::VecDeque::new(),
            asset_failures: Vec::new(),
            registry,
            metrics,
            observers: Vec::new(),
            lane_ids,
            lane_workers,
            lane_busy_now: vec![0.0; n],
            lane_busy_prev: vec![0; n],
            lane_jobs_prev: vec![0; n],
            lane_panics_prev: vec![0; n],
            system_series: Vec::new(),
            agent_series: Vec::new(),
            frame: 0,
            pending_input: Vec::new(),
            input_log: Vec::new(),
            input_log_dropped: 0,
            input_replay: None,
            live_input_ignored: 0,
            physics_lane,
            lanes: Arc::new(lanes),
        };
        tracing::info!(
            target: "lanegraph",
            lanes = %engine.lanes.plan().lanes().iter().map(|l| format!("{}={}", l.name, l.worker_cores.len())).collect::<Vec<_>>().join(","),
            fixed_step_hz = config_hz,
            gpu = has_gpu,
            "engine started"
        );
        // The world's parallel queries run where physics does.
        if let Some(lane) = engine.physics_lane {
            let lanes = Arc::clone(&engine.lanes);
            engine.game.world_mut().set_parallel_lane(&lanes, lane);
        }
        Ok(engine)
    }

    // ---- setup ----------------------------------------------------------------------------

    /// The world (register components and systems here, between frames).
    pub fn world(&self) -> &World {
        self.game.world()
    }

    /// The world, mutably (between frames).
    pub fn world_mut(&mut self) -> &mut World {
        self.game.world_mut()
    }

    /// Runs every fixed step under a SyncTest re-simulating the last `check_distance` steps
    /// (systems and the physics hook) from snapshots and comparing checksums after every
    /// system and after the hook; `None` turns it off. A debugging mode: each step then costs
    /// `check_distance + 1` steps and the checksums. The first desync is kept
    /// ([`sync_test_desync`](Self::sync_test_desync)) and logged once (`LG-SYNC-DESYNC`).
    pub fn set_sync_test(&mut self, check_distance: Option<usize>) {
        self.sync_test = check_distance.map(|n| (crate::world::SyncTest::new(n), None));
    }

    /// The first desync the SyncTest mode found, naming the step, the system (or the physics
    /// hook: [`AFTER_SYSTEMS`](crate::world::AFTER_SYSTEMS)) and the components.
    pub fn sync_test_desync(&self) -> Option<&crate::world::SyncTestError> {
        self.sync_test
            .as_ref()
            .and_then(|(_, found)| found.as_ref())
    }

    /// Captures the world and the fixed-step accumulator's leftover (see
    /// [`GameLoop::snapshot_into`]), between frames.
    pub fn snapshot_into(
        &self,
        snapshot: &mut crate::world::Snapshot,
    ) -> Result<(), crate::world::SnapshotError> {
        self.game.snapshot_into(snapshot)
    }

    /// Puts back a capture of [`snapshot_into`](Self::snapshot_into) (see
    /// [`GameLoop::restore`]), between frames.
    pub fn restore(
        &mut self,
        snapshot: &crate::world::Snapshot,
    ) -> Result<(), crate::world::SnapshotError> {
        self.game.restore(snapshot)
    }

    /// The running lanes (custom lanes: `engine.lanes().lane("ai")`).
    pub fn lanes(&self) -> &Lanes {
        &self.lanes
    }

    /// The configuration in force.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Sets the physics hook (step 2 of a frame).
    pub fn set_physics(&mut self, f: impl FnMut(&mut World, &PhysicsStep<'_>) + Send + 'static) {
        self.physics = Some(Box::new(f));
    }

    /// Installs a frame observer: from the next frame on, it sees every frame's figures (see
    /// [`FrameObserver`]). Read it back with [`Engine::observer`].
    pub fn observe<O: FrameObserver>(&mut self, observer: O) -> ObserverId<O> {
        self.observers.push(Box::new(observer));
        ObserverId {
            index: self.observers.len() - 1,
            _type: std::marker::PhantomData,
        }
    }

    /// An installed observer, as its own type.
    pub fn observer<O: FrameObserver>(&self, id: ObserverId<O>) -> &O {
        self.observers[id.index]
            .as_any()
            .downcast_ref()
            .expect("an ObserverId names the observer it was made for")
    }

    /// An installed observer, mutably (e.g. to reset it between levels).
    pub fn observer_mut<O: FrameObserver>(&mut self, id: ObserverId<O>) -> &mut O {
        self.observers[id.index]
            .as_any_mut()
            .downcast_mut()
            .expect("an ObserverId names the observer it was made for")
    }

    /// Registers a game's own agent; `cost` says where its measured cost comes from.
    pub fn add_agent(
        &mut self,
        agent: Box<dyn Agent>,
        cost: AgentCost,
    ) -> Result<AgentId, RegisterError> {
        let id = self.controller.register(agent)?;
        self.custom.push((id, cost));
        Ok(id)
    }

    /// Reports a [`AgentCost::Reported`] agent's cost for the current frame (`n` its workload).
    pub fn report_cost(&mut self, agent: AgentId, n: u64, ms: f64) {
        self.reported.push(AgentSample {
            agent,
            frame: self.frame + 1,
            n,
            ms,
        });
    }

    /// The strategy the controller has chosen for `agent`.
    pub fn strategy(&self, agent: AgentId) -> Option<StrategyIndex> {
        self.controller.current(agent)
    }

    /// The budget controller (its decision log, pins, mode).
    pub fn controller(&self) -> &Controller {
        &self.controller
    }

    /// The budget controller, mutably (pin strategies, switch to manual mode).
    pub fn controller_mut(&mut self) -> &mut Controller {
        &mut self.controller
    }

    /// The ids of the built-in agents the game installed, in the order physics, render,
    /// asset ([`super::BuiltinAgents`]; empty by default).
    pub fn builtin_agents(&self) -> Vec<AgentId> {
        [
            self.builtins.physics,
            self.builtins.render,
            self.builtins.asset,
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// The built-in physics agent's id, when installed.
    pub fn physics_agent(&self) -> Option<AgentId> {
        self.builtins.physics
    }

    /// The built-in render agent's id, when installed.
    pub fn render_agent(&self) -> Option<AgentId> {
        self.builtins.render
    }

    /// The built-in asset agent's id, when installed.
    pub fn asset_agent(&self) -> Option<AgentId> {
        self.builtins.asset
    }

    /// Pins `agent` to `strategy` from the next frame on (live, or before the first frame).
    /// The pin is logged as a decision at the current frame and takes effect at the next frame
    /// boundary, exactly as a controller decision or a replayed one does, so a replay of the
    /// run's log reproduces it bit for bit. A pinned agent leaves arbitration until
    /// [`Engine::unpin`].
    pub fn pin(&mut self, agent: AgentId, strategy: &str) -> Result<(), PinError> {
        self.controller.pin(agent, strategy)
    }

    /// Releases a pin: the agent rejoins arbitration on the next tick.
    pub fn unpin(&mut self, agent: AgentId) {
        self.controller.unpin(agent);
    }

    /// Queues an asset load (decoded on the asset lane, uploaded by the render lane).
    pub fn request_asset(&mut self, path: impl Into<std::path::PathBuf>) {
        self.assets.request(path);
    }

    /// Takes the data assets loaded so far (those a loader returned as [`Asset::Data`]; images
    /// went to the render pass), oldest first, with the path each was requested by.
    pub fn take_loaded(
        &mut self,
    ) -> impl Iterator<Item = (std::path::PathBuf, Arc<dyn std::any::Any + Send + Sync>)> + '_ {
        self.loaded.drain(..)
    }

    /// The asset stream (totals; fault injection for stress runs).
    pub fn assets_mut(&mut self) -> &mut AssetStream {
        &mut self.assets
    }

    // ---- the frame ------------------------------------------------------------------------

    /// Runs one frame (see the module docs).
    ///
    /// Errors: the controller refused the frame's measurements (a custom agent's cost report
    /// was not a finite time). A panic in a system or in the physics hook propagates, as from
    /// `World::run_systems` (the world stays usable); panics in lane jobs do not (the physics
    /// hook gets them as errors from its scope or graph, detached jobs count them per lane).
    pub fn frame(&mut self) -> Result<FrameOutcome, FrameError> {
        let t0 = clock::now();
        // The thread running the frame is the owner: it serves the physics lane while it waits
        // (an engine moved to another thread moves the role with it).
        if !self.lanes.is_owner_thread() {
            self.lanes.register_owner();
        }
        let frame = self.frame + 1;
        // The frame boundary: every decision made since the last frame (the controller's at the
        // end of the last tick, a manual pin between frames, a replayed one) takes effect here,
        // through one path, before the clock is read; then this frame's input is handed over.
        self.apply_replay(frame);
        self.apply_strategies();
        self.deliver_input(frame);
        if let Some(m) = &self.lockstep {
            // Exactly one step per frame, also across a change of step: the clock advances one
            // step of the step in force for every frame since the step last changed.
            let s = self.game.fixed_step();
            let (base_frame, base_ns, base_step) = &mut self.lockstep_base;
            if *base_step != s {
                *base_frame = frame - 1;
                *base_ns = m.get_ns();
                *base_step = s;
            }
            // Rounded up, so the accumulator holds whole steps and less than one more.
            let (num, den) = (u128::from(s.numer_ns()), u128::from(s.denom()));
            let since = u128::from(frame - *base_frame);
            m.set_ns(*base_ns + ((since * num).div_ceil(den)) as u64);
        }

        // The frame's span carries its number (the trace's `args.frame`, and its counters).
        let frame_span = crate::span!("frame", frame);

        // 1. Assets.
        let (asset_settings, asset_ms) = self.pump_assets();
        // 2. Fixed steps: systems, then the physics hook.
        let physics_settings = self
            .builtins
            .physics_settings(&self.controller, self.config.fixed_step_hz);
        let mut physics_ns = 0u64;
        let report = {
            let lanes = &self.lanes;
            let lane = self.physics_lane;
            let physics = &mut self.physics;
            // The hook after a step's systems (the world's tick is the one they left).
            let mut physics_hook = |world: &mut World, dt: f32| {
                if let Some(f) = physics.as_mut() {
                    let _s = crate::span!("physics.step", world.len() as u64);
                    let p0 = clock::now();
                    let step = PhysicsStep {
                        lanes,
                        lane,
                        dt,
                        tick: world.tick(),
                        settings: physics_settings,
                    };
                    f(world, &step);
                    physics_ns += clock::now().ns_since(p0);
                }
            };
            match self.sync_test.as_mut() {
                // SyncTest mode: each step, systems and hook, is re-simulated from a snapshot
                // `check_distance` steps back and compared stage by stage.
                Some((sync, found)) => self.game.frame_stepping(|world, info| {
                    let dt = info.step.as_secs_f64() as f32;
                    if let Err(e) = sync.step_with(world, &mut |w| physics_hook(w, dt)) {
                        if found.is_none() {
                            tracing::warn!(target: "lanegraph", code = "LG-SYNC-DESYNC", error = %e, "the SyncTest found a desync (Engine::sync_test_desync); the world goes on from its re-simulated state");
                            *found = Some(e);
                        }
                    }
                }),
                None => self.game.frame_with(|world, info| {
                    physics_hook(world, info.step.as_secs_f64() as f32);
                }),
            }
        };

        // 3. The RenderView.
        if let Some(source) = self.view.as_mut() {
            let _s = crate::span!("render_view.publish");
            let v = source.publishable(self.game.world(), frame);
            // Replaced in place: the old pointer is dropped, nothing allocates.
            self.last_view = Some(v.clone());
            self.render.publish(&self.lanes, v);
        }
        drop(frame_span);
        let frame_ms = clock::now().ms_since(t0);
        self.frame = frame;

        // 4. Telemetry.
        let collected = self.history.collect_frame(frame);
        #[cfg(feature = "puffin")]
        if let Some(p) = self.puffin.as_mut() {
            p.publish(&collected, &telemetry::spans::tracks());
        }
        let _ = collected;
        self.update_lane_busy(frame_ms);
        if frame % SYSTEM_METRICS_EVERY == 0 {
            self.update_system_metrics();
        }
        self.update_agent_metrics();
        let world_len = self.game.world().len() as u64;

        // 5. The controller.
        self.samples.clear();
        if let Some(agent) = self.builtins.physics {
            // No physics hook: no work (the agent takes no decisions).
            let n = if self.physics.is_some() {
                world_len.max(1)
            } else {
                0
            };
            self.samples.push(AgentSample {
                agent,
                frame,
                n,
                ms: physics_ns as f64 / 1e6,
            });
        }
        if let Some(agent) = self.builtins.asset {
            // The workload is what the stream had to do: completions applied and loads still
            // waiting; nothing to load is no work.
            let work = self.completions.len() as u64 + self.assets.pending();
            self.samples.push(AgentSample {
                agent,
                frame,
                n: if work > 0 {
                    u64::from(asset_settings.jobs_per_frame)
                } else {
                    0
                },
                ms: asset_ms,
            });
        }
        let rstats = self.render.pulse();
        // The GPU reading measures a frame `GPU_READ_LAG_FRAMES` back: tag it so.
        let gpu_tag = frame.saturating_sub(GPU_READ_LAG_FRAMES).max(1);
        let gpu = rstats.gpu.and_then(|(gpu_frame, total_ms)| {
            (gpu_frame != self.last_gpu_frame).then(|| {
                self.last_gpu_frame = gpu_frame;
                GpuTiming {
                    frame: gpu_tag,
                    ms: total_ms,
                }
            })
        });
        match (gpu, self.render_on_gpu, self.builtins.render) {
            (_, _, None) => {}
            // On the GPU pool, the render agent's cost is the GPU frame.
            (Some(g), true, Some(agent)) => self.samples.push(AgentSample {
                agent,
                frame: g.frame,
                n: rstats.last_instances,
                ms: g.ms,
            }),
            (_, false, Some(agent)) => {
                // Without a GPU, it is the render job's CPU time on the render lane.
                if let Some((vf, ns)) = rstats.last {
                    if vf > self.last_render_sample && vf <= frame {
                        self.last_render_sample = vf;
                        self.samples.push(AgentSample {
                            agent,
                            frame: vf,
                            n: rstats.last_instances,
                            ms: ns as f64 / 1e6,
                        });
                    }
                }
            }
            (None, true, Some(_)) => {}
        }
        self.collect_custom_samples(frame, report.steps);
        if let Some((_, total_ms)) = rstats.gpu {
            self.metrics.gpu_frame.set(total_ms / 1000.0);
        }
        let tick = self.controller.tick(&FrameInput {
            frame,
            cpu_ms: frame_ms,
            gpu,
            samples: &self.samples,
            step: Some(StepReport {
                steps: report.steps,
                clamped: report.dropped_steps > 0 || report.clamped_ns > 0,
            }),
        })?;
        // Its decisions take effect at the next frame's start (`apply_strategies` there).

        // OpenMetrics' base unit is the second; the engine reads milliseconds.
        self.metrics.frame_time.observe(frame_ms / 1000.0);
        self.metrics.alpha.set(report.alpha);
        self.metrics.completed.inc();
        self.metrics.steps.add(u64::from(report.steps));
        self.metrics.dropped.add(report.dropped_steps);
        self.metrics.target.set(tick.target_ms / 1000.0);
        if frame_ms > tick.target_ms {
            self.metrics.over_target.inc();
        }
        self.metrics.multiplier.set(tick.multiplier);
        self.metrics.switches.add(tick.decisions as u64);
        self.metrics.asset_pending.set(self.assets.pending() as f64);
        if !self.observers.is_empty() {
            let figures = FrameFigures {
                frame,
                frame_ms,
                target_ms: tick.target_ms,
                steps: report.steps,
                dropped_steps: report.dropped_steps,
                physics_ms: physics_ns as f64 / 1e6,
                memory_bytes: telemetry::memory_stats().current_bytes,
                multiplier: tick.multiplier,
                decisions: tick.decisions,
                lane_busy: &self.lane_busy_now,
                world: self.game.world(),
            };
            for o in &mut self.observers {
                o.on_frame(&figures);
            }
        }
        // The frame's lane work is over: idle workers park now instead of spinning into the
        // owner's pacing or vsync wait (`Lanes::rest`); the next frame's first push wakes them.
        self.lanes.rest();
        Ok(FrameOutcome {
            frame,
            frame_ms,
            steps: report.steps,
            dropped_steps: report.dropped_steps,
            decisions: tick.decisions,
        })
    }

    /// Step 1 of a frame on its own: applies asset completions (at most the asset strategy's
    /// jobs per frame) and issues queued requests, without simulating. `frame()` calls it; a
    /// game may call it between frames (a loading screen) to let loads finish. Returns the
    /// settings used and the time it took, ms.
    pub fn pump_assets(&mut self) -> (AssetSettings, f64) {
        let asset_settings = self.builtins.asset_settings(&self.controller);
        let asset_t0 = clock::now();
        let _s = crate::span!("assets.drain");
        self.completions.clear();
        self.assets
            .drain(asset_settings.jobs_per_frame, &mut self.completions);
        for c in &self.completions {
            match &c.result {
                Ok(Asset::Image(_)) => {
                    // Already with the render pass: the graph's `upload` node ran on the render
                    // lane.
                    self.metrics.asset_loaded.inc();
                }
                Ok(Asset::Data(d)) => {
                    self.metrics.asset_loaded.inc();
                    self.loaded.push_back((c.path.clone(), Arc::clone(d)));
                }
                Err(e) => {
                    self.metrics.asset_failed.inc();
                    tracing::warn!(target: "lanegraph", code = "LG-ASSET-001", error = %e, "asset failed to load; skipped, the game goes on");
                    if self.asset_failures.len() < MAX_ASSET_FAILURES {
                        self.asset_failures.push(e.to_string());
                    }
                }
            }
        }

        self.assets.pump(&self.lanes, asset_settings.jobs_per_frame);
        (asset_settings, clock::now().ms_since(asset_t0))
    }

    /// Applies the strategies in force (the frame boundary's one path, see `frame`): the
    /// physics step and render settings of the installed built-in agents, and every agent's
    /// choice where systems read it ([`World::agent_strategy`]).
    fn apply_strategies(&mut self) {
        if self.builtins.physics.is_some() {
            let p = self
                .builtins
                .physics_settings(&self.controller, self.config.fixed_step_hz);
            if let Ok(step) = FixedStep::from_hz(p.step_hz) {
                if self.game.fixed_step() != step {
                    self.game.declare_fixed_step("physics", step);
                }
            }
        }
        if self.builtins.render.is_some() {
            self.render
                .set_settings(self.builtins.render_settings(&self.controller));
        }
        let controller = &self.controller;
        let world = self.game.world_mut();
        world.agent_strategies.clear();
        world.agent_strategies.extend(
            controller
                .agent_ids()
                .map(|id| controller.current(id).unwrap_or_default()),
        );
    }

    fn collect_custom_samples(&mut self, frame: u64, steps: u32) {
        for &(id, cost) in &self.custom {
            if let AgentCost::System(sys) = cost {
                if let Ok(s) = self.game.world().system_timing_stats(sys) {
                    if steps > 0 {
                        self.samples.push(AgentSample {
                            agent: id,
                            frame,
                            n: s.workload.unwrap_or(1).max(1),
                            ms: s.last_ms * f64::from(steps),
                        });
                    }
                }
            }
        }
        for mut s in self.reported.drain(..) {
            s.frame = s.frame.min(frame);
            self.samples.push(s);
        }
    }

    /// Copies each system's counters into its `system.*{system}` series (every
    /// [`SYSTEM_METRICS_EVERY`] frames: the per-run timing stays in the scheduler's window, so
    /// the metrics cost nothing per system run). Registers the series of new systems.
    fn update_system_metrics(&mut self) {
        let world = self.game.world();
        for (i, id) in world.system_ids().enumerate() {
            if i == self.system_series.len() {
                let name = world.system_name(id).unwrap_or("unknown");
                self.system_series
                    .push(SystemSeries::register(&self.registry, name).ok());
            }
            let (Some(series), Ok(stats)) = (
                self.system_series[i].as_mut(),
                world.system_timing_stats(id),
            ) else {
                continue;
            };
            series.runs.add(stats.runs.saturating_sub(series.runs_seen));
            series
                .over
                .add(stats.warns.saturating_sub(series.over_seen));
            (series.runs_seen, series.over_seen) = (stats.runs, stats.warns);
            series.last.set(stats.last_ns as f64 / 1e9);
        }
    }

    /// Each agent's current strategy into its `budget.strategy{agent}` gauge (registering the
    /// gauges of agents registered since).
    fn update_agent_metrics(&mut self) {
        for (i, id) in self.controller.agent_ids().enumerate() {
            if i == self.agent_series.len() {
                let name = self.controller.agent_name(id).unwrap_or("unknown");
                self.agent_series.push(
                    self.registry
                        .register_gauge_with(
                            "budget.strategy",
                            &[("agent", name)],
                            Unit::None,
                            "Index of the agent's current strategy (0: its first, fullest one).",
                        )
                        .ok(),
                );
            }
            if let (Some(g), Some(c)) = (&self.agent_series[i], self.controller.current(id)) {
                g.set(c.0 as f64);
            }
        }
    }

    /// Each lane's busy share of the frame, into `lane_busy_now` (no allocation, no lookup).
    fn update_lane_busy(&mut self, frame_ms: f64) {
        for (i, id) in self.lane_ids.iter().enumerate() {
            let Some(id) = *id else {
                continue;
            };
            let s = self.lanes.stats(id).unwrap_or_default();
            let busy = s.busy_ns.saturating_sub(self.lane_busy_prev[i]);
            let jobs = s.jobs.saturating_sub(self.lane_jobs_prev[i]);
            self.lane_busy_prev[i] = s.busy_ns;
            self.lane_jobs_prev[i] = s.jobs;
            let share = if frame_ms > 0.0 {
                (busy as f64 / 1e6 / (frame_ms * self.lane_workers[i])).min(1.0)
            } else {
                0.0
            };
            self.metrics.lane_busy[i].set(share);
            self.metrics.lane_jobs[i].add(jobs);
            self.metrics.lane_queued[i].set(s.queued as f64);
            let panics = s.detached_panics.saturating_sub(self.lane_panics_prev[i]);
            self.lane_panics_prev[i] = s.detached_panics;
            self.metrics.lane_panics[i].add(panics);
            self.lane_busy_now[i] = share;
        }
    }

    // ---- end of run -----------------------------------------------------------------------

    /// Waits until the render lane has drawn every published view (end of run).
    pub fn finish_render(&self) {
        self.render.finish();
    }

    /// Has the game's pass draw the last view again and return it as PNG bytes (`None` when
    /// the pass cannot, or no view was published). Waits for the render lane: end of a run.
    pub fn capture_png(&self) -> Option<Vec<u8>> {
        let view = self.last_view.clone()?;
        self.render.capture_png(&self.lanes, view)
    }

    /// Frames run.
    pub fn frames(&self) -> u64 {
        self.frame
    }

    /// Each lane's busy share of the last frame, 0..1, in plan order.
    pub fn lane_busy(&self) -> &[f64] {
        &self.lane_busy_now
    }

    /// The trace history (the last `trace_frames` frames of spans).
    pub fn trace(&self) -> &TraceHistory {
        &self.history
    }

    /// Streams every frame's spans live over puffin's wire protocol on `addr` (e.g.
    /// `127.0.0.1:8585`): `puffin_viewer --url 127.0.0.1:8585` shows the owner and each lane
    /// worker as threads while the game runs. Needs trace spans on (the default). Calling it
    /// again replaces the server.
    #[cfg(feature = "puffin")]
    pub fn serve_puffin(&mut self, addr: &str) -> Result<(), telemetry::PuffinError> {
        self.puffin = Some(telemetry::PuffinServer::start(addr)?);
        Ok(())
    }

    /// The metrics registry (OpenMetrics: `telemetry::openmetrics::render(engine.metrics())`).
    pub fn metrics(&self) -> &Registry {
        &self.registry
    }

    /// The render lane's statistics. Waits for a draw in progress: for the end of a run (each
    /// frame's figures reach observers and the controller without waiting).
    pub fn render_stats(&self) -> super::render::RenderStats {
        self.render.stats()
    }

    /// Every present-to-present interval of the run, ms, when the render pass presents to a
    /// window (empty otherwise; the first 65,536). Waits for a draw in progress: for the end
    /// of a run (the report's present histogram).
    pub fn present_intervals_ms(&self) -> Vec<f64> {
        self.render.present_intervals_ms()
    }

    /// The device the game's pass draws on, or why there is none (default without a pass).
    /// Waits for a draw in progress: for the start and end of a run.
    pub fn render_device(&self) -> RenderDevice {
        self.render.device()
    }

    /// View cache hits and misses (zeros without a render view).
    pub fn view_cache_stats(&self) -> ViewCacheStats {
        self.view.as_ref().map(|v| v.stats()).unwrap_or_default()
    }

    /// Asset totals and the first `MAX_ASSET_FAILURES` failures' messages.
    pub fn asset_report(&self) -> (super::assets::AssetTotals, &[String]) {
        (self.assets.totals(), &self.asset_failures)
    }

    /// Loop totals (steps, dropped steps).
    pub fn loop_totals(&self) -> crate::game_loop::LoopTotals {
        self.game.totals()
    }

    /// Replays a run from its log (`summary.json` read back as a [`RunLog`] or a
    /// [`super::RunSummary`]): its decisions (controller decisions and pins alike) replace the
    /// live controller, and its inputs replace live input, both from the next frame. With the
    /// same seed and frames, a lockstep run reproduces the recorded world hash on any lane plan.
    ///
    /// Errors: an agent or strategy this engine does not have, entries out of frame order, or
    /// an entry for a frame already run. Nothing is applied when refused.
    pub fn replay_run(&mut self, log: &RunLog) -> Result<(), ReplayError> {
        self.check_decisions(&log.decisions)?;
        self.check_inputs(&log.inputs)?;
        self.replay(log.decisions.clone())?;
        self.replay_inputs(log.inputs.clone())
    }

    /// Replaces the live budget controller with recorded decisions (a run log's `decisions`):
    /// the controller stops choosing (manual mode), and each decision takes effect at the
    /// frame boundary after the frame it was made in, exactly as it did live. Errors as
    /// [`Engine::replay_run`].
    pub fn replay(&mut self, decisions: Vec<DecisionEntry>) -> Result<(), ReplayError> {
        self.check_decisions(&decisions)?;
        self.controller.set_mode(AdaptationMode::Manual);
        self.replay = Some(decisions.into());
        Ok(())
    }

    fn check_decisions(&self, decisions: &[DecisionEntry]) -> Result<(), ReplayError> {
        in_frame_order("decision", decisions.iter().map(|d| d.frame))?;
        // A decision made at frame N takes effect at frame N + 1.
        if let Some(d) = decisions.first().filter(|d| d.frame < self.frame) {
            return Err(ReplayError::AlreadyRun {
                what: "decision",
                frame: d.frame,
                effective: d.frame + 1,
                now: self.frame,
            });
        }
        for d in decisions {
            let Some(id) = self.agent_by_name(&d.agent) else {
                return Err(ReplayError::UnknownAgent(d.agent.clone()));
            };
            let known = self.controller.strategies(id).unwrap_or(&[]);
            if !known.iter().any(|s| s.name == d.to) {
                return Err(ReplayError::UnknownStrategy {
                    agent: d.agent.clone(),
                    strategy: d.to.clone(),
                    known: known
                        .iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        }
        Ok(())
    }

    fn agent_by_name(&self, name: &str) -> Option<AgentId> {
        self.controller.agent_id(name)
    }

    /// Applies the recorded decisions made at frames before `frame` (the end of frame N is
    /// the start of frame N + 1).
    fn apply_replay(&mut self, frame: u64) {
        while let Some(d) = self.replay.as_mut().and_then(|r| {
            r.front()
                .filter(|d| d.frame < frame)
                .is_some()
                .then(|| r.pop_front())
                .flatten()
        }) {
            if let Some(id) = self.agent_by_name(&d.agent) {
                // Checked in `replay`: the agent and the strategy exist.
                let _ = self.controller.pin(id, &d.to);
            }
        }
    }

    // ---- input ------------------------------------------------------------------------------

    /// Queues `event` for the world: the next frame hands it to its first fixed step's systems
    /// (`world.input()`, see [`crate::input`]) and logs it ([`Engine::input_log`]). Ignored
    /// (and counted) while a replay of recorded input runs.
    pub fn push_input(&mut self, event: InputEvent) {
        if self.input_replay.is_some() {
            self.live_input_ignored += 1;
        } else {
            self.pending_input.push(event);
        }
    }

    /// Every event handed to the world so far, with its frame: a lockstep run's deterministic
    /// inputs beside its decisions (a demo run's `summary.json` `inputs`).
    pub fn input_log(&self) -> &[RecordedInput] {
        &self.input_log
    }

    /// Events handed over but not logged ([`MAX_LOGGED_INPUTS`] reached): non-zero means the
    /// log cannot replay the run.
    pub fn input_log_dropped(&self) -> u64 {
        self.input_log_dropped
    }

    /// Live events ignored because recorded input was being replayed.
    pub fn live_input_ignored(&self) -> u64 {
        self.live_input_ignored
    }

    /// Replays recorded input: from the next frame, each event is handed to the world at its
    /// recorded frame, and live input ([`Engine::push_input`]) is ignored. With the same seed
    /// and decisions ([`Engine::replay`]), a lockstep run ends in the recorded world hash.
    /// Errors as [`Engine::replay_run`].
    pub fn replay_inputs(&mut self, inputs: Vec<RecordedInput>) -> Result<(), ReplayError> {
        self.check_inputs(&inputs)?;
        self.pending_input.clear();
        self.input_replay = Some(inputs.into());
        Ok(())
    }

    fn check_inputs(&self, inputs: &[RecordedInput]) -> Result<(), ReplayError> {
        in_frame_order("input", inputs.iter().map(|i| i.frame))?;
        match inputs.first() {
            Some(i) if i.frame == 0 => Err(ReplayError::FrameZeroInput),
            Some(i) if i.frame <= self.frame => Err(ReplayError::AlreadyRun {
                what: "input",
                frame: i.frame,
                effective: i.frame,
                now: self.frame,
            }),
            _ => Ok(()),
        }
    }

    /// Hands this frame's input to the world and logs it (step 2 of [`crate::input`]).
    fn deliver_input(&mut self, frame: u64) {
        let world = self.game.world_mut();
        let mut log = |event: InputEvent, log: &mut Vec<RecordedInput>, dropped: &mut u64| {
            world.input.deliver(event);
            if log.len() < MAX_LOGGED_INPUTS {
                log.push(RecordedInput { frame, event });
            } else {
                *dropped += 1;
            }
        };
        if let Some(replay) = self.input_replay.as_mut() {
            while let Some(r) = replay.front().filter(|r| r.frame <= frame).copied() {
                replay.pop_front();
                log(r.event, &mut self.input_log, &mut self.input_log_dropped);
            }
        } else {
            for event in self.pending_input.drain(..) {
                log(event, &mut self.input_log, &mut self.input_log_dropped);
            }
        }
    }

    /// The step in force.
    pub fn fixed_step(&self) -> FixedStep {
        self.game.fixed_step()
    }
}
