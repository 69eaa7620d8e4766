//! The controller: one tick per frame turns measurements into strategy decisions.
//!
//! Owns: the registered agents, the PID, the heuristics, the per-pool overhead estimates, the
//! re-arbitration triggers, hysteresis and dwell, manual mode, the decision log and the input
//! recording. Must never: read a clock, touch the World, telemetry or GPU modules (all inputs
//! arrive as plain values in [`FrameInput`]), or iterate a hash map (every loop runs in agent
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
//! 8. Arbitrate each pool (exact, [`arbitration`]) with hysteresis in the
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

use super::agent::{self, limits, Agent, AgentId, Pool, RegisterError, Strategy, StrategyIndex};
use super::arbitration::{self, Arbiter, ArbiterOption};
use super::config::{ConfigError, ControllerConfig, FrameInput, InputError, GPU_READ_LAG_FRAMES};
use super::cost_model::Fit;
use super::heuristics::{le_or_gt, median_in_place, Assessment, Finding, Heuristics, Signals};
use super::log::{Decision, DecisionLog};
use super::pid::Pid;
use super::providers::{Providers, Readings, ReadingsProvider};
use super::record::{RecordedFrame, Recording};
use super::slot::{Bar, Slot};

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
    /// ([`ControllerDriver::pin`](crate::hooks::ControllerDriver::pin)): for A/B work,
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

    /// Step 8 for one pool; returns the number of changes.
    ///
    /// One function (about 220 lines) on purpose: the pool's members, their options priced at
    /// this tick's multiplier, the exact arbitration (`arbitration`), the hysteresis and dwell
    /// checks and each switch's reason all read the same per-pool figures (capacity, current
    /// and new cost), and the reason text must quote exactly the figures the choice used.
    #[allow(clippy::too_many_arguments)]
    fn arbitrate_pool(
        &mut self,
        pool: Pool,
        frame: u64,
        m: f64,
        a: &Assessment,
        gpu_ms: Option<f64>,
        cpu_ms: f64,
    ) -> usize {
        let p = pool.index();
        let cfg = self.cfg;
        self.members.clear();
        let mut pinned_cost = 0.0;
        for (i, slot) in self.slots.iter().enumerate() {
            if slot.pool != pool {
                continue;
            }
            let idle = slot
                .last_work
                .is_none_or(|f| frame.saturating_sub(f) > IDLE_FRAMES);
            if slot.pinned.is_some() || idle {
                // Held where it is: its cost is reserved from the pool.
                pinned_cost += self.costs[i][slot.current.get()];
            } else {
                self.members.push(i);
            }
        }
        if self.members.is_empty() {
            return 0;
        }
        let capacity = m * a.target_ms - self.overhead[p] - pinned_cost;
        self.groups.resize_with(self.members.len(), Vec::new);
        for (g, &i) in self.groups.iter_mut().zip(&self.members) {
            let slot = &self.slots[i];
            let cur = slot.current.get();
            let cur_q = slot.strategies[cur].quality;
            let dwelling = slot
                .last_change
                .is_some_and(|f| frame < f + cfg.dwell_frames);
            // The upgrade margin widens with the measurement's noise (two standard errors).
            // And with the frame-to-frame spread: the upgraded frames, not only their mean,
            // must fit (one spread: a rung whose frames swing 10 % needs 10 % more room).
            let up = cfg.upgrade_margin
                + UPGRADE_NOISE_SIGMAS * slot.level_noise()
                + UPGRADE_SPREADS * slot.level_spread();
            // Upgrades are priced at the agent's recent peak load (`Slot::peak_load_ratio`).
            let peak = slot.peak_load_ratio();
            g.clear();
            for (j, s) in slot.strategies.iter().enumerate() {
                let c = self.costs[i][j];
                let upgrade = s.quality > cur_q;
                if upgrade && dwelling {
                    continue;
                }
                if j != cur && slot.barred(j, frame, self.overhead[p]) {
                    continue;
                }
                // An upgrade onto a rung no measurement has priced moves one rung: a wrong
                // quote then costs one rung's overrun at most, and the rung it measures
                // prices the rest of the ladder (`Slot::price_ladder`).
                if upgrade
                    && !slot.measured(j)
                    && slot
                        .strategies
                        .iter()
                        .any(|t| t.quality > cur_q && t.quality < s.quality)
                {
                    continue;
                }
                let counted = if j == cur {
                    c * (1.0 - cfg.keep_tolerance)
                } else if upgrade {
                    // The margin, plus a dead band: room for one more rung's cost, up to
                    // `UPGRADE_DEAD_BAND` of the target, so on a fine ladder (a continuous
                    // strategy) a fit that moves by less than that moves nothing.
                    c * (1.0 + up) * peak
                        + rung_step(&slot.strategies, &self.costs[i], j)
                            .min(UPGRADE_DEAD_BAND * a.target_ms)
                } else {
                    c
                };
                g.push(ArbiterOption {
                    strategy: j as u8,
                    cost: counted,
                    value: slot.value(j),
                    current: j == cur,
                });
            }
        }
        let refs: Vec<&[ArbiterOption]> = self.groups.iter().map(|g| g.as_slice()).collect();
        let solved = self.arbiter.solve(&refs, capacity, &mut self.chosen);
        drop(refs);
        let feasible = solved.is_some();
        if !feasible {
            // Nothing fits: every agent of the pool to its cheapest strategy (ties: first).
            self.chosen.clear();
            // Never a richer rung than the one in force: a price that says a richer rung is
            // cheaper is a quote not yet measured, and nothing fitting is no time to try it.
            for &i in &self.members {
                let costs = &self.costs[i];
                let slot = &self.slots[i];
                let cur = slot.current.get();
                let cur_q = slot.strategies[cur].quality;
                let mut best = cur;
                for j in 0..costs.len() {
                    if slot.strategies[j].quality <= cur_q && costs[j] < costs[best] {
                        best = j;
                    }
                }
                self.chosen.push(best as u8);
            }
        }
        let current_cost: f64 = self
            .members
            .iter()
            .map(|&i| self.costs[i][self.slots[i].current.get()])
            .sum();
        let priced = |chosen: &[u8]| -> f64 {
            self.members
                .iter()
                .zip(chosen)
                .map(|(&i, &j)| self.costs[i][j as usize])
                .sum()
        };
        let mut new_cost = priced(&self.chosen);
        let upgrades = self
            .members
            .iter()
            .zip(&self.chosen)
            .any(|(&i, &j)| self.slots[i].richer(j as usize));
        if feasible && upgrades && new_cost > capacity {
            // The tolerances let the solver keep a current choice slightly over its share;
            // an upgrade must not ride on that: every upgrade of this pool waits, and when the
            // pool fitted as it was, so do the downgrades that were to pay for them.
            let fitted = current_cost <= capacity;
            for (k, &i) in self.members.iter().enumerate() {
                let slot = &self.slots[i];
                if fitted || slot.richer(self.chosen[k] as usize) {
                    self.chosen[k] = slot.current.get() as u8;
                }
            }
            new_cost = priced(&self.chosen);
        }
        let pool_measured = match pool {
            Pool::Cpu => Some(cpu_ms),
            Pool::Gpu => gpu_ms,
        };
        // Agents upgraded in this pool (named in the reason of a downgrade that makes room).
        let mut upgraded = String::new();
        for (k, &i) in self.members.iter().enumerate() {
            let slot = &self.slots[i];
            if slot.richer(self.chosen[k] as usize) {
                if !upgraded.is_empty() {
                    upgraded.push_str(", ");
                }
                upgraded.push_str(&slot.name);
            }
        }
        let trade = feasible && current_cost <= capacity && !upgraded.is_empty();
        let fps = self.frames_per_second();
        let mut changes = 0;
        for k in 0..self.members.len() {
            let i = self.members[k];
            let to = StrategyIndex(self.chosen[k]);
            let slot = &self.slots[i];
            let from = slot.current;
            if from == to {
                continue;
            }
            let upgrade = slot.richer(to.get());
            // What the strategy this agent moves to is priced by: its own measurement or the
            // quote (named in the reason).
            let to_cost = self.costs[i][to.get()];
            let (how, unmeasured) = if slot.measured(to.get()) {
                ("measured", "")
            } else if slot.any_measured() {
                ("estimated", " from the measured rungs (not yet measured)")
            } else {
                ("quoted", " (not yet measured)")
            };
            let rung = format!(
                "{} `{}` {how} {to_cost:.1} ms{unmeasured}",
                slot.name,
                slot.strategies[to.get()].name,
            );
            // A probe that overran: bar it (module docs).
            let mut barred = String::new();
            if !upgrade && !trade {
                if let Some((j, start)) = slot.probe.filter(|&(j, _)| j == from) {
                    if frame < start + cfg.dwell_frames {
                        let others: f64 = self
                            .members
                            .iter()
                            .zip(&self.chosen)
                            .filter(|&(&m, _)| m != i)
                            .map(|(&m, &c)| self.costs[m][c as usize])
                            .sum();
                        let available = capacity - others;
                        let measured_cost = self.costs[i][j.get()];
                        // Overruns in a row count for the agent, whichever rung overran.
                        let strikes = slot.strikes.saturating_add(1).min(16);
                        let secs = (BAR_FIRST_S * 2f64.powi(i32::from(strikes) - 1)).min(BAR_MAX_S);
                        let until = frame + (secs * fps).ceil() as u64;
                        let bar = Bar {
                            until,
                            n_at: slot.workload(),
                            overrun: (measured_cost / available.max(1e-6)).clamp(1.0, 1e6),
                            overhead_at: self.overhead[p],
                            excess_ms: (measured_cost - available).max(0.0),
                        };
                        barred = format!(
                            "; `{}` overran ({:.1} ms measured, {:.1} ms available): barred {secs:.0} s with every richer rung",
                            slot.strategies[j.get()].name,
                            measured_cost,
                            available.max(0.0)
                        );
                        // The rung and every richer one: what overran bounds them from below.
                        let q = slot.strategies[j.get()].quality;
                        let slot = &mut self.slots[i];
                        slot.strikes = strikes;
                        for k in 0..slot.strategies.len() {
                            if slot.strategies[k].quality >= q {
                                slot.bars[k] = Some(bar);
                            }
                        }
                        slot.probe = None;
                    }
                }
            }
            let slot = &self.slots[i];
            let reason = reason(&ReasonCtx {
                pool,
                upgrade,
                feasible,
                a,
                m,
                pool_measured,
                capacity,
                current_cost,
                new_cost,
                overhead: self.overhead[p],
                margin: cfg.upgrade_margin,
                upgraded: &upgraded,
                rung: &rung,
            }) + &barred;
            let d = Decision {
                frame,
                agent: AgentId(i as u16),
                agent_name: slot.name.clone(),
                from,
                to,
                from_name: slot.strategies[from.get()].name.clone(),
                to_name: slot.strategies[to.get()].name.clone(),
                reason,
                multiplier: m,
                target_ms: a.target_ms,
            };
            let slot = &mut self.slots[i];
            slot.switch(to, frame + 1, frame);
            if upgrade {
                slot.probe = Some((to, frame + 1));
            }
            self.log.push(d);
            changes += 1;
        }
        changes
    }
}

/// The upgrade dead band, as a share of the target: an upgrade needs this much room (or one
/// rung's cost, when smaller) beyond its margin, as Unreal's dynamic resolution ignores changes
/// below a threshold.
const UPGRADE_DEAD_BAND: f64 = 0.02;

/// One rung's cost at strategy `j`: its price less that of the rung just below it in quality
/// (0 for the lowest rung). The upgrade hysteresis is one such step.
fn rung_step(strategies: &[Strategy], costs: &[f64], j: usize) -> f64 {
    let q = strategies[j].quality;
    let below = (0..strategies.len())
        .filter(|&k| strategies[k].quality < q)
        .max_by_key(|&k| strategies[k].quality);
    below.map_or(0.0, |k| (costs[j] - costs[k]).max(0.0))
}

/// `<= capacity 14.6 ms` or `> capacity 14.6 ms`; a pool with nothing left prints 0 and says
/// so in words (never a negative capacity).
fn against_capacity(cost: f64, capacity: f64) -> String {
    if capacity > 0.0 {
        format!("{} capacity {capacity:.1} ms", le_or_gt(cost, capacity))
    } else {
        format!(
            "{} capacity 0.0 ms (none left: the pool's other costs exceed its share by {:.1} ms)",
            le_or_gt(cost, 0.0),
            -capacity
        )
    }
}

struct ReasonCtx<'a> {
    pool: Pool,
    upgrade: bool,
    feasible: bool,
    a: &'a Assessment,
    m: f64,
    /// The pool's own time this frame (`None`: no current GPU reading).
    pool_measured: Option<f64>,
    capacity: f64,
    current_cost: f64,
    new_cost: f64,
    overhead: f64,
    margin: f64,
    upgraded: &'a str,
    /// The moved agent's target strategy and what prices it (`physics `full` measured 28.0 ms`).
    rung: &'a str,
}

/// The reason text: the cause (a cap, the pool's pressure, a heuristic's target, or the PID),
/// then the pool's figures.
fn reason(c: &ReasonCtx<'_>) -> String {
    let pool = c.pool.name();
    if c.upgrade {
        let pm = c.pool_measured.unwrap_or(0.0);
        let lead = if le_or_gt(pm, c.a.target_ms) == "<=" {
            "headroom"
        } else {
            "cost fits"
        };
        return format!(
            "{lead}: {pool} {pm:.1} ms {} target {:.1} ms; {pool} cost {:.1} -> {:.1} ms {} with {:.0} % margin (multiplier {:.2}); {}",
            le_or_gt(pm, c.a.target_ms),
            c.a.target_ms,
            c.current_cost,
            c.new_cost,
            against_capacity(c.new_cost, c.capacity),
            c.margin * 100.0,
            c.m,
            c.rung
        );
    }
    if c.feasible && c.current_cost <= c.capacity && !c.upgraded.is_empty() {
        // The current choice fitted: this downgrade is a trade for more total quality.
        return format!(
            "trade: makes room for {} (more total quality); {pool} cost {:.1} -> {:.1} ms {} (multiplier {:.2}); {}",
            c.upgraded,
            c.current_cost,
            c.new_cost,
            against_capacity(c.new_cost, c.capacity),
            c.m,
            c.rung
        );
    }
    let cause: String = match (c.a.cap_by, c.a.pressure[c.pool.index()]) {
        (Some(by), _) if c.m >= c.a.cap - 1e-12 => by.to_string(),
        (_, Some(p)) => p.to_string(),
        _ => match c.a.target_by {
            Finding::FrameTime { .. } => match c.pool_measured {
                Some(pm) => format!(
                    "budget: {pool} {pm:.1} ms vs target {:.1} ms, multiplier {:.2}",
                    c.a.target_ms, c.m
                ),
                None => format!(
                    "budget: no current {pool} reading, target {:.1} ms, multiplier {:.2}",
                    c.a.target_ms, c.m
                ),
            },
            other => other.to_string(),
        },
    };
    if c.feasible {
        format!(
            "{cause}; {pool} cost {:.1} ms {} (multiplier {:.2}, overhead {:.1} ms) -> {:.1} ms; {}",
            c.current_cost,
            against_capacity(c.current_cost, c.capacity),
            c.m,
            c.overhead,
            c.new_cost,
            c.rung
        )
    } else {
        format!(
            "{cause}; even the cheapest {pool} choice ({:.1} ms) {} (multiplier {:.2}) — degrading to cheapest; {}",
            c.new_cost,
            against_capacity(c.new_cost, c.capacity),
            c.m,
            c.rung
        )
    }
}

/// The controller's calls for an engine, a replay tool or a test (`crate::hooks`' docs).
pub trait ControllerDriver {
    /// The decision log in memory: each switch with its indices, the multiplier and target at
    /// the time, and its reason (a game reads the same decisions, by name, in its run summary).
    fn log(&self) -> &DecisionLog;

    /// The configuration.
    fn config(&self) -> &ControllerConfig;

    /// The budget multiplier: the PID's output, which scales the frame target under pressure.
    fn multiplier(&self) -> f64;

    /// The agent's current strategy (a game asks its engine: `Engine::strategy`).
    fn current(&self, id: AgentId) -> Option<StrategyIndex>;

    /// Announces the workload an agent is about to run (e.g. a level streamed in 10,000
    /// bodies): costs are extrapolated along the fitted law before the samples show it. Cleared
    /// by passing `None`.
    fn announce_workload(&mut self, id: AgentId, n: Option<u64>);

    /// A controller with no agents and no providers.
    fn new(cfg: ControllerConfig) -> Result<Self, ConfigError>
    where
        Self: Sized;

    /// Installs the device readings (thermal, battery, memory, and GPU memory where the
    /// platform reports it) polled every tick, replacing the last ones installed.
    fn set_providers(&mut self, provider: Box<dyn ReadingsProvider>);

    /// Installs the GPU memory signal read when the device readings report none (an engine
    /// installs its own at build, fed by its render pass); only its `gpu_memory` is read.
    fn set_gpu_memory_provider(&mut self, provider: Box<dyn ReadingsProvider>);

    /// Registers an agent; it starts on its highest-quality strategy (ties: the first declared)
    /// and is told so. The next tick arbitrates.
    fn register(&mut self, agent: Box<dyn Agent>) -> Result<AgentId, RegisterError>;

    /// Pins an agent to a strategy by name, at once (logged as a manual decision). A pinned
    /// agent is left out of arbitration and its cost is reserved from its pool's capacity.
    fn pin(&mut self, id: AgentId, strategy: &str) -> Result<(), PinError>;

    /// Releases a pin; the agent rejoins arbitration on the next tick.
    fn unpin(&mut self, id: AgentId);

    /// Registered agents.
    fn agent_count(&self) -> usize;

    /// Every registered agent's id, in registration order.
    fn agent_ids(&self) -> impl ExactSizeIterator<Item = AgentId> + '_;

    /// The pool the agent's cost lands on.
    fn pool(&self, id: AgentId) -> Option<Pool>;

    /// The agent's current strategy's fitted cost law, once it has enough samples.
    fn cost_fit(&self, id: AgentId) -> Option<Fit>;

    /// The agent's calibrated cost of each strategy right now, ms (quotes times the measured
    /// factor; order preserved).
    fn calibrated_costs(&self, id: AgentId) -> Option<Vec<f64>>;

    /// The agent's quoted cost of each strategy at its current workload, ms (what the game
    /// declared, before any measurement): beside [`Self::calibrated_costs`], the report's
    /// ladder table of quoted against priced cost.
    fn quoted_costs(&self, id: AgentId) -> Option<Vec<f64>>;

    /// Per strategy, true when its price rests on measurements of its own (false: estimated
    /// from the measured rungs, or the quote alone when none is measured).
    fn measured_rungs(&self, id: AgentId) -> Option<Vec<bool>>;

    /// True while the agent's strategy `strategy` is barred (it overran right after an upgrade;
    /// module docs): the arbiter will not choose it.
    fn is_barred(&self, id: AgentId, strategy: StrategyIndex) -> bool;

    /// True while the death spiral holds (the fixed step kept clamping; every agent is held at
    /// its cheapest strategy). Entering it logs a `budget/death_spiral` warning.
    fn in_death_spiral(&self) -> bool;

    /// The newest GPU reading fed (`FrameInput::gpu`): the frame it measures and its time, ms.
    fn last_gpu(&self) -> Option<(u64, f64)>;

    /// Switches mode. Entering `Manual` freezes every agent where it is; leaving it
    /// re-arbitrates on the next tick (pins made with [`Self::pin`] stay until unpinned).
    fn set_mode(&mut self, mode: AdaptationMode);

    /// Starts recording every tick's input and readings (for replay).
    fn start_recording(&mut self);

    /// Stops recording and returns what was recorded.
    fn take_recording(&mut self) -> Option<Recording>;

    /// One tick: polls the providers, then [`Self::tick_with`].
    fn tick(&mut self, input: &FrameInput<'_>) -> Result<TickReport, InputError>;

    /// Replays a recording into this controller (which must have the same agents, registered
    /// in the same order, and the same configuration): the same decisions come out, bit for
    /// bit. Returns the per-tick reports.
    fn replay(&mut self, recording: &Recording) -> Result<Vec<TickReport>, InputError>;

    /// One tick with given provider readings (module docs: steps 1-9).
    ///
    /// One function (about 170 lines) on purpose: the nine steps share the tick's validated
    /// input and run in the order the module docs number them (validate, credit samples,
    /// overhead, heuristics, PID, calibrate, trigger, arbitrate, apply and log); each step's
    /// own logic lives in its module (`cost_model`, `heuristics`, `pid`, `arbitration`, `log`).
    fn tick_with(
        &mut self,
        input: &FrameInput<'_>,
        readings: Readings,
    ) -> Result<TickReport, InputError>;
}

impl ControllerDriver for Controller {
    fn log(&self) -> &DecisionLog {
        &self.log
    }

    fn config(&self) -> &ControllerConfig {
        &self.cfg
    }

    fn multiplier(&self) -> f64 {
        let [cpu, gpu] = self.pool_multipliers();
        if self.gpu_current {
            cpu.min(gpu)
        } else {
            cpu
        }
    }

    fn current(&self, id: AgentId) -> Option<StrategyIndex> {
        self.slots.get(id.index()).map(|s| s.current)
    }

    fn announce_workload(&mut self, id: AgentId, n: Option<u64>) {
        if let Some(s) = self.slots.get_mut(id.index()) {
            s.announced_n = n;
        }
    }

    fn new(cfg: ControllerConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(Controller {
            cfg,
            slots: Vec::new(),
            providers: Providers::default(),
            heuristics: Heuristics::new(cfg.frame_budget_ms, cfg.headroom, cfg.pid.min),
            pid: [Pid::new(cfg.pid), Pid::new(cfg.pid)],
            gpu_current: false,
            arbiter: Arbiter::new(),
            log: DecisionLog::new(cfg.log_capacity),
            mode: AdaptationMode::Adaptive,
            last_frame: None,
            last_gpu: None,
            overhead: [0.0; 2],
            overhead_window: [OverheadWindow::default(); 2],
            dirty: true,
            was_spiral: false,
            last_arb: None,
            recording: None,
            costs: Vec::new(),
            groups: Vec::new(),
            members: Vec::new(),
            chosen: Vec::new(),
        })
    }

    fn set_providers(&mut self, provider: Box<dyn ReadingsProvider>) {
        self.providers.device = Some(provider);
    }

    fn set_gpu_memory_provider(&mut self, provider: Box<dyn ReadingsProvider>) {
        self.providers.gpu_memory = Some(provider);
    }

    fn register(&mut self, agent: Box<dyn Agent>) -> Result<AgentId, RegisterError> {
        let name = agent.name().to_string();
        if self.slots.len() >= limits::MAX_AGENTS {
            return Err(RegisterError::TooManyAgents {
                agent: name,
                max: limits::MAX_AGENTS,
            });
        }
        let strategies = agent.strategies();
        agent::validate(&name, agent.weight(), &strategies, |n| {
            self.slots.iter().any(|s| s.name == n)
        })?;
        let max_value = |ss: &[Strategy], w: u16| {
            ss.iter().map(|s| s.quality as u32).max().unwrap_or(0) * w as u32
        };
        let (agents, width) = arbitration::table_size(
            self.slots
                .iter()
                .map(|s| max_value(&s.strategies, s.weight))
                .chain(std::iter::once(max_value(&strategies, agent.weight()))),
        );
        if agents * width > arbitration::MAX_TABLE_CELLS {
            return Err(RegisterError::ArbitrationTooLarge {
                agent: name,
                cells: agents * width,
                max: arbitration::MAX_TABLE_CELLS,
            });
        }
        let mut best = 0;
        for (i, s) in strategies.iter().enumerate() {
            if s.quality > strategies[best].quality {
                best = i;
            }
        }
        let initial = StrategyIndex(best as u8);
        let mut slot = Slot::new(agent, strategies, initial);
        slot.agent.apply(initial, &slot.strategies[best]);
        let id = AgentId(self.slots.len() as u16);
        self.slots.push(slot);
        self.dirty = true;
        Ok(id)
    }

    fn pin(&mut self, id: AgentId, strategy: &str) -> Result<(), PinError> {
        let frame = self.last_frame.unwrap_or(0);
        let slot = self
            .slots
            .get_mut(id.index())
            .ok_or(PinError::UnknownAgent(id))?;
        let Some(i) = slot.strategies.iter().position(|s| s.name == strategy) else {
            return Err(PinError::UnknownStrategy {
                agent: slot.name.clone(),
                strategy: strategy.to_string(),
                known: slot
                    .strategies
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let to = StrategyIndex(i as u8);
        let repeated = slot.pinned == Some(to);
        slot.pinned = Some(to);
        let from = slot.current;
        if from != to {
            slot.switch(to, frame + 1, frame);
        }
        // Logged even when it changes nothing: a reader of the log (and a replay) sees every
        // pin the game made.
        let reason = if from == to {
            "manual: pinned (already in force)"
        } else {
            "manual: pinned"
        };
        // A game re-pinning the same strategy every frame logs it once: the log keeps room for
        // the decisions that change something.
        if !(repeated && from == to) {
            self.log_manual(id, from, to, reason, frame);
        }
        self.dirty = true;
        Ok(())
    }

    fn unpin(&mut self, id: AgentId) {
        let frame = self.last_frame.unwrap_or(0);
        if let Some(s) = self.slots.get_mut(id.index()) {
            if s.pinned.take().is_some() {
                let cur = s.current;
                // The strategy stays until the controller decides otherwise: logged as a
                // decision to stay, so the log shows where the pin ended.
                self.log_manual(id, cur, cur, "manual: unpinned", frame);
            }
            self.dirty = true;
        }
    }

    fn agent_count(&self) -> usize {
        self.slots.len()
    }

    fn agent_ids(&self) -> impl ExactSizeIterator<Item = AgentId> + '_ {
        (0..self.slots.len()).map(|i| AgentId(i as u16))
    }

    fn pool(&self, id: AgentId) -> Option<Pool> {
        self.slots.get(id.index()).map(|s| s.pool)
    }

    fn cost_fit(&self, id: AgentId) -> Option<Fit> {
        self.slots.get(id.index()).and_then(|s| s.fit())
    }

    fn calibrated_costs(&self, id: AgentId) -> Option<Vec<f64>> {
        let s = self.slots.get(id.index())?;
        // The law is only needed to extrapolate to an announced workload.
        let fit = s.announced_n.and_then(|_| s.fit());
        let frame = self.last_frame.unwrap_or(0);
        let half_life = self.frames_per_second() * COST_MEMORY_HALF_LIFE_S;
        let mut out = Vec::with_capacity(s.strategies.len());
        s.price_ladder(fit.as_ref(), frame, half_life, &mut out);
        Some(out)
    }

    fn quoted_costs(&self, id: AgentId) -> Option<Vec<f64>> {
        let s = self.slots.get(id.index())?;
        let n = s.workload();
        Some(s.strategies.iter().map(|st| st.quote.ms(n)).collect())
    }

    fn measured_rungs(&self, id: AgentId) -> Option<Vec<bool>> {
        let s = self.slots.get(id.index())?;
        Some((0..s.strategies.len()).map(|k| s.measured(k)).collect())
    }

    fn is_barred(&self, id: AgentId, strategy: StrategyIndex) -> bool {
        let frame = self.last_frame.unwrap_or(0);
        self.slots.get(id.index()).is_some_and(|s| {
            strategy.get() < s.strategies.len()
                && s.barred(strategy.get(), frame, self.overhead[s.pool.index()])
        })
    }

    fn in_death_spiral(&self) -> bool {
        self.heuristics.in_death_spiral()
    }

    fn last_gpu(&self) -> Option<(u64, f64)> {
        self.last_gpu
    }

    fn set_mode(&mut self, mode: AdaptationMode) {
        if self.mode != mode {
            self.mode = mode;
            self.dirty = true;
        }
    }

    fn start_recording(&mut self) {
        self.recording = Some(Recording::default());
    }

    fn take_recording(&mut self) -> Option<Recording> {
        self.recording.take()
    }

    fn tick(&mut self, input: &FrameInput<'_>) -> Result<TickReport, InputError> {
        input.validate(self.last_frame, self.slots.len())?;
        let readings = self.providers.poll();
        self.tick_with(input, readings)
    }

    fn replay(&mut self, recording: &Recording) -> Result<Vec<TickReport>, InputError> {
        let mut out = Vec::with_capacity(recording.frames.len());
        for f in &recording.frames {
            out.push(self.tick_with(&f.input(), f.readings)?);
        }
        Ok(out)
    }

    fn tick_with(
        &mut self,
        input: &FrameInput<'_>,
        readings: Readings,
    ) -> Result<TickReport, InputError> {
        input.validate(self.last_frame, self.slots.len())?;
        if let Some(rec) = self.recording.as_mut() {
            rec.frames.push(RecordedFrame::new(input, readings));
        }
        let frame = input.frame;
        let prev_frame = self.last_frame;
        self.last_frame = Some(frame);

        // 2-3. Samples and overheads.
        let mut attributed = [0.0f64; 2];
        let mut any = [false; 2];
        let gpu_frame = input.gpu.map(|g| g.frame);
        for s in input.samples {
            let slot = &mut self.slots[s.agent.index()];
            slot.ingest(s.frame, s.n, s.ms);
            let p = slot.pool.index();
            let same = match slot.pool {
                Pool::Cpu => s.frame == frame,
                Pool::Gpu => Some(s.frame) == gpu_frame,
            };
            if same {
                attributed[p] += s.ms;
                any[p] = true;
            }
        }
        if let Some(g) = input.gpu {
            self.last_gpu = Some((g.frame, g.ms));
        }
        let gpu_ms = self
            .last_gpu
            .filter(|&(f, _)| frame.saturating_sub(f) <= GPU_STALE_FRAMES + GPU_READ_LAG_FRAMES)
            .map(|(_, ms)| ms);
        let pool_ms = [Some(input.cpu_ms), input.gpu.map(|g| g.ms)];
        for p in 0..2 {
            if let Some(total) = pool_ms[p] {
                if any[p] || p == Pool::Cpu.index() {
                    let o = (total - attributed[p]).max(0.0);
                    let w = &mut self.overhead_window[p];
                    w.ring[w.head] = o;
                    w.head = (w.head + 1) % OVERHEAD_WINDOW;
                    w.len = (w.len + 1).min(OVERHEAD_WINDOW);
                    let mut scratch = [0.0f64; OVERHEAD_WINDOW];
                    scratch[..w.len].copy_from_slice(&w.ring[..w.len]);
                    self.overhead[p] = median_in_place(&mut scratch[..w.len]);
                }
            }
        }

        // 4-5. Heuristics and the PID.
        let a = self.heuristics.assess(&Signals {
            cpu_ms: input.cpu_ms,
            gpu_ms,
            step_clamped: input.step.is_some_and(|s| s.clamped),
            readings,
        });
        let measured = gpu_ms.map_or(input.cpu_ms, |g| g.max(input.cpu_ms));
        let spiral = self.heuristics.in_death_spiral();
        if spiral && !self.was_spiral {
            tracing::warn!(
                code = "budget/death_spiral",
                frame,
                measured_ms = measured,
                "budget/death_spiral | the fixed step clamped {} frames in a row | frames take longer than the simulation steps they run, so each frame runs more steps | every agent degrades to its cheapest strategy until 60 frames run unclamped; if it persists, cut per-step work | docs/budgets.md#death-spiral",
                super::heuristics::SPIRAL_ENTER
            );
        }
        self.was_spiral = spiral;
        let pool_now = [Some(input.cpu_ms), gpu_ms];
        for (pid, now) in self.pid.iter_mut().zip(pool_now) {
            pid.set_max(a.cap.min(self.cfg.pid.max));
            if let Some(ms) = now {
                pid.update((a.target_ms - ms) / a.target_ms, ms / a.target_ms);
            }
        }
        self.gpu_current = gpu_ms.is_some();
        let m = self.pool_multipliers();

        // 6. Calibrated costs.
        let half_life = self.frames_per_second() * COST_MEMORY_HALF_LIFE_S;
        // A probe that held through its dwell is no longer a probe: its strikes are forgiven.
        let dwell_frames = self.cfg.dwell_frames;
        for slot in &mut self.slots {
            if let Some((j, start)) = slot.probe {
                if slot.current != j {
                    slot.probe = None;
                } else if frame >= start + dwell_frames {
                    slot.strikes = 0;
                    slot.probe = None;
                }
            }
        }
        self.costs.resize_with(self.slots.len(), Vec::new);
        let mut pool_cost = [0.0f64; 2];
        for (slot, costs) in self.slots.iter().zip(self.costs.iter_mut()) {
            // Fitting costs 4 laws x 64 samples: only when a workload was announced.
            let fit = slot.announced_n.and_then(|_| slot.fit());
            slot.price_ladder(fit.as_ref(), frame, half_life, costs);
            pool_cost[slot.pool.index()] += costs[slot.current.get()];
        }
        let capacity = |p: usize| m[p] * a.target_ms - self.overhead[p];

        // 7. Triggers.
        let d = self.cfg.renegotiate_delta;
        let dwell = self.cfg.dwell_frames;
        let dwell_ended = self
            .slots
            .iter()
            .any(|s| s.below_best() && s.last_change.is_some_and(|f| frame == f + dwell));
        // A bar that ends this frame frees a rung the last arbitration could not choose.
        let bar_ended = self.slots.iter().any(|s| {
            s.pinned.is_none()
                && s.bars
                    .iter()
                    .flatten()
                    .any(|b| b.until <= frame && prev_frame.is_none_or(|p| p < b.until))
        });
        // An agent below its best is looked at again every dwell even when nothing moved: the
        // recent peak its upgrades are priced at (`Slot::peak_load_ratio`) falls as its window
        // rolls, which no other trigger sees.
        let revisit = self.last_arb.is_some_and(|l| frame >= l.frame + dwell)
            && self.slots.iter().any(Slot::below_best);
        let trigger = self.dirty
            || dwell_ended
            || bar_ended
            || revisit
            || match self.last_arb {
                None => true,
                Some(last) => {
                    (0..2).any(|p| (m[p] - last.multiplier[p]).abs() > d)
                        || (a.target_ms - last.target).abs() > d * last.target
                        || a.cap != last.cap
                        || a.critical != last.critical
                        || (0..2).any(|p| {
                            let cap = capacity(p).max(1e-9);
                            pool_cost[p] * (1.0 - self.cfg.keep_tolerance) > cap
                                || (pool_cost[p] - last.pool_cost[p]).abs()
                                    > self.cfg.cost_move_fraction * cap
                        })
                }
            };
        let mut decisions = 0;
        let arbitrated = trigger && self.mode == AdaptationMode::Adaptive;
        if arbitrated {
            for pool in Pool::ALL {
                decisions +=
                    self.arbitrate_pool(pool, frame, m[pool.index()], &a, gpu_ms, input.cpu_ms);
            }
            // Costs after the changes, for the cost dead band.
            let mut after = [0.0f64; 2];
            for (slot, costs) in self.slots.iter().zip(&self.costs) {
                after[slot.pool.index()] += costs[slot.current.get()];
            }
            self.last_arb = Some(ArbMark {
                frame,
                multiplier: m,
                target: a.target_ms,
                cap: a.cap,
                critical: a.critical,
                pool_cost: after,
            });
        }
        if trigger {
            self.dirty = false;
        }
        Ok(TickReport {
            frame,
            target_ms: a.target_ms,
            multiplier: self.multiplier(),
            pool_multipliers: m,
            measured_ms: measured,
            arbitrated,
            decisions,
            critical: a.critical,
        })
    }
}
