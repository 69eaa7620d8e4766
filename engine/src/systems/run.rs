//! Running the schedule: per-system timing, the budget check, and the frame boundary.
//!
//! Owns: `World::run_systems` (the timed hot loop), its untimed twin (the bench baseline),
//! `World::begin_frame`, and the cold breach path. Must never: allocate or log on the success
//! path, time the dispatch around a system instead of its run, or skip an over-budget system.
//!
//! # Per tick, per system (hot path)
//! 1. Build the `SystemContext` (outside the timed window).
//! 2. `t0 = clock::now()`; call the run function; `t1 = clock::now()` (the window is exactly the
//!    run).
//! 3. `ns = t1 - t0` in whole nanoseconds; record it in the system's 64-sample window
//!    (O(1), inline ring), bump `runs`, set `last_ns`.
//! 4. Compare: `ns > budget` (warn) and `ns >= 3 * budget` (error); both exact integer compares.
//!    Only a breach leaves the hot path, into `on_breach` (`#[cold]`).

use std::panic::{self, AssertUnwindSafe};

use lanegraph_jobs::clock;

use super::def::{SystemContext, SystemFn, SystemId};
use super::registry::SystemRecord;
use super::window::ns_to_ms;
use crate::engine_events::EventLog;
use crate::engine_events::{limiter_now, EngineEvent, EVENT_TARGET};
use crate::world::World;

impl World {
    /// The body of [`WorldHooks::begin_frame`](crate::hooks::WorldHooks::begin_frame), which documents it.
    pub(crate) fn begin_frame(&mut self) {
        self.events.flush();
        self.frame += 1;
    }

    /// Runs every system once, in schedule order, on this (the owner) thread, timing each run
    /// and checking it against its budget. Counts one tick.
    ///
    /// No allocation and no logging unless a system breaches its budget. An over-budget system
    /// has still run; the breach is counted and reported (rate-limited), never enforced. A panic
    /// in a system propagates after the schedule is restored, so the world stays usable.
    pub fn run_systems(&mut self) {
        self.run_schedule::<true>();
    }

    /// Runs every system once exactly like [`run_systems`](Self::run_systems) but without
    /// timing, windows or budget checks: the `timing` bench's baseline, reached through
    /// [`crate::hooks::run_systems_untimed`].
    pub(crate) fn run_systems_untimed(&mut self) {
        self.run_schedule::<false>();
    }

    fn run_schedule<const TIMED: bool>(&mut self) {
        // Take the run functions out so each can borrow the world mutably; the records stay.
        let mut runs = std::mem::take(&mut self.systems.runs);
        let mut conditions = std::mem::take(&mut self.systems.conditions);
        let order = std::mem::take(&mut self.systems.order);
        self.systems.running = true;
        // `Changed<T>` outside systems reports what changed since this step began.
        self.advance_change_tick();
        self.change.outside_seen = self.change.now - 1;
        if self.change.system_seen.len() < runs.len() {
            self.change.system_seen.resize(runs.len(), 0);
        }
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            self.run_each::<TIMED>(&mut runs, &mut conditions, &order);
        }));
        self.systems.runs = runs;
        self.systems.conditions = conditions;
        self.systems.order = order;
        self.systems.running = false;
        self.change.last_seen = self.change.outside_seen;
        // Writes between steps are newer than anything a system saw in this one.
        self.advance_change_tick();
        self.tick += 1;
        // The step consumed the input events handed over for it (see `crate::input`), and
        // each gameplay event queue drops last step's events (`crate::world::Events`).
        self.input.end_step();
        self.end_event_step();
        if let Err(payload) = result {
            panic::resume_unwind(payload);
        }
    }

    #[inline]
    fn run_each<const TIMED: bool>(
        &mut self,
        runs: &mut [SystemFn],
        conditions: &mut [Option<super::def::RunCondition>],
        order: &[u32],
    ) {
        let world_id = self.id();
        let tick = self.tick;
        let step = self.fixed_step;
        let trace = if TIMED && self.systems.spans {
            lanegraph_telemetry::hooks::Here::now()
        } else {
            None
        };
        // One context for the whole pass: each system gets it with its own id and no workload,
        // and the world's command queue lent once (not moved in and out, and an emptied queue
        // dropped, per system). A panicking system unwinds through it as before: its queued
        // commands are dropped unapplied.
        let mut ctx = SystemContext {
            id: SystemId::new(world_id, 0),
            tick,
            step,
            workload: None,
            commands: std::mem::take(&mut self.command_buf),
        };
        for &i in order {
            let i = i as usize;
            if let Some(cond) = conditions[i].as_mut() {
                if !cond(self, tick) {
                    continue;
                }
            }
            let run = &mut runs[i];
            // What this system's `Changed<T>` queries compare against: its previous run's end.
            self.change.last_seen = self.change.system_seen[i];
            ctx.id = SystemId::new(world_id, i as u32);
            ctx.workload = None;
            if TIMED {
                let t0 = clock::now();
                run(self, &mut ctx);
                let t1 = clock::now();
                let ns = t1.ns_since(t0);
                let rec = &mut self.systems.records[i];
                // The system's span on the running thread's track (the owner's), from the
                // stamps just taken: no second clock read.
                if let Some(here) = trace {
                    here.record(rec.span_name, t0, t1);
                }
                if record_sample(rec, ns, ctx.workload) {
                    on_breach(rec, &mut self.events, ctx.id, ns);
                }
            } else {
                run(self, &mut ctx);
            }
            // The system has seen everything up to now; its commands' writes are newer, so
            // its next run sees the rows they add.
            self.change.system_seen[i] = self.change.now;
            self.advance_change_tick();
            // The system's commands apply now, before the next system (module docs of
            // `crate::world::commands`); the emptied queue serves the next run.
            if !ctx.commands.is_empty() {
                ctx.commands.apply_to(self);
            }
            // A sync test records the world's checksums after every system (one branch when
            // none runs).
            if self.sync_probe.is_some() {
                if let Some(mut probe) = self.sync_probe.take() {
                    probe.record(self, i);
                    self.sync_probe = Some(probe);
                }
            }
        }
        // The emptied queue goes back to the world for the next pass.
        self.command_buf = std::mem::take(&mut ctx.commands);
    }
}

/// Records one measured run; true when it breached the budget (`ns > budget`, exact).
#[inline]
pub(crate) fn record_sample(rec: &mut SystemRecord, ns: u64, workload: Option<u64>) -> bool {
    rec.window.record(ns);
    rec.runs += 1;
    rec.last_ns = ns;
    if workload.is_some() {
        rec.workload = workload;
    }
    ns > rec.budget.as_nanos()
}

/// The cold path at the current time (see [`breach_at`]).
#[cold]
#[inline(never)]
fn on_breach(rec: &mut SystemRecord, events: &mut EventLog, id: SystemId, ns: u64) {
    breach_at(rec, events, id, ns, limiter_now());
}

/// The cold path: a run exceeded its budget. Counts every breach; emits the warn (and, at 3x,
/// the error) when the rate limiter admits it and a subscriber listens. The p99 pass over the
/// 64-sample window is done only for an event that is actually emitted.
pub(crate) fn breach_at(
    rec: &mut SystemRecord,
    events: &mut EventLog,
    id: SystemId,
    ns: u64,
    now: u64,
) {
    rec.warns += 1;
    let critical = ns >= rec.critical_ns;
    if critical {
        rec.errors += 1;
    }
    if events.admit(EngineEvent::BudgetOverrun, now)
        && tracing::enabled!(target: EVENT_TARGET, tracing::Level::WARN)
    {
        let p99 = rec.window.stats().map_or(ns, |s| s.p99_ns);
        tracing::warn!(
            target: EVENT_TARGET,
            code = "LG-SYS-001",
            event = "budget_overrun",
            system = &*rec.name,
            id = id.index(),
            measured_ms = ns_to_ms(ns),
            budget_ms = rec.budget.as_ms(),
            p99_ms = ns_to_ms(p99),
            window_samples = rec.window.len(),
            "{}",
            EngineEvent::BudgetOverrun.message()
        );
    }
    if critical
        && events.admit(EngineEvent::BudgetCritical, now)
        && tracing::enabled!(target: EVENT_TARGET, tracing::Level::ERROR)
    {
        let p99 = rec.window.stats().map_or(ns, |s| s.p99_ns);
        tracing::error!(
            target: EVENT_TARGET,
            code = "LG-SYS-002",
            event = "budget_critical",
            system = &*rec.name,
            id = id.index(),
            measured_ms = ns_to_ms(ns),
            budget_ms = rec.budget.as_ms(),
            p99_ms = ns_to_ms(p99),
            window_samples = rec.window.len(),
            "{}",
            EngineEvent::BudgetCritical.message()
        );
    }
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
