//! Agents and their strategies: what the controller chooses between.
//!
//! Owns: the [`Agent`] trait, the [`Strategy`] description (quality rank, quoted cost, optional
//! fixed timestep), the typed ids, and the validation of what an agent declares at registration.
//! Must never: measure anything or decide anything (measurement arrives as samples, decisions
//! come from the arbiter).

use std::fmt;

use super::cost_model::CostLaw;

/// Which timeline an agent's cost lands on. The measured frame time is the worse of the two
/// (`max(cpu, gpu)`), so each pool is budgeted against the same frame target, separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pool {
    /// The CPU frame (owner thread and the lanes it waits on).
    Cpu,
    /// The GPU frame (measured by the GPU profiler, two frames late).
    Gpu,
}

impl Pool {
    /// Both pools, in the order the controller visits them (deterministic).
    pub(crate) const ALL: [Pool; 2] = [Pool::Cpu, Pool::Gpu];

    /// Index into per-pool arrays.
    pub(crate) fn index(self) -> usize {
        match self {
            Pool::Cpu => 0,
            Pool::Gpu => 1,
        }
    }

    /// Lower-case name used in reasons (`cpu`, `gpu`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Pool::Cpu => "cpu",
            Pool::Gpu => "gpu",
        }
    }
}

/// An agent's id inside one controller: its registration order. Never reused; valid for the
/// controller's lifetime (agents are not removed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AgentId(pub(crate) u16);

impl AgentId {
    /// The body of [`AgentIdHooks::index`](crate::hooks::AgentIdHooks::index), which documents it.
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "agent#{}", self.0)
    }
}

/// Index of a strategy in the list its agent declared at registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StrategyIndex(pub u8);

impl StrategyIndex {
    /// As a `usize` for indexing.
    pub fn get(self) -> usize {
        self.0 as usize
    }
}

/// A quoted cost: `ms = coefficient * law(n)`, the agent's own a-priori estimate. The
/// controller rescales quotes to measurements (see `cost_model`), so a quote needs to be right
/// in its *ratios* between strategies more than in its absolute value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quote {
    /// The growth law in the workload size `n`.
    pub law: CostLaw,
    /// Milliseconds per unit of `law(n)`.
    pub coefficient: f64,
}

impl Quote {
    /// A quote `coefficient * law(n)` milliseconds.
    pub fn new(law: CostLaw, coefficient: f64) -> Self {
        Quote { law, coefficient }
    }

    /// A quote that does not depend on `n`.
    pub fn constant(ms: f64) -> Self {
        Quote::new(CostLaw::Constant, ms)
    }

    /// The quoted milliseconds for workload `n`.
    pub(crate) fn ms(&self, n: u64) -> f64 {
        self.coefficient * self.law.eval(n)
    }
}

/// One way an agent can run. Higher `quality` is better; the arbiter maximises the weighted sum
/// of qualities that fits the budget.
#[derive(Debug, Clone, PartialEq)]
pub struct Strategy {
    /// Short name shown in the decision log (`full`, `half`, `step_120`).
    pub name: String,
    /// Quality rank: higher is better. Ranks are small integers (the arbiter's table grows
    /// with their sum, see `arbitration`).
    pub quality: u16,
    /// The agent's quoted cost.
    pub quote: Quote,
    /// The simulation step this strategy needs, as a divisor of the game's configured step
    /// rate (1: the configured rate; 2: half of it, each step twice as long). Physics owns the
    /// simulation step this way; `None`: the strategy has no say in it. The runtime turns the
    /// smallest divisor any agent's current strategy declares into the step in force (the
    /// finest step asked for wins); the budget crate never sees seconds.
    pub step_divisor: Option<std::num::NonZeroU32>,
    /// The strategy works every this many frames (1: every frame). A periodic strategy is
    /// priced by its peak frame (the costliest of its last `period` samples), not by its mean:
    /// the frame that does the work is the one that must fit.
    pub period: u32,
    /// For a rung of a continuous strategy ([`Strategy::fraction_steps`]): the share of the
    /// work it does, in `(0, 1]`.
    pub fraction: Option<f64>,
}

impl Strategy {
    /// A strategy with no say in the simulation step.
    pub fn new(name: impl Into<String>, quality: u16, quote: Quote) -> Self {
        Strategy {
            name: name.into(),
            quality,
            quote,
            step_divisor: None,
            period: 1,
            fraction: None,
        }
    }

    /// A continuous strategy, "do a share `f` in (0, 1] of the work" (dynamic resolution, the
    /// share of bodies that get a detail pass this step), as `steps` rungs best first:
    /// `{name}_{k}_{steps}` for `k = steps ..= 1`, each with `fraction = k / steps`, quality
    /// `lowest_quality + k - 1`, and a quote of `quote_at_full` times
    /// `fixed_share + (1 - fixed_share) * f` (the part of the cost that does not shrink with
    /// the share, then the part that does). The arbiter then picks the largest share that fits,
    /// to `1 / steps`; decisions, pins and replays name the rung, so they stay exact. `steps`
    /// is clamped to `1..=16`.
    pub fn fraction_steps(
        name: &str,
        steps: u8,
        lowest_quality: u16,
        quote_at_full: Quote,
        fixed_share: f64,
    ) -> Vec<Strategy> {
        let steps = steps.clamp(1, 16);
        let fixed = fixed_share.clamp(0.0, 1.0);
        (1..=steps)
            .rev()
            .map(|k| {
                let f = f64::from(k) / f64::from(steps);
                let mut s = Strategy::new(
                    format!("{name}_{k}_{steps}"),
                    lowest_quality + u16::from(k) - 1,
                    Quote::new(
                        quote_at_full.law,
                        quote_at_full.coefficient * (fixed + (1.0 - fixed) * f),
                    ),
                );
                s.fraction = Some(f);
                s
            })
            .collect()
    }

    /// The same strategy, working every `frames` frames (1 to `limits::MAX_PERIOD`, 8): priced
    /// by its peak frame.
    pub fn every(mut self, frames: u32) -> Self {
        self.period = frames;
        self
    }

    /// The same strategy stepping the simulation at the configured rate divided by `divisor`
    /// (1 to 1,000).
    pub fn with_step_divisor(mut self, divisor: std::num::NonZeroU32) -> Self {
        self.step_divisor = Some(divisor);
        self
    }
}

/// Something whose work the controller budgets: physics, render, asset streaming, or a game's
/// own system. It declares its strategies once, is told which one to apply, and its measured
/// cost reaches the controller as [`AgentSample`](super::AgentSample)s (the engine's telemetry
/// produces those; the agent does not time itself).
pub trait Agent: Send {
    /// Unique name shown in the decision log (`physics`, `render`).
    fn name(&self) -> &str;

    /// Where this agent's cost lands. Default: the CPU frame.
    fn pool(&self) -> Pool {
        Pool::Cpu
    }

    /// Priority weight multiplying every quality rank of this agent (default 1): with weight 2,
    /// one rank of this agent is worth two ranks of a weight-1 agent.
    fn weight(&self) -> u16 {
        1
    }

    /// The strategies, read once at registration. Order is the agent's own; the controller
    /// refers to them by [`StrategyIndex`].
    fn strategies(&self) -> Vec<Strategy>;

    /// The workload size to quote at until the first sample arrives (default 1).
    fn initial_workload(&self) -> u64 {
        1
    }

    /// Switch to `strategy` (the controller's decision, or a manual pin). Called on the
    /// controller's thread, at most once per agent per tick. The default does nothing: an
    /// agent whose owner reads the choice back (`Engine::strategy`; the engine does so for
    /// its built-in agents) needs no `apply`.
    fn apply(&mut self, index: StrategyIndex, strategy: &Strategy) {
        let _ = (index, strategy);
    }
}

/// Bounds on what an agent may declare (they keep the arbiter's table small and exact).
pub(crate) mod limits {
    /// Most strategies one agent may offer (indices fit a `u8`, the arbiter's choice table is
    /// one byte per cell).
    pub(crate) const MAX_STRATEGIES: usize = 32;
    /// Most agents one controller budgets (ids are `u16`; engines have a handful).
    pub(crate) const MAX_AGENTS: usize = 256;
    /// Highest quality rank (ranks are meant to be small: 0..=10 is typical).
    pub(crate) const MAX_QUALITY: u16 = 1_000;
    /// Highest weight.
    pub(crate) const MAX_WEIGHT: u16 = 100;
    /// Longest period of a periodic strategy, frames.
    pub(crate) const MAX_PERIOD: u32 = 8;
    /// Largest step divisor: a 1,000 Hz configured rate stepped once a second.
    pub(crate) const MAX_STEP_DIVISOR: u32 = 1_000;
}

/// What an agent declared wrongly at registration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RegisterError {
    /// No strategies at all.
    #[error(
        "agent `{agent}`: declares no strategies (fix: return at least one from `strategies()`)"
    )]
    NoStrategies {
        /// The agent.
        agent: String,
    },
    /// Too many strategies.
    #[error("agent `{agent}`: declares {count} strategies, more than {max} (fix: merge strategies that differ little)")]
    TooManyStrategies {
        /// The agent.
        agent: String,
        /// How many it declared.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// Two agents share a name (the decision log would be ambiguous).
    #[error("agent `{agent}`: name already registered (fix: give each agent a unique name)")]
    DuplicateName {
        /// The name.
        agent: String,
    },
    /// Two strategies of one agent share a name.
    #[error("agent `{agent}`: strategy `{strategy}` declared twice (fix: unique strategy names)")]
    DuplicateStrategy {
        /// The agent.
        agent: String,
        /// The strategy name.
        strategy: String,
    },
    /// A quote is not a finite positive number.
    #[error("agent `{agent}`: strategy `{strategy}` quotes coefficient {coefficient}, not a finite positive number of ms (fix: quote the cost you expect, > 0)")]
    BadQuote {
        /// The agent.
        agent: String,
        /// The strategy.
        strategy: String,
        /// The bad coefficient.
        coefficient: f64,
    },
    /// A quality rank or weight is out of range.
    #[error("agent `{agent}`: {what} {value} exceeds {max} (fix: use small ranks; only their order and sums matter)")]
    OutOfRange {
        /// The agent.
        agent: String,
        /// `quality of <strategy>` or `weight`.
        what: String,
        /// The value.
        value: u16,
        /// The limit.
        max: u16,
    },
    /// A period is not in `1..=MAX_PERIOD` frames.
    #[error("agent `{agent}`: strategy `{strategy}` declares a period of {period} frames, outside 1..={max} (fix: `every(2)` for work every other frame)")]
    BadPeriod {
        /// The agent.
        agent: String,
        /// The strategy.
        strategy: String,
        /// The declared period.
        period: u32,
        /// The limit.
        max: u32,
    },
    /// A step divisor is over the limit.
    #[error("agent `{agent}`: strategy `{strategy}` declares step divisor {divisor}, over {max} (fix: a small divisor of the configured step rate, like 1, 2 or 4)")]
    BadStepDivisor {
        /// The agent.
        agent: String,
        /// The strategy.
        strategy: String,
        /// The declared divisor.
        divisor: u32,
        /// The limit.
        max: u32,
    },
    /// The agents' quality ranks and weights would make the arbiter's table too large.
    #[error("agent `{agent}`: the arbiter's table would need {cells} cells, more than {max} (fix: use small quality ranks, e.g. 0..=10, and small weights)")]
    ArbitrationTooLarge {
        /// The agent.
        agent: String,
        /// Cells needed.
        cells: usize,
        /// The limit.
        max: usize,
    },
    /// The controller is full.
    #[error("agent `{agent}`: the controller already budgets {max} agents (fix: group small systems into one agent)")]
    TooManyAgents {
        /// The agent.
        agent: String,
        /// The limit.
        max: usize,
    },
}

/// Checks what an agent declared. `taken` says whether a name is already registered.
pub(crate) fn validate(
    name: &str,
    weight: u16,
    strategies: &[Strategy],
    taken: impl Fn(&str) -> bool,
) -> Result<(), RegisterError> {
    let agent = || name.to_string();
    if taken(name) {
        return Err(RegisterError::DuplicateName { agent: agent() });
    }
    if strategies.is_empty() {
        return Err(RegisterError::NoStrategies { agent: agent() });
    }
    if strategies.len() > limits::MAX_STRATEGIES {
        return Err(RegisterError::TooManyStrategies {
            agent: agent(),
            count: strategies.len(),
            max: limits::MAX_STRATEGIES,
        });
    }
    if weight > limits::MAX_WEIGHT {
        return Err(RegisterError::OutOfRange {
            agent: agent(),
            what: "weight".into(),
            value: weight,
            max: limits::MAX_WEIGHT,
        });
    }
    for (i, s) in strategies.iter().enumerate() {
        if strategies[..i].iter().any(|t| t.name == s.name) {
            return Err(RegisterError::DuplicateStrategy {
                agent: agent(),
                strategy: s.name.clone(),
            });
        }
        let c = s.quote.coefficient;
        if !(c.is_finite() && c > 0.0) {
            return Err(RegisterError::BadQuote {
                agent: agent(),
                strategy: s.name.clone(),
                coefficient: c,
            });
        }
        if s.quality > limits::MAX_QUALITY {
            return Err(RegisterError::OutOfRange {
                agent: agent(),
                what: format!("quality of `{}`", s.name),
                value: s.quality,
                max: limits::MAX_QUALITY,
            });
        }
        if !(1..=limits::MAX_PERIOD).contains(&s.period) {
            return Err(RegisterError::BadPeriod {
                agent: agent(),
                strategy: s.name.clone(),
                period: s.period,
                max: limits::MAX_PERIOD,
            });
        }
        if let Some(d) = s.step_divisor {
            if d.get() > limits::MAX_STEP_DIVISOR {
                return Err(RegisterError::BadStepDivisor {
                    agent: agent(),
                    strategy: s.name.clone(),
                    divisor: d.get(),
                    max: limits::MAX_STEP_DIVISOR,
                });
            }
        }
    }
    Ok(())
}

/// The step rule's one home: the smallest step divisor the given strategies (each agent's
/// current one) declare, `None` when none declares one. The finest step asked for wins; the
/// runtime divides its configured step rate by the answer (the engine each frame, the
/// simulator likewise).
pub fn finest_step_divisor<'a>(
    current: impl IntoIterator<Item = &'a Strategy>,
) -> Option<std::num::NonZeroU32> {
    current.into_iter().filter_map(|s| s.step_divisor).min()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(name: &str, q: u16, c: f64) -> Strategy {
        Strategy::new(name, q, Quote::constant(c))
    }

    #[test]
    fn a_continuous_strategy_is_a_ladder_of_shares() {
        let ss = Strategy::fraction_steps("detail", 4, 2, Quote::constant(10.0), 0.2);
        let names: Vec<&str> = ss.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["detail_4_4", "detail_3_4", "detail_2_4", "detail_1_4"]
        );
        assert_eq!(ss[0].fraction, Some(1.0));
        assert_eq!(ss[3].fraction, Some(0.25));
        assert_eq!((ss[0].quality, ss[3].quality), (5, 2));
        // 20 % fixed, 80 % shrinking with the share.
        assert!((ss[0].quote.coefficient - 10.0).abs() < 1e-12);
        assert!((ss[2].quote.coefficient - 6.0).abs() < 1e-12);
        assert!(validate("a", 1, &ss, |_| false).is_ok());
    }

    #[test]
    fn validation_names_the_problem() {
        let none = |_: &str| false;
        assert!(validate("a", 1, &[s("x", 1, 1.0)], none).is_ok());
        assert!(matches!(
            validate("a", 1, &[], none),
            Err(RegisterError::NoStrategies { .. })
        ));
        assert!(matches!(
            validate("a", 1, &[s("x", 1, 1.0)], |n| n == "a"),
            Err(RegisterError::DuplicateName { .. })
        ));
        assert!(matches!(
            validate("a", 1, &[s("x", 1, 1.0), s("x", 2, 2.0)], none),
            Err(RegisterError::DuplicateStrategy { .. })
        ));
        assert!(matches!(
            validate("a", 1, &[s("x", 1, f64::NAN)], none),
            Err(RegisterError::BadQuote { .. })
        ));
        assert!(matches!(
            validate(
                "a",
                1,
                &[s("x", 1, 1.0).with_step_divisor(std::num::NonZeroU32::new(1_001).unwrap())],
                none
            ),
            Err(RegisterError::BadStepDivisor { .. })
        ));
        assert!(matches!(
            validate("a", 101, &[s("x", 1, 1.0)], none),
            Err(RegisterError::OutOfRange { .. })
        ));
        let e = validate("a", 1, &[s("x", 1, -1.0)], none).unwrap_err();
        assert!(e.to_string().contains("fix:"), "{e}");
    }

    #[test]
    fn quotes_follow_their_law() {
        assert_eq!(Quote::constant(2.0).ms(1000), 2.0);
        assert_eq!(Quote::new(CostLaw::Linear, 0.5).ms(10), 5.0);
    }
}
