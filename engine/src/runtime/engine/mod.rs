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
//! | `mod.rs` | the `Engine`: its parts and its accessors |
//! | `asset_side` | the asset side: the pipeline's owner end, completions, loaded data, failures |
//! | `budget_side` | the budget side: the controller, its agents, readings and the frame's samples |
//! | `build` | assembling an engine from its builder: lanes, world, render and asset lanes, metrics |
//! | `frame` | one frame, phase by phase, and the frame boundary where decisions take effect |
//! | `meter` | the meter: metrics, the lane meter, the trace history, the live view, the run record |
//! | `metrics` | the engine's own metrics: their registration and their per-frame updates |
//! | `render_side` | the render side: the view source, the last view, the render lane's handle |
//! | `replay` | the run log: replaying decisions and input, logging live input |
//! | `stepper` | the stepper: the fixed-step loop and its clock, the physics hook, the SyncTest mode |
//! | `tape` | the tape: input and decisions, logged live or replayed |

use std::sync::Arc;

use lanegraph_budget::hooks::ControllerDriver;
use lanegraph_budget::providers::FixedReadings;
use lanegraph_budget::{
    AdaptationMode, Agent, AgentId, AgentSample, Controller, ControllerConfig, InputError,
    PinError, RegisterError, StrategyIndex,
};
use lanegraph_jobs::{clock, LaneId, Lanes};
use lanegraph_telemetry::{
    self as telemetry, Buckets, Counter, Gauge, Histogram, Registry, TraceHistory, Unit,
};

use super::agents::{
    AssetAgent, AssetSettings, PhysicsAgent, PhysicsSettings, RenderAgent, RenderSettings,
};
use super::assets::AssetStream;
use super::config::EngineConfig;
use super::record::RunRecorder;
use super::render::{RenderDevice, RenderLane};
use super::run_log::{DecisionEntry, RunLog};
use super::view::RenderSetup;
use super::view::ViewCacheStats;
use crate::game_loop::{FixedStep, FrameClock, GameLoop, LoopOptions, ManualClock, MonotonicClock};
use crate::input::{InputEvent, RecordedInput};
use crate::systems::SystemId;
use crate::world::World;

mod asset_side;
mod budget_side;
mod build;
mod frame;
mod meter;
mod metrics;
mod render_side;
mod replay;
mod stepper;
mod tape;

pub use build::BuildError;
use metrics::Metrics;
pub use replay::ReplayError;

use asset_side::AssetSide;
use budget_side::BudgetSide;
use meter::{LaneMeter, Meter};
use render_side::RenderSide;
use stepper::Stepper;
use tape::Tape;

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
///
/// A composition of parts, each in its own file with its fields' writers and readers: the
/// stepper (the loop, its clock, the physics hook), the budget side, the render side, the
/// asset side, the meter (metrics, lane meter, trace history, run record) and the tape (input
/// and decisions, live or replayed); `frame()` is its steps calling them.
pub struct Engine {
    /// The configuration the engine was built with. Writer: `assemble` (build); never changed.
    /// Readers: `run_steps`, `apply_strategies` (`fixed_step_hz`), `Engine::config`.
    config: EngineConfig,
    /// Frames run: the last finished frame's number (0 before the first). Writer: `frame`, after
    /// step 3 (owner thread). Readers: `frame` (the next number), `report_cost`, the replay checks
    /// (`check_decisions`, `check_inputs`), `frames`, `Debug`.
    frame: u64,
    /// The fixed-step loop with its world and clock, the physics hook, the SyncTest mode.
    stepper: Stepper,
    /// The controller, its agents, the readings and the frame's samples.
    budget: BudgetSide,
    /// The view source, the last view and the render lane's handle.
    render: RenderSide,
    /// The asset pipeline's owner end, completions, loaded data and failures.
    assets: AssetSide,
    /// Metrics, the lane meter, the trace history, the live view and the run record.
    meter: Meter,
    /// Input and decisions: logged live, or replayed from a run log.
    tape: Tape,
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
        self.stepper.game.world()
    }

    /// The world, mutably (between frames).
    pub fn world_mut(&mut self) -> &mut World {
        self.stepper.game.world_mut()
    }

    /// The body of [`EngineHooks::sync_test_desync`](crate::hooks::EngineHooks::sync_test_desync), which documents it.
    pub(crate) fn sync_test_desync(&self) -> Option<&crate::world::WorldError> {
        self.stepper
            .sync_test
            .as_ref()
            .and_then(|(_, found)| found.as_ref())
    }

    /// Captures the world and the fixed-step accumulator's leftover (see
    /// [`GameLoop::snapshot_into`]), between frames.
    pub fn snapshot_into(
        &self,
        snapshot: &mut crate::world::Snapshot,
    ) -> Result<(), crate::world::WorldError> {
        self.stepper.game.snapshot_into(snapshot)
    }

    /// Puts back a capture of [`snapshot_into`](Self::snapshot_into) (see
    /// [`GameLoop::restore`]), between frames.
    pub fn restore(
        &mut self,
        snapshot: &crate::world::Snapshot,
    ) -> Result<(), crate::world::WorldError> {
        self.stepper.game.restore(snapshot)
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
        self.stepper.physics = Some(Box::new(f));
        // The SyncTest mode's held steps ran another hook: they are not re-simulated with this one.
        if let Some((sync, _)) = self.stepper.sync_test.as_mut() {
            sync.restart();
        }
    }

    /// The body of [`EngineHooks::run_record`](crate::hooks::EngineHooks::run_record), which documents it.
    pub(crate) fn run_record(&self) -> &RunRecorder {
        &self.meter.record
    }

    /// The body of [`EngineHooks::set_recording`](crate::hooks::EngineHooks::set_recording), which documents it.
    pub(crate) fn set_recording(&mut self, on: bool) {
        self.meter.recording = on;
    }

    /// Registers a game's own agent; `cost` says where its measured cost comes from.
    pub fn add_agent(
        &mut self,
        agent: Box<dyn Agent>,
        cost: AgentCost,
    ) -> Result<AgentId, RegisterError> {
        crate::runtime::agents::check_step_divisors(self.stepper.configured, &*agent)?;
        let id = self.budget.controller.register(agent)?;
        self.budget.custom.push((id, cost));
        Ok(id)
    }

    /// Reports a [`AgentCost::Reported`] agent's cost for the current frame (`n` its workload).
    pub fn report_cost(&mut self, agent: AgentId, n: u64, ms: f64) {
        self.budget.reported.push(AgentSample {
            agent,
            frame: self.frame + 1,
            n,
            ms,
        });
    }

    /// The strategy the controller has chosen for `agent`.
    pub fn strategy(&self, agent: AgentId) -> Option<StrategyIndex> {
        self.budget.controller.current(agent)
    }

    /// The budget controller (its decision log, pins, mode).
    pub fn controller(&self) -> &Controller {
        &self.budget.controller
    }

    /// Tells the budget controller the device's state (thermal, battery, memory): from the
    /// next frame on, every tick reads `readings` until the next call. A platform layer calls
    /// it when the OS reports a change (thermal and battery notifications); what it cannot
    /// report stays at its default, which reads as "no concern" (see `docs/budgets.md`). GPU
    /// memory comes from the engine's render pass unless `readings.gpu_memory` is set.
    pub fn set_readings(&mut self, readings: lanegraph_budget::Readings) {
        let cell = self.budget.readings.get_or_insert_with(|| {
            let cell = FixedReadings::default();
            self.budget.controller.set_providers(Box::new(cell.clone()));
            cell
        });
        cell.set(readings);
    }

    /// The body of [`EngineHooks::set_adaptation`](crate::hooks::EngineHooks::set_adaptation), which documents it.
    pub(crate) fn set_adaptation(&mut self, mode: lanegraph_budget::AdaptationMode) {
        self.budget.controller.set_mode(mode);
    }

    /// The body of [`EngineHooks::record_controller_inputs`](crate::hooks::EngineHooks::record_controller_inputs), which documents it.
    pub(crate) fn record_controller_inputs(&mut self) {
        self.budget.controller.start_recording();
    }

    /// The body of [`EngineHooks::take_controller_recording`](crate::hooks::EngineHooks::take_controller_recording), which documents it.
    pub(crate) fn take_controller_recording(
        &mut self,
    ) -> Option<lanegraph_budget::hooks::Recording> {
        self.budget.controller.take_recording()
    }

    /// The ids of the built-in agents the game installed, in the order physics, render,
    /// asset ([`super::BuiltinAgents`]; empty by default).
    pub fn builtin_agents(&self) -> Vec<AgentId> {
        [
            self.budget.builtins.physics,
            self.budget.builtins.render,
            self.budget.builtins.asset,
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// The body of [`EngineHooks::physics_agent`](crate::hooks::EngineHooks::physics_agent), which documents it.
    pub(crate) fn physics_agent(&self) -> Option<AgentId> {
        self.budget.builtins.physics
    }

    /// The body of [`EngineHooks::render_agent`](crate::hooks::EngineHooks::render_agent), which documents it.
    pub(crate) fn render_agent(&self) -> Option<AgentId> {
        self.budget.builtins.render
    }

    /// Pins `agent` to `strategy` from the next frame on (live, or before the first frame).
    /// The pin is logged as a decision at the current frame and takes effect at the next frame
    /// boundary, exactly as a controller decision or a replayed one does, so a replay of the
    /// run's log reproduces it bit for bit. A pinned agent leaves arbitration until
    /// [`Engine::unpin`].
    pub fn pin(&mut self, agent: AgentId, strategy: &str) -> Result<(), PinError> {
        self.budget.controller.pin(agent, strategy)
    }

    /// Releases a pin: the agent rejoins arbitration on the next tick.
    pub fn unpin(&mut self, agent: AgentId) {
        self.budget.controller.unpin(agent);
    }

    /// Queues an asset load (decoded on the asset lane, uploaded by the render lane).
    pub fn request_asset(&mut self, path: impl Into<std::path::PathBuf>) {
        self.assets.stream.request(path);
    }

    /// Takes the data assets loaded so far (those a loader returned as [`Asset::Data`](super::Asset::Data); images
    /// went to the render pass), oldest first, with the path each was requested by.
    pub fn take_loaded(
        &mut self,
    ) -> impl Iterator<Item = (std::path::PathBuf, Arc<dyn std::any::Any + Send + Sync>)> + '_ {
        self.assets.loaded.drain(..)
    }

    /// The asset stream, for the runtime's fault-injection hooks (feature `testing`).
    #[cfg(feature = "testing")]
    pub(crate) fn assets_mut(&mut self) -> &mut AssetStream {
        &mut self.assets.stream
    }

    // ---- end of run -----------------------------------------------------------------------

    /// The body of [`EngineHooks::finish_render`](crate::hooks::EngineHooks::finish_render), which documents it.
    pub(crate) fn finish_render(&self) {
        self.render.lane.finish();
    }

    /// Has the game's pass draw the last view again and return it as PNG bytes (`None` when
    /// the pass cannot, or no view was published). Waits for the render lane: end of a run.
    pub fn capture_png(&self) -> Option<Vec<u8>> {
        let view = self.render.last_view.clone()?;
        self.render.lane.capture_png(&self.lanes, view)
    }

    /// Frames run.
    pub fn frames(&self) -> u64 {
        self.frame
    }

    /// Each lane's busy share of the last frame, 0..1, in plan order.
    pub fn lane_busy(&self) -> &[f64] {
        &self.meter.lane.busy_now
    }

    /// The last `trace_frames` frames of spans as Chrome Trace Event JSON (`trace.json`: open
    /// it in Perfetto or `chrome://tracing`; `docs/telemetry.md` reads it in a viewer's terms).
    pub fn chrome_trace(&self) -> String {
        self.meter.history.to_chrome_trace()
    }

    /// The body of [`EngineHooks::trace`](crate::hooks::EngineHooks::trace), which documents it.
    pub(crate) fn trace(&self) -> &TraceHistory {
        &self.meter.history
    }

    /// Streams every frame's spans live over puffin's wire protocol on `addr` (e.g.
    /// `127.0.0.1:8585`): `puffin_viewer --url 127.0.0.1:8585` shows the owner and each lane
    /// worker as threads while the game runs. Needs trace spans on (the default). Calling it
    /// again replaces the server.
    #[cfg(feature = "puffin")]
    pub fn serve_puffin(&mut self, addr: &str) -> Result<(), telemetry::EndpointError> {
        self.meter.puffin = Some(telemetry::PuffinServer::start(addr)?);
        Ok(())
    }

    /// The metrics registry (OpenMetrics text: `engine.metrics().to_openmetrics()`).
    pub fn metrics(&self) -> &Registry {
        &self.meter.registry
    }

    /// The render lane's statistics once it has drawn every view published so far (it waits:
    /// for the end of a run; each frame's figures reach the run record and the controller
    /// without waiting).
    pub fn render_stats(&self) -> super::render::RenderStats {
        self.render.lane.finish();
        self.render.lane.stats()
    }

    /// The body of [`EngineHooks::present_intervals_ms`](crate::hooks::EngineHooks::present_intervals_ms), which documents it.
    pub(crate) fn present_intervals_ms(&self) -> Vec<f64> {
        self.render.lane.present_intervals_ms()
    }

    /// The device the game's pass draws on, or why there is none (default without a pass).
    /// Waits for a draw in progress: for the start and end of a run.
    pub fn render_device(&self) -> RenderDevice {
        self.render.lane.device()
    }

    /// The body of [`EngineHooks::view_cache_stats`](crate::hooks::EngineHooks::view_cache_stats), which documents it.
    pub(crate) fn view_cache_stats(&self) -> ViewCacheStats {
        self.render
            .view
            .as_ref()
            .map(|v| v.stats())
            .unwrap_or_default()
    }

    /// Asset totals and the first `MAX_ASSET_FAILURES` failures' messages.
    pub fn asset_report(&self) -> (super::assets::AssetTotals, &[String]) {
        (self.assets.stream.totals(), &self.assets.failures)
    }

    /// The body of [`EngineHooks::loop_totals`](crate::hooks::EngineHooks::loop_totals), which documents it.
    pub(crate) fn loop_totals(&self) -> crate::game_loop::LoopTotals {
        self.stepper.game.totals()
    }
}
