//! The controller: one tick per frame turns measurements into strategy decisions.
//!
//! Owns: the registered agents, the PID, the heuristics, the per-pool overhead estimates, the
//! re-arbitration triggers, hysteresis and dwell, manual mode, the decision log and the input
//! recording. Must never: read a clock, touch the World, telemetry or GPU modules (all inputs
//! arrive as plain values in [`FrameInput`](crate::FrameInput)), or iterate a hash map (every loop runs in agent
//! registration order, so the same inputs give the same decisions, bit for bit).
//!
//! # One tick (frame `N`)
//! 1. Validate the input (refused whole on error: nothing is half-applied).
//! 2. Credit each sample to the strategy that ran in the sample's frame (GPU samples are two
//!    frames late) and update that strategy's cost model and level.
//! 3. Per pool, overhead = pool time - the agents' samples for that frame (median of the last
//!    15 frames): the part of the frame no agent owns.
//! 4. Heuristics give the target and the cap ([`heuristics`](super::heuristics)).
//! 5. Each pool has its own PID: the cap becomes both PIDs' ceiling at once; the CPU pool's
//!    steps on `(target - cpu) / target`, the GPU pool's on `(target - latest gpu) / target`
//!    while a GPU reading is current: the pool's multiplier `m[pool]`. A pool answers for its
//!    own time: a GPU-bound frame lowers what costs GPU time and leaves CPU agents where the
//!    CPU's own time puts them, and the other way round.
//! 6. Calibrate every strategy's cost. Per pool, capacity = `m[pool] * target - overhead - pinned`.
//! 7. Re-arbitrate when: first tick, agents or pins or mode changed, the cap or critical state
//!    changed, an agent below its best strategy reached the end of its dwell, `m` or the target moved by more than `renegotiate_delta`, a pool's current
//!    choice no longer fits (beyond `keep_tolerance`), or a pool's calibrated cost moved by
//!    more than `cost_move_fraction` of its capacity.
//! 8. Arbitrate each pool (exact, [`arbitration`](crate::arbitration)) with hysteresis in the
//!    costs: upgrades count `1 + upgrade_margin`, the current strategy `1 - keep_tolerance`;
//!    an agent changed within `dwell_frames` may not upgrade. No fit: every agent of the pool
//!    takes its cheapest strategy, and the log says so.
//! 9. Apply each change (the new strategy runs from frame `N + 1`) and log it with its reason.
//!
//! # Remembered costs, probes and bars
//! Each strategy is priced by its own measurements when it has any (`slot`: remembered, fading
//! with a [`COST_MEMORY_HALF_LIFE_S`] half-life), by its quote only when it has none. An
//! upgrade is a probe until it holds through its dwell. A probe that overruns (the pool no
//! longer fits and the agent steps down before its dwell ends) is undone on the tick its
//! samples show it, and the strategy and every richer one are barred for [`BAR_FIRST_S`],
//! doubling with each overrun of the agent in a row up to [`BAR_MAX_S`] (a probe that holds
//! forgives them); the bar lifts early when the evidence changes (the agent's workload falls
//! by the overrun ratio, or the pool's other costs fall by the excess). A bar is long because
//! a probe that overruns is a hitch the player sees: the evidence clauses, not the clock, are
//! what lets a lighter scene climb back soon.
//! An idle agent (no sample with work for [`IDLE_FRAMES`]) takes no decisions.
//!
//! | file | idea |
//! |------|------|
//! | `driver` | `ControllerDriver`: registration, pins, modes, recording, the figures tests read, the tick's entry points |
//! | `pool` | Steps 8-9 for one pool: price, solve, fall back, apply and log each change with its reason |
//! | `tick` | One tick as a `Tick` value its numbered steps fill in order |

use super::agent::{AgentId, Strategy, StrategyIndex};
use super::arbitration::{Arbiter, ArbiterOption};
use super::config::ControllerConfig;
use super::heuristics::Heuristics;
use super::log::{Decision, DecisionLog};
use super::pid::Pid;
use super::providers::Providers;
use super::record::Recording;
use super::slot::Slot;

/// Standard errors of the measured level added to an upgrade's margin (2: an upgrade made on
/// a lucky low reading is a 1-in-40 event per look instead of 1-in-2).
const UPGRADE_NOISE_SIGMAS: f64 = 2.0;

/// Frame-to-frame spreads of the measured level added to an upgrade's margin.
const UPGRADE_SPREADS: f64 = 1.0;

/// Frames of per-pool overhead the median runs over (a 1-in-100 hitch stays out of it).
const OVERHEAD_WINDOW: usize = 15;

/// A GPU reading older than this many frames is not used.
const GPU_STALE_FRAMES: u64 = 4;

/// Half-life of a strategy's remembered cost, seconds: a rung measured cheaper than its quote
/// fades half way back to the quote's ratio in this long; one measured dearer keeps its price
/// until measured again (`slot`).
pub(crate) const COST_MEMORY_HALF_LIFE_S: f64 = 30.0;

/// The first bar on a strategy that overran right after an upgrade (and on every richer one),
/// seconds: at most one such hitch per agent in half a minute while nothing changes; each
/// further overrun in a row doubles it, up to [`BAR_MAX_S`].
pub(crate) const BAR_FIRST_S: f64 = 30.0;
/// The longest bar, seconds.
pub(crate) const BAR_MAX_S: f64 = 240.0;

/// An agent whose latest sample with work (`n > 0`) is older than this many frames is idle:
/// it takes no decisions (nothing drawn, nothing loaded) and keeps its strategy.
pub(crate) const IDLE_FRAMES: u64 = 60;

/// Adaptive or pinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AdaptationMode {
    /// The controller picks strategies.
    #[default]
    Adaptive,
    /// Every agent keeps its strategy until told otherwise
    /// ([`ControllerDriver::pin`]): for A/B work,
    /// so adaptation is not a variable.
    Manual,
}

/// What one tick did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TickReport {
    /// The frame.
    pub frame: u64,
    /// Frame-time target, ms.
    pub target_ms: f64,
    /// Budget multiplier: the lower of the pools' (the GPU's only while a GPU reading is
    /// current).
    pub multiplier: f64,
    /// Each pool's multiplier: `[cpu, gpu]`.
    pub pool_multipliers: [f64; 2],
    /// The measured frame, ms (`max(cpu, latest gpu)`).
    pub measured_ms: f64,
    /// True when this tick re-arbitrated.
    pub arbitrated: bool,
    /// Decisions made this tick.
    pub decisions: usize,
    /// True while a critical cap (thermal, battery, memory, death spiral) holds.
    pub critical: bool,
}

/// A pin request the controller refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PinError {
    /// No such agent.
    #[error("pin: unknown {0} (fix: use the id `register` returned)")]
    UnknownAgent(AgentId),
    /// No agent of that name (a replayed decision log from another game or version).
    #[error("pin: no agent named `{0}` (fix: replay a decision log made by this game)")]
    UnknownAgentName(String),
    /// No such strategy.
    #[error("pin: agent `{agent}` has no strategy `{strategy}` (fix: one of {known})")]
    UnknownStrategy {
        /// The agent.
        agent: String,
        /// The name asked for.
        strategy: String,
        /// The names it has.
        known: String,
    },
}

/// The adaptive budget controller (module docs: one tick).
pub struct Controller {
    /// The configuration, validated. Writer: `new`; never changed. Readers: `tick_with`,
    /// `arbitrate_pool`, `pin`, `frames_per_second`, `config`.
    cfg: ControllerConfig,
    /// The agents in registration order (`AgentId` is the index), with their cost memory, pins,
    /// probes and bars. Writers: `register`, `pin`, `unpin`, `announce_workload`, `tick_with`
    /// (steps 2, 6), `arbitrate_pool` (step 9). Readers: those and the per-agent accessors.
    slots: Vec<Slot>,
    /// The device readings and the GPU memory signal. Writers: `set_providers`,
    /// `set_gpu_memory_provider`.
    /// Reader: `tick`, which polls them once per tick (`tick_with` gets readings instead).
    providers: Providers,
    /// The heuristics giving the target, the cap and the death spiral. Writer: `tick_with` (step 4,
    /// `assess`). Readers: `tick_with`, `in_death_spiral`.
    heuristics: Heuristics,
    /// Per pool (CPU, GPU), the PID whose output is that pool's budget multiplier. Writer:
    /// `tick_with` (step 5: `set_max`, `update`). Readers: `multiplier`, `pin` (logged with its
    /// decision), `Debug`.
    pid: [Pid; 2],
    /// True while the newest GPU reading is current (the GPU multiplier counts in
    /// `multiplier`). Writer: `tick_with` (step 5). Reader: `multiplier`.
    gpu_current: bool,
    /// The exact solver and its reused tables. Writer and reader: `arbitrate_pool` (step 8).
    arbiter: Arbiter,
    /// The decision log. Writers: `arbitrate_pool` (step 9), `pin` (manual decisions).
    /// Readers: `log`, `Debug`.
    log: DecisionLog,
    /// Adaptive or manual. Writer: `set_mode`. Readers: `tick_with` (step 7: arbitrates only when
    /// adaptive), `mode`, `Debug`.
    mode: AdaptationMode,
    /// The last tick's frame (`None` before the first). Writer: `tick_with` (step 1). Readers: the
    /// input checks of `tick` and `tick_with`, `pin`, `calibrated_costs`, `is_barred`.
    last_frame: Option<u64>,
    /// The newest GPU reading: the frame it measures and its time, ms. Writer: `tick_with` (steps
    /// 2-3, from `FrameInput::gpu`). Reader: `tick_with` (used while not stale).
    last_gpu: Option<(u64, f64)>,
    /// Per pool (CPU, GPU), the median unattributed time, ms. Writer: `tick_with` (step 3).
    /// Readers: `tick_with` (capacity, steps 6-7), `arbitrate_pool`, `is_barred`.
    overhead: [f64; 2],
    /// Per pool, the last frames' unattributed times the median runs over.
    /// Writer and reader: `tick_with` (step 3).
    overhead_window: [OverheadWindow; 2],
    /// Something changed since the last arbitration. Writers: `register`, `set_mode`, `pin`,
    /// `unpin` (set), `tick_with` (cleared on a triggered tick). Reader: `tick_with` (step 7).
    dirty: bool,
    /// The death spiral held at the last tick: the warning is logged on entry only.
    /// Writer and reader: `tick_with` (steps 4-5).
    was_spiral: bool,
    /// What the last arbitration saw, for the dead bands (`None`: none yet). Writer: `tick_with`
    /// (after step 8). Reader: `tick_with` (step 7).
    last_arb: Option<ArbMark>,
    /// The recording in progress (`None`: not recording). Writers: `start_recording`,
    /// `take_recording`, `tick_with` (step 1: each tick's input). Reader: `take_recording`.
    recording: Option<Recording>,
    // Reusable scratch (no allocation once warm).
    /// Per agent (slot order), each strategy's calibrated cost this tick, ms. Writer: `tick_with`
    /// (step 6). Readers: `tick_with` (steps 6-8), `arbitrate_pool`.
    costs: Vec<Vec<f64>>,
    /// Per agent in arbitration, its options as the arbiter sees them.
    /// Writer and reader: `arbitrate_pool` (step 8).
    groups: Vec<Vec<ArbiterOption>>,
    /// The slot indices of the pool's agents in arbitration (not pinned, not idle).
    /// Writer and reader: `arbitrate_pool` (step 8).
    members: Vec<usize>,
    /// The strategy chosen for each of `members`. Writers: `Arbiter::solve`, or `arbitrate_pool`'s
    /// cheapest fallback. Reader: `arbitrate_pool` (step 9).
    chosen: Vec<u8>,
}

/// The last frames' unattributed time of one pool (its median is the overhead).
#[derive(Debug, Clone, Copy, Default)]
struct OverheadWindow {
    ring: [f64; OVERHEAD_WINDOW],
    len: usize,
    head: usize,
}

/// What the last arbitration saw (the dead bands are measured from here).
#[derive(Debug, Clone, Copy)]
struct ArbMark {
    frame: u64,
    multiplier: [f64; 2],
    target: f64,
    cap: f64,
    critical: bool,
    pool_cost: [f64; 2],
}

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("agents", &self.slots.len())
            .field("mode", &self.mode)
            .field("multiplier", &self.pool_multipliers())
            .field("decisions", &self.log.total())
            .finish()
    }
}

impl Controller {
    /// Each pool's multiplier (CPU, GPU), the PIDs' outputs.
    fn pool_multipliers(&self) -> [f64; 2] {
        [self.pid[0].output(), self.pid[1].output()]
    }

    /// The agent's name.
    pub fn agent_name(&self, id: AgentId) -> Option<&str> {
        self.slots.get(id.index()).map(|s| s.name.as_str())
    }

    /// The agent's id by name.
    pub fn agent_id(&self, name: &str) -> Option<AgentId> {
        self.slots
            .iter()
            .position(|s| s.name == name)
            .map(|i| AgentId(i as u16))
    }

    /// The agent's declared strategies.
    pub fn strategies(&self, id: AgentId) -> Option<&[Strategy]> {
        self.slots.get(id.index()).map(|s| s.strategies.as_slice())
    }

    /// Frames per second of the frame budget (bars and memory are kept in seconds).
    fn frames_per_second(&self) -> f64 {
        1000.0 / self.cfg.frame_budget_ms
    }

    /// The adaptation mode.
    pub fn mode(&self) -> AdaptationMode {
        self.mode
    }

    /// Logs a game's pin or unpin of agent `id` (`from` -> `to`, equal when it changed nothing).
    fn log_manual(
        &mut self,
        id: AgentId,
        from: StrategyIndex,
        to: StrategyIndex,
        reason: &str,
        frame: u64,
    ) {
        let slot = &self.slots[id.index()];
        let d = Decision {
            frame,
            agent: id,
            agent_name: slot.name.clone(),
            from,
            to,
            from_name: slot.strategies[from.get()].name.clone(),
            to_name: slot.strategies[to.get()].name.clone(),
            reason: reason.to_string(),
            multiplier: self.pid[slot.pool.index()].output(),
            target_ms: self.cfg.base_target_ms(),
        };
        self.log.push(d);
    }
}

mod driver;
mod pool;
mod tick;

pub use driver::ControllerDriver;
