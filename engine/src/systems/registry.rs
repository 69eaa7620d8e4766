//! The system table: registration, validation and lookup.
//!
//! Owns: `SystemTable` (one record per system plus its run function, in schedule order) and
//! the registration errors. Must never: accept a definition that breaks the timing contract
//! (empty or duplicate name, invalid budget, more than [`MAX_SYSTEMS`]) or reallocate after
//! construction (the table is sized for `MAX_SYSTEMS` up front).

use std::borrow::Cow;

use super::def::{Budget, BudgetError, SystemDef, SystemFn, SystemId};
use super::order::OrderError;
use super::window::{RollingWindow, SYSTEM_TIMING_WINDOW_SAMPLES};
use super::BUDGET_CRITICAL_MULTIPLIER;
use crate::world::{Domain, World, WorldError};

/// The most systems one world runs. The table is allocated for this
/// many at world construction, so registration never reallocates.
pub const MAX_SYSTEMS: usize = 256;

/// Everything the world keeps about one system besides its run function.
#[derive(Debug)]
pub(crate) struct SystemRecord {
    pub(crate) name: Cow<'static, str>,
    /// The name as the trace's span name (interned once per distinct name).
    pub(crate) span_name: &'static str,
    pub(crate) budget: Budget,
    /// `budget * BUDGET_CRITICAL_MULTIPLIER`, saturating (precomputed for the hot path).
    pub(crate) critical_ns: u64,
    pub(crate) domain: Option<Domain>,
    pub(crate) workload: Option<u64>,
    pub(crate) window: RollingWindow<SYSTEM_TIMING_WINDOW_SAMPLES>,
    pub(crate) runs: u64,
    pub(crate) last_ns: u64,
    pub(crate) warns: u64,
    pub(crate) errors: u64,
}

/// The systems of one world, in schedule (registration) order.
pub(crate) struct SystemTable {
    pub(crate) records: Vec<SystemRecord>,
    /// Run functions, index-aligned with `records`; taken out while `run_systems` runs them.
    pub(crate) runs: Vec<SystemFn>,
    /// Run conditions, index-aligned with `records` (`None`: always runs).
    pub(crate) conditions: Vec<Option<super::def::RunCondition>>,
    /// Order constraints, index-aligned with `records`.
    pub(crate) orders: Vec<super::order::Ordering>,
    /// The schedule: registration indices in run order (`order::schedule`).
    pub(crate) order: Vec<u32>,
    /// True while `run_systems` is running (registration is refused then).
    pub(crate) running: bool,
    /// Whether each run is also a trace span (while spans are on; [`World::set_system_spans`]).
    ///
    /// [`World::set_system_spans`]: crate::world::World::set_system_spans
    pub(crate) spans: bool,
}

impl SystemTable {
    pub(crate) fn new() -> Self {
        SystemTable {
            records: Vec::with_capacity(MAX_SYSTEMS),
            runs: Vec::with_capacity(MAX_SYSTEMS),
            conditions: Vec::with_capacity(MAX_SYSTEMS),
            orders: Vec::with_capacity(MAX_SYSTEMS),
            order: Vec::with_capacity(MAX_SYSTEMS),
            running: false,
            spans: false,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.records.len()
    }
}

/// Why a system could not be registered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RegisterError {
    /// The name is empty.
    #[error("system name is empty: events, stats and reports name systems; fix: give it a unique, descriptive name")]
    EmptyName,
    /// Another system already has this name.
    #[error("system name `{name}` is already registered (as {existing}); names identify systems in events and reports; fix: choose a unique name")]
    DuplicateName {
        /// The name.
        name: String,
        /// The system that has it.
        existing: SystemId,
    },
    /// The declared budget is invalid.
    #[error("system `{name}`: {source}")]
    Budget {
        /// The system's name.
        name: String,
        /// What is wrong with the budget.
        #[source]
        source: BudgetError,
    },
    /// The world already has [`MAX_SYSTEMS`] systems.
    #[error("cannot register `{name}`: the world already runs the maximum of {max} systems; fix: merge small systems")]
    TooMany {
        /// The system's name.
        name: String,
        /// The maximum.
        max: usize,
    },
    /// A before/after constraint names neither a registered system nor a set (the system is
    /// not registered; the schedule is unchanged).
    #[error("cannot register `{name}`: it is ordered relative to `{target}`, which is neither a registered system nor a set (fix: register `{target}` first, or put a system in that set with `in_set`)")]
    UnknownOrderTarget {
        /// The system's name.
        name: String,
        /// The unknown name.
        target: String,
    },
    /// The before/after constraints close a cycle (the system is not registered; the schedule
    /// is unchanged).
    #[error("cannot register `{name}`: system order has a cycle: {} (fix: drop one of these before/after constraints)", cycle.join(" -> "))]
    OrderCycle {
        /// The system's name.
        name: String,
        /// The systems on the cycle, each running before the next (the first repeated last).
        cycle: Vec<String>,
    },
    /// Called from inside a running system.
    #[error("cannot register `{name}` while systems are running; fix: register systems before the loop starts or between frames")]
    WhileRunning {
        /// The system's name.
        name: String,
    },
}

impl World {
    /// The body of [`WorldHooks::set_system_spans`](crate::hooks::WorldHooks::set_system_spans), which documents it.
    pub(crate) fn set_system_spans(&mut self, on: bool) {
        self.systems.spans = on;
    }

    /// Registers a system and returns its id. It runs after every system registered before it
    /// unless its [`SystemDef::before`] / [`SystemDef::after`] constraints (or theirs) say
    /// otherwise: the schedule is the deterministic topological order of the constraints, ties
    /// in registration order (`systems::order`). Setup path: validates the definition and the
    /// order (an unknown name is [`RegisterError::UnknownOrderTarget`], a cycle
    /// [`RegisterError::OrderCycle`]); never grows the table
    /// (sized for [`MAX_SYSTEMS`] at construction).
    pub fn register_system(&mut self, def: SystemDef) -> Result<SystemId, RegisterError> {
        let SystemDef {
            name,
            run,
            budget,
            domain,
            workload,
            order,
            run_if,
        } = def;
        // Every check returns its typed error before anything is stored: a refused definition
        // leaves the table untouched.
        self.check_new_system(&name)?;
        let budget = match budget.validate() {
            Ok(b) => b,
            Err(source) => {
                return Err(RegisterError::Budget {
                    name: name.into_owned(),
                    source,
                })
            }
        };
        if self.systems.records.len() >= MAX_SYSTEMS {
            return Err(RegisterError::TooMany {
                name: name.into_owned(),
                max: MAX_SYSTEMS,
            });
        }
        let schedule = self.schedule_with(&name, &order)?;
        let t = &mut self.systems;
        let index = t.records.len() as u32;
        t.order.clear();
        t.order.extend(schedule);
        t.orders.push(order);
        t.conditions.push(run_if);
        t.records.push(SystemRecord {
            span_name: lanegraph_telemetry::hooks::intern_name(&name),
            name,
            budget,
            critical_ns: budget.as_nanos().saturating_mul(BUDGET_CRITICAL_MULTIPLIER),
            domain,
            workload,
            window: RollingWindow::new(),
            runs: 0,
            last_ns: 0,
            warns: 0,
            errors: 0,
        });
        t.runs.push(run);
        // Its `Changed<T>` horizon: everything is new to a system that never ran. Grown here,
        // not on the first step, so a step allocates nothing.
        self.change.system_seen.push(0);
        Ok(SystemId::new(self.id(), index))
    }

    /// A system named `name` may join the table: none is running, and the name is not empty
    /// and not taken.
    fn check_new_system(&self, name: &str) -> Result<(), RegisterError> {
        let t = &self.systems;
        if t.running {
            return Err(RegisterError::WhileRunning { name: name.into() });
        }
        if name.trim().is_empty() {
            return Err(RegisterError::EmptyName);
        }
        if let Some(i) = t.records.iter().position(|r| r.name == name) {
            return Err(RegisterError::DuplicateName {
                name: name.into(),
                existing: SystemId::new(self.id(), i as u32),
            });
        }
        Ok(())
    }

    /// The schedule with system `name` (ordered by `order`) in it; refused whole on an unknown
    /// name or a cycle.
    fn schedule_with(
        &self,
        name: &str,
        order: &super::order::Ordering,
    ) -> Result<Vec<u32>, RegisterError> {
        let t = &self.systems;
        let mut names: Vec<&str> = t.records.iter().map(|r| r.name.as_ref()).collect();
        names.push(name);
        let mut orders = t.orders.clone();
        orders.push(order.clone());
        super::order::schedule(&names, &orders).map_err(|e| match e {
            OrderError::UnknownTarget { target, .. } => RegisterError::UnknownOrderTarget {
                name: name.into(),
                target,
            },
            OrderError::Cycle { cycle } => RegisterError::OrderCycle {
                name: name.into(),
                cycle,
            },
        })
    }

    /// The body of [`WorldHooks::system_count`](crate::hooks::WorldHooks::system_count), which documents it.
    pub(crate) fn system_count(&self) -> usize {
        self.systems.len()
    }

    /// The id of the system named `name`, if any.
    pub fn system_id(&self, name: &str) -> Option<SystemId> {
        self.systems
            .records
            .iter()
            .position(|r| r.name == name)
            .map(|i| SystemId::new(self.id(), i as u32))
    }

    /// The body of [`WorldHooks::system_ids`](crate::hooks::WorldHooks::system_ids), which documents it.
    pub(crate) fn system_ids(&self) -> impl ExactSizeIterator<Item = SystemId> + '_ {
        let world = self.id();
        (0..self.systems.len() as u32).map(move |i| SystemId::new(world, i))
    }

    /// The record of `id`, or the typed error (pure: never logs).
    pub(crate) fn system_record(&self, id: SystemId) -> Result<&SystemRecord, WorldError> {
        let count = self.systems.len();
        if id.world() != self.id() {
            return Err(WorldError::NoSuchSystem { id, count });
        }
        self.systems
            .records
            .get(id.index() as usize)
            .ok_or(WorldError::NoSuchSystem { id, count })
    }

    /// The body of [`WorldHooks::system_name`](crate::hooks::WorldHooks::system_name), which documents it.
    pub(crate) fn system_name(&self, id: SystemId) -> Result<&str, WorldError> {
        Ok(&self.system_record(id)?.name)
    }

    /// The body of [`WorldHooks::system_budget`](crate::hooks::WorldHooks::system_budget), which documents it.
    pub(crate) fn system_budget(&self, id: SystemId) -> Result<Budget, WorldError> {
        Ok(self.system_record(id)?.budget)
    }

    /// The body of [`WorldHooks::system_domain`](crate::hooks::WorldHooks::system_domain), which documents it.
    pub(crate) fn system_domain(&self, id: SystemId) -> Result<Option<Domain>, WorldError> {
        Ok(self.system_record(id)?.domain)
    }
}
