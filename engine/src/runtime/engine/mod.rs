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
//!    figures lent to the run record (`EngineConfig::record_frames`; what
//!    [`RunSummary::from_engine`](super::RunSummary::from_engine) and the report read).
//! 5. The budget controller ticks on the frame's measurements. Its decisions, a manual pin
//!    made between frames, and replayed decisions all take effect at the next frame's start,
//!    through one path (`apply_strategies`): the installed built-in agents' settings (physics:
//!    fixed step and detail pass; render: resolution and instance cap; asset: jobs per frame)
//!    and every agent's choice where systems read it (`World::agent_strategy`). Then the lanes
//!    rest until the next frame's first push (`Lanes::rest`).
//!
//! | file | idea |
//! |------|------|
//! | `mod.rs` | the `Engine`, what it holds (each field: who writes it, who reads it) and its accessors |
//! | `build` | assembling an engine from its builder: lanes, world, render and asset lanes, metrics |
//! | `frame` | one frame, phase by phase, and the frame boundary where decisions take effect |
//! | `metrics` | the engine's own metrics: their registration and their per-frame updates |
//! | `replay` | the run log: replaying decisions and input, logging live input |

use std::sync::Arc;

use lanegraph_budget::hooks::ControllerDriver;
use lanegraph_budget::providers::FixedReadings;
use lanegraph_budget::{
    AdaptationMode, Agent, AgentId, AgentSample, Controller, ControllerConfig, FrameInput,
    GpuTiming, InputError, PinError, RegisterError, StepReport, StrategyIndex,
};
use lanegraph_jobs::{clock, LaneId, Lanes};
use lanegraph_telemetry::{
    self as telemetry, Buckets, Counter, Gauge, Histogram, Registry, TraceHistory, Unit,
};

use super::agents::{
    AssetAgent, AssetSettings, PhysicsAgent, PhysicsSettings, RenderAgent, RenderSettings,
};
use super::assets::{AssetCompletion, AssetStream};
use super::config::EngineConfig;
use super::loaders::Asset;
use super::record::{FrameFigures, RunRecorder};
use super::render::{Published, RenderDevice, RenderLane};
use super::run_log::{DecisionEntry, RunLog};
use super::view::RenderSetup;
use super::view::{ViewCacheStats, ViewSource};
use crate::game_loop::{FixedStep, FrameClock, GameLoop, LoopOptions, ManualClock, MonotonicClock};
use crate::input::{InputEvent, RecordedInput, MAX_LOGGED_INPUTS};
use crate::systems::SystemId;
use crate::world::World;

mod build;
mod frame;
mod metrics;
mod replay;

pub use build::BuildError;
pub(crate) use metrics::SYSTEM_METRICS_EVERY;
use metrics::{Metrics, SystemSeries};
pub use replay::ReplayError;

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
    /// The controller's frame-time target after this frame, ms.
    pub target_ms: f64,
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
    fn physics_settings(&self, c: &Controller) -> PhysicsSettings {
        match (self.physics, &self.physics_agent) {
            (Some(id), Some(a)) => a.settings(c.current(id).unwrap_or_default()),
            _ => PhysicsSettings::FULL,
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
    /// The configuration the engine was built with. Writer: `assemble` (build); never changed.
    /// Readers: `run_steps`, `apply_strategies` (`fixed_step_hz`), `Engine::config`.
    config: EngineConfig,
    /// The fixed-step loop, its clock and the world. Writers: `frame` (owner thread, steps 0-2),
    /// the game between frames (`world_mut`, `restore`). Readers: steps 3-5 (`publish_view`,
    /// `gather_samples`, `record_frame`, metrics), `world`, `loop_totals`, `fixed_step`, ...
    game: GameLoop<EngineClock>,
    /// Lockstep: the manual clock, sharing its time with `game`'s clock (`None`: real time).
    /// Writer: `assemble`; `begin_frame` sets its time (owner thread, step 0). Readers:
    /// `begin_frame`, and `game`'s clock (`frame_stepping`, step 2).
    lockstep: Option<ManualClock>,
    /// Lockstep: the frame and clock reading at which the step in force was adopted.
    /// Writer: `assemble`, `begin_frame` (step 0) when the step changed. Reader: `begin_frame`.
    lockstep_base: (u64, u64, FixedStep),
    /// Recorded strategy decisions to apply instead of the live controller's, in frame order.
    /// Writer: `replay` (between frames); `apply_replay` (step 0) pops the due ones.
    /// Reader: `apply_replay`.
    replay: Option<std::collections::VecDeque<DecisionEntry>>,
    /// The budget controller and its agents. Writers: `frame` (owner thread, step 5: `tick`),
    /// `apply_replay` (pins), the game between frames (`add_agent`, `pin`, `set_adaptation`, ...).
    /// Readers: `apply_strategies`, `pump_assets`, `run_steps`, `update_agent_metrics`, accessors.
    controller: Controller,
    /// The built-in agents the game installed, and their ladders. Writer: `assemble` (then fixed).
    /// Readers: `apply_strategies`, `pump_assets`, `run_steps`, `gather_samples`, the id accessors.
    builtins: Builtins,
    /// The game's own agents, each with where its cost comes from. Writer: `add_agent` (between
    /// frames). Reader: `collect_custom_samples` (owner thread, step 5).
    custom: Vec<(AgentId, AgentCost)>,
    /// The device readings the controller polls each tick, installed as its provider on the
    /// first `set_readings`. Writer: `set_readings` (between frames). Reader: the controller's
    /// tick (owner thread, step 6), through the provider it shares.
    readings: Option<FixedReadings>,
    /// Costs the game reported for the frame to come (`AgentCost::Reported` agents). Writer:
    /// `report_cost`. Reader: `collect_custom_samples` (step 5), which drains them into `samples`.
    reported: Vec<AgentSample>,
    /// This frame's cost samples for the controller (reused each frame). Writers: `gather_samples`,
    /// `collect_custom_samples` (owner thread, step 5). Reader: `frame`'s `controller.tick`.
    samples: Vec<AgentSample>,
    /// The physics hook (`None`: not set). Writer: `set_physics` (the game, between frames).
    /// Readers: `run_steps` (step 2, runs it), `gather_samples` (no hook: no physics work).
    physics: Option<PhysicsFn>,
    /// The SyncTest mode ([`EngineConfig::sync_test`]): made by the builder, run
    /// by `frame` around each fixed step; the first desync it found.
    /// Desync writer: `run_steps` (step 2, owner thread). Reader: `sync_test_desync`.
    sync_test: Option<(crate::world::SyncTest, Option<crate::world::WorldError>)>,
    /// The game's view source and its cache (`None`: no render view). Writer: `assemble`;
    /// `publish_view` derives through it (owner thread, step 3). Readers: `publish_view`,
    /// `view_cache_stats`.
    view: Option<Box<dyn ViewSource>>,
    /// The last view published, kept for a capture. Writer: `publish_view` (owner thread, step 3).
    /// Reader: `capture_png` (end of run).
    last_view: Option<Published>,
    /// The owner's handle to the render lane. Writers: `apply_strategies` (settings, step 0),
    /// `publish_view` (step 3), `gather_samples` (`pulse`, step 5). Readers: `finish_render`,
    /// `capture_png`, `render_stats`, `present_intervals_ms`, `render_device` (end of run).
    render: RenderLane,
    /// Without a GPU: the view frame of the last render sample given to the controller, so each
    /// drawn view is sampled once. Writer and reader: `gather_samples` (owner thread, step 5).
    last_render_sample: u64,
    /// The render-lane frame of the last GPU reading given to the controller, so each reading goes
    /// in once. Writer and reader: `gather_samples` (owner thread, step 5).
    last_gpu_frame: u64,
    /// The render agent is on the GPU pool (a device came up).
    /// Writer: `assemble`. Reader: `gather_samples` (step 5: GPU time or render-job CPU time).
    render_on_gpu: bool,
    /// The owner's side of the asset pipeline. Writers: `pump_assets` (step 1: `drain`, `pump`),
    /// `request_asset`, `assets_mut` (fault injection). Readers: `gather_samples`, `record_frame`
    /// (`pending`), `asset_report`.
    assets: AssetStream,
    /// This frame's drained asset completions (reused each frame). Writer: `pump_assets` (owner
    /// thread, step 1). Readers: `pump_assets`, `gather_samples` (step 5: the asset workload).
    completions: Vec<AssetCompletion>,
    /// Decoded data assets waiting for the game ([`Engine::take_loaded`]).
    /// Writer: `pump_assets` (owner thread, step 1). Reader: `take_loaded` (the game) drains it.
    loaded: std::collections::VecDeque<(std::path::PathBuf, Arc<dyn std::any::Any + Send + Sync>)>,
    /// The first [`MAX_ASSET_FAILURES`] failures' messages (the count is in the asset totals).
    /// Writer: `pump_assets` (owner thread, step 1). Reader: `asset_report`.
    asset_failures: Vec<String>,
    /// The registry every engine metric is in (the render lane's gauges too). Writer: `assemble`;
    /// `update_system_metrics` and `update_agent_metrics` register new series (step 4).
    /// Reader: `Engine::metrics` (exporters).
    registry: Registry,
    /// The engine's own metric handles. Writer: `assemble`; updated by `pump_assets`,
    /// `update_lane_busy`, `gather_samples`, `record_frame` (owner thread). Reader: the registry's
    /// exporters (`Engine::metrics`).
    metrics: Metrics,
    /// The last `trace_frames` frames of spans. Writer: `frame` (owner thread, step 4:
    /// `collect_frame`). Readers: `Engine::chrome_trace`, `EngineHooks::trace`.
    history: TraceHistory,
    /// The live view, when started ([`Engine::serve_puffin`]).
    /// Writer: `serve_puffin` (between frames). Reader: `frame` (step 4: publishes the spans).
    #[cfg(feature = "puffin")]
    puffin: Option<telemetry::PuffinServer>,
    /// The run record. Writer: `record_frame` (owner thread, step 4: the frame's figures, while
    /// `recording`). Readers: `RunSummary::from_engine`, the report (`EngineHooks::run_record`).
    record: RunRecorder,
    /// Whether frames are recorded (true; `EngineHooks::set_recording` lets the timing bench
    /// measure the frame without the record). Writer: `set_recording` (between frames).
    /// Reader: `record_frame`.
    recording: bool,
    /// Each plan lane's id, in plan order (looked up once, not per frame).
    /// Writer: `assemble`. Reader: `update_lane_busy` (owner thread, step 4).
    lane_ids: Vec<Option<LaneId>>,
    /// Each plan lane's worker count.
    /// Writer: `assemble` (at least 1). Reader: `update_lane_busy` (step 4: the share's divisor).
    lane_workers: Vec<f64>,
    /// The last frame's busy share per lane (lent to the run record).
    /// Writer: `update_lane_busy` (owner thread, step 4). Readers: `record_frame`,
    /// `Engine::lane_busy`.
    lane_busy_now: Vec<f64>,
    /// Each lane's `LaneStats::busy_ns` at the last frame's end, for the frame's difference.
    /// Writer: `assemble` (zeros), `update_lane_busy` (step 4). Reader: `update_lane_busy`.
    lane_busy_prev: Vec<u64>,
    /// Each lane's `LaneStats::jobs` at the last frame's end, for the `lane.jobs` difference.
    /// Writer: `assemble` (zeros), `update_lane_busy` (step 4). Reader: `update_lane_busy`.
    lane_jobs_prev: Vec<u64>,
    /// Each lane's `LaneStats::detached_panics` at the last frame's end, for the `lane.panics`
    /// difference. Writer: `assemble` (zeros), `update_lane_busy` (step 4). Reader: the same.
    lane_panics_prev: Vec<u64>,
    /// Per system (schedule order), its labelled series; `None` when the registry refused the
    /// system's name as a label value (over 256 bytes).
    /// Writer and reader: `update_system_metrics` (step 4, every `SYSTEM_METRICS_EVERY` frames).
    system_series: Vec<Option<SystemSeries>>,
    /// Per agent (id order), its `budget.strategy{agent}` gauge (`None`: name refused).
    /// Writer and reader: `update_agent_metrics` (owner thread, step 4).
    agent_series: Vec<Option<Gauge>>,
    /// Frames run: the last finished frame's number (0 before the first). Writer: `frame`, after
    /// step 3 (owner thread). Readers: `frame` (the next number), `report_cost`, the replay checks
    /// (`check_decisions`, `check_inputs`), `frames`, `Debug`.
    frame: u64,
    /// Input pushed since the last frame began ([`Engine::push_input`]).
    /// Writers: `push_input` (between frames), `replay` (clears it). Reader: `deliver_input`
    /// (owner thread, step 0) drains it.
    pending_input: Vec<InputEvent>,
    /// Every event handed to the world, with its frame (at most `MAX_LOGGED_INPUTS`).
    /// Writer: `deliver_input` (owner thread, step 0). Reader: `Engine::input_log` (the summary's `inputs`).
    input_log: Vec<RecordedInput>,
    /// Events not logged because the log was full.
    /// Writer: `deliver_input` (owner thread, step 0). Reader: `Engine::input_log_dropped`.
    input_log_dropped: u64,
    /// Recorded input to hand over instead of live input, in frame order.
    /// Writer: `replay` (between frames); `deliver_input` (step 0) pops the due events.
    /// Readers: `deliver_input`, `push_input` (while set, live input is ignored).
    input_replay: Option<std::collections::VecDeque<RecordedInput>>,
    /// Live events ignored because a replay was running.
    /// Writer: `push_input` (between frames). Reader: `Engine::live_input_ignored`.
    live_input_ignored: u64,
    /// The plan's physics lane (`None`: the plan has none). Writer: `assemble`. Readers: `assemble`
    /// (the world's parallel lane), `run_steps` (step 2: the hook's `PhysicsStep::lane`).
    physics_lane: Option<LaneId>,
    /// Declared last so it drops last: every detached job (render, asset) finishes before the
    /// workers are joined, and nothing above outlives the lanes it borrows.
    /// Shared with the asset pipeline's detached job, which runs the load graph through it
    /// (see `assets`: the job never holds the last handle at shutdown).
    /// Writer: `assemble`. Readers: `frame`'s phases (spawns, `rest`, `stats`), `Engine::lanes`.
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
    // ---- setup ----------------------------------------------------------------------------

    /// The world (register components and systems here, between frames).
    pub fn world(&self) -> &World {
        self.game.world()
    }

    /// The world, mutably (between frames).
    pub fn world_mut(&mut self) -> &mut World {
        self.game.world_mut()
    }

    /// The body of [`EngineHooks::sync_test_desync`](crate::hooks::EngineHooks::sync_test_desync), which documents it.
    pub(crate) fn sync_test_desync(&self) -> Option<&crate::world::WorldError> {
        self.sync_test
            .as_ref()
            .and_then(|(_, found)| found.as_ref())
    }

    /// Captures the world and the fixed-step accumulator's leftover (see
    /// [`GameLoop::snapshot_into`]), between frames.
    pub fn snapshot_into(
        &self,
        snapshot: &mut crate::world::Snapshot,
    ) -> Result<(), crate::world::WorldError> {
        self.game.snapshot_into(snapshot)
    }

    /// Puts back a capture of [`snapshot_into`](Self::snapshot_into) (see
    /// [`GameLoop::restore`]), between frames.
    pub fn restore(
        &mut self,
        snapshot: &crate::world::Snapshot,
    ) -> Result<(), crate::world::WorldError> {
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
        // The SyncTest mode's held steps ran another hook: they are not re-simulated with this one.
        if let Some((sync, _)) = self.sync_test.as_mut() {
            sync.restart();
        }
    }

    /// The body of [`EngineHooks::run_record`](crate::hooks::EngineHooks::run_record), which documents it.
    pub(crate) fn run_record(&self) -> &RunRecorder {
        &self.record
    }

    /// The body of [`EngineHooks::set_recording`](crate::hooks::EngineHooks::set_recording), which documents it.
    pub(crate) fn set_recording(&mut self, on: bool) {
        self.recording = on;
    }

    /// Registers a game's own agent; `cost` says where its measured cost comes from.
    pub fn add_agent(
        &mut self,
        agent: Box<dyn Agent>,
        cost: AgentCost,
    ) -> Result<AgentId, RegisterError> {
        let base = FixedStep::from_hz(self.config.fixed_step_hz).unwrap_or_default();
        crate::runtime::agents::check_step_divisors(base, &*agent)?;
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

    /// Tells the budget controller the device's state (thermal, battery, memory): from the
    /// next frame on, every tick reads `readings` until the next call. A platform layer calls
    /// it when the OS reports a change (thermal and battery notifications); what it cannot
    /// report stays at its default, which reads as "no concern" (see `docs/budgets.md`). GPU
    /// memory comes from the engine's render pass unless `readings.gpu_memory` is set.
    pub fn set_readings(&mut self, readings: lanegraph_budget::Readings) {
        let cell = self.readings.get_or_insert_with(|| {
            let cell = FixedReadings::default();
            self.controller.set_providers(Box::new(cell.clone()));
            cell
        });
        cell.set(readings);
    }

    /// The body of [`EngineHooks::set_adaptation`](crate::hooks::EngineHooks::set_adaptation), which documents it.
    pub(crate) fn set_adaptation(&mut self, mode: lanegraph_budget::AdaptationMode) {
        self.controller.set_mode(mode);
    }

    /// The body of [`EngineHooks::record_controller_inputs`](crate::hooks::EngineHooks::record_controller_inputs), which documents it.
    pub(crate) fn record_controller_inputs(&mut self) {
        self.controller.start_recording();
    }

    /// The body of [`EngineHooks::take_controller_recording`](crate::hooks::EngineHooks::take_controller_recording), which documents it.
    pub(crate) fn take_controller_recording(
        &mut self,
    ) -> Option<lanegraph_budget::hooks::Recording> {
        self.controller.take_recording()
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

    /// The body of [`EngineHooks::physics_agent`](crate::hooks::EngineHooks::physics_agent), which documents it.
    pub(crate) fn physics_agent(&self) -> Option<AgentId> {
        self.builtins.physics
    }

    /// The body of [`EngineHooks::render_agent`](crate::hooks::EngineHooks::render_agent), which documents it.
    pub(crate) fn render_agent(&self) -> Option<AgentId> {
        self.builtins.render
    }

    /// The body of [`EngineHooks::asset_agent`](crate::hooks::EngineHooks::asset_agent), which documents it.
    pub(crate) fn asset_agent(&self) -> Option<AgentId> {
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

    /// The asset stream, for the runtime's fault-injection hooks ([`super::hooks`]).
    pub(crate) fn assets_mut(&mut self) -> &mut AssetStream {
        &mut self.assets
    }

    // ---- end of run -----------------------------------------------------------------------

    /// The body of [`EngineHooks::finish_render`](crate::hooks::EngineHooks::finish_render), which documents it.
    pub(crate) fn finish_render(&self) {
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

    /// The last `trace_frames` frames of spans as Chrome Trace Event JSON (`trace.json`: open
    /// it in Perfetto or `chrome://tracing`; `docs/telemetry.md` reads it in a viewer's terms).
    pub fn chrome_trace(&self) -> String {
        self.history.to_chrome_trace()
    }

    /// The body of [`EngineHooks::trace`](crate::hooks::EngineHooks::trace), which documents it.
    pub(crate) fn trace(&self) -> &TraceHistory {
        &self.history
    }

    /// Streams every frame's spans live over puffin's wire protocol on `addr` (e.g.
    /// `127.0.0.1:8585`): `puffin_viewer --url 127.0.0.1:8585` shows the owner and each lane
    /// worker as threads while the game runs. Needs trace spans on (the default). Calling it
    /// again replaces the server.
    #[cfg(feature = "puffin")]
    pub fn serve_puffin(&mut self, addr: &str) -> Result<(), telemetry::EndpointError> {
        self.puffin = Some(telemetry::PuffinServer::start(addr)?);
        Ok(())
    }

    /// The metrics registry (OpenMetrics text: `engine.metrics().to_openmetrics()`).
    pub fn metrics(&self) -> &Registry {
        &self.registry
    }

    /// The render lane's statistics once it has drawn every view published so far (it waits:
    /// for the end of a run; each frame's figures reach the run record and the controller
    /// without waiting).
    pub fn render_stats(&self) -> super::render::RenderStats {
        self.render.finish();
        self.render.stats()
    }

    /// The body of [`EngineHooks::present_intervals_ms`](crate::hooks::EngineHooks::present_intervals_ms), which documents it.
    pub(crate) fn present_intervals_ms(&self) -> Vec<f64> {
        self.render.present_intervals_ms()
    }

    /// The device the game's pass draws on, or why there is none (default without a pass).
    /// Waits for a draw in progress: for the start and end of a run.
    pub fn render_device(&self) -> RenderDevice {
        self.render.device()
    }

    /// The body of [`EngineHooks::view_cache_stats`](crate::hooks::EngineHooks::view_cache_stats), which documents it.
    pub(crate) fn view_cache_stats(&self) -> ViewCacheStats {
        self.view.as_ref().map(|v| v.stats()).unwrap_or_default()
    }

    /// Asset totals and the first `MAX_ASSET_FAILURES` failures' messages.
    pub fn asset_report(&self) -> (super::assets::AssetTotals, &[String]) {
        (self.assets.totals(), &self.asset_failures)
    }

    /// The body of [`EngineHooks::loop_totals`](crate::hooks::EngineHooks::loop_totals), which documents it.
    pub(crate) fn loop_totals(&self) -> crate::game_loop::LoopTotals {
        self.game.totals()
    }
}
