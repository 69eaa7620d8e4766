//! Steps 8 and 9 for one pool: price each member's options, solve exactly, fall back to the
//! cheapest rungs when nothing fits, then apply and log each change with its reason.
//!
//! Owns: one pool's round of arbitration ([`PoolRound`]: the figures its choice, its checks and
//! every switch's reason read) and the overrun bars a failed probe earns. Must never: choose
//! from figures other than the ones a reason quotes, or move an agent that is pinned or idle.

use super::{
    Controller, BAR_FIRST_S, BAR_MAX_S, IDLE_FRAMES, UPGRADE_NOISE_SIGMAS, UPGRADE_SPREADS,
};
use crate::agent::{AgentId, Pool, Strategy, StrategyIndex};
use crate::arbitration::ArbiterOption;
use crate::heuristics::{le_or_gt, Assessment, Finding};
use crate::log::Decision;
use crate::slot::Bar;

/// One pool's arbitration in progress: what the choice saw, for the checks after it and for
/// each switch's reason (which must quote exactly these figures).
struct PoolRound<'a> {
    pool: Pool,
    frame: u64,
    /// The pool's multiplier this tick.
    m: f64,
    a: &'a Assessment,
    /// The pool's own time this frame (`None`: no current GPU reading).
    pool_measured: Option<f64>,
    /// The members' share: `m * target - overhead - pinned`.
    capacity: f64,
    /// Whether the exact solve fitted (false: every member fell back to its cheapest rung).
    feasible: bool,
    /// The members' cost at their current rungs, and at the chosen ones.
    current_cost: f64,
    new_cost: f64,
    /// The members upgraded this round, by name (quoted by a downgrade that makes room).
    upgraded: String,
    /// Downgrades that pay for upgrades in a pool that fitted: not an overrun.
    trade: bool,
}

impl Controller {
    /// Steps 8-9 for one pool; returns the number of changes.
    pub(super) fn arbitrate_pool(
        &mut self,
        pool: Pool,
        frame: u64,
        m: f64,
        a: &Assessment,
        pool_measured: Option<f64>,
    ) -> usize {
        let Some(pinned_cost) = self.pool_members(pool, frame) else {
            return 0;
        };
        let capacity = m * a.target_ms - self.overhead[pool.index()] - pinned_cost;
        self.price_options(pool, frame, a.target_ms);
        let feasible = self.solve_or_fall_back(capacity);
        let (current_cost, new_cost) = self.hold_riding_upgrades(feasible, capacity);
        let upgraded = self.upgraded_names();
        let trade = feasible && current_cost <= capacity && !upgraded.is_empty();
        let round = PoolRound {
            pool,
            frame,
            m,
            a,
            pool_measured,
            capacity,
            feasible,
            current_cost,
            new_cost,
            upgraded,
            trade,
        };
        let mut changes = 0;
        for k in 0..self.members.len() {
            changes += usize::from(self.apply_choice(k, &round));
        }
        changes
    }

    /// The pool's agents in arbitration into `members` (neither pinned nor idle); `None` when
    /// there are none, else the cost the others hold where they are (reserved from the pool).
    fn pool_members(&mut self, pool: Pool, frame: u64) -> Option<f64> {
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
                pinned_cost += self.costs[i][slot.current.get()];
            } else {
                self.members.push(i);
            }
        }
        (!self.members.is_empty()).then_some(pinned_cost)
    }

    /// Step 8's prices: each member's options as the arbiter sees them (`groups`), with the
    /// hysteresis in the costs. Upgrades are left out while dwelling, barred rungs always, and
    /// an upgrade past an unmeasured rung moves one rung only.
    fn price_options(&mut self, pool: Pool, frame: u64, target_ms: f64) {
        let cfg = self.cfg;
        let overhead = self.overhead[pool.index()];
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
                if (upgrade && dwelling) || (j != cur && slot.barred(j, frame, overhead)) {
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
                            .min(UPGRADE_DEAD_BAND * target_ms)
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
    }

    /// Step 8's choice into `chosen`: the exact solve, or, when nothing fits, every member to
    /// its cheapest rung (ties: first) that is no richer than the one in force (a price that
    /// says a richer rung is cheaper is a quote not yet measured, and nothing fitting is no
    /// time to try it). Returns whether the solve fitted.
    fn solve_or_fall_back(&mut self, capacity: f64) -> bool {
        let refs: Vec<&[ArbiterOption]> = self.groups.iter().map(|g| g.as_slice()).collect();
        let feasible = self
            .arbiter
            .solve(&refs, capacity, &mut self.chosen)
            .is_some();
        drop(refs);
        if !feasible {
            self.chosen.clear();
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
        feasible
    }

    /// The members' cost at the rungs in `chosen`.
    fn chosen_cost(&self) -> f64 {
        self.members
            .iter()
            .zip(&self.chosen)
            .map(|(&i, &j)| self.costs[i][j as usize])
            .sum()
    }

    /// The members' current and chosen costs, after holding back upgrades that ride on the
    /// tolerances: the solver may keep a current choice slightly over its share, and an upgrade
    /// must not ride on that. Every upgrade of the pool then waits, and when the pool fitted as
    /// it was, so do the downgrades that were to pay for them.
    fn hold_riding_upgrades(&mut self, feasible: bool, capacity: f64) -> (f64, f64) {
        let current_cost: f64 = self
            .members
            .iter()
            .map(|&i| self.costs[i][self.slots[i].current.get()])
            .sum();
        let mut new_cost = self.chosen_cost();
        let upgrades = self
            .members
            .iter()
            .zip(&self.chosen)
            .any(|(&i, &j)| self.slots[i].richer(j as usize));
        if feasible && upgrades && new_cost > capacity {
            let fitted = current_cost <= capacity;
            for (k, &i) in self.members.iter().enumerate() {
                let slot = &self.slots[i];
                if fitted || slot.richer(self.chosen[k] as usize) {
                    self.chosen[k] = slot.current.get() as u8;
                }
            }
            new_cost = self.chosen_cost();
        }
        (current_cost, new_cost)
    }

    /// The members the choice upgrades, by name, comma-separated.
    fn upgraded_names(&self) -> String {
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
        upgraded
    }

    /// Step 9 for member `k`: switches it to its chosen rung and logs why; false when the
    /// choice is the rung in force. A probe that overran is barred on the way down.
    fn apply_choice(&mut self, k: usize, r: &PoolRound<'_>) -> bool {
        let i = self.members[k];
        let to = StrategyIndex(self.chosen[k]);
        let slot = &self.slots[i];
        let from = slot.current;
        if from == to {
            return false;
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
        let barred = if upgrade || r.trade {
            String::new()
        } else {
            self.bar_overrun(k, from, r)
        };
        let p = r.pool.index();
        let reason = reason(&ReasonCtx {
            pool: r.pool,
            upgrade,
            feasible: r.feasible,
            a: r.a,
            m: r.m,
            pool_measured: r.pool_measured,
            capacity: r.capacity,
            current_cost: r.current_cost,
            new_cost: r.new_cost,
            overhead: self.overhead[p],
            margin: self.cfg.upgrade_margin,
            upgraded: &r.upgraded,
            rung: &rung,
        }) + &barred;
        let slot = &self.slots[i];
        let d = Decision {
            frame: r.frame,
            agent: AgentId(i as u16),
            agent_name: slot.name.clone(),
            from,
            to,
            from_name: slot.strategies[from.get()].name.clone(),
            to_name: slot.strategies[to.get()].name.clone(),
            reason,
            multiplier: r.m,
            target_ms: r.a.target_ms,
        };
        let slot = &mut self.slots[i];
        slot.switch(to, r.frame + 1, r.frame);
        if upgrade {
            slot.probe = Some((to, r.frame + 1));
        }
        self.log.push(d);
        true
    }

    /// Member `k` steps down from `from`: when `from` is a probe still in its dwell, it
    /// overran, and it and every richer rung are barred (module docs: the bar doubles with
    /// each overrun in a row). Returns the reason's clause for it (empty when no bar).
    fn bar_overrun(&mut self, k: usize, from: StrategyIndex, r: &PoolRound<'_>) -> String {
        let i = self.members[k];
        let slot = &self.slots[i];
        let Some((j, start)) = slot.probe.filter(|&(j, _)| j == from) else {
            return String::new();
        };
        if r.frame >= start + self.cfg.dwell_frames {
            return String::new();
        }
        let others: f64 = self
            .members
            .iter()
            .zip(&self.chosen)
            .filter(|&(&m, _)| m != i)
            .map(|(&m, &c)| self.costs[m][c as usize])
            .sum();
        let available = r.capacity - others;
        let measured_cost = self.costs[i][j.get()];
        // Overruns in a row count for the agent, whichever rung overran.
        let strikes = slot.strikes.saturating_add(1).min(16);
        let secs = (BAR_FIRST_S * 2f64.powi(i32::from(strikes) - 1)).min(BAR_MAX_S);
        let until = r.frame + (secs * self.frames_per_second()).ceil() as u64;
        let bar = Bar {
            until,
            n_at: slot.workload(),
            overrun: (measured_cost / available.max(1e-6)).clamp(1.0, 1e6),
            overhead_at: self.overhead[r.pool.index()],
            excess_ms: (measured_cost - available).max(0.0),
        };
        let said = format!(
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
        said
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
