//! What a system is: its definition, its exact budget, its id and the context it runs with.
//!
//! Owns: [`SystemDef`], [`Budget`] (and its validation), [`SystemId`], [`SystemContext`].
//! Must never: accept a budget that cannot be compared exactly, or let an id from one world
//! address a system of another.

use std::borrow::Cow;
use std::fmt;
use std::num::NonZeroU64;
use std::time::Duration;

use crate::fixed_step::FixedStep;
use crate::world::{Domain, World, WorldId};

/// The run function of a system: called once per fixed step on the owner thread.
pub type SystemFn = Box<dyn FnMut(&mut World, &mut SystemContext) + Send>;

/// A declared per-run time budget, held as whole nanoseconds so every comparison with a
/// measurement (also whole nanoseconds) is an exact integer comparison.
///
/// Declared in milliseconds, a budget is rounded once, at registration, to the nearest
/// nanosecond (the clock's resolution); from a [`Duration`] or nanoseconds it is exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Budget(NonZeroU64);

impl Budget {
    /// A budget of `ns` nanoseconds; zero is an error.
    pub fn from_nanos(ns: u64) -> Result<Budget, BudgetError> {
        NonZeroU64::new(ns).map(Budget).ok_or(BudgetError::Zero)
    }

    /// A budget from a `Duration` (exact); zero or more than `u64::MAX` ns is an error.
    pub fn from_duration(d: Duration) -> Result<Budget, BudgetError> {
        let ns = u64::try_from(d.as_nanos()).map_err(|_| BudgetError::TooLarge {
            ms: d.as_secs_f64() * 1e3,
        })?;
        Self::from_nanos(ns)
    }

    /// A budget from milliseconds, rounded to the nearest nanosecond. Zero, negative, non-finite,
    /// sub-nanosecond or overflowing values are errors.
    pub fn from_ms(ms: f64) -> Result<Budget, BudgetError> {
        if !ms.is_finite() {
            return Err(BudgetError::NonFinite { ms });
        }
        if ms < 0.0 {
            return Err(BudgetError::Negative { ms });
        }
        if ms == 0.0 {
            return Err(BudgetError::Zero);
        }
        let ns = (ms * 1e6).round();
        if ns < 1.0 {
            return Err(BudgetError::BelowResolution { ms });
        }
        if ns >= u64::MAX as f64 {
            return Err(BudgetError::TooLarge { ms });
        }
        Self::from_nanos(ns as u64)
    }

    /// The budget in nanoseconds.
    pub fn as_nanos(self) -> u64 {
        self.0.get()
    }

    /// The budget in milliseconds (exact below 2^53 ns).
    pub fn as_ms(self) -> f64 {
        self.0.get() as f64 / 1e6
    }
}

/// How a budget was declared, validated at registration into a [`Budget`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BudgetSpec {
    /// Milliseconds as a float (the usual way to write one: `0.5`).
    Ms(f64),
    /// An exact duration.
    Duration(Duration),
}

impl From<f64> for BudgetSpec {
    fn from(ms: f64) -> Self {
        BudgetSpec::Ms(ms)
    }
}

impl From<Duration> for BudgetSpec {
    fn from(d: Duration) -> Self {
        BudgetSpec::Duration(d)
    }
}

impl BudgetSpec {
    /// Validates the declaration.
    pub(crate) fn validate(self) -> Result<Budget, BudgetError> {
        match self {
            BudgetSpec::Ms(ms) => Budget::from_ms(ms),
            BudgetSpec::Duration(d) => Budget::from_duration(d),
        }
    }
}

/// A budget declaration that cannot be enforced.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum BudgetError {
    /// Zero: every run would be over budget.
    #[error("budget is zero: every run would breach it; fix: declare the time the system may take (e.g. 0.5 ms)")]
    Zero,
    /// Negative.
    #[error("budget is negative ({ms} ms): a run cannot take negative time; fix: declare a positive budget")]
    Negative {
        /// The declared value.
        ms: f64,
    },
    /// NaN or infinite.
    #[error("budget is not finite ({ms} ms): it cannot be compared exactly; fix: declare a finite, positive budget")]
    NonFinite {
        /// The declared value.
        ms: f64,
    },
    /// Rounds to zero nanoseconds.
    #[error(
        "budget {ms} ms is below the clock's 1 ns resolution; fix: declare at least 0.000001 ms"
    )]
    BelowResolution {
        /// The declared value.
        ms: f64,
    },
    /// More nanoseconds than a `u64` holds.
    #[error("budget {ms} ms is too large to hold in nanoseconds; fix: declare a realistic budget")]
    TooLarge {
        /// The declared value.
        ms: f64,
    },
}

/// A system's identity in one world: valid from registration for the world's whole life.
///
/// Ids are not reused (systems are never unregistered). An id from another world, or one made by
/// `SystemIdHooks::from_parts` that names no system, is rejected by every query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SystemId {
    world: WorldId,
    /// 0-based schedule position.
    index: u32,
}

impl SystemId {
    pub(crate) fn new(world: WorldId, index: u32) -> Self {
        SystemId { world, index }
    }

    /// Rebuilds an id from its parts (e.g. read back from a profiler capture). It is validated
    /// on use, never trusted.
    pub(crate) fn from_parts(world: WorldId, index: u32) -> Self {
        SystemId { world, index }
    }

    /// The body of [`SystemIdHooks::index`](crate::hooks::SystemIdHooks::index), which documents it.
    pub(crate) fn index(self) -> u32 {
        self.index
    }

    /// The body of [`SystemIdHooks::world`](crate::hooks::SystemIdHooks::world), which documents it.
    pub(crate) fn world(self) -> WorldId {
        self.world
    }
}

impl fmt::Display for SystemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "w{}#{}", self.world.get(), self.index)
    }
}

/// A system to register: a unique name, a run function, a declared budget, and optionally the
/// domain it works on and its workload size (the `n` of the budget controller's cost model).
pub struct SystemDef {
    pub(crate) name: Cow<'static, str>,
    pub(crate) run: SystemFn,
    pub(crate) budget: BudgetSpec,
    pub(crate) domain: Option<Domain>,
    pub(crate) workload: Option<u64>,
    pub(crate) order: super::order::Ordering,
    pub(crate) run_if: Option<RunCondition>,
}

/// A run condition: called before each run with the world and the step's tick; the system
/// runs only when it returns true (a skipped run is not timed).
pub type RunCondition = Box<dyn FnMut(&World, u64) -> bool + Send>;

/// Run every `n`-th step (ticks 0, n, 2n, ...); `n = 0` is taken as 1.
pub fn every(n: u64) -> impl FnMut(&World, u64) -> bool + Send {
    let n = n.max(1);
    move |_, tick| tick % n == 0
}

/// Run while `agent`'s strategy in force is `strategy` (a run condition on the adaptive
/// controller's choice; `World::agent_strategy`).
pub fn when_strategy(
    agent: lanegraph_budget::AgentId,
    strategy: lanegraph_budget::StrategyIndex,
) -> impl FnMut(&World, u64) -> bool + Send {
    move |w, _| w.agent_strategy(agent) == Some(strategy)
}

/// Run when resource `R` may have changed since the condition was last asked (a domain of
/// `R::DOMAINS` moved its change epoch: anything in those domains counts), and on the first ask.
pub fn when_changed<R: crate::world::Resource>() -> impl FnMut(&World, u64) -> bool + Send {
    let mut seen: Option<crate::world::Epochs> = None;
    move |w, _| {
        let now = w.epochs();
        let changed = seen.is_none_or(|old| old.changed_in(&now, R::DOMAINS));
        seen = Some(now);
        changed
    }
}

impl fmt::Debug for SystemDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SystemDef")
            .field("name", &self.name)
            .field("budget", &self.budget)
            .field("domain", &self.domain)
            .field("workload", &self.workload)
            .finish_non_exhaustive()
    }
}

impl SystemDef {
    /// A system named `name` with budget `budget` (milliseconds as `f64`, or a `Duration`).
    /// Nothing is validated until [`World::register_system`].
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        budget: impl Into<BudgetSpec>,
        run: impl FnMut(&mut World, &mut SystemContext) + Send + 'static,
    ) -> Self {
        SystemDef {
            name: name.into(),
            run: Box::new(run),
            budget: budget.into(),
            domain: None,
            workload: None,
            order: Default::default(),
            run_if: None,
        }
    }

    /// Runs before `name`: a system, or a set (every system in it, also those registered
    /// later). The name must be registered when this system is (`RegisterError::UnknownOrderTarget`).
    pub fn before(mut self, name: impl Into<String>) -> Self {
        self.order.before.push(name.into());
        self
    }

    /// Runs after `name`: a system, or a set (see [`SystemDef::before`]).
    pub fn after(mut self, name: impl Into<String>) -> Self {
        self.order.after.push(name.into());
        self
    }

    /// Puts the system in the named set (others order themselves against the whole set).
    pub fn in_set(mut self, set: impl Into<String>) -> Self {
        self.order.sets.push(set.into());
        self
    }

    /// Runs only when `condition(world, tick)` is true ([`every`], [`when_strategy`],
    /// [`when_changed`], or a closure).
    pub fn run_if(mut self, condition: impl FnMut(&World, u64) -> bool + Send + 'static) -> Self {
        self.run_if = Some(Box::new(condition));
        self
    }

    /// Declares the domain the system mostly works on (for reports and the controller).
    pub fn domain(mut self, domain: Domain) -> Self {
        self.domain = Some(domain);
        self
    }

    /// Declares the system's workload size (entities, contacts, ...), until it reports its own
    /// with [`SystemContext::report_workload`].
    pub fn workload(mut self, n: u64) -> Self {
        self.workload = Some(n);
        self
    }
}

/// What a system sees besides the world: its id, the tick, the fixed step, a place to report
/// its workload for this run, and its command queue.
#[derive(Debug)]
pub struct SystemContext {
    pub(crate) id: SystemId,
    pub(crate) tick: u64,
    pub(crate) step: FixedStep,
    pub(crate) workload: Option<u64>,
    pub(crate) commands: crate::world::Commands,
}

impl SystemContext {
    /// The fixed step being run (0-based, counts every `run_systems` call).
    pub fn tick(&self) -> u64 {
        self.tick
    }

    /// The fixed step's length (exact).
    pub fn step(&self) -> FixedStep {
        self.step
    }

    /// The fixed step in seconds as an `f32`, the type components and the `f32x8` kernels
    /// integrate with: `step().as_secs_f64()` rounded once, so it is the same value every
    /// step.
    pub fn dt(&self) -> f32 {
        self.step.as_secs_f64() as f32
    }

    /// This run's command queue: spawn, despawn, insert, remove and send events where the world
    /// is borrowed (inside a query's closure). Applied right after the system returns, in the
    /// order queued (`crate::world::Commands`).
    pub fn commands(&mut self) -> &mut crate::world::Commands {
        &mut self.commands
    }

    /// Reports how much work this run did (the `n` of the cost model). Kept as the system's
    /// current workload until reported again.
    pub fn report_workload(&mut self, n: u64) {
        self.workload = Some(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dt_is_the_step_in_f32_seconds() {
        let ctx = SystemContext {
            id: SystemId::new(crate::world::WorldId::fresh(), 0),
            tick: 0,
            step: FixedStep::from_hz(60).unwrap(),
            workload: None,
            commands: Default::default(),
        };
        assert_eq!(ctx.dt(), (1.0f64 / 60.0) as f32);
        assert_eq!(ctx.dt(), ctx.step().as_secs_f64() as f32);
    }

    #[test]
    fn budgets_validate_and_round_to_the_nanosecond() {
        assert_eq!(Budget::from_ms(0.5).unwrap().as_nanos(), 500_000);
        assert_eq!(Budget::from_ms(0.3).unwrap().as_nanos(), 300_000);
        assert_eq!(Budget::from_ms(0.0), Err(BudgetError::Zero));
        assert_eq!(Budget::from_ms(-0.0), Err(BudgetError::Zero));
        assert!(matches!(
            Budget::from_ms(-1.0),
            Err(BudgetError::Negative { .. })
        ));
        assert!(matches!(
            Budget::from_ms(f64::NAN),
            Err(BudgetError::NonFinite { .. })
        ));
        assert!(matches!(
            Budget::from_ms(f64::INFINITY),
            Err(BudgetError::NonFinite { .. })
        ));
        assert!(matches!(
            Budget::from_ms(1e-9),
            Err(BudgetError::BelowResolution { .. })
        ));
        assert!(matches!(
            Budget::from_ms(1e300),
            Err(BudgetError::TooLarge { .. })
        ));
        assert_eq!(
            Budget::from_duration(Duration::from_micros(7))
                .unwrap()
                .as_nanos(),
            7_000
        );
        assert_eq!(
            Budget::from_duration(Duration::ZERO),
            Err(BudgetError::Zero)
        );
    }
}
