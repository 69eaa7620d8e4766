//! Field-SoA component columns (from `lanegraph-simd`), and lending them to the physics lane.
//!
//! Owns: `SoaColumn` (a `SoaTable` plus the entity list and sparse index, so it is a sparse
//! set like the AoS column), opting a component into it ([`World::use_field_soa`]), its
//! accessors, and the one-step mutable loan of its columns ([`SoaMut`]). Must never: transpose
//! per frame (the columns are the component's only storage, resident across frames), or let a
//! loan outlive `&mut World` (the borrow checker ends it before the owner continues).
//!
//! # Row alignment
//! Each component has its own row order. Two field-SoA components whose rows name the same
//! entities in the same order are *aligned*: row `i` of both is one entity, so a kernel can walk
//! them in lockstep (position += velocity * dt). [`World::align_soa_rows`] makes `B` follow `A`;
//! alignment then survives despawns (both swap-remove the same row) and inserting both
//! components on new entities (both append). [`World::lend_soa_pair`] checks it.

use std::any::{Any, TypeId};
use std::marker::PhantomData;

use lanegraph_simd::{InvalidFields, LanesMut, SoaComponent, SoaTable};

use super::access::{AccessCounters, ColumnLayout};
use super::column::RawRows;
use super::column::{AosColumn, ErasedColumn, SparseIndex};
use super::component::Component;
use super::entity::Entity;
use super::epoch::DomainSet;
use super::soa_raw::{FieldPtrs, SoaRaw};
use super::World;
use crate::world::error::WorldError;

/// A component stored as one aligned `f32` column per field.
pub(crate) struct SoaColumn<T> {
    name: &'static str,
    domains: DomainSet,
    table: SoaTable,
    entities: Vec<Entity>,
    /// Bumped whenever `entities` changes (row added, removed or reordered): a pair check that
    /// passed against these versions still holds while neither moved.
    rows_version: u64,
    /// The last pair check that passed: (other column's index, our version, its version).
    aligned_with: Option<(usize, u64, u64)>,
    index: SparseIndex,
    access: AccessCounters,
    /// Per-row change ticks, once a `Changed<T>` query asked (in step with the rows).
    pub(crate) ticks: super::change_ticks::RowTicks,
    /// Each field's first row as of the latest `raw_parts` (what a typed query's `SoaRaw`
    /// points at).
    ptrs: FieldPtrs,
    /// Converts one row to and from a `T` without naming `T: SoaComponent` (for queries whose
    /// bounds are only `Component`).
    io: SoaRowIo<T>,
}

/// Whole-row access to a field-SoA column of `T`, as plain function pointers captured where
/// `T: SoaComponent` is known (at opt-in).
pub(crate) struct SoaRowIo<T> {
    /// Field values (in `FIELDS` order) -> value.
    pub(crate) from_fields: fn(&[f32]) -> T,
    /// Value -> field values (in `FIELDS` order).
    pub(crate) to_fields: fn(&T, &mut [f32]),
}

impl<T> Clone for SoaRowIo<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SoaRowIo<T> {}

impl<T> SoaColumn<T> {
    /// Appends a row for `entity`, which has none (a fresh spawn: see `bundle`).
    pub(crate) fn push_new(&mut self, entity: Entity, value: &T) {
        let mut buf = [0.0f32; lanegraph_simd::MAX_FIELDS];
        let n = self.table.field_count();
        (self.io.to_fields)(value, &mut buf[..n]);
        let row = self
            .table
            .push_row(&buf[..n])
            .expect("SoaColumn: a row as wide as the table (broken invariant)");
        self.index.set(entity, row);
        self.entities.push(entity);
        self.ticks.push();
        self.rows_version += 1;
    }

    /// Room for `additional` more rows.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.table.reserve(additional);
        self.entities.reserve(additional);
        self.ticks.reserve(additional);
    }

    /// Everything a typed query needs, as raw parts (see `query::data`): the rows' entities, the
    /// sparse index, each field's first row and the row codec. Records one query of every row.
    pub(crate) fn raw_parts(&mut self) -> (RawRows, SoaRaw<T>) {
        self.access.record_mut(self.entities.len());
        let mut n = 0;
        for (slot, f) in self.ptrs.0.iter_mut().zip(self.table.field_slices_mut()) {
            *slot = f.as_mut_ptr();
            n += 1;
        }
        let rows = RawRows::of(&self.entities, &self.index, self.rows_version);
        let raw = SoaRaw {
            fields: &self.ptrs.0,
            n,
            from_fields: self.io.from_fields,
            to_fields: self.io.to_fields,
        };
        (rows, raw)
    }
}

impl<T: Component + SoaComponent> SoaColumn<T> {
    fn new() -> Result<Self, InvalidFields> {
        Ok(SoaColumn {
            name: T::NAME,
            domains: T::DOMAINS,
            table: SoaTable::for_component::<T>()?,
            entities: Vec::new(),
            rows_version: 0,
            aligned_with: None,
            index: SparseIndex::default(),
            access: AccessCounters::default(),
            ticks: Default::default(),
            ptrs: FieldPtrs([std::ptr::null_mut(); lanegraph_simd::MAX_FIELDS]),
            io: SoaRowIo {
                from_fields: <T as SoaComponent>::read,
                to_fields: <T as SoaComponent>::write,
            },
        })
    }

    /// Makes this column's rows a copy of `src`'s, reusing the allocations (for snapshots).
    fn copy_rows_from(&mut self, src: &SoaColumn<T>) {
        let same = self.table.copy_from(&src.table);
        debug_assert!(same, "one component type, one field list");
        self.entities.clone_from(&src.entities);
        self.index.copy_from(&src.index);
        self.rows_version = src.rows_version;
        self.aligned_with = None;
        self.ticks.copy_from(&src.ticks);
    }

    fn get(&self, entity: Entity) -> Option<T> {
        let row = self.index.row(entity)?;
        Some(
            self.table
                .get::<T>(row)
                .expect("SoaColumn: table built for T, row from the index (broken invariant)"),
        )
    }

    fn insert(&mut self, entity: Entity, value: &T) -> Option<T> {
        if let Some(row) = self.index.row(entity) {
            self.ticks.stamp(row);
            let old = self
                .table
                .get::<T>(row)
                .expect("SoaColumn: row from the index");
            self.table
                .set(row, value)
                .expect("SoaColumn: table built for T");
            return Some(old);
        }
        let row = self
            .table
            .push(value)
            .expect("SoaColumn: table built for T");
        self.index.set(entity, row);
        self.entities.push(entity);
        self.ticks.push();
        self.rows_version += 1;
        None
    }

    fn take(&mut self, entity: Entity) -> Option<T> {
        let row = self.index.row(entity)?;
        let value = self
            .table
            .get::<T>(row)
            .expect("SoaColumn: row from the index");
        self.table
            .swap_remove(row)
            .expect("SoaColumn: row from the index");
        self.index.clear(entity);
        self.entities.swap_remove(row);
        self.ticks.swap_remove(row);
        self.rows_version += 1;
        if let Some(moved) = self.entities.get(row) {
            self.index.set(*moved, row);
        }
        Some(value)
    }

    /// Rebuilds the rows in the order of `order` (a permutation of this column's entities).
    fn reorder(&mut self, order: &[Entity]) {
        let rows: Vec<T> = order
            .iter()
            .map(|&e| self.get(e).expect("permutation"))
            .collect();
        let old_rows: Vec<usize> = order
            .iter()
            .map(|&e| self.index.row(e).expect("permutation"))
            .collect();
        self.ticks.permute(&old_rows);
        self.table.clear();
        self.entities.clear();
        self.rows_version += 1;
        for (e, v) in order.iter().zip(&rows) {
            let row = self.table.push(v).expect("SoaColumn: table built for T");
            self.index.set(*e, row);
            self.entities.push(*e);
        }
    }
}

impl<T: Component + SoaComponent> ErasedColumn for SoaColumn<T> {
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
        ColumnLayout::FieldSoa
    }
    fn size_bytes(&self) -> usize {
        T::FIELDS.len() * std::mem::size_of::<f32>()
    }
    fn all_f32(&self) -> bool {
        // A field-SoA column stores one `f32` per field by construction.
        true
    }
    fn len(&self) -> usize {
        self.entities.len()
    }
    fn contains(&self, entity: Entity) -> bool {
        self.index.row(entity).is_some()
    }
    fn remove_entity(&mut self, entity: Entity) -> bool {
        self.take(entity).is_some()
    }
    fn digest(&self) -> u64 {
        // The AoS column's definition: layout never enters the hash.
        let mut fields: [&[f32]; lanegraph_simd::MAX_FIELDS] = [&[]; lanegraph_simd::MAX_FIELDS];
        for (i, f) in fields.iter_mut().enumerate().take(T::FIELDS.len()) {
            *f = self.table.column(i).map_or(&[], |c| c.as_slice());
        }
        super::column::digest_rows(&self.entities, self.index.slots(), |rows, h| {
            rows.each(self.entities.len(), |r| {
                T::read_with(|f| fields[f][r]).hash_state(h);
            })
        })
    }
    fn compact(&mut self) -> bool {
        let sorted = self
            .entities
            .windows(2)
            .all(|w| w[0].index() < w[1].index());
        if !sorted {
            let mut order = self.entities.clone();
            order.sort_unstable_by_key(|e| e.index());
            self.reorder(&order);
        }
        self.entities.shrink_to_fit();
        self.index.shrink();
        !sorted
    }
    fn access(&self) -> &AccessCounters {
        &self.access
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn save(
        &self,
        slot: &mut Option<Box<dyn ErasedColumn>>,
    ) -> Result<(), super::error::WorldError> {
        match slot
            .as_mut()
            .and_then(|c| c.as_any_mut().downcast_mut::<SoaColumn<T>>())
        {
            Some(dst) => dst.copy_rows_from(self),
            None => {
                let mut dst = SoaColumn::<T>::new().expect("the fields were valid at opt-in");
                dst.copy_rows_from(self);
                *slot = Some(Box::new(dst));
            }
        }
        Ok(())
    }
    fn load(&mut self, from: &dyn ErasedColumn) -> bool {
        let Some(src) = from.as_any().downcast_ref::<SoaColumn<T>>() else {
            return false;
        };
        // The row-order counter only ever grows: caches keyed on an older value stay invalid.
        let version = self.rows_version.max(src.rows_version) + 1;
        self.copy_rows_from(src);
        self.rows_version = version;
        true
    }
    fn ticks_mut(&mut self) -> &mut super::change_ticks::RowTicks {
        &mut self.ticks
    }
    fn clear_rows(&mut self) {
        self.table.clear();
        self.ticks.clear();
        self.entities.clear();
        self.index = SparseIndex::default();
        self.rows_version += 1;
        self.aligned_with = None;
    }
    fn insert_erased(&mut self, entity: Entity, value: &mut dyn Any) -> bool {
        let slot = value
            .downcast_mut::<Option<T>>()
            .expect("insert_erased: caller passes Option<T> (broken invariant)");
        let new = slot.take().expect("insert_erased: value present");
        *slot = self.insert(entity, &new);
        true
    }
    fn take_erased(&mut self, entity: Entity, out: &mut dyn Any) {
        let slot = out
            .downcast_mut::<Option<T>>()
            .expect("take_erased: caller passes Option<T> (broken invariant)");
        *slot = self.take(entity);
    }
}

/// A mutable loan of one component's field-SoA columns for one step (e.g. to the physics lane).
///
/// Its [`lanes_mut`](Self::lanes_mut) guard splits into disjoint, `Send` chunks
/// (`LanesMut::chunks`) that jobs on other threads may write at once; the loan's borrow of the
/// world ends them all before the owner thread continues. Handing out the loan bumped the
/// component's domains.
pub struct SoaMut<'w, T> {
    entities: &'w [Entity],
    table: &'w mut SoaTable,
    _type: PhantomData<fn() -> T>,
}

impl<'w, T: SoaComponent> SoaMut<'w, T> {
    /// The entity of each row.
    pub fn entities(&self) -> &[Entity] {
        self.entities
    }
    /// Rows in the columns.
    pub fn len(&self) -> usize {
        self.entities.len()
    }
    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }
    /// The columns, read-only.
    pub fn table(&self) -> &SoaTable {
        self.table
    }
    /// Whole-vector mutable access to every field column (padding restored when it ends).
    pub fn lanes_mut(&mut self) -> LanesMut<'_> {
        self.table.lanes_mut()
    }
    /// One field's rows, mutably (`UnknownField` for a name `T` lacks).
    pub fn field_mut(&mut self, name: &str) -> Result<&mut [f32], lanegraph_simd::UnknownField> {
        self.table.field_mut(name)
    }

    /// Every field's rows, mutably, by name: `let f = loan.fields(); f.x[i] += f.y[i];`
    /// (`#[derive(SoaComponent)]` generates the `{Type}Fields` struct). Row `i` of every
    /// slice is [`entities`](Self::entities)`[i]`.
    ///
    /// ```
    /// use lanegraph::hooks::WorldHooks;
    /// use lanegraph::prelude::*;
    /// use lanegraph::simd::SoaComponent;
    ///
    /// #[derive(Clone, Copy, Component, StateHash, SoaComponent)]
    /// struct Pos { x: f32, y: f32 }
    ///
    /// let mut world = World::new();
    /// world.use_field_soa::<Pos>().unwrap();
    /// world.spawn_batch((0..100).map(|i| (Pos { x: i as f32, y: 1.0 },))).unwrap();
    /// let mut loan = world.lend_soa::<Pos>().unwrap().unwrap();
    /// let PosFields { x, y } = loan.fields();
    /// for (x, y) in x.iter_mut().zip(y.iter()) {
    ///     *x += *y;
    /// }
    /// let e = world.entities()[3];
    /// assert_eq!(world.get_fields::<Pos>(e).unwrap().x, 4.0);
    /// ```
    pub fn fields(&mut self) -> T::Mut<'_>
    where
        T: lanegraph_simd::SoaFields,
    {
        T::fields_mut(self.table).expect("the table was built for T at opt-in (broken invariant)")
    }
}

/// A shared view of one component's field-SoA columns.
pub struct SoaRef<'w> {
    entities: &'w [Entity],
    table: &'w SoaTable,
}

impl<'w> SoaRef<'w> {
    /// The entity of each row.
    pub fn entities(&self) -> &'w [Entity] {
        self.entities
    }
    /// The columns (`field(name)`, `field_lanes(name)`).
    pub fn table(&self) -> &'w SoaTable {
        self.table
    }
}

impl World {
    /// Opts `T` into field-SoA storage. Rows already stored AoS move over (once: a layout
    /// change, not a per-frame transpose), bumping `T::DOMAINS`. Idempotent.
    pub fn use_field_soa<T: Component + SoaComponent>(&mut self) -> Result<(), WorldError> {
        let mut column = SoaColumn::<T>::new()?;
        let Some(i) = self.column_index::<T>() else {
            self.add_column::<T>(Box::new(column))?;
            return Ok(());
        };
        let existing = self.erased_column_mut(i);
        if existing.layout() == ColumnLayout::FieldSoa {
            return Ok(());
        }
        let aos = existing
            .as_any_mut()
            .downcast_mut::<AosColumn<T>>()
            .expect("an AoS column of T (broken invariant)");
        for (e, v) in aos.entities.drain(..).zip(aos.values.drain(..)) {
            column.insert(e, &v);
        }
        // The rows keep their order, so their change ticks move over as they are.
        column.ticks.copy_from(&aos.ticks);
        aos.ticks.clear();
        self.replace_column(i, Box::new(column));
        self.bump(T::DOMAINS);
        Ok(())
    }

    fn soa<T: Component + SoaComponent>(&self) -> Result<Option<&SoaColumn<T>>, WorldError> {
        let Some(i) = self.column_index::<T>() else {
            return Ok(None);
        };
        self.erased_column(i)
            .as_any()
            .downcast_ref::<SoaColumn<T>>()
            .map(Some)
            .ok_or_else(|| self.wrong_layout::<T>(i, "field-SoA"))
    }

    fn soa_index<T: Component + SoaComponent>(&self) -> Result<Option<usize>, WorldError> {
        self.soa::<T>()?;
        Ok(self.column_index::<T>())
    }

    /// The body of [`WorldHooks::get_fields`](crate::hooks::WorldHooks::get_fields), which documents it.
    pub(crate) fn get_fields<T: Component + SoaComponent>(
        &self,
        entity: Entity,
    ) -> Result<T, WorldError> {
        self.entity_table().check(entity)?;
        let missing = || WorldError::MissingComponent {
            entity,
            component: T::NAME,
        };
        let c = self.soa::<T>()?.ok_or_else(missing)?;
        c.get(entity).ok_or_else(missing)
    }

    /// Shared view of `T`'s field columns (empty table when `T` has no rows yet but was opted
    /// in; `None` when `T` was never opted in or stored).
    pub fn soa_columns<T: Component + SoaComponent>(
        &self,
    ) -> Result<Option<SoaRef<'_>>, WorldError> {
        Ok(self.soa::<T>()?.map(|c| {
            c.access.record(c.entities.len());
            SoaRef {
                entities: &c.entities,
                table: &c.table,
            }
        }))
    }

    /// The body of [`WorldHooks::lend_soa`](crate::hooks::WorldHooks::lend_soa), which documents it.
    pub(crate) fn lend_soa<T: Component + SoaComponent>(
        &mut self,
    ) -> Result<Option<SoaMut<'_, T>>, WorldError> {
        let Some(i) = self.soa_index::<T>()? else {
            return Ok(None);
        };
        self.bump(T::DOMAINS);
        let c = self
            .erased_column_mut(i)
            .as_any_mut()
            .downcast_mut::<SoaColumn<T>>()
            .expect("layout checked above");
        c.access.record(c.entities.len());
        c.ticks.stamp_all();
        Ok(Some(SoaMut {
            entities: &c.entities,
            table: &mut c.table,
            _type: PhantomData,
        }))
    }

    /// The body of [`WorldHooks::lend_soa_pair`](crate::hooks::WorldHooks::lend_soa_pair), which documents it.
    #[allow(clippy::type_complexity)]
    pub(crate) fn lend_soa_pair<A: Component + SoaComponent, B: Component + SoaComponent>(
        &mut self,
    ) -> Result<Option<(SoaMut<'_, A>, SoaMut<'_, B>)>, WorldError> {
        if TypeId::of::<A>() == TypeId::of::<B>() {
            return Err(WorldError::AliasedQuery { component: A::NAME });
        }
        let (Some(ia), Some(ib)) = (self.soa_index::<A>()?, self.soa_index::<B>()?) else {
            return Ok(None);
        };
        let versions = {
            let a = self.soa::<A>()?.expect("present");
            let b = self.soa::<B>()?.expect("present");
            let versions = (a.rows_version, b.rows_version);
            // The O(rows) comparison runs only when either column's rows moved since the last
            // check that passed (a per-step lend must not re-read every entity id).
            if a.aligned_with != Some((ib, versions.0, versions.1)) && a.entities != b.entities {
                return Err(WorldError::NotAligned {
                    a: A::NAME,
                    b: B::NAME,
                    a_rows: a.entities.len(),
                    b_rows: b.entities.len(),
                });
            }
            versions
        };
        self.bump(A::DOMAINS.union(B::DOMAINS));
        let (ca, cb) = self.two_columns_mut(ia, ib);
        let a = ca
            .as_any_mut()
            .downcast_mut::<SoaColumn<A>>()
            .expect("layout checked above");
        let b = cb
            .as_any_mut()
            .downcast_mut::<SoaColumn<B>>()
            .expect("layout checked above");
        a.aligned_with = Some((ib, versions.0, versions.1));
        a.access.record(a.entities.len());
        b.access.record(b.entities.len());
        a.ticks.stamp_all();
        b.ticks.stamp_all();
        Ok(Some((
            SoaMut {
                entities: &a.entities,
                table: &mut a.table,
                _type: PhantomData,
            },
            SoaMut {
                entities: &b.entities,
                table: &mut b.table,
                _type: PhantomData,
            },
        )))
    }

    /// The body of [`WorldHooks::align_soa_rows`](crate::hooks::WorldHooks::align_soa_rows), which documents it.
    pub(crate) fn align_soa_rows<A: Component + SoaComponent, B: Component + SoaComponent>(
        &mut self,
    ) -> Result<bool, WorldError> {
        if TypeId::of::<A>() == TypeId::of::<B>() {
            return Ok(true);
        }
        let (Some(_), Some(ib)) = (self.soa_index::<A>()?, self.soa_index::<B>()?) else {
            return Ok(false);
        };
        let a = self.soa::<A>()?.expect("present");
        let b = self.soa::<B>()?.expect("present");
        if a.entities == b.entities {
            return Ok(true);
        }
        if a.entities.len() != b.entities.len() || !a.entities.iter().all(|&e| b.contains(e)) {
            return Ok(false);
        }
        let order = a.entities.clone();
        self.erased_column_mut(ib)
            .as_any_mut()
            .downcast_mut::<SoaColumn<B>>()
            .expect("layout checked above")
            .reorder(&order);
        self.bump(B::DOMAINS);
        Ok(true)
    }

    /// `insert` for a column that is not AoS (called by [`World::insert`]).
    pub(crate) fn soa_insert<T: Component>(
        &mut self,
        i: usize,
        entity: Entity,
        value: T,
    ) -> Result<Option<T>, WorldError> {
        let mut slot = Some(value);
        self.erased_column_mut(i).insert_erased(entity, &mut slot);
        Ok(slot)
    }

    /// `remove` for a column that is not AoS (called by [`World::remove`]).
    pub(crate) fn soa_take<T: Component>(
        &mut self,
        i: usize,
        entity: Entity,
    ) -> Result<Option<T>, WorldError> {
        let mut slot: Option<T> = None;
        self.erased_column_mut(i).take_erased(entity, &mut slot);
        Ok(slot)
    }
}
