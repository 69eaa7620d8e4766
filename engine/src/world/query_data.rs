//! What a typed query asks for and which entities it keeps: [`QueryData`] (`&T`, `&mut T`,
//! `Option<&T>`, `Option<&mut T>`, [`Entity`] and tuples of 1-8 of them) and [`QueryFilter`]
//! ([`With`], [`Without`], [`Changed`] and tuples of 1-4), over AoS and field-SoA columns alike.
//!
//! Owns: resolving each requested component to its column once per query (as raw parts), the
//! aliasing check (`&mut T` beside any other access to `T` is [`QueryError::Aliased`]), the
//! per-row lookup, and the field-SoA row codec (a row is gathered into a `T` before the closure
//! and, for `&mut T`, scattered back after it). Must never: hand one row to two `&mut`s, let an
//! item outlive the closure call it was made for (the closures take items for every lifetime,
//! so they cannot keep them), or touch a column the query did not claim.
//!
//! Why gather/scatter for field-SoA rather than a second API: whether a component is stored
//! AoS or field-SoA is a storage choice, and a system written against `&mut Position` must not
//! change when the layout does. The kernels keep their typed per-field slices for speed
//! ([`World::lend_soa`](super::World::lend_soa)); a query over a field-SoA component costs one
//! gather (and one scatter when mutable) of its fields per row.

// Opted in from the workspace's `unsafe_code = "deny"`: a query holds several columns of one
// world at once, some mutably, resolved once into raw parts so that per-row access is an
// indexed load (no downcast, no borrow-checker split per column). Each unsafe block states why
// its pointer is valid and unaliased; the invariants are the alias check at resolve and "each
// driving row is visited once".
#![allow(unsafe_code)]

use std::marker::PhantomData;

use lanegraph_simd::MAX_FIELDS;

use super::change_ticks::ChangeClock;
use super::column::{AosColumn, ErasedColumn, SparseIndex, NO_ROW};
use super::component::{AliasedQuery, Component};
use super::component_ids::ColumnIds;
use super::entity::Entity;
use super::epoch::Epochs;
use super::soa::SoaColumn;

/// Why a typed query could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// The query asks for one component mutably and again (shared or mutable): two
    /// references to one row, one of them `&mut`.
    #[error(transparent)]
    Aliased(#[from] AliasedQuery),
    /// The query names more components than a query checks for aliasing.
    #[error("the query names more than {max} components; fix: split it into two queries")]
    TooWide {
        /// The most components one query names.
        max: usize,
    },
}

/// The most components one query (its data and filter together) names.
pub const MAX_QUERY_COMPONENTS: usize = 16;

/// A column's rows and sparse index as raw parts, for typed queries (`query_data`): valid while
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

/// The world's columns as a query resolves them: each requested component claims its column,
/// shared or exclusive, and mutable claims bump the component's domains.
#[doc(hidden)]
pub struct ColumnsView<'a> {
    pub(crate) columns: &'a mut [Box<dyn ErasedColumn>],
    pub(crate) ids: &'a ColumnIds,
    pub(crate) epochs: &'a mut Epochs,
    /// The world's change tick (what `&mut T` stamps) and what this reader saw last.
    pub(crate) clock: &'a mut ChangeClock,
    /// The first `claimed` entries are the claims so far; the rest are never read (left
    /// uninitialized: initializing 16 of them was a memset per query).
    claims: [std::mem::MaybeUninit<(std::any::TypeId, bool)>; MAX_QUERY_COMPONENTS],
    claimed: usize,
}

impl<'a> ColumnsView<'a> {
    pub(crate) fn new(
        columns: &'a mut [Box<dyn ErasedColumn>],
        ids: &'a ColumnIds,
        epochs: &'a mut Epochs,
        clock: &'a mut ChangeClock,
    ) -> Self {
        ColumnsView {
            columns,
            ids,
            epochs,
            clock,
            claims: [const { std::mem::MaybeUninit::uninit() }; MAX_QUERY_COMPONENTS],
            claimed: 0,
        }
    }

    fn index_of<T: Component>(&self) -> Option<usize> {
        self.ids.get::<T>()
    }

    /// Claims `T`; an exclusive claim beside any other claim is an alias. By type, so a query
    /// that would alias is an error on any world, with or without the column.
    fn claim<T: Component>(&mut self, mutable: bool) -> Result<(), QueryError> {
        let ty = std::any::TypeId::of::<T>();
        // SAFETY: the first `claimed` entries were written below before `claimed` counted them.
        let taken = unsafe {
            std::slice::from_raw_parts(
                self.claims.as_ptr().cast::<(std::any::TypeId, bool)>(),
                self.claimed,
            )
        };
        if taken.iter().any(|&(c, m)| c == ty && (m || mutable)) {
            return Err(AliasedQuery { component: T::NAME }.into());
        }
        if self.claimed == MAX_QUERY_COMPONENTS {
            return Err(QueryError::TooWide {
                max: MAX_QUERY_COMPONENTS,
            });
        }
        self.claims[self.claimed].write((ty, mutable));
        self.claimed += 1;
        if mutable {
            self.epochs.bump(T::DOMAINS);
        }
        Ok(())
    }

    /// The rows of `T`'s column (for filters: presence only), `None` when it has none.
    fn rows_of<T: Component>(&mut self) -> Option<RawRows> {
        let col = self.index_of::<T>()?;
        let c = &mut self.columns[col];
        if let Some(c) = c.as_any_mut().downcast_mut::<AosColumn<T>>() {
            return Some(c.raw_parts().0);
        }
        let c = c.as_any_mut().downcast_mut::<SoaColumn<T>>()?;
        Some(c.raw_parts().0)
    }

    /// `T`'s rows and change ticks (tracking them from now on), for [`Changed`]; `None` when
    /// `T` has no column.
    fn changed_rows_of<T: Component>(&mut self) -> Option<(usize, RawRows, *const u64)> {
        let col = self.index_of::<T>()?;
        let rows = self.rows_of::<T>()?;
        let ticks = self.columns[col].ticks_mut();
        ticks.track(rows.len, self.clock.now);
        self.clock.any_tracked = true;
        Some((col, rows, ticks.raw()))
    }
}

/// Which rows a query walks: the smallest column it requires, or every live entity.
#[derive(Clone, Copy)]
#[doc(hidden)]
pub struct Driver {
    /// The column's index (`usize::MAX`: the entity list).
    pub(crate) col: usize,
    pub(crate) rows: usize,
    pub(crate) entities: *const Entity,
    /// The driving column's row-order counter.
    pub(crate) order: u64,
}

impl Driver {
    fn consider(best: &mut Option<Driver>, col: usize, rows: &RawRows) {
        if best.is_none_or(|b| rows.len < b.rows) {
            *best = Some(Driver {
                col,
                rows: rows.len,
                entities: rows.entities,
                order: rows.order,
            });
        }
    }
}

/// Cached alignments between a driving column and another: `(driver, other) -> (driver's
/// order, other's order, offset, rows)`.
/// Per (driving column, other column): the two row-order counters it was measured at, the
/// offset and the aligned run. FxHash: the key is two small indices, looked up per term per
/// query, where SipHash cost about 10 ns a lookup.
pub(crate) type AlignCache = rustc_hash::FxHashMap<(usize, usize), (u64, u64, usize, usize)>;

impl Driver {
    /// Where the driving column's rows run in step with column `col`'s: the offset of the
    /// driver's first entity in `col`, and how many consecutive rows from there hold the same
    /// entities as the driver's (cached per pair while neither column's order moves). A column
    /// filled after another in the same order (a batch, a spawn loop) runs in step at an
    /// offset, so its rows need no per-row lookup.
    fn aligned_with(&self, col: usize, rows: &RawRows, cache: &mut AlignCache) -> (usize, usize) {
        if col == self.col {
            return (0, self.rows);
        }
        if self.col == usize::MAX || self.rows == 0 {
            return (0, 0);
        }
        if let Some(&(gd, gc, off, n)) = cache.get(&(self.col, col)) {
            if (gd, gc) == (self.order, rows.order) {
                return (off, n);
            }
        }
        // SAFETY: both lists are live for the query's borrow, with the lengths recorded.
        let (d, c) = unsafe {
            (
                std::slice::from_raw_parts(self.entities, self.rows),
                std::slice::from_raw_parts(rows.entities, rows.len),
            )
        };
        // SAFETY: the parts are valid; the driver's entities are live.
        let (off, n) = match unsafe { rows.row(d[0]) } {
            Some(off) => (
                off,
                d.iter().zip(&c[off..]).take_while(|(x, y)| x == y).count(),
            ),
            None => (0, 0),
        };
        cache.insert((self.col, col), (self.order, rows.order, off, n));
        (off, n)
    }
}

/// The row being visited: its index in the driving column (so that column needs no lookup).
#[derive(Clone, Copy)]
#[doc(hidden)]
pub struct DriverRow {
    pub(crate) col: usize,
    pub(crate) row: usize,
}

/// A field-SoA column's field pointers, cached for typed queries.
pub(crate) struct FieldPtrs(pub(crate) [*mut f32; MAX_FIELDS]);

// SAFETY: the pointers are into the column's own field buffers; they are written by
// `raw_parts` (`&mut self`) and dereferenced only by a typed query made from that same
// exclusive borrow of the world, so moving or sharing the column between threads never lets
// two threads use them unsynchronized.
unsafe impl Send for FieldPtrs {}
// SAFETY: as above.
unsafe impl Sync for FieldPtrs {}

/// One field-SoA column as raw parts: each field's first row and the row codec.
#[doc(hidden)]
pub(crate) struct SoaRaw<T> {
    /// Each field's first row, in the column's own cache (`SoaColumn::raw_parts` fills it):
    /// one pointer here, so a query over a field-SoA component does not carry (and copy) half a
    /// kilobyte of field pointers.
    pub(crate) fields: *const [*mut f32; MAX_FIELDS],
    pub(crate) n: usize,
    pub(crate) from_fields: fn(&[f32]) -> T,
    pub(crate) to_fields: fn(&T, &mut [f32]),
}

impl<T> Clone for SoaRaw<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SoaRaw<T> {}

impl<T> SoaRaw<T> {
    /// Gathers row `row`.
    ///
    /// # Safety
    /// The parts are valid and `row` is below the column's length; no `&mut` to the row is live.
    unsafe fn read(&self, row: usize) -> T {
        let mut buf = [0.0f32; MAX_FIELDS];
        // SAFETY: the column (boxed, borrowed by the query) owns the array, written only by
        // `raw_parts` before the query was made.
        let fields = unsafe { &*self.fields };
        for (b, f) in buf.iter_mut().zip(&fields[..self.n]) {
            // SAFETY: `f` is a live field column with more than `row` rows (the contract).
            *b = unsafe { *f.add(row) };
        }
        (self.from_fields)(&buf[..self.n])
    }

    /// Scatters `value` into row `row`.
    ///
    /// # Safety
    /// As for `read`, and no other reference to the row is live (the row is this query's
    /// alone: its chunk's, in a parallel query).
    unsafe fn write(&self, row: usize, value: &T) {
        let mut buf = [0.0f32; MAX_FIELDS];
        (self.to_fields)(value, &mut buf[..self.n]);
        // SAFETY: as in `read`.
        let fields = unsafe { &*self.fields };
        for (b, f) in buf.iter().zip(&fields[..self.n]) {
            // SAFETY: as in `read`; the row is written by this thread only.
            unsafe { *f.add(row) = *b };
        }
    }
}

/// Where a `&mut T` term stamps the rows it hands out (see `change_ticks`).
#[derive(Clone, Copy)]
#[doc(hidden)]
pub struct Stamp {
    /// Row 0's tick (null: the column keeps no ticks).
    ticks: *mut u64,
    now: u64,
}

impl Stamp {
    /// Stamps row `row`.
    ///
    /// # Safety
    /// When `ticks` is not null, `row` is below the column's length and this run's alone.
    #[inline(always)]
    unsafe fn at(self, row: usize) {
        if !self.ticks.is_null() {
            // SAFETY: the caller's contract.
            unsafe { *self.ticks.add(row) = self.now };
        }
    }
}

/// Where one component's values live.
enum Store<T> {
    Aos(*mut T),
    Soa(SoaRaw<T>),
}

impl<T> Clone for Store<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Store<T> {}

/// One component's column, resolved for a query.
pub struct ColumnFetch<T> {
    col: usize,
    rows: RawRows,
    store: Store<T>,
    /// The row `locate` found.
    row: usize,
    /// Where the driving column's aligned rows start in this column.
    offset: usize,
    /// A field-SoA row, gathered (and, for `&mut T`, scattered back by `commit`).
    scratch: Option<T>,
    /// The column's change ticks, for `&mut T` (null: shared, or the column keeps none), and
    /// the tick a row handed out mutably is stamped with.
    ticks: *mut u64,
    now: u64,
}

impl<T: Component> ColumnFetch<T> {
    /// The AoS values from the first aligned row on.
    fn aos_base(&self) -> Option<*mut T> {
        match &self.store {
            // `offset` is at most the column's length (a row of it, or 0).
            Store::Aos(p) => Some(p.wrapping_add(self.offset)),
            Store::Soa(_) => None,
        }
    }

    /// The change ticks from the first aligned row on, and the stamp (null: none kept).
    fn ticks_base(&self) -> Stamp {
        Stamp {
            ticks: if self.ticks.is_null() {
                self.ticks
            } else {
                self.ticks.wrapping_add(self.offset)
            },
            now: self.now,
        }
    }

    /// Stamps row `row` (of this column) as changed.
    ///
    /// # Safety
    /// `row` is in range and this query's (chunk's) alone.
    #[inline]
    unsafe fn stamp(&self, row: usize) {
        // SAFETY: the caller's contract; a tracked column's ticks are as long as its rows.
        unsafe {
            Stamp {
                ticks: self.ticks,
                now: self.now,
            }
            .at(row)
        }
    }

    /// Records where the driver's aligned rows run in this column; returns how many.
    fn align(&mut self, d: &Driver, cache: &mut AlignCache) -> usize {
        let (offset, n) = d.aligned_with(self.col, &self.rows, cache);
        self.offset = offset;
        n
    }

    fn resolve(view: &mut ColumnsView<'_>, mutable: bool) -> Result<Option<Self>, QueryError> {
        view.claim::<T>(mutable)?;
        let Some(col) = view.index_of::<T>() else {
            return Ok(None);
        };
        let c = &mut view.columns[col];
        let (ticks, now) = if mutable {
            c.ticks_mut().raw_mut()
        } else {
            (std::ptr::null_mut(), 0)
        };
        let (rows, store) = if let Some(c) = c.as_any_mut().downcast_mut::<AosColumn<T>>() {
            let (rows, values) = c.raw_parts();
            (rows, Store::Aos(values))
        } else {
            let c = c
                .as_any_mut()
                .downcast_mut::<SoaColumn<T>>()
                .expect("a column of T is AoS or field-SoA (broken invariant)");
            let (rows, raw) = c.raw_parts();
            (rows, Store::Soa(raw))
        };
        Ok(Some(ColumnFetch {
            col,
            rows,
            store,
            row: 0,
            offset: 0,
            scratch: None,
            ticks,
            now,
        }))
    }

    fn fork(&self) -> Self {
        ColumnFetch {
            col: self.col,
            rows: self.rows,
            store: self.store,
            row: 0,
            offset: self.offset,
            scratch: None,
            ticks: self.ticks,
            now: self.now,
        }
    }

    /// Finds `e`'s row; false when `e` has no `T`.
    ///
    /// # Safety
    /// The parts are valid (the query's `&mut World` is held); `e` is live.
    #[inline]
    unsafe fn locate(&mut self, e: Entity, d: DriverRow) -> bool {
        // Rows in step with the driving column never come here (`get_aligned` reads them by
        // index); the rest are found by slot.
        let row = if self.col == d.col {
            Some(d.row)
        } else {
            // SAFETY: the caller's contract.
            unsafe { self.rows.row(e) }
        };
        match row {
            Some(r) => {
                self.row = r;
                true
            }
            None => false,
        }
    }

    /// A shared reference to row `row`, known to be `e`'s (an aligned row).
    ///
    /// # Safety
    /// `row` is in range and `e`'s; no `&mut` to it is live.
    #[inline]
    unsafe fn shared_at<'a>(&mut self, row: usize) -> &'a T {
        let row = row + self.offset;
        match &self.store {
            // SAFETY: the caller's contract.
            Store::Aos(p) => unsafe { &*p.add(row) },
            Store::Soa(_) => {
                self.row = row;
                // SAFETY: the caller's contract.
                unsafe { self.shared() }
            }
        }
    }

    /// An exclusive reference to row `row`, known to be `e`'s (an aligned row).
    ///
    /// # Safety
    /// `row` is in range and `e`'s; the row is this query's (chunk's) alone.
    #[inline]
    unsafe fn exclusive_at<'a>(&mut self, row: usize) -> &'a mut T {
        let row = row + self.offset;
        // SAFETY: the caller's contract.
        unsafe { self.stamp(row) };
        match &self.store {
            // SAFETY: the caller's contract.
            Store::Aos(p) => unsafe { &mut *p.add(row) },
            Store::Soa(_) => {
                self.row = row;
                // SAFETY: the caller's contract.
                unsafe { self.exclusive() }
            }
        }
    }

    /// A shared reference to the located row (field-SoA: to its gathered copy).
    ///
    /// # Safety
    /// `locate` returned true for this row; no `&mut` to it is live.
    #[inline]
    unsafe fn shared<'a>(&mut self) -> &'a T {
        match &self.store {
            // SAFETY: the row is in range (`locate`) and only shared here.
            Store::Aos(p) => unsafe { &*p.add(self.row) },
            Store::Soa(raw) => {
                // SAFETY: the row is in range (`locate`).
                let v = self.scratch.insert(unsafe { raw.read(self.row) });
                // SAFETY: the copy lives in this fetch until the next row; the closure takes
                // the item for every lifetime, so it cannot keep it past this call.
                unsafe { &*(v as *const T) }
            }
        }
    }

    /// An exclusive reference to the located row (field-SoA: to its gathered copy, written
    /// back by `commit`).
    ///
    /// # Safety
    /// `locate` returned true for this row; the row is this query's (chunk's) alone.
    #[inline]
    unsafe fn exclusive<'a>(&mut self) -> &'a mut T {
        // SAFETY: the caller's contract.
        unsafe { self.stamp(self.row) };
        match &self.store {
            // SAFETY: the row is in range and no other reference to it exists (the alias check
            // at resolve; each row is visited once).
            Store::Aos(p) => unsafe { &mut *p.add(self.row) },
            Store::Soa(raw) => {
                // SAFETY: as in `shared`.
                let v = self.scratch.insert(unsafe { raw.read(self.row) });
                // SAFETY: as in `shared`; `commit` writes it back after the call.
                unsafe { &mut *(v as *mut T) }
            }
        }
    }

    /// Writes a gathered field-SoA row back.
    ///
    /// # Safety
    /// As for `exclusive`.
    #[inline]
    unsafe fn write_back(&mut self) {
        // By reference: the field-SoA parts are half a kilobyte, not to be copied per row.
        if let Store::Soa(raw) = &self.store {
            if let Some(v) = self.scratch.take() {
                // SAFETY: the caller's contract.
                unsafe { raw.write(self.row, &v) };
            }
        }
    }
}

mod sealed {
    pub trait Data {}
    pub trait Filter {}
}

/// What a typed query hands its closure per entity: `&T`, `&mut T`, `Option<&T>`,
/// `Option<&mut T>`, [`Entity`], or a tuple of 1-8 of these. Entities that lack a required
/// (`&T`, `&mut T`) component are skipped; `Option` ones are `None` where missing.
///
/// Sealed: the runtime implements it; a game names it in tuples
/// (`world.query::<(Entity, &mut Position, &Velocity, Option<&Mass>)>()`).
pub trait QueryData: sealed::Data {
    /// What the closure receives.
    type Item<'a>;
    #[doc(hidden)]
    type Fetch;
    #[doc(hidden)]
    fn init(view: &mut ColumnsView<'_>) -> Result<Option<Self::Fetch>, QueryError>;
    #[doc(hidden)]
    fn driver(f: &Self::Fetch, best: &mut Option<Driver>);
    #[doc(hidden)]
    fn fork(f: &Self::Fetch) -> Self::Fetch;
    /// Every part's base pointer when all are AoS (or need no column): the aligned rows then
    /// run on copies held in registers, with nothing to write back.
    #[doc(hidden)]
    type Base: Copy;
    #[doc(hidden)]
    fn base(f: &Self::Fetch) -> Option<Self::Base>;
    /// The item at aligned row `row` from the bases.
    ///
    /// # Safety
    /// As for `get_aligned`.
    #[doc(hidden)]
    unsafe fn at<'a>(b: Self::Base, e: Entity, row: usize) -> Self::Item<'a>;
    /// Whether any `&mut` part keeps change ticks (its rows must be stamped: [`Changed`]).
    #[doc(hidden)]
    fn stamps(_: &Self::Base) -> bool {
        false
    }
    /// `at` without stamping change ticks: for bases where `stamps` is false (the row loop
    /// then holds no store to a pointer that may alias the values, and vectorizes as before).
    ///
    /// # Safety
    /// As for `at`, and `stamps(&b)` is false.
    #[doc(hidden)]
    unsafe fn at_unstamped<'a>(b: Self::Base, e: Entity, row: usize) -> Self::Item<'a> {
        // SAFETY: forwarded contract.
        unsafe { Self::at(b, e, row) }
    }
    /// Leading rows of the driving column at which every part's row is the same index.
    #[doc(hidden)]
    fn aligned(f: &mut Self::Fetch, d: &Driver, cache: &mut AlignCache) -> usize;
    /// The item for driving row `row` (entity `e`) within the aligned rows.
    ///
    /// # Safety
    /// `row < aligned(..)`, `e` is its entity; each row is handed out once.
    #[doc(hidden)]
    unsafe fn get_aligned<'a>(f: &mut Self::Fetch, e: Entity, row: usize) -> Self::Item<'a>;
    /// # Safety
    /// The parts are valid; `e` is live and `d` is its row in the driving column.
    #[doc(hidden)]
    unsafe fn locate(f: &mut Self::Fetch, e: Entity, d: DriverRow) -> bool;
    /// # Safety
    /// `locate` returned true for `e` just before; each row is handed out once.
    #[doc(hidden)]
    unsafe fn get<'a>(f: &mut Self::Fetch, e: Entity) -> Self::Item<'a>;
    /// # Safety
    /// After the closure returned for the row `get` handed out.
    #[doc(hidden)]
    unsafe fn commit(f: &mut Self::Fetch);
}

impl<T: Component> sealed::Data for &T {}
impl<T: Component> QueryData for &T {
    type Item<'a> = &'a T;
    type Fetch = ColumnFetch<T>;
    fn init(view: &mut ColumnsView<'_>) -> Result<Option<Self::Fetch>, QueryError> {
        ColumnFetch::resolve(view, false)
    }
    fn driver(f: &Self::Fetch, best: &mut Option<Driver>) {
        Driver::consider(best, f.col, &f.rows);
    }
    fn fork(f: &Self::Fetch) -> Self::Fetch {
        f.fork()
    }
    fn aligned(f: &mut Self::Fetch, d: &Driver, cache: &mut AlignCache) -> usize {
        f.align(d, cache)
    }
    unsafe fn get_aligned<'a>(f: &mut Self::Fetch, _: Entity, row: usize) -> &'a T {
        // SAFETY: forwarded contract.
        unsafe { f.shared_at(row) }
    }
    type Base = *const T;
    fn base(f: &Self::Fetch) -> Option<*const T> {
        f.aos_base().map(|p| p as *const T)
    }
    unsafe fn at<'a>(b: *const T, _: Entity, row: usize) -> &'a T {
        // SAFETY: forwarded contract.
        unsafe { &*b.add(row) }
    }
    unsafe fn locate(f: &mut Self::Fetch, e: Entity, d: DriverRow) -> bool {
        // SAFETY: forwarded contract.
        unsafe { f.locate(e, d) }
    }
    unsafe fn get<'a>(f: &mut Self::Fetch, _: Entity) -> &'a T {
        // SAFETY: forwarded contract; shared claims never meet an exclusive one.
        unsafe { f.shared() }
    }
    unsafe fn commit(_: &mut Self::Fetch) {}
}

impl<T: Component> sealed::Data for &mut T {}
impl<T: Component> QueryData for &mut T {
    type Item<'a> = &'a mut T;
    type Fetch = ColumnFetch<T>;
    fn init(view: &mut ColumnsView<'_>) -> Result<Option<Self::Fetch>, QueryError> {
        ColumnFetch::resolve(view, true)
    }
    fn driver(f: &Self::Fetch, best: &mut Option<Driver>) {
        Driver::consider(best, f.col, &f.rows);
    }
    fn fork(f: &Self::Fetch) -> Self::Fetch {
        f.fork()
    }
    fn aligned(f: &mut Self::Fetch, d: &Driver, cache: &mut AlignCache) -> usize {
        f.align(d, cache)
    }
    unsafe fn get_aligned<'a>(f: &mut Self::Fetch, _: Entity, row: usize) -> &'a mut T {
        // SAFETY: forwarded contract.
        unsafe { f.exclusive_at(row) }
    }
    type Base = (*mut T, Stamp);
    fn base(f: &Self::Fetch) -> Option<(*mut T, Stamp)> {
        Some((f.aos_base()?, f.ticks_base()))
    }
    #[inline(always)]
    unsafe fn at<'a>((b, stamp): (*mut T, Stamp), _: Entity, row: usize) -> &'a mut T {
        // SAFETY: forwarded contract; the exclusive claim is the column's only claim.
        unsafe {
            stamp.at(row);
            &mut *b.add(row)
        }
    }
    fn stamps((_, stamp): &(*mut T, Stamp)) -> bool {
        !stamp.ticks.is_null()
    }
    #[inline(always)]
    unsafe fn at_unstamped<'a>((b, _): (*mut T, Stamp), _: Entity, row: usize) -> &'a mut T {
        // SAFETY: forwarded contract; the exclusive claim is the column's only claim.
        unsafe { &mut *b.add(row) }
    }
    unsafe fn locate(f: &mut Self::Fetch, e: Entity, d: DriverRow) -> bool {
        // SAFETY: forwarded contract.
        unsafe { f.locate(e, d) }
    }
    unsafe fn get<'a>(f: &mut Self::Fetch, _: Entity) -> &'a mut T {
        // SAFETY: forwarded contract; the exclusive claim is the column's only claim.
        unsafe { f.exclusive() }
    }
    unsafe fn commit(f: &mut Self::Fetch) {
        // SAFETY: forwarded contract.
        unsafe { f.write_back() }
    }
}

/// An optional component's fetch: `None` when the world has no column for it.
pub struct OptionFetch<T> {
    inner: Option<ColumnFetch<T>>,
    found: bool,
}

impl<T: Component> OptionFetch<T> {
    fn resolve(view: &mut ColumnsView<'_>, mutable: bool) -> Result<Self, QueryError> {
        Ok(OptionFetch {
            inner: ColumnFetch::resolve(view, mutable)?,
            found: false,
        })
    }

    /// An optional term never limits the aligned rows: it is found by slot on each of them
    /// (a sparse component, present on some entities, would otherwise end the run in step at
    /// its first gap and send every term of the query to per-row lookups).
    fn aligned(&mut self, _: &Driver, _: &mut AlignCache) -> usize {
        usize::MAX
    }

    /// Finds `e`'s row by slot, for the aligned rows.
    ///
    /// # Safety
    /// As for [`ColumnFetch::locate`].
    unsafe fn find(&mut self, e: Entity) -> Option<&mut ColumnFetch<T>> {
        let c = self.inner.as_mut()?;
        // SAFETY: forwarded contract.
        let row = unsafe { c.rows.row(e) }?;
        c.row = row;
        self.found = true;
        Some(c)
    }

    /// The AoS values and rows, for the register path (`None`: field-SoA).
    fn aos_base(&self) -> Option<Option<(*mut T, RawRows)>> {
        match &self.inner {
            None => Some(None),
            Some(c) => match &c.store {
                Store::Aos(p) => Some(Some((*p, c.rows))),
                Store::Soa(_) => None,
            },
        }
    }

    fn fork(&self) -> Self {
        OptionFetch {
            inner: self.inner.as_ref().map(ColumnFetch::fork),
            found: false,
        }
    }

    /// # Safety
    /// As for [`ColumnFetch::locate`].
    unsafe fn locate(&mut self, e: Entity, d: DriverRow) -> bool {
        // SAFETY: forwarded contract.
        self.found = self
            .inner
            .as_mut()
            .is_some_and(|c| unsafe { c.locate(e, d) });
        true
    }
}

impl<T: Component> sealed::Data for Option<&T> {}
impl<T: Component> QueryData for Option<&T> {
    type Item<'a> = Option<&'a T>;
    type Fetch = OptionFetch<T>;
    fn init(view: &mut ColumnsView<'_>) -> Result<Option<Self::Fetch>, QueryError> {
        OptionFetch::resolve(view, false).map(Some)
    }
    fn driver(_: &Self::Fetch, _: &mut Option<Driver>) {}
    fn fork(f: &Self::Fetch) -> Self::Fetch {
        f.fork()
    }
    fn aligned(f: &mut Self::Fetch, d: &Driver, cache: &mut AlignCache) -> usize {
        f.aligned(d, cache)
    }
    type Base = Option<(*mut T, RawRows)>;
    fn base(f: &Self::Fetch) -> Option<Self::Base> {
        f.aos_base()
    }
    unsafe fn at<'a>(b: Self::Base, e: Entity, _: usize) -> Option<&'a T> {
        let (p, rows) = b?;
        // SAFETY: forwarded contract; the row comes from the column's own index.
        unsafe { rows.row(e).map(|r| &*p.add(r)) }
    }
    unsafe fn get_aligned<'a>(f: &mut Self::Fetch, e: Entity, _: usize) -> Option<&'a T> {
        f.found = false;
        // SAFETY: forwarded contract.
        unsafe { f.find(e) }.map(|c| unsafe { c.shared() })
    }
    unsafe fn locate(f: &mut Self::Fetch, e: Entity, d: DriverRow) -> bool {
        // SAFETY: forwarded contract.
        unsafe { f.locate(e, d) }
    }
    unsafe fn get<'a>(f: &mut Self::Fetch, _: Entity) -> Option<&'a T> {
        let found = f.found;
        // SAFETY: `found` means `locate` found the row.
        f.inner
            .as_mut()
            .filter(|_| found)
            .map(|c| unsafe { c.shared() })
    }
    unsafe fn commit(_: &mut Self::Fetch) {}
}

impl<T: Component> sealed::Data for Option<&mut T> {}
impl<T: Component> QueryData for Option<&mut T> {
    type Item<'a> = Option<&'a mut T>;
    type Fetch = OptionFetch<T>;
    fn init(view: &mut ColumnsView<'_>) -> Result<Option<Self::Fetch>, QueryError> {
        OptionFetch::resolve(view, true).map(Some)
    }
    fn driver(_: &Self::Fetch, _: &mut Option<Driver>) {}
    fn fork(f: &Self::Fetch) -> Self::Fetch {
        f.fork()
    }
    fn aligned(f: &mut Self::Fetch, d: &Driver, cache: &mut AlignCache) -> usize {
        f.aligned(d, cache)
    }
    type Base = Option<(*mut T, RawRows, Stamp)>;
    fn base(f: &Self::Fetch) -> Option<Self::Base> {
        let stamp = f.inner.as_ref().map(|c| Stamp {
            ticks: c.ticks,
            now: c.now,
        });
        Some(
            f.aos_base()?
                .map(|(p, rows)| (p, rows, stamp.expect("a column"))),
        )
    }
    fn stamps(b: &Self::Base) -> bool {
        b.is_some_and(|(_, _, stamp)| !stamp.ticks.is_null())
    }
    unsafe fn at<'a>(b: Self::Base, e: Entity, _: usize) -> Option<&'a mut T> {
        let (p, rows, stamp) = b?;
        // SAFETY: forwarded contract; the row comes from the column's own index, and the
        // exclusive claim is the column's only claim.
        unsafe {
            rows.row(e).map(|r| {
                stamp.at(r);
                &mut *p.add(r)
            })
        }
    }
    unsafe fn get_aligned<'a>(f: &mut Self::Fetch, e: Entity, _: usize) -> Option<&'a mut T> {
        f.found = false;
        // SAFETY: forwarded contract.
        unsafe { f.find(e) }.map(|c| unsafe { c.exclusive() })
    }
    unsafe fn locate(f: &mut Self::Fetch, e: Entity, d: DriverRow) -> bool {
        // SAFETY: forwarded contract.
        unsafe { f.locate(e, d) }
    }
    unsafe fn get<'a>(f: &mut Self::Fetch, _: Entity) -> Option<&'a mut T> {
        let found = f.found;
        // SAFETY: `found` means `locate` found the row; the claim is exclusive.
        f.inner
            .as_mut()
            .filter(|_| found)
            .map(|c| unsafe { c.exclusive() })
    }
    unsafe fn commit(f: &mut Self::Fetch) {
        if f.found {
            if let Some(c) = f.inner.as_mut() {
                // SAFETY: forwarded contract.
                unsafe { c.write_back() }
            }
        }
    }
}

impl sealed::Data for Entity {}
impl QueryData for Entity {
    type Item<'a> = Entity;
    type Fetch = ();
    fn init(_: &mut ColumnsView<'_>) -> Result<Option<()>, QueryError> {
        Ok(Some(()))
    }
    fn driver(_: &(), _: &mut Option<Driver>) {}
    fn fork(_: &()) {}
    fn aligned(_: &mut (), _: &Driver, _: &mut AlignCache) -> usize {
        usize::MAX
    }
    unsafe fn get_aligned<'a>(_: &mut (), e: Entity, _: usize) -> Self::Item<'a> {
        e
    }
    type Base = ();
    fn base(_: &()) -> Option<()> {
        Some(())
    }
    unsafe fn at<'a>(_: (), e: Entity, _: usize) -> Self::Item<'a> {
        e
    }
    unsafe fn locate(_: &mut (), _: Entity, _: DriverRow) -> bool {
        true
    }
    unsafe fn get<'a>(_: &mut (), e: Entity) -> Self::Item<'a> {
        e
    }
    unsafe fn commit(_: &mut ()) {}
}

macro_rules! query_tuple {
    ($($name:ident $idx:tt),+) => {
        impl<$($name: QueryData),+> sealed::Data for ($($name,)+) {}
        impl<$($name: QueryData),+> QueryData for ($($name,)+) {
            type Item<'a> = ($($name::Item<'a>,)+);
            type Fetch = ($($name::Fetch,)+);
            fn init(view: &mut ColumnsView<'_>) -> Result<Option<Self::Fetch>, QueryError> {
                // Every part is resolved (and alias-checked) before any is found missing, so
                // an aliased query is an error even on a world without those columns.
                let parts = ($($name::init(view)?,)+);
                Ok(Some(($(match parts.$idx { Some(f) => f, None => return Ok(None) },)+)))
            }
            fn driver(f: &Self::Fetch, best: &mut Option<Driver>) {
                $($name::driver(&f.$idx, best);)+
            }
            fn fork(f: &Self::Fetch) -> Self::Fetch {
                ($($name::fork(&f.$idx),)+)
            }
            fn aligned(f: &mut Self::Fetch, d: &Driver, cache: &mut AlignCache) -> usize {
                let mut n = usize::MAX;
                $(n = n.min($name::aligned(&mut f.$idx, d, cache));)+
                n
            }
            type Base = ($($name::Base,)+);
            fn base(f: &Self::Fetch) -> Option<Self::Base> {
                Some(($($name::base(&f.$idx)?,)+))
            }
            #[inline]
            unsafe fn at<'a>(b: Self::Base, e: Entity, row: usize) -> Self::Item<'a> {
                // SAFETY: forwarded contract.
                unsafe { ($($name::at(b.$idx, e, row),)+) }
            }
            fn stamps(b: &Self::Base) -> bool {
                false $(|| $name::stamps(&b.$idx))+
            }
            #[inline]
            unsafe fn at_unstamped<'a>(b: Self::Base, e: Entity, row: usize) -> Self::Item<'a> {
                // SAFETY: forwarded contract (no part stamps).
                unsafe { ($($name::at_unstamped(b.$idx, e, row),)+) }
            }
            #[inline]
            unsafe fn get_aligned<'a>(
                f: &mut Self::Fetch,
                e: Entity,
                row: usize,
            ) -> Self::Item<'a> {
                // SAFETY: forwarded contract.
                unsafe { ($($name::get_aligned(&mut f.$idx, e, row),)+) }
            }
            #[inline]
            unsafe fn locate(f: &mut Self::Fetch, e: Entity, d: DriverRow) -> bool {
                // SAFETY: forwarded contract.
                unsafe { true $(&& $name::locate(&mut f.$idx, e, d))+ }
            }
            #[inline]
            unsafe fn get<'a>(f: &mut Self::Fetch, e: Entity) -> Self::Item<'a> {
                // SAFETY: forwarded contract; the parts claim distinct columns or share them.
                unsafe { ($($name::get(&mut f.$idx, e),)+) }
            }
            #[inline]
            unsafe fn commit(f: &mut Self::Fetch) {
                // SAFETY: forwarded contract.
                unsafe { $($name::commit(&mut f.$idx);)+ }
            }
        }
    };
}

query_tuple!(A 0);
query_tuple!(A 0, B 1);
query_tuple!(A 0, B 1, C 2);
query_tuple!(A 0, B 1, C 2, D 3);
query_tuple!(A 0, B 1, C 2, D 3, E 4);
query_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);
query_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
query_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

/// Which entities a typed query keeps: [`With`], [`Without`], `()` (all), or a tuple of 1-4.
pub trait QueryFilter: sealed::Filter {
    #[doc(hidden)]
    type Fetch;
    #[doc(hidden)]
    fn init(view: &mut ColumnsView<'_>) -> Self::Fetch;
    #[doc(hidden)]
    fn driver(f: &Self::Fetch, best: &mut Option<Driver>);
    /// # Safety
    /// The parts are valid; `e` is live.
    #[doc(hidden)]
    unsafe fn matches(f: &Self::Fetch, e: Entity) -> bool;
}

/// Keeps entities that have a `T` (its value is not read).
pub struct With<T>(PhantomData<fn() -> T>);

/// Keeps entities that have no `T`.
pub struct Without<T>(PhantomData<fn() -> T>);

/// Keeps entities whose `T` was added or handed out mutably since the reader last looked: in
/// a system, since that system's previous run ended (every row, on its first run); outside
/// systems, since the latest step began. "Handed out mutably" counts a `&mut T` query term, an
/// `insert`, a `get_mut`, and every row of a whole-column accessor (`column_mut`,
/// `lend_soa`, the pair and triple queries), whether or not the value moved, as in bevy.
///
/// The first `Changed<T>` query over a component starts keeping one change tick per row for
/// it (every row then counts as changed once); components no `Changed` query names keep none
/// and pay nothing.
pub struct Changed<T>(PhantomData<fn() -> T>);

impl sealed::Filter for () {}
impl QueryFilter for () {
    type Fetch = ();
    fn init(_: &mut ColumnsView<'_>) {}
    fn driver(_: &(), _: &mut Option<Driver>) {}
    unsafe fn matches(_: &(), _: Entity) -> bool {
        true
    }
}

impl<T: Component> sealed::Filter for With<T> {}
impl<T: Component> QueryFilter for With<T> {
    type Fetch = Option<(usize, RawRows)>;
    fn init(view: &mut ColumnsView<'_>) -> Self::Fetch {
        Some((view.index_of::<T>()?, view.rows_of::<T>()?))
    }
    fn driver(f: &Self::Fetch, best: &mut Option<Driver>) {
        match f {
            Some((col, rows)) => Driver::consider(best, *col, rows),
            // No column: nothing matches; an empty walk says so.
            None => {
                *best = Some(Driver {
                    col: usize::MAX,
                    rows: 0,
                    entities: std::ptr::NonNull::dangling().as_ptr(),
                    order: 0,
                })
            }
        }
    }
    unsafe fn matches(f: &Self::Fetch, e: Entity) -> bool {
        // SAFETY: forwarded contract.
        f.as_ref()
            .is_some_and(|(_, rows)| unsafe { rows.row(e) }.is_some())
    }
}

impl<T: Component> sealed::Filter for Without<T> {}
impl<T: Component> QueryFilter for Without<T> {
    type Fetch = Option<RawRows>;
    fn init(view: &mut ColumnsView<'_>) -> Self::Fetch {
        view.rows_of::<T>()
    }
    fn driver(_: &Self::Fetch, _: &mut Option<Driver>) {}
    unsafe fn matches(f: &Self::Fetch, e: Entity) -> bool {
        // SAFETY: forwarded contract.
        f.as_ref()
            .is_none_or(|rows| unsafe { rows.row(e) }.is_none())
    }
}

impl<T: Component> sealed::Filter for Changed<T> {}
impl<T: Component> QueryFilter for Changed<T> {
    type Fetch = (Option<(usize, RawRows, *const u64)>, u64);
    fn init(view: &mut ColumnsView<'_>) -> Self::Fetch {
        (view.changed_rows_of::<T>(), view.clock.last_seen)
    }
    fn driver(f: &Self::Fetch, best: &mut Option<Driver>) {
        With::<T>::driver(&f.0.map(|(col, rows, _)| (col, rows)), best);
    }
    #[inline]
    unsafe fn matches(f: &Self::Fetch, e: Entity) -> bool {
        let Some((_, rows, ticks)) = &f.0 else {
            return false;
        };
        // SAFETY: forwarded contract.
        match unsafe { rows.row(e) } {
            // SAFETY: the column keeps ticks (`changed_rows_of` tracked it), one per row, and
            // nothing moves rows while the query lives; `&mut T` terms of the same query write
            // them only after the row passed this filter, on the same thread.
            Some(r) => ticks.is_null() || unsafe { *ticks.add(r) } > f.1,
            None => false,
        }
    }
}

macro_rules! filter_tuple {
    ($($name:ident $idx:tt),+) => {
        impl<$($name: QueryFilter),+> sealed::Filter for ($($name,)+) {}
        impl<$($name: QueryFilter),+> QueryFilter for ($($name,)+) {
            type Fetch = ($($name::Fetch,)+);
            fn init(view: &mut ColumnsView<'_>) -> Self::Fetch {
                ($($name::init(view),)+)
            }
            fn driver(f: &Self::Fetch, best: &mut Option<Driver>) {
                $($name::driver(&f.$idx, best);)+
            }
            #[inline]
            unsafe fn matches(f: &Self::Fetch, e: Entity) -> bool {
                // SAFETY: forwarded contract.
                unsafe { true $(&& $name::matches(&f.$idx, e))+ }
            }
        }
    };
}

filter_tuple!(A 0);
filter_tuple!(A 0, B 1);
filter_tuple!(A 0, B 1, C 2);
filter_tuple!(A 0, B 1, C 2, D 3);
