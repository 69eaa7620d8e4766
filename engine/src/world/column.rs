//! Component columns: the type-erased column interface and the plain typed (AoS) column.
//!
//! Owns: `AosColumn`, a sparse set (dense `entities` + dense `values` + a sparse row index per
//! entity slot), and the `ErasedColumn` interface the world uses to despawn, hash and compact
//! any column without knowing its type. Must never: leave a hole in the dense arrays (removal is
//! a swap-remove that fixes the moved row's index) or let the three arrays disagree.
//!
//! Why a sparse set per component rather than archetype tables: insert and remove are O(1) and
//! never move other components, a single-component sweep (the common hot loop, and the one the
//! SIMD kernels want) is a slice walk, and a field-SoA column can replace one component's column
//! without touching the rest. Multi-component queries iterate the first column and probe the
//! others by slot index (one indexed load each).

use std::any::Any;

use super::access::{AccessCounters, ColumnLayout};
use super::change_ticks::RowTicks;
use super::entity::Entity;
use super::epoch::DomainSet;
use super::hash::{StateHash, StateHasher};

/// Sparse-index value for "this slot has no row".
pub(crate) const NO_ROW: u32 = u32::MAX;

/// What the world needs from any column, whatever its component type and layout.
pub(crate) trait ErasedColumn: Send + Sync + 'static {
    /// The component's `NAME`.
    fn name(&self) -> &'static str;
    /// The Rust type name (for error messages only).
    fn type_name(&self) -> &'static str;
    /// The component's domains.
    fn domains(&self) -> DomainSet;
    /// The layout of this column.
    fn layout(&self) -> ColumnLayout;
    /// Size of one value in bytes.
    fn size_bytes(&self) -> usize;
    /// Whether every field of the component is an `f32` (see [`super::component::ComponentMeta::ALL_F32`]).
    fn all_f32(&self) -> bool;
    /// Rows stored.
    fn len(&self) -> usize;
    /// Whether `entity` (known live) has a row.
    fn contains(&self, entity: Entity) -> bool;
    /// Drops `entity`'s row if it has one; true when it had.
    fn remove_entity(&mut self, entity: Entity) -> bool;
    /// The column's digest ([`super::digests::digest_rows`]): handles, then values, in slot
    /// order, whatever the layout.
    fn digest(&self) -> u64;
    /// Reorders rows by entity slot and releases spare capacity; true when anything moved.
    fn compact(&mut self) -> bool;
    /// The column's access counters.
    fn access(&self) -> &AccessCounters;
    /// Inserts the value held in `value` (an `&mut Option<T>` of the column's type, `Some`)
    /// for `entity`, leaving the previous value (or `None`) in its place. Returns true.
    fn insert_erased(&mut self, entity: Entity, value: &mut dyn Any) -> bool;
    /// Removes `entity`'s row into `out` (an `&mut Option<T>` of the column's type).
    fn take_erased(&mut self, entity: Entity, out: &mut dyn Any);
    /// Copies this column into `slot` (reusing the column there when it is this one's type);
    /// an error when the component has no `snapshot_clone`.
    fn save(
        &self,
        slot: &mut Option<Box<dyn ErasedColumn>>,
    ) -> Result<(), super::error::WorldError>;
    /// Makes this column a copy of `from` (a column `save` made); false when `from` is not of
    /// this column's type and layout.
    fn load(&mut self, from: &dyn ErasedColumn) -> bool;
    /// Drops every row (a column made after the snapshot being restored).
    fn clear_rows(&mut self);
    /// The column's per-row change ticks, to track, stamp or move the clock.
    fn ticks_mut(&mut self) -> &mut RowTicks;
    /// Downcast support.
    fn as_any(&self) -> &dyn Any;
    /// Downcast support.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// The sparse row index shared by both layouts: slot index -> dense row.
#[derive(Debug, Default)]
pub(crate) struct SparseIndex {
    rows: Vec<u32>,
}

impl SparseIndex {
    #[inline]
    pub(crate) fn row(&self, entity: Entity) -> Option<usize> {
        match self.rows.get(entity.index() as usize) {
            Some(&r) if r != NO_ROW => Some(r as usize),
            _ => None,
        }
    }

    #[inline]
    pub(crate) fn set(&mut self, entity: Entity, row: usize) {
        let i = entity.index() as usize;
        if i >= self.rows.len() {
            self.rows.resize(i + 1, NO_ROW);
        }
        self.rows[i] = row as u32;
    }

    #[inline]
    pub(crate) fn clear(&mut self, entity: Entity) {
        if let Some(r) = self.rows.get_mut(entity.index() as usize) {
            *r = NO_ROW;
        }
    }

    /// Makes this index a copy of `src`, reusing its allocation.
    pub(crate) fn copy_from(&mut self, src: &SparseIndex) {
        self.rows.clone_from(&src.rows);
    }

    /// Grows the table to cover `slots` slots (no row yet).
    pub(crate) fn reserve_slots(&mut self, slots: usize) {
        if slots > self.rows.len() {
            self.rows.resize(slots, NO_ROW);
        }
    }

    /// The slot -> row table (`NO_ROW`: none), for typed queries' raw parts.
    pub(crate) fn slots(&self) -> &[u32] {
        &self.rows
    }

    pub(crate) fn shrink(&mut self) {
        while self.rows.last() == Some(&NO_ROW) {
            self.rows.pop();
        }
        self.rows.shrink_to_fit();
    }
}

/// A plain typed column: one dense `Vec<T>` beside the dense list of owning entities.
pub(crate) struct AosColumn<T> {
    name: &'static str,
    domains: DomainSet,
    pub(crate) entities: Vec<Entity>,
    pub(crate) values: Vec<T>,
    pub(crate) index: SparseIndex,
    access: AccessCounters,
    /// Moves on every change to the order of `entities` (a row added, removed or reordered):
    /// what a cached row alignment between two columns is checked against.
    pub(crate) order_gen: u64,
    /// Per-row change ticks, once a `Changed<T>` query asked (in step with `values`).
    pub(crate) ticks: RowTicks,
}

impl<T: Send + Sync + 'static> AosColumn<T> {
    pub(crate) fn new(name: &'static str, domains: DomainSet) -> Self {
        AosColumn {
            name,
            domains,
            entities: Vec::new(),
            values: Vec::new(),
            index: SparseIndex::default(),
            access: AccessCounters::default(),
            order_gen: 0,
            ticks: RowTicks::default(),
        }
    }

    /// Inserts or replaces; returns the previous value.
    pub(crate) fn insert(&mut self, entity: Entity, value: T) -> Option<T> {
        if let Some(row) = self.index.row(entity) {
            self.ticks.stamp(row);
            return Some(std::mem::replace(&mut self.values[row], value));
        }
        self.index.set(entity, self.values.len());
        self.entities.push(entity);
        self.values.push(value);
        self.ticks.push();
        self.order_gen += 1;
        None
    }

    /// Makes this column's rows a copy of `src`'s, values copied with `copy`, reusing the
    /// allocations (for snapshots).
    fn copy_rows_from(
        &mut self,
        src: &AosColumn<T>,
        copy: fn(&T) -> T,
        rows: Option<super::component::CopyRows<T>>,
    ) {
        self.entities.clone_from(&src.entities);
        match rows {
            Some(rows) => rows(&src.values, &mut self.values),
            None => {
                self.values.clear();
                self.values.extend(src.values.iter().map(copy));
            }
        }
        self.index.rows.clone_from(&src.index.rows);
        self.order_gen = src.order_gen;
        self.ticks.copy_from(&src.ticks);
    }

    /// Appends a row for `entity`, which has none (a fresh spawn: see `bundle`).
    #[inline]
    pub(crate) fn push_new(&mut self, entity: Entity, value: T) {
        debug_assert!(self.index.row(entity).is_none());
        self.index.set(entity, self.values.len());
        self.entities.push(entity);
        self.values.push(value);
        self.ticks.push();
        self.order_gen += 1;
    }

    /// Room for `additional` more rows, and index slots up to `slots`.
    pub(crate) fn reserve(&mut self, additional: usize, slots: usize) {
        self.entities.reserve(additional);
        self.values.reserve(additional);
        self.ticks.reserve(additional);
        self.index.reserve_slots(slots);
    }

    /// Removes `entity`'s row, returning its value.
    pub(crate) fn take(&mut self, entity: Entity) -> Option<T> {
        let row = self.index.row(entity)?;
        self.index.clear(entity);
        self.order_gen += 1;
        self.entities.swap_remove(row);
        let value = self.values.swap_remove(row);
        self.ticks.swap_remove(row);
        if let Some(moved) = self.entities.get(row) {
            self.index.set(*moved, row);
        }
        Some(value)
    }

    #[inline]
    pub(crate) fn get(&self, entity: Entity) -> Option<&T> {
        self.index.row(entity).map(|r| &self.values[r])
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, entity: Entity) -> Option<&mut T> {
        let r = self.index.row(entity)?;
        self.ticks.stamp(r);
        Some(&mut self.values[r])
    }

    /// The rows and the first value as raw parts for a typed query; records one query of
    /// every row.
    pub(crate) fn raw_parts(&mut self) -> (RawRows, *mut T) {
        self.access.record_mut(self.values.len());
        (
            RawRows::of(&self.entities, &self.index, self.order_gen),
            self.values.as_mut_ptr(),
        )
    }
}

impl<T: super::Component> ErasedColumn for AosColumn<T> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn type_name(&self) -> &'static str {
        std::any::type_name::<T>()
    }
    fn domains(&self) -> DomainSet {
        self.domains
    }
    fn layout(&self) -> ColumnLayout {
        ColumnLayout::Aos
    }
    fn size_bytes(&self) -> usize {
        std::mem::size_of::<T>()
    }
    fn all_f32(&self) -> bool {
        T::ALL_F32
    }
    fn len(&self) -> usize {
        self.values.len()
    }
    fn contains(&self, entity: Entity) -> bool {
        self.index.row(entity).is_some()
    }
    fn remove_entity(&mut self, entity: Entity) -> bool {
        self.take(entity).is_some()
    }
    fn digest(&self) -> u64 {
        digest_dense(&self.entities, self.index.slots(), &self.values)
    }
    fn compact(&mut self) -> bool {
        let sorted = self
            .entities
            .windows(2)
            .all(|w| w[0].index() < w[1].index());
        if !sorted {
            self.order_gen += 1;
            // Cold path (explicit compaction): pair, sort by slot, rebuild the index.
            let mut rows: Vec<(Entity, T, usize)> = self
                .entities
                .drain(..)
                .zip(self.values.drain(..))
                .enumerate()
                .map(|(old, (e, v))| (e, v, old))
                .collect();
            rows.sort_unstable_by_key(|(e, _, _)| e.index());
            let order: Vec<usize> = rows.iter().map(|r| r.2).collect();
            self.ticks.permute(&order);
            for (row, (e, v, _)) in rows.into_iter().enumerate() {
                self.index.set(e, row);
                self.entities.push(e);
                self.values.push(v);
            }
        }
        self.entities.shrink_to_fit();
        self.values.shrink_to_fit();
        self.index.shrink();
        !sorted
    }
    fn access(&self) -> &AccessCounters {
        &self.access
    }
    fn save(
        &self,
        slot: &mut Option<Box<dyn ErasedColumn>>,
    ) -> Result<(), super::error::WorldError> {
        let copy = T::snapshot_clone().ok_or(super::error::WorldError::NotCloneable {
            kind: "component",
            name: T::NAME,
        })?;
        match slot
            .as_mut()
            .and_then(|c| c.as_any_mut().downcast_mut::<AosColumn<T>>())
        {
            Some(dst) => dst.copy_rows_from(self, copy, T::snapshot_copy_rows()),
            None => {
                let mut dst = AosColumn::<T>::new(self.name, self.domains);
                dst.copy_rows_from(self, copy, T::snapshot_copy_rows());
                *slot = Some(Box::new(dst));
            }
        }
        Ok(())
    }
    fn load(&mut self, from: &dyn ErasedColumn) -> bool {
        let (Some(src), Some(copy)) = (
            from.as_any().downcast_ref::<AosColumn<T>>(),
            T::snapshot_clone(),
        ) else {
            return false;
        };
        // The order counter only ever grows: caches keyed on an older value stay invalid.
        let gen = self.order_gen.max(src.order_gen) + 1;
        self.copy_rows_from(src, copy, T::snapshot_copy_rows());
        self.order_gen = gen;
        true
    }
    fn clear_rows(&mut self) {
        self.entities.clear();
        self.values.clear();
        self.ticks.clear();
        self.index.rows.clear();
        self.order_gen += 1;
    }
    fn ticks_mut(&mut self) -> &mut RowTicks {
        &mut self.ticks
    }
    fn insert_erased(&mut self, entity: Entity, value: &mut dyn Any) -> bool {
        let slot = value
            .downcast_mut::<Option<T>>()
            .expect("insert_erased: caller passes Option<T> (broken invariant)");
        let new = slot.take().expect("insert_erased: value present");
        *slot = self.insert(entity, new);
        true
    }
    fn take_erased(&mut self, entity: Entity, out: &mut dyn Any) {
        let slot = out
            .downcast_mut::<Option<T>>()
            .expect("take_erased: caller passes Option<T> (broken invariant)");
        *slot = self.take(entity);
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// A column's rows and sparse index as raw parts, for typed queries (`query::data`): valid while
/// the `&mut World` that made them is held and nothing spawns, despawns, inserts or removes.
#[derive(Clone, Copy)]
#[doc(hidden)]
pub struct RawRows {
    /// The entity of each row.
    pub(crate) entities: *const Entity,
    /// Rows.
    pub(crate) len: usize,
    /// Slot index -> row (`NO_ROW`: none).
    pub(crate) index: *const u32,
    /// Slots the index covers.
    pub(crate) index_len: usize,
    /// The column's row-order counter (moves whenever `entities` changes order or length).
    pub(crate) order: u64,
}

// Opted in from the workspace's `unsafe_code = "deny"`: a row lookup through the raw parts (see
// `query::data`'s module docs for the invariants).
#[allow(unsafe_code)]
impl RawRows {
    pub(crate) fn of(entities: &[Entity], index: &SparseIndex, order: u64) -> Self {
        RawRows {
            order,
            entities: entities.as_ptr(),
            len: entities.len(),
            index: index.slots().as_ptr(),
            index_len: index.slots().len(),
        }
    }

    /// `entity`'s row, if it has one (`entity` is live).
    ///
    /// # Safety
    /// The parts are still valid (see the type).
    #[inline]
    pub(crate) unsafe fn row(&self, entity: Entity) -> Option<usize> {
        let slot = entity.index() as usize;
        if slot >= self.index_len {
            return None;
        }
        // SAFETY: `slot < index_len`, and the index is alive and unchanged (the caller's
        // contract).
        let r = unsafe { *self.index.add(slot) };
        if r == NO_ROW {
            return None;
        }
        // A row names a slot, not a generation. Despawn clears the slot in every column, so
        // for the live entities a query visits the row holds that very entity.
        // SAFETY: a row in the index is below `len` (the sparse-set invariant).
        debug_assert_eq!(unsafe { *self.entities.add(r as usize) }, entity);
        Some(r as usize)
    }
}

// ---- digests ------------------------------------------------------------------------------
//
// A column's digest is XXH3-64 of every row's entity handle (`Entity::to_bits`), then every
// row's value (`StateHash`), both in entity-slot order. When the dense rows are already in
// slot order (a world spawned in order, or compacted) the two passes are bulk slice hashes, at
// memory speed for plain-number components; otherwise both passes follow the sparse table.

/// The order a digest reads a column's dense rows in: slot order, either as stored or through
/// the column's sparse table (slot -> row).
#[derive(Clone, Copy)]
pub(crate) enum Rows<'a> {
    /// The dense rows are in slot order already.
    AsStored,
    /// The sparse table: row `slots[s]` is slot `s`'s (`NO_ROW`: none).
    BySlot(&'a [u32]),
}

impl Rows<'_> {
    /// Calls `f` with every row index, in slot order.
    #[inline]
    pub(crate) fn each(self, rows: usize, mut f: impl FnMut(usize)) {
        match self {
            Rows::AsStored => (0..rows).for_each(f),
            Rows::BySlot(slots) => {
                for &r in slots {
                    if r != NO_ROW {
                        f(r as usize);
                    }
                }
            }
        }
    }
}

/// A column's digest: its rows' handles, then `values` feeding its rows' values, both in slot
/// order. `slots` is the column's sparse table (slot -> row); `values` gets the order to read
/// the dense rows in.
pub(crate) fn digest_rows(
    entities: &[Entity],
    slots: &[u32],
    values: impl FnOnce(Rows<'_>, &mut StateHasher),
) -> u64 {
    let mut h = StateHasher::default();
    let rows = if entities.windows(2).all(|w| w[0].index() < w[1].index()) {
        Entity::hash_slice(entities, &mut h);
        Rows::AsStored
    } else {
        let rows = Rows::BySlot(slots);
        rows.each(entities.len(), |r| entities[r].hash_state(&mut h));
        rows
    };
    values(rows, &mut h);
    h.finish()
}

/// `digest_rows` of a column whose values are a dense slice in step with `entities`.
pub(crate) fn digest_dense<T: StateHash>(entities: &[Entity], slots: &[u32], values: &[T]) -> u64 {
    digest_rows(entities, slots, |rows, h| match rows {
        Rows::AsStored => T::hash_slice(values, h),
        rows => rows.each(values.len(), |r| values[r].hash_state(h)),
    })
}
