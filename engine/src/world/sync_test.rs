//! SyncTest: every step, roll the World back and re-simulate the last N steps, comparing a
//! checksum of every component, resource and the entity set after every system; the first
//! difference names the step, the system and the components.
//!
//! Owns: [`SyncTest`] (the snapshots and per-system checksums of the window), the probe the
//! schedule calls after each system while a sync test records ([`World::run_systems`] checks
//! one `Option`), and the comparison that builds a [`Desync`] (the report itself is a
//! [`WorldError`] payload, defined with it). Must never: change what a deterministic world computes (a
//! re-simulation of deterministic systems ends in the very state the first run left), or
//! report a desync without the step, the system and at least one component that differ.
//!
//! This is GGRS's SyncTest, moved inside the World: GGRS compares one checksum per frame, so a
//! desync there says *that* a frame differs; here the checksums are per system and per
//! component, so the report says *where*.

use std::collections::VecDeque;

use super::hash::StateHasher;
use super::snapshot::Snapshot;
use super::World;
use crate::input::Input;
use crate::world::error::{Desync, WorldError};

/// Checksums after one system: per column (in column order, 0 for an empty one: a column a
/// restore emptied and one not created yet compare equal), per resource (by name), and of the
/// live entity set.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SystemSums {
    system: usize,
    entities: u64,
    columns: Vec<u64>,
    resources: Vec<(&'static str, u64)>,
}

/// What the schedule records after each system while a sync test runs.
#[derive(Debug, Default)]
pub(crate) struct SyncProbe {
    sums: Vec<SystemSums>,
}

impl SyncProbe {
    /// Records the world's checksums after system `system`. A column or entity set unchanged
    /// since the last record (no epoch of its domains moved) reuses the world's cached digest.
    pub(crate) fn record(&mut self, world: &World, system: usize) {
        let columns: Vec<u64> = (0..world.columns.len())
            .map(|i| world.column_digest(i))
            .collect();
        let resources = world
            .resources
            .values()
            .iter()
            .map(|r| {
                let mut h = StateHasher::default();
                r.hash_state(&mut h);
                (r.name(), h.finish())
            })
            .collect();
        self.sums.push(SystemSums {
            system,
            entities: world.entities_digest(),
            columns,
            resources,
        });
    }
}

/// One recorded step: the state and input before it, and the checksums after each system.
struct Recorded {
    tick: u64,
    before: Snapshot,
    input: Input,
    sums: Vec<SystemSums>,
}

/// Runs a World's steps under a SyncTest: [`SyncTest::step`] runs one step (as
/// [`World::run_systems`]), then rolls back `check_distance` steps (fewer at the start) and
/// re-simulates them from their snapshots and inputs, comparing checksums after every system.
///
/// ```
/// use lanegraph::prelude::*;
/// use lanegraph::world::SyncTest;
///
/// #[derive(Clone, Copy, Component, StateHash)]
/// struct Pos(f32);
///
/// let mut world = World::new();
/// world.spawn_batch((0..10).map(|i| (Pos(i as f32),))).unwrap();
/// world
///     .register_system(SystemDef::new("drift", 1.0, |w: &mut World, _| {
///         w.query::<&mut Pos>().unwrap().for_each(|p| p.0 += 1.0);
///     }))
///     .unwrap();
/// let mut sync = SyncTest::new(4);
/// for _ in 0..10 {
///     sync.step(&mut world).unwrap(); // deterministic: never a desync
/// }
/// assert_eq!(world.tick(), 10);
/// ```
pub struct SyncTest {
    distance: usize,
    window: VecDeque<Recorded>,
    /// Snapshots of steps that left the window, reused for new ones.
    spare: Vec<Snapshot>,
    /// The probe, kept between steps for its checksum cache.
    probe: Option<Box<SyncProbe>>,
    /// The world as the last step left it: a world changed between steps starts a new
    /// window, since the held steps never saw the change.
    after_last: WorldMark,
    /// The state the last step's first run left (taken before its re-simulation): the next
    /// step's snapshot when the world is unchanged between them, and what a desync puts back,
    /// so the check never changes what it checks.
    after_first_run: Option<Snapshot>,
}

/// What the held steps assume unchanged between steps, beside the snapshots: the world's change
/// epochs (any write outside a step), its system count (a system registered) and the budget
/// agents' strategies (a switch at a frame boundary: what `World::agent_strategy` answers and
/// the engine's physics settings, inputs the snapshots do not hold).
#[derive(Default)]
struct WorldMark {
    epochs: Option<super::Epochs>,
    systems: usize,
    strategies: Vec<lanegraph_budget::StrategyIndex>,
}

impl WorldMark {
    fn matches(&self, world: &World) -> bool {
        self.epochs == Some(world.epochs())
            && self.systems == world.system_count()
            && self.strategies == world.agent_strategies
    }

    /// Marks `world` as it is now (no allocation once the strategies fit).
    fn take(&mut self, world: &World) {
        self.epochs = Some(world.epochs());
        self.systems = world.system_count();
        self.strategies.clone_from(&world.agent_strategies);
    }
}

impl std::fmt::Debug for SyncTest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyncTest")
            .field("check_distance", &self.distance)
            .field("held", &self.window.len())
            .finish()
    }
}

impl SyncTest {
    /// A sync test re-simulating the last `check_distance` steps (at least 1) every step.
    pub fn new(check_distance: usize) -> Self {
        SyncTest {
            distance: check_distance.max(1),
            window: VecDeque::new(),
            spare: Vec::new(),
            probe: None,
            after_last: WorldMark::default(),
            after_first_run: None,
        }
    }

    /// Forgets the held steps: the next step starts a new window. An engine calls it when its
    /// physics hook is replaced, so no step run under one hook is re-simulated under another
    /// and reported as a desync it is not. (A world changed between steps, a strategy switch
    /// included, restarts the window by itself: `step_with`.)
    pub(crate) fn restart(&mut self) {
        while let Some(r) = self.window.pop_front() {
            self.spare.push(r.before);
        }
        if let Some(s) = self.after_first_run.take() {
            self.spare.push(s);
        }
    }

    /// Runs one step of `world`, then re-simulates the window and compares. On a desync the
    /// world is put back to the state the step's first run left (the check never changes what
    /// the game computes, even for a system that keeps state outside the World) and the window
    /// is cleared (the next step starts a new one). A world changed since the last step (entities, components or resources
    /// written outside a step, a system registered, a budget agent's strategy switched)
    /// starts a new window as well: the
    /// held steps never saw the change, so re-simulating them would report a desync that is
    /// not. A world that cannot be snapshotted (a component or resource that is not `Clone`)
    /// still runs the step, and the error says which type.
    pub fn step(&mut self, world: &mut World) -> Result<(), WorldError> {
        self.step_with(world, &mut |_| {})
    }

    /// [`step`](Self::step) for a game whose step is its systems and then `after` (a physics
    /// hook, as the engine runs one): `after` runs after the systems of the step and of every
    /// re-simulated step, and its result is checked as a stage of its own, named
    /// `after the systems (the physics hook)` in a [`Desync`]. `after` must compute from the
    /// World alone.
    pub fn step_with(
        &mut self,
        world: &mut World,
        after: &mut dyn FnMut(&mut World),
    ) -> Result<(), WorldError> {
        if !self.after_last.matches(world) {
            self.restart();
        }
        let result = self.step_held(world, after);
        self.after_last.take(world);
        if result.is_err() {
            // A desync, or a snapshot that cannot be taken or put back: the next step starts
            // a new window either way.
            self.restart();
        }
        result
    }

    /// One step, then the window re-simulated and compared (the body of `step_with`).
    fn step_held(
        &mut self,
        world: &mut World,
        after: &mut dyn FnMut(&mut World),
    ) -> Result<(), WorldError> {
        // The last step's first-run state is this step's snapshot (`step_with` dropped it if
        // the world changed in between).
        let before = match self.after_first_run.take() {
            Some(s) => s,
            None => {
                let mut s = self.spare.pop().unwrap_or_default();
                if let Err(e) = world.snapshot_into(&mut s) {
                    // Nothing to check against, but the step still runs: the game goes on.
                    self.spare.push(s);
                    world.run_systems();
                    after(world);
                    return Err(e);
                }
                s
            }
        };
        let input = world.input.clone();
        let tick = world.tick;
        let sums = run_probed(world, &mut self.probe, after);
        let mut first_run = self.spare.pop().unwrap_or_default();
        let first_run = match world.snapshot_into(&mut first_run) {
            Ok(()) => Some(first_run),
            Err(_) => {
                self.spare.push(first_run);
                None
            }
        };
        if self.window.len() == self.distance {
            if let Some(old) = self.window.pop_front() {
                self.spare.push(old.before);
            }
        }
        self.window.push_back(Recorded {
            tick,
            before,
            input,
            sums,
        });
        // Roll back to the oldest step held and play every held step again.
        let first = &self.window[0];
        world.restore(&first.before)?;
        for i in 0..self.window.len() {
            world.input = self.window[i].input.clone();
            let again = run_probed(world, &mut self.probe, after);
            if let Some(d) = compare(world, &self.window[i], &again) {
                if let Some(s) = first_run {
                    world.restore(&s)?;
                    self.spare.push(s);
                }
                return Err(d.into());
            }
        }
        self.after_first_run = first_run;
        Ok(())
    }
}

/// The name a [`Desync`] gives the stage after the systems ([`SyncTest::step_with`]'s hook).
pub(crate) const AFTER_SYSTEMS: &str = "after the systems (the physics hook)";

/// The stage index [`SyncProbe::record`] is given for the hook after the systems.
const AFTER_SYSTEMS_STAGE: usize = usize::MAX;

/// One step with the probe on, then `after` and one more record; its checksums. The probe
/// (and its cache) goes back to `keep`.
fn run_probed(
    world: &mut World,
    keep: &mut Option<Box<SyncProbe>>,
    after: &mut dyn FnMut(&mut World),
) -> Vec<SystemSums> {
    let mut probe = keep.take().unwrap_or_default();
    probe.sums.clear();
    world.sync_probe = Some(probe);
    world.run_systems();
    let Some(mut probe) = world.sync_probe.take() else {
        return Vec::new();
    };
    after(world);
    probe.record(world, AFTER_SYSTEMS_STAGE);
    let sums = std::mem::take(&mut probe.sums);
    *keep = Some(probe);
    sums
}

/// The first system after which `again` differs from `rec`, as a report.
fn compare(world: &World, rec: &Recorded, again: &[SystemSums]) -> Option<Desync> {
    let name = |i: usize| {
        world
            .systems
            .records
            .get(i)
            .map(|r| r.name.to_string())
            .unwrap_or_else(|| {
                if i == AFTER_SYSTEMS_STAGE {
                    AFTER_SYSTEMS.to_string()
                } else {
                    format!("#{i}")
                }
            })
    };
    for (a, b) in rec.sums.iter().zip(again) {
        if a == b {
            continue;
        }
        let mut differ = Vec::new();
        if a.entities != b.entities {
            differ.push("entities".to_string());
        }
        // A column one run had not created yet is an empty one (sum 0).
        for i in 0..a.columns.len().max(b.columns.len()) {
            let (x, y) = (a.columns.get(i), b.columns.get(i));
            if x.copied().unwrap_or(0) != y.copied().unwrap_or(0) {
                differ.push(world.columns[i].name().to_string());
            }
        }
        for (name, x) in &a.resources {
            let y = b.resources.iter().find(|(n, _)| n == name).map(|r| r.1);
            if y != Some(*x) {
                differ.push((*name).to_string());
            }
        }
        for (name, _) in &b.resources {
            if !a.resources.iter().any(|(n, _)| n == name) {
                differ.push((*name).to_string());
            }
        }
        if differ.is_empty() && a.system == b.system {
            // Only a column created in one run and still empty: the same state.
            continue;
        }
        let system = if a.system == b.system {
            name(a.system)
        } else {
            format!(
                "{} (the re-simulation ran {})",
                name(a.system),
                name(b.system)
            )
        };
        return Some(Desync {
            tick: rec.tick,
            system,
            differ,
        });
    }
    if rec.sums.len() != again.len() {
        return Some(Desync {
            tick: rec.tick,
            system: "the schedule (a run condition chose differently)".to_string(),
            differ: vec!["the systems that ran".to_string()],
        });
    }
    None
}
