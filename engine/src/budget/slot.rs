//! One registered agent's controller-side state: what it runs, what it was measured at, and
//! what its strategies cost now.
//!
//! Owns: the strategy history (so late samples are credited to the strategy that ran), the
//! per-strategy cost models and level trackers, the calibration factor, the workload, dwell and
//! pin state. Must never: choose a strategy (the controller does) or touch other agents.

use super::agent::{Agent, Pool, Strategy, StrategyIndex};
use super::cost_model::{calibration_factor, CostLaw, CostModel, Fit, LevelTracker};

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
}

impl Slot {
    pub fn new(agent: Box<dyn Agent>, strategies: Vec<Strategy>, initial: StrategyIndex) -> Self {
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
            carried_factor: None,
            announced_n: None,
            last_change: None,
            pinned: None,
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
    pub fn ingest(&mut self, frame: u64, n: u64, ms: f64) {
        let Some(s) = self.strategy_at(frame) else {
            return;
        };
        let i = s.get();
        self.models[i].push(n, ms);
        let quoted = self.strategies[i].quote.ms(n);
        if quoted > 0.0 {
            self.levels[i].push(ms / quoted);
        }
        self.sampled_n = n;
    }

    /// Switches to `to` from frame `effective` on, telling the agent.
    pub fn switch(&mut self, to: StrategyIndex, effective: u64, decided: u64) {
        if let Some(f) = self.factor_of_current() {
            self.carried_factor = Some(f);
        }
        self.current = to;
        // What `to` measured when it last ran may be stale (the load has moved since): it
        // starts afresh and runs on the carried factor until its own samples arrive.
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
    pub fn factor(&self) -> f64 {
        self.factor_of_current()
            .or(self.carried_factor)
            .unwrap_or(1.0)
    }

    /// Relative standard error of the current strategy's measured level (0 when unmeasured).
    pub fn level_noise(&self) -> f64 {
        self.levels[self.current.get()].rel_std_error()
    }

    /// The workload to cost at.
    pub fn workload(&self) -> u64 {
        self.announced_n.unwrap_or(self.sampled_n)
    }

    /// The current strategy's fitted law, when it has enough samples.
    pub fn fit(&self) -> Option<Fit> {
        self.models[self.current.get()].fit()
    }

    /// Calibrated cost of strategy `s`, ms: its quote at the workload, times the factor, and,
    /// when the workload was announced ahead of the samples and the fitted law differs from the
    /// quote's, corrected by the fitted law's growth from the sampled to the announced `n`.
    pub fn calibrated(&self, s: usize, fit: Option<&Fit>) -> f64 {
        let n = self.workload();
        let quote = self.strategies[s].quote;
        let mut ms = quote.ms(n) * self.factor();
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

    /// Quality rank of strategy `s` times the agent's weight.
    pub fn value(&self, s: usize) -> u32 {
        self.strategies[s].quality as u32 * self.weight as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::agent::Quote;

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
        assert_eq!(s.calibrated(1, None), 4.0);
        // A GPU-style late sample of frame 9 still belongs to rich, not lean.
        s.ingest(9, 1, 8.0);
        assert_eq!(s.calibrated(1, None), 4.0);
        // Lean's own samples take over.
        s.ingest(11, 1, 3.0);
        assert_eq!(s.factor(), 1.5);
        assert_eq!(s.calibrated(0, None), 6.0);
    }

    #[test]
    fn a_strategy_returned_to_starts_afresh() {
        let mut s = slot();
        for f in 1..=10 {
            s.ingest(f, 1, 12.0); // rich under load: 3x
        }
        s.switch(StrategyIndex(1), 11, 10);
        for f in 11..=20 {
            s.ingest(f, 1, 2.0); // load gone: lean at 1x
        }
        s.switch(StrategyIndex(0), 21, 20);
        // Rich's old 3x is stale: it is priced by lean's carried 1x until measured.
        assert_eq!(s.calibrated(0, None), 4.0);
    }
}
