//! Snapshots of a World, and restoring one: what rollback, a SyncTest and desync hunting start
//! from.
//!
//! Owns: [`Snapshot`] (every column, AoS and field-SoA, the entity table with its generations
//! and free list, every resource, the gameplay event queues, the step and frame counters and the
//! fixed step), [`SnapshotRing`] (N snapshots kept for a rollback window), and the `World`
//! methods that fill and restore them. Must never: restore part of a snapshot (every check runs
//! before the first write), skip a column whose content may differ from the other side's (a
//! capture keeps, and a restore leaves, only a column whose content version
//! ([`super::digests`]) is the one on the other side), allocate once a snapshot slot has held the same world's shape
//! (columns and the entity table are copied into the slot's own buffers), or let a cache keyed
//! on a column's row order or a domain's epoch survive a restore (row-order counters jump past
//! both sides' values and every domain's epoch moves).
//!
//! What a restored world is: the same state hash, the same iteration order of every column,
//! the same entity ids and the same next spawn as the world the snapshot was taken of, and the
//! same rows reported by a `Changed<T>` query (change ticks rewind with it). A capture through
//! `GameLoop::snapshot_into` or `Engine::snapshot_into` also holds the fixed-step accumulator's
//! leftover, which their `restore` puts back. What it is not: the input of the step, the budget
//! decisions and the event cursors systems keep in their closures live outside the World and
//! are not in the snapshot.
//!
//! A component or resource is copied through [`Component::snapshot_clone`]
//! (`#[derive(Component)]` fills it in for `Clone` types): a world holding one without it
//! cannot be snapshotted, and says which.
//!
//! [`Component::snapshot_clone`]: super::Component::snapshot_clone

use super::column::ErasedColumn;
use super::digests::{Known, STRUCTURE};
use super::entity::EntityTable;
use super::epoch::{DomainSet, WorldId};
use super::resource::ErasedResource;
use super::World;
use crate::fixed_step::FixedStep;
use crate::world::error::WorldError;

/// Everything a World's simulation owns, captured by [`World::snapshot_into`] and put back by
/// [`World::restore`]. Reuse one (or a [`SnapshotRing`]): capturing into a snapshot that held
/// the same world's shape copies into its own buffers without allocating.
#[derive(Default)]
pub struct Snapshot {
    world: Option<WorldId>,
    columns: Vec<Option<Box<dyn ErasedColumn>>>,
    entities: EntityTable,
    resources: Vec<Box<dyn ErasedResource>>,
    tick: u64,
    frame: u64,
    fixed_step: Option<FixedStep>,
    /// The change clock (the per-row ticks travel with the columns).
    change: super::change_ticks::ChangeClock,
    /// Each column's content version and digest as captured ([`super::digests`]): a capture
    /// keeps a copy whose version is the world's, and a restore skips a column whose version
    /// is the snapshot's.
    known: Vec<Known>,
    /// The entity table's, likewise.
    entities_known: Known,
    /// Columns the latest capture copied (the others were unchanged since the one before).
    columns_copied: usize,
    /// The fixed-step accumulator's leftover (its step, and `1/denom` ns units) when the
    /// capture went through a `GameLoop` or an `Engine`; `None` from `World::snapshot_into`.
    pub(crate) accumulator: Option<(FixedStep, u128)>,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("tick", &self.tick)
            .field("columns", &self.columns.len())
            .field("entities", &self.entities.live().len())
            .field("resources", &self.resources.len())
            .finish_non_exhaustive()
    }
}

impl Snapshot {
    /// The body of [`SnapshotHooks::tick`](crate::hooks::SnapshotHooks::tick), which documents it.
    pub(crate) fn tick(&self) -> Option<u64> {
        self.world.map(|_| self.tick)
    }

    /// The body of [`SnapshotHooks::entities`](crate::hooks::SnapshotHooks::entities), which documents it.
    pub(crate) fn entities(&self) -> usize {
        self.entities.live().len()
    }

    /// Columns the latest [`World::snapshot_into`] copied. A capture into a snapshot that last
    /// held the same world skips every column whose content is the one it holds: unchanged
    /// since (no epoch of the column's domains moved: every write, insert, removal and despawn
    /// moves one), or put back by a restore of that content. A static column costs nothing
    /// after its first capture, and a restore skips it likewise.
    pub(crate) fn columns_copied(&self) -> usize {
        self.columns_copied
    }
}

/// `N` snapshots for a rollback window: [`SnapshotRing::save`] captures into the oldest slot,
/// [`SnapshotRing::at_tick`] finds the one taken at a step.
#[derive(Debug)]
pub struct SnapshotRing {
    slots: Vec<Snapshot>,
    next: usize,
}

impl SnapshotRing {
    /// A ring of `n` snapshots (at least one). Each slot allocates on its first capture only.
    pub fn new(n: usize) -> Self {
        SnapshotRing {
            slots: (0..n.max(1)).map(|_| Snapshot::default()).collect(),
            next: 0,
        }
    }

    /// Captures `world` into the oldest slot; returns the slot's index.
    pub fn save(&mut self, world: &World) -> Result<usize, WorldError> {
        let i = self.next;
        world.snapshot_into(&mut self.slots[i])?;
        self.next = (i + 1) % self.slots.len();
        Ok(i)
    }

    /// The snapshot taken at step `tick`, if the ring still holds it: the latest one taken
    /// there (after a rollback re-simulates a step, the ring may hold both the predicted and
    /// the re-simulated capture of it; the re-simulated one is the truth).
    pub fn at_tick(&self, tick: u64) -> Option<&Snapshot> {
        let n = self.slots.len();
        (1..=n)
            .map(|back| &self.slots[(self.next + n - back) % n])
            .find(|s| s.tick() == Some(tick))
    }
}

impl World {
    /// Captures everything the simulation owns into `snapshot` (see the module docs for what
    /// that is). On an error `snapshot` may hold part of a capture: it is marked empty.
    ///
    /// ```
    /// use lanegraph::prelude::*;
    /// use lanegraph::world::Snapshot;
    ///
    /// #[derive(Clone, Copy, Component, StateHash)]
    /// struct Pos(f32);
    ///
    /// let mut world = World::new();
    /// world.spawn_batch((0..100).map(|i| (Pos(i as f32),))).unwrap();
    /// let mut snap = Snapshot::default();
    /// world.snapshot_into(&mut snap).unwrap();
    /// let before = world.state_hash();
    ///
    /// world.query::<&mut Pos>().unwrap().for_each(|p| p.0 += 1.0);
    /// let extra = world.spawn();
    /// assert_ne!(world.state_hash(), before);
    ///
    /// world.restore(&snap).unwrap();
    /// assert_eq!(world.state_hash(), before);
    /// assert!(!world.is_alive(extra));
    /// assert_eq!(world.spawn(), extra, "the same next spawn");
    /// ```
    pub fn snapshot_into(&self, snapshot: &mut Snapshot) -> Result<(), WorldError> {
        let same_world = snapshot.world == Some(self.id);
        if !same_world {
            // Another world's (or no) columns: start this world's shape afresh.
            snapshot.columns.clear();
            snapshot.entities_known = Known::default();
        }
        snapshot.world = None;
        snapshot.columns.resize_with(self.columns.len(), || None);
        snapshot.known.resize(self.columns.len(), Known::default());
        // A contended cache (another thread hashing this world) only costs the skips.
        let mut cache = self.content.try_lock().ok();
        let mut know = |column: Option<usize>, domains| {
            cache
                .as_mut()
                .map_or(Known::default(), |c| c.known(column, &self.epochs, domains))
        };
        let mut copied = 0;
        for (i, (c, slot)) in self.columns.iter().zip(&mut snapshot.columns).enumerate() {
            let now = know(Some(i), c.domains());
            // The same content as this snapshot's copy of it: the copy stands.
            if slot.is_some() && now.version != 0 && now.version == snapshot.known[i].version {
                snapshot.known[i].digest = snapshot.known[i].digest.or(now.digest);
                continue;
            }
            snapshot.known[i] = Known::default();
            c.save(slot)?;
            snapshot.known[i] = now;
            copied += 1;
        }
        snapshot.columns_copied = copied;
        snapshot.accumulator = None;
        let now = know(None, STRUCTURE);
        if now.version == 0 || now.version != snapshot.entities_known.version {
            snapshot.entities.copy_from(&self.entities);
            snapshot.entities_known = now;
        }
        let values = self.resources.values();
        let same_set = snapshot.resources.len() == values.len()
            && snapshot
                .resources
                .iter()
                .zip(values)
                .all(|(a, b)| a.as_any().type_id() == b.as_any().type_id());
        if same_set {
            for (dst, src) in snapshot.resources.iter_mut().zip(values) {
                // The types match, so only a missing `snapshot_clone` fails the copy.
                if !dst.load(&**src) {
                    return Err(WorldError::NotCloneable {
                        kind: "resource",
                        name: src.name(),
                    });
                }
            }
        } else {
            snapshot.resources = values
                .iter()
                .map(|v| v.boxed_copy())
                .collect::<Result<_, _>>()?;
        }
        snapshot.tick = self.tick;
        snapshot.frame = self.frame;
        snapshot.fixed_step = Some(self.fixed_step);
        snapshot.change.copy_from(&self.change);
        snapshot.world = Some(self.id);
        Ok(())
    }

    /// Puts back the state `snapshot` captured of this world: the same state hash, iteration
    /// order, entity ids and next spawn. Components first used after the snapshot lose every
    /// row; every domain's change epoch moves (caches keyed on epochs re-derive). Every check
    /// runs before the first write: on an error the world is unchanged.
    pub fn restore(&mut self, snapshot: &Snapshot) -> Result<(), WorldError> {
        match snapshot.world {
            None => return Err(WorldError::SnapshotEmpty),
            Some(id) if id != self.id => return Err(WorldError::SnapshotOfOtherWorld),
            Some(_) => {}
        }
        for (i, saved) in snapshot.columns.iter().enumerate() {
            let Some(saved) = saved else {
                return Err(WorldError::SnapshotEmpty);
            };
            if saved.layout() != self.columns[i].layout() {
                return Err(WorldError::LayoutChanged {
                    component: saved.name(),
                });
            }
        }
        self.load_changed_parts(snapshot);
        let same_set = self.resources.values().len() == snapshot.resources.len()
            && self
                .resources
                .values()
                .iter()
                .zip(&snapshot.resources)
                .all(|(a, b)| a.as_any().type_id() == b.as_any().type_id());
        if same_set {
            for (dst, src) in self
                .resources
                .values_mut()
                .iter_mut()
                .zip(&snapshot.resources)
            {
                dst.load(&**src);
            }
        } else {
            let copies = snapshot
                .resources
                .iter()
                .map(|v| v.boxed_copy())
                .collect::<Result<_, _>>()?;
            self.resources.replace_all(copies);
        }
        self.tick = snapshot.tick;
        self.frame = snapshot.frame;
        if let Some(step) = snapshot.fixed_step {
            self.fixed_step = step;
        }
        // `Changed<T>` reports what it reported then: the clock and every row's tick rewind.
        self.change.copy_from(&snapshot.change);
        let now = self.change.now;
        for c in &mut self.columns {
            c.ticks_mut().set_now(now);
        }
        self.query_align.clear();
        self.epochs.bump(DomainSet::ALL);
        self.adopt_versions_of(snapshot);
        Ok(())
    }

    /// Puts back every column and the entity table whose content differs from the snapshot's
    /// (its content version is not the snapshot's); empties the columns the snapshot lacks.
    fn load_changed_parts(&mut self, snapshot: &Snapshot) {
        let now = self.epochs;
        let cache = self.content.get_mut().unwrap_or_else(|e| e.into_inner());
        for (i, c) in self.columns.iter_mut().enumerate() {
            let saved_known = snapshot.known.get(i).copied().unwrap_or_default();
            match snapshot.columns.get(i).and_then(Option::as_deref) {
                Some(saved) => {
                    let current = cache.known(Some(i), &now, c.domains());
                    // The same content as the snapshot's copy: nothing to put back.
                    if saved_known.version == 0 || current.version != saved_known.version {
                        let ok = c.load(saved);
                        debug_assert!(ok, "same world, same column type (checked above)");
                    }
                }
                None => c.clear_rows(),
            }
        }
        let current = cache.known(None, &now, STRUCTURE);
        if snapshot.entities_known.version == 0
            || current.version != snapshot.entities_known.version
        {
            self.entities.copy_from(&snapshot.entities);
        }
    }

    /// After a restore (at the epochs it moved to): every column and the entity table hold the
    /// content the snapshot recorded, so they take its versions and digests back.
    fn adopt_versions_of(&mut self, snapshot: &Snapshot) {
        // A column the snapshot did not hold was emptied: a new version.
        let now = self.epochs;
        let cache = self.content.get_mut().unwrap_or_else(|e| e.into_inner());
        for i in 0..self.columns.len() {
            let known = match snapshot.columns.get(i) {
                Some(Some(_)) => snapshot.known.get(i).copied().unwrap_or_default(),
                _ => Known::default(),
            };
            cache.adopt(Some(i), &now, known);
        }
        cache.adopt(None, &now, snapshot.entities_known);
    }
}

/// Compile-time choice of a type's copy function for the derives (autoref specialization:
/// `(&&Probe::<T>::new()).clone_fn()` finds `ViaClone` when `T: Clone`, `ViaNothing`
/// otherwise). Not for games: the derives call it.
#[doc(hidden)]
pub mod probe {
    use std::marker::PhantomData;

    /// The receiver the derives call `clone_fn` on.
    pub struct Probe<T>(PhantomData<fn() -> T>);

    impl<T> Probe<T> {
        /// The probe for `T`.
        #[allow(clippy::new_without_default)]
        pub fn new() -> Self {
            Probe(PhantomData)
        }
    }

    /// Chosen when `T: Clone`.
    pub trait ViaClone<T> {
        /// `Some(T::clone)`.
        fn clone_fn(&self) -> Option<fn(&T) -> T>;
        /// A whole-column copier.
        fn copy_rows_fn(&self) -> Option<crate::world::component::CopyRows<T>>;
    }

    impl<T: Clone> ViaClone<T> for &Probe<T> {
        fn clone_fn(&self) -> Option<fn(&T) -> T> {
            Some(T::clone)
        }
        fn copy_rows_fn(&self) -> Option<crate::world::component::CopyRows<T>> {
            Some(|src, dst| {
                dst.clear();
                // `extend_from_slice` is one `memcpy` for `Copy` types.
                dst.extend_from_slice(src);
            })
        }
    }

    /// Chosen otherwise.
    pub trait ViaNothing<T> {
        /// `None`.
        fn clone_fn(&self) -> Option<fn(&T) -> T>;
        /// `None`.
        fn copy_rows_fn(&self) -> Option<crate::world::component::CopyRows<T>>;
    }

    /// Chosen when `T: SoaComponent` (and a component).
    pub trait ViaSoa<T> {
        /// `Some(World::use_field_soa::<T>)`.
        fn use_field_soa_fn(&self) -> Option<crate::world::component::UseFieldSoa>;
        /// `Some` of the row read field by field through `T`'s own impl.
        fn soa_read(&self, row: crate::world::soa_raw::SoaRow<'_>) -> Option<T>;
        /// Writes `value` field by field; true.
        fn soa_write(&self, value: &T, row: crate::world::soa_raw::SoaRowMut<'_>) -> bool;
    }

    impl<T: crate::world::Component + lanegraph_simd::SoaComponent> ViaSoa<T> for &Probe<T> {
        fn use_field_soa_fn(&self) -> Option<crate::world::component::UseFieldSoa> {
            Some(|w| w.use_field_soa::<T>())
        }
        #[inline(always)]
        fn soa_read(&self, row: crate::world::soa_raw::SoaRow<'_>) -> Option<T> {
            Some(T::read_with(|i| row.get(i)))
        }
        #[inline(always)]
        fn soa_write(&self, value: &T, mut row: crate::world::soa_raw::SoaRowMut<'_>) -> bool {
            value.write_with(|i, v| row.set(i, v));
            true
        }
    }

    /// Chosen when `T` is not field-SoA capable.
    pub trait ViaRows<T> {
        /// `None`.
        fn use_field_soa_fn(&self) -> Option<crate::world::component::UseFieldSoa>;
        /// `None`.
        fn soa_read(&self, row: crate::world::soa_raw::SoaRow<'_>) -> Option<T>;
        /// False.
        fn soa_write(&self, value: &T, row: crate::world::soa_raw::SoaRowMut<'_>) -> bool;
    }

    impl<T> ViaRows<T> for Probe<T> {
        fn use_field_soa_fn(&self) -> Option<crate::world::component::UseFieldSoa> {
            None
        }
        #[inline(always)]
        fn soa_read(&self, _: crate::world::soa_raw::SoaRow<'_>) -> Option<T> {
            None
        }
        #[inline(always)]
        fn soa_write(&self, _: &T, _: crate::world::soa_raw::SoaRowMut<'_>) -> bool {
            false
        }
    }

    impl<T> ViaNothing<T> for Probe<T> {
        fn clone_fn(&self) -> Option<fn(&T) -> T> {
            None
        }
        fn copy_rows_fn(&self) -> Option<crate::world::component::CopyRows<T>> {
            None
        }
    }
}
