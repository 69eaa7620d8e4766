//! One registered agent's controller-side state: what it runs, what it was measured at, and
//! what its strategies cost now.
//!
//! Owns: the strategy history (so late samples are credited to the strategy that ran), the
//! per-strategy cost models and level trackers, each strategy's remembered cost (what it
//! measured when it last ran, fading with age), the bars on strategies that overran, the
//! calibration factor, the workload, dwell and pin state. Must never: choose a strategy (the
//! controller does) or touch other agents.
//!
//! # What a strategy costs (the prediction the arbiter reads)
//! Every measurement is a *level*: measured ms over quoted ms. The machine's load moves every
//! rung's level together; a wrong quote moves one rung's level alone. So each rung keeps a
//! *relative* correction `rel` (1 until measured): when the agent moves from rung `k` to rung
//! `j` and `j`'s first samples arrive, `rel_j = rel_k * level_j / level_k` (`k`'s level as it
//! left, the same load a moment apart). Then:
//! - the strategy in force costs its quote times its own measured level;
//! - any other costs its quote times the current level times `(rel_j / rel_current)^w`, with
//!   `w = 0.5^(age / half-life)` (`age`: frames since that comparison; `w = 0` never
//!   measured; `w = 1` while the correction is above 1): a rung that measured 56x its cheapest sibling is priced so, not rescaled from
//!   the quote's 6.7x, and when the load falls the prediction falls with it; as the evidence
//!   ages, a correction that says a rung is cheaper than quoted fades back to the quote's
//!   ratio; one that says it is dearer holds until the rung is measured again.
//!
//! # Evidence travels along the ladder
//! [`Slot::price_ladder`] then shapes those prices by quality: a measured rung bounds every
//! richer rung from below, and a rung never measured is priced from its measured neighbours
//! (their ratios interpolated between, the dearer of ratio and slope carried beyond), never
//! above a richer rung. `docs/budgets.md` has the rules and their tests.

use super::agent::{limits, Agent, Pool, Strategy, StrategyIndex};
use super::cost_model::{calibration_factor, CostLaw, CostModel, Fit, LevelTracker};

/// Samples after a switch that compare the new strategy with the one left (the same load a
/// moment apart); later samples move the level, not the relative correction.
const COMPARE_SAMPLES: usize = 8;

/// Samples of the agent's load (its current rung's level over that rung's relative
/// correction: comparable across rungs) kept for the recent peak an upgrade is priced at
/// (about two seconds at 60 Hz).
const LOAD_WINDOW: usize = 128;

/// Strategy changes remembered for crediting late samples (GPU samples are two frames late;
/// eight changes cover far more than that).
const HISTORY: usize = 8;

/// The controller's record of one agent.
pub(crate) struct Slot {
    pub agent: Box<dyn Agent>,
    pub name: String,
    pub pool: Pool,
    pub weight: u16,
    pub strategies: Vec<Strategy>,
    pub current: StrategyIndex,
    /// `(first frame, strategy)` newest last; the strategy ran from that frame on.
    history: Vec<(u64, StrategyIndex)>,
    models: Vec<CostModel>,
    levels: Vec<LevelTracker>,
    /// Per strategy, its last [`limits::MAX_PERIOD`] ratios (periodic strategies are priced
    /// by the peak of their last `period`) and the ring's head.
    recent: Vec<([f64; limits::MAX_PERIOD as usize], usize)>,
    /// Per strategy, its relative correction and the frame it was last compared at (`None`:
    /// never measured, the quote's ratio stands; module docs).
    rel: Vec<(f64, Option<u64>)>,
    /// The strategy left at the last switch and its level then (the reference the new
    /// strategy's first samples are compared with), and the samples compared so far.
    left: Option<(StrategyIndex, f64)>,
    compared: usize,
    /// Per strategy, the bar an overrun put on it (none: free to choose).
    pub bars: Vec<Option<Bar>>,
    /// How many upgrades of this agent in a row overran, whichever rung (the bars' back-off
    /// exponent); a probe that holds forgives them.
    pub strikes: u8,
    /// The upgrade being tried: `(strategy, first frame it runs)`, until it holds through its
    /// dwell or is undone.
    pub probe: Option<(StrategyIndex, u64)>,
    /// The agent's recent load (see [`LOAD_WINDOW`]), a ring, and its length and head.
    load: [f64; LOAD_WINDOW],
    load_len: usize,
    load_head: usize,
    /// The last known measured/quoted factor (carried to a strategy not yet measured).
    carried_factor: Option<f64>,
    /// Workload the latest sample reported.
    pub sampled_n: u64,
    /// Workload announced ahead (anticipatory), if any; else `sampled_n`.
    pub announced_n: Option<u64>,
    /// Frame of the last change (dwell).
    pub last_change: Option<u64>,
    /// Manual pin.
    pub pinned: Option<StrategyIndex>,
    /// Frame of the latest sample with work in it (`n > 0`); `None`: never. An agent with no
    /// work (nothing drawn, nothing loaded) takes no decisions.
    pub last_work: Option<u64>,
}

/// A bar on a strategy that overran right after an upgrade: it may not be chosen again until
/// `until`, unless the evidence changes (module docs of `controller`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Bar {
    /// First frame it may be chosen again.
    pub until: u64,
    /// The agent's workload when it overran.
    pub n_at: u64,
    /// Measured cost over the capacity it had (> 1).
    pub overrun: f64,
    /// The pool's overhead (the frame's other costs) when it overran, ms.
    pub overhead_at: f64,
    /// How far it overran, ms.
    pub excess_ms: f64,
}

impl Slot {
    pub(crate) fn new(
        agent: Box<dyn Agent>,
        strategies: Vec<Strategy>,
        initial: StrategyIndex,
    ) -> Self {
        let count = strategies.len();
        Slot {
            name: agent.name().to_string(),
            pool: agent.pool(),
            weight: agent.weight(),
            sampled_n: agent.initial_workload(),
            agent,
            strategies,
            current: initial,
            history: vec![(0, initial)],
            models: vec![CostModel::new(); count],
            levels: vec![LevelTracker::default(); count],
            rel: vec![(1.0, None); count],
            recent: vec![([0.0; limits::MAX_PERIOD as usize], 0); count],
            left: None,
            compared: 0,
            bars: vec![None; count],
            strikes: 0,
            probe: None,
            carried_factor: None,
            load: [0.0; LOAD_WINDOW],
            load_len: 0,
            load_head: 0,
            announced_n: None,
            last_change: None,
            pinned: None,
            last_work: None,
        }
    }

    /// The strategy that ran in `frame`, if still remembered.
    fn strategy_at(&self, frame: u64) -> Option<StrategyIndex> {
        self.history
            .iter()
            .rev()
            .find(|(from, _)| *from <= frame)
            .map(|&(_, s)| s)
            .filter(|_| self.history.len() < HISTORY || frame >= self.history[0].0)
    }

    /// Credits one sample to the strategy that ran when it was measured.
    pub(crate) fn ingest(&mut self, frame: u64, n: u64, ms: f64) {
        let Some(s) = self.strategy_at(frame) else {
            return;
        };
        let i = s.get();
        self.models[i].push(n, ms);
        let quoted = self.strategies[i].quote.ms(n);
        if quoted > 0.0 {
            let period = self.strategies[i].period.clamp(1, limits::MAX_PERIOD) as usize;
            let ratio = if period > 1 {
                // The peak of the last `period` frames: the frame that does the work.
                let (ring, head) = &mut self.recent[i];
                ring[*head % period] = ms / quoted;
                *head = (*head + 1) % period;
                ring[..period].iter().copied().fold(0.0, f64::max)
            } else {
                ms / quoted
            };
            self.levels[i].push(ratio);
            if let Some(l) = self.levels[i].level() {
                match self.left {
                    // The first samples after a switch: compare with the rung just left.
                    Some((k, lk)) if i == self.current.get() && self.compared < COMPARE_SAMPLES => {
                        if k.get() != i && lk > 0.0 {
                            self.rel[i] = ((self.rel[k.get()].0 * l / lk).max(1e-9), Some(frame));
                        }
                        self.compared += 1;
                    }
                    // The first rung ever run is the reference everything is relative to.
                    None if self.rel[i].1.is_none() => self.rel[i].1 = Some(frame),
                    _ => {}
                }
                if i == self.current.get() && self.rel[i].0 > 0.0 {
                    self.load[self.load_head] = l / self.rel[i].0;
                    self.load_head = (self.load_head + 1) % LOAD_WINDOW;
                    self.load_len = (self.load_len + 1).min(LOAD_WINDOW);
                }
            }
        }
        self.sampled_n = n;
        if n > 0 {
            self.last_work = Some(frame);
        }
    }

    /// Switches to `to` from frame `effective` on, telling the agent.
    pub(crate) fn switch(&mut self, to: StrategyIndex, effective: u64, decided: u64) {
        if let Some(f) = self.factor_of_current() {
            self.carried_factor = Some(f);
            self.left = Some((self.current, f));
            self.compared = 0;
        }
        self.current = to;
        // What `to` measured when it last ran may be stale (the load has moved since): its
        // tracker starts afresh, and until its own samples arrive it is priced by what it
        // remembers, faded by age (module docs).
        self.levels[to.get()] = LevelTracker::default();
        self.history.push((effective, to));
        if self.history.len() > HISTORY {
            self.history.remove(0);
        }
        self.last_change = Some(decided);
        self.agent.apply(to, &self.strategies[to.get()]);
    }

    fn factor_of_current(&self) -> Option<f64> {
        self.levels[self.current.get()]
            .level()
            .map(|l| calibration_factor(l, 1.0))
    }

    /// Measured/quoted factor used for every strategy: the current strategy's, else the last
    /// one measured, else 1 (the quote stands).
    pub(crate) fn factor(&self) -> f64 {
        self.factor_of_current()
            .or(self.carried_factor)
            .unwrap_or(1.0)
    }

    /// The recent peak of the agent's load over its latest value (at least 1): an upgrade is
    /// priced as if the load were back at its peak of the last two seconds, so a trough in a
    /// scene whose cost swings is no invitation to climb (the climb would overrun at the next
    /// crest).
    pub(crate) fn peak_load_ratio(&self) -> f64 {
        if self.load_len == 0 {
            return 1.0;
        }
        let latest = self.load[(self.load_head + LOAD_WINDOW - 1) % LOAD_WINDOW];
        let peak = self.load[..self.load_len]
            .iter()
            .copied()
            .fold(0.0, f64::max);
        if latest > 0.0 && peak.is_finite() {
            (peak / latest).max(1.0)
        } else {
            1.0
        }
    }

    /// Relative standard error of the current strategy's measured level (0 when unmeasured).
    pub(crate) fn level_noise(&self) -> f64 {
        self.levels[self.current.get()].rel_std_error()
    }

    /// Relative frame-to-frame spread of the current strategy's measured level.
    pub(crate) fn level_spread(&self) -> f64 {
        self.levels[self.current.get()].rel_spread()
    }

    /// The workload to cost at.
    pub(crate) fn workload(&self) -> u64 {
        self.announced_n.unwrap_or(self.sampled_n)
    }

    /// The current strategy's fitted law, when it has enough samples.
    pub(crate) fn fit(&self) -> Option<Fit> {
        self.models[self.current.get()].fit()
    }

    /// The measured-over-quoted factor that prices strategy `s` at `frame` (module docs): its
    /// own level when in force and measured, else the current factor corrected by the rung's
    /// relative correction, faded with `half_life` frames.
    pub(crate) fn factor_of(&self, s: usize, frame: u64, half_life: f64) -> f64 {
        let cur = self.current.get();
        if s == cur {
            if let Some(l) = self.levels[s].level() {
                return calibration_factor(l, 1.0);
            }
        }
        let now = self.factor();
        let (rel_s, at) = self.rel[s];
        let Some(at) = at else {
            return now;
        };
        let (rel_cur, at_cur) = self.rel[cur];
        let ratio = rel_s / rel_cur;
        // The comparison linking the two is as old as the later of their two comparisons.
        let age = frame.saturating_sub(at.max(at_cur.unwrap_or(at))) as f64;
        let w = 0.5f64.powf(age / half_life.max(1.0));
        // Age makes a remembered correction uncertain, not cheaper: a rung measured dearer
        // than its quote keeps that correction until it is measured again (fading toward a
        // quote it has already shown wrong is what re-probed an overrun rung on the clock);
        // one measured cheaper fades back toward its quote, the safe side.
        let r = if ratio > 1.0 { ratio } else { ratio.powf(w) };
        calibration_factor(now * r, 1.0)
    }

    /// True when strategy `j` ranks above the one in force.
    pub(crate) fn richer(&self, j: usize) -> bool {
        self.strategies[j].quality > self.strategies[self.current.get()].quality
    }

    /// True when the agent is free to move (not pinned) and a richer strategy exists.
    pub(crate) fn below_best(&self) -> bool {
        self.pinned.is_none() && (0..self.strategies.len()).any(|j| self.richer(j))
    }

    /// True when some strategy has measurements of its own.
    pub(crate) fn any_measured(&self) -> bool {
        (0..self.strategies.len()).any(|s| self.measured(s))
    }

    /// True when strategy `s` has measurements of its own (its cost is not the quote's ratio).
    pub(crate) fn measured(&self, s: usize) -> bool {
        self.rel[s].1.is_some()
    }

    /// Calibrated cost of strategy `s` at `frame`, ms: its quote at the workload times
    /// [`Self::factor_of`], and, when the workload was announced ahead of the samples and the
    /// fitted law differs from the quote's, corrected by the fitted law's growth from the
    /// sampled to the announced `n`.
    pub(crate) fn calibrated(
        &self,
        s: usize,
        fit: Option<&Fit>,
        frame: u64,
        half_life: f64,
    ) -> f64 {
        let n = self.workload();
        let quote = self.strategies[s].quote;
        let mut ms = quote.ms(n) * self.factor_of(s, frame, half_life);
        if let (Some(fit), Some(_)) = (fit, self.announced_n) {
            if fit.identifiable && fit.law != quote.law && self.sampled_n > 0 {
                let grow = |law: CostLaw| law.eval(n) / law.eval(self.sampled_n);
                let q = grow(quote.law);
                if q > 0.0 {
                    ms *= grow(fit.law) / q;
                }
            }
        }
        ms
    }

    /// Every strategy's price at `frame` into `out` (slot order), with the evidence carried
    /// along the ladder (module docs, "Evidence travels along the ladder"): measured rungs
    /// keep [`Self::calibrated`]; a rung never measured is priced from its measured
    /// neighbours by quality; and a rung measured at X ms bounds every richer rung from below.
    pub(crate) fn price_ladder(
        &self,
        fit: Option<&Fit>,
        frame: u64,
        half_life: f64,
        out: &mut Vec<f64>,
    ) {
        let count = self.strategies.len();
        out.clear();
        out.extend((0..count).map(|i| self.calibrated(i, fit, frame, half_life)));
        if !self.any_measured() {
            return;
        }
        for s in 0..count {
            if !self.measured(s) {
                let price = self.estimated(out, s);
                out[s] = if price.is_finite() { price } else { out[s] };
            }
        }
        self.bound_by_the_rung_in_force(out);
        self.rising_with_quality(out);
    }

    /// The quality rank of strategy `i`.
    fn quality(&self, i: usize) -> u16 {
        self.strategies[i].quality
    }

    /// The measured rung nearest below quality `under` (not `s`); ties in quality: the dearer
    /// price, the safer side.
    fn measured_below(&self, out: &[f64], s: usize, under: u16) -> Option<usize> {
        (0..self.strategies.len())
            .filter(|&m| m != s && self.measured(m) && self.quality(m) < under)
            .max_by(|&a, &b| {
                (self.quality(a), out[a])
                    .partial_cmp(&(self.quality(b), out[b]))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
    }

    /// The measured rung nearest above strategy `s` in quality; ties: the dearer price.
    fn measured_above(&self, out: &[f64], s: usize) -> Option<usize> {
        (0..self.strategies.len())
            .filter(|&m| self.measured(m) && self.quality(m) > self.quality(s))
            .min_by(|&a, &b| {
                (self.quality(a), -out[a])
                    .partial_cmp(&(self.quality(b), -out[b]))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
    }

    /// The price of unmeasured strategy `s` from the measured rungs around it (`out` holds
    /// the calibrated prices, and the estimates made so far).
    fn estimated(&self, out: &[f64], s: usize) -> f64 {
        let n = self.workload();
        let quote = |i: usize| self.strategies[i].quote.ms(n);
        let qs = quote(s);
        let carried = |m: usize| {
            let qm = quote(m);
            if qm > 0.0 && qs > 0.0 {
                out[m] * qs / qm
            } else {
                out[m]
            }
        };
        match (
            self.measured_below(out, s, self.quality(s)),
            self.measured_above(out, s),
        ) {
            (Some(b), Some(a)) => {
                // Between two measured rungs: their measured-to-quoted ratios, interpolated
                // geometrically by the rung's place between their quotes (by quality when the
                // quotes cannot place it), times its own quote.
                let (qb, qa) = (quote(b), quote(a));
                let t = if qa > qb && (qb..=qa).contains(&qs) {
                    (qs - qb) / (qa - qb)
                } else {
                    f64::from(self.quality(s) - self.quality(b))
                        / f64::from(self.quality(a) - self.quality(b))
                };
                if qb > 0.0 && qa > 0.0 && qs > 0.0 {
                    let (fb, fa) = (out[b] / qb, out[a] / qa);
                    qs * fb.powf(1.0 - t) * fa.powf(t)
                } else {
                    out[b] + t * (out[a] - out[b])
                }
            }
            (Some(b), None) => {
                // Beyond the richest measured rung: the measured-to-quoted ratio carried, or
                // the measured slope through the two richest measured rungs carried on,
                // whichever is dearer.
                let mut p = carried(b);
                if let Some(b2) = self.measured_below(out, b, self.quality(b)) {
                    let (qb, qb2) = (quote(b), quote(b2));
                    if qb > qb2 && qs > qb {
                        let slope = (out[b] - out[b2]) / (qb - qb2);
                        if slope > 0.0 {
                            p = p.max(out[b] + slope * (qs - qb));
                        }
                    }
                }
                p
            }
            (None, Some(a)) => carried(a),
            (None, None) => out[s],
        }
    }

    /// The rung in force, once its own samples since the switch arrive, is the freshest
    /// evidence there is: an upper bound for every cheaper rung. A cheaper rung remembered from
    /// a heavier moment must not lift it (through the floor of `rising_with_quality`) above
    /// what it measures now, or its first sample reads as an overrun it did not have.
    fn bound_by_the_rung_in_force(&self, out: &mut [f64]) {
        let cur = self.current.get();
        if self.levels[cur].level().is_some() {
            for s in 0..out.len() {
                if self.quality(s) < self.quality(cur) {
                    out[s] = out[s].min(out[cur]);
                }
            }
        }
    }

    /// A rung measured at X ms is a lower bound for every richer rung, and a rung not measured
    /// costs no more than any richer rung: prices never fall as quality rises.
    fn rising_with_quality(&self, out: &mut [f64]) {
        let count = out.len();
        for s in 0..count {
            let floor = (0..count)
                .filter(|&m| self.measured(m) && self.quality(m) < self.quality(s))
                .map(|m| out[m])
                .fold(0.0f64, f64::max);
            out[s] = out[s].max(floor);
        }
        for s in 0..count {
            if !self.measured(s) {
                let ceiling = (0..count)
                    .filter(|&r| self.quality(r) > self.quality(s))
                    .map(|r| out[r])
                    .fold(f64::INFINITY, f64::min);
                out[s] = out[s].min(ceiling);
            }
        }
    }

    /// True when strategy `s` is barred at `frame` and the evidence has not changed: the
    /// workload has not fallen by the overrun ratio and the pool's overhead has not fallen
    /// by the excess.
    pub(crate) fn barred(&self, s: usize, frame: u64, overhead: f64) -> bool {
        let Some(b) = self.bars[s] else {
            return false;
        };
        if frame >= b.until {
            return false;
        }
        let lighter = (self.workload() as f64) * b.overrun <= b.n_at as f64;
        let roomier = overhead <= b.overhead_at - b.excess_ms;
        !(lighter || roomier)
    }

    /// Quality rank of strategy `s` times the agent's weight.
    pub(crate) fn value(&self, s: usize) -> u32 {
        self.strategies[s].quality as u32 * self.weight as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Quote;

    struct Two;
    impl Agent for Two {
        fn name(&self) -> &str {
            "two"
        }
        fn strategies(&self) -> Vec<Strategy> {
            vec![
                Strategy::new("rich", 2, Quote::constant(4.0)),
                Strategy::new("lean", 1, Quote::constant(2.0)),
            ]
        }
    }

    fn slot() -> Slot {
        let a: Box<dyn Agent> = Box::new(Two);
        let s = a.strategies();
        Slot::new(a, s, StrategyIndex(0))
    }

    #[test]
    fn late_samples_are_credited_to_the_strategy_that_ran() {
        let mut s = slot();
        for f in 1..=10 {
            s.ingest(f, 1, 8.0); // rich measures 2x its quote
        }
        assert_eq!(s.factor(), 2.0);
        // Decided at frame 10, lean runs from frame 11.
        s.switch(StrategyIndex(1), 11, 10);
        // No lean sample yet: the carried factor prices it.
        assert_eq!(s.calibrated(1, None, 10, HL), 4.0);
        // A GPU-style late sample of frame 9 still belongs to rich, not lean.
        s.ingest(9, 1, 8.0);
        assert_eq!(s.calibrated(1, None, 10, HL), 4.0);
        // Lean's own samples take over.
        s.ingest(11, 1, 3.0);
        assert_eq!(s.factor(), 1.5);
        // Rich remembers its own 2x (frame 10, one frame old): not lean's 1.5x.
        let rich = s.calibrated(0, None, 11, HL);
        assert!((rich - 8.0).abs() < 0.01, "{rich}");
    }

    const HL: f64 = 1800.0;

    #[test]
    fn a_strategy_is_priced_by_its_own_measurements_fading_with_age() {
        let mut s = slot();
        for f in 1..=10 {
            s.ingest(f, 1, 56.0); // rich measures 14x its quote
        }
        s.switch(StrategyIndex(1), 11, 10);
        for f in 11..=20 {
            s.ingest(f, 1, 2.0); // lean at 1x: rich is 14x relative to lean
        }
        // The quote's ratio would say 4 ms; rich's own measurements say 56.
        let fresh = s.calibrated(0, None, 20, HL);
        assert!((fresh - 56.0).abs() < 1.0, "{fresh}");
        assert!(s.measured(0) && s.measured(1));
        // The load halves: lean measures 0.5x; rich's prediction halves with it (a load change
        // moves every rung; only the relative correction is remembered).
        for f in 21..=40 {
            s.ingest(f, 1, 1.0);
        }
        let lighter = s.calibrated(0, None, 40, HL);
        assert!((lighter - 28.0).abs() < 1.0, "{lighter}");
        // Age does not make a rung that measured dearer than its quote cheaper: one half-life
        // and ten after the comparison, rich is still 14x lean (fading toward the quote's 2x
        // is what re-probed an overrun rung on the clock).
        for age in [HL, 10.0 * HL] {
            let later = s.calibrated(0, None, 20 + age as u64, HL);
            assert!((later - 28.0).abs() < 1.0, "{later}");
        }
        // Back on rich, its tracker starts afresh: the first new sample prices it alone.
        s.switch(StrategyIndex(0), 41, 40);
        s.ingest(41, 1, 20.0);
        assert_eq!(s.calibrated(0, None, 41, HL), 20.0);
    }

    #[test]
    fn a_rung_measured_cheaper_than_its_quote_fades_back_toward_it() {
        let mut s = slot();
        for f in 1..=10 {
            s.ingest(f, 1, 4.0); // rich at its quote
        }
        s.switch(StrategyIndex(1), 11, 10);
        for f in 11..=20 {
            s.ingest(f, 1, 4.0); // lean at 2x its quote: rich is half its quoted ratio
        }
        let fresh = s.calibrated(0, None, 20, HL);
        assert!((fresh - 4.0).abs() < 0.1, "{fresh}");
        // One half-life later, half way (geometrically) back to the quote's 2x: the safe side.
        let later = s.calibrated(0, None, 20 + HL as u64, HL);
        assert!((later - 8.0 / 2f64.sqrt()).abs() < 0.1, "{later}");
    }

    #[test]
    fn the_rung_in_force_is_priced_by_its_fresh_samples_not_lifted_by_a_stale_cheaper_rung() {
        let mut s = slot();
        // Lean ran through a heavy moment: 10 ms, five times its quote.
        s.switch(StrategyIndex(1), 1, 0);
        for f in 1..=10 {
            s.ingest(f, 1, 10.0);
        }
        // The load falls as rich starts: its first sample measures 6 ms.
        s.switch(StrategyIndex(0), 11, 10);
        s.ingest(11, 1, 6.0);
        let mut out = Vec::new();
        s.price_ladder(None, 11, HL, &mut out);
        // Rich is what it measures now, and caps the cheaper rung; lean's stale 10 ms would
        // otherwise lift rich (every measured rung bounds the richer ones from below) and read
        // as an overrun of 4 ms that no frame had.
        assert_eq!(out[0], 6.0, "{out:?}");
        assert!(out[1] <= 6.0, "{out:?}");
    }

    #[test]
    fn a_periodic_strategy_is_priced_by_its_peak_frame() {
        struct Alt;
        impl Agent for Alt {
            fn name(&self) -> &str {
                "alt"
            }
            fn strategies(&self) -> Vec<Strategy> {
                vec![
                    Strategy::new("every_step", 2, Quote::constant(4.0)),
                    Strategy::new("every_other", 1, Quote::constant(4.0)).every(2),
                ]
            }
        }
        let a: Box<dyn Agent> = Box::new(Alt);
        let st = a.strategies();
        let mut s = Slot::new(a, st, StrategyIndex(1));
        // Work every other frame: 8 ms, then nothing.
        for f in 1..=16 {
            s.ingest(f, 1, if f % 2 == 0 { 8.0 } else { 0.0 });
        }
        // Priced at its 8 ms peak, not its 4 ms mean.
        assert_eq!(s.calibrated(1, None, 16, HL), 8.0);
    }

    #[test]
    fn a_bar_holds_until_its_time_or_until_the_evidence_changes() {
        let mut s = slot();
        s.sampled_n = 100;
        s.bars[0] = Some(Bar {
            until: 200,
            n_at: 100,
            overrun: 2.0,
            overhead_at: 10.0,
            excess_ms: 4.0,
        });
        assert!(s.barred(0, 150, 10.0));
        assert!(!s.barred(0, 200, 10.0), "expired");
        assert!(!s.barred(1, 150, 10.0), "another strategy");
        // The frame's other costs fell by the excess.
        assert!(!s.barred(0, 150, 6.0));
        // The workload halved (the overrun ratio).
        s.sampled_n = 50;
        assert!(!s.barred(0, 150, 10.0));
    }
}
