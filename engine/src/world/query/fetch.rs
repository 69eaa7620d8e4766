//! A typed query's column access: each requested component resolved once to its column's raw
//! parts ([`RawRows`], [`ColumnsView`]), the driving column and its rows ([`Driver`]), and the
//! per-row fetch of AoS and field-SoA columns ([`ColumnFetch`], [`OptionFetch`]); why a query
//! could not be made ([`WorldError`]) and the sealed traits `query::data` and `query::filter`
//! implement.
//!
//! Owns: raw column parts and the per-row lookup. Must never: hand one row to two `&mut`s or
//! let a pointer outlive the `&mut World` that made it.

// Opted in from the workspace's `unsafe_code = "deny"`: see `query::data`'s module docs (raw
// parts resolved once per query; each unsafe block states why its pointer is valid and
// unaliased).
#![allow(unsafe_code)]

use crate::world::change_ticks::{ChangeClock, RawTicks};
use crate::world::column::{AosColumn, ErasedColumn};
use crate::world::component::Component;
use crate::world::component_ids::ColumnIds;
use crate::world::entity::Entity;
use crate::world::epoch::Epochs;
use crate::world::soa::SoaColumn;

pub(crate) use crate::world::column::RawRows;
use crate::world::error::WorldError;
pub(crate) use crate::world::soa_raw::SoaRaw;

/// The most components one query (its data and filter together) names.
pub const MAX_QUERY_COMPONENTS: usize = 16;

pub(crate) mod sealed {
    pub trait Data {}
    pub trait Filter {}
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
    pub(crate) claims: [std::mem::MaybeUninit<(std::any::TypeId, bool)>; MAX_QUERY_COMPONENTS],
    pub(crate) claimed: usize,
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

    pub(crate) fn index_of<T: Component>(&self) -> Option<usize> {
        self.ids.get::<T>()
    }

    /// Claims `T`; an exclusive claim beside any other claim is an alias. By type, so a query
    /// that would alias is an error on any world, with or without the column.
    pub(crate) fn claim<T: Component>(&mut self, mutable: bool) -> Result<(), WorldError> {
        let ty = std::any::TypeId::of::<T>();
        // SAFETY: the first `claimed` entries were written below before `claimed` counted them.
        let taken = unsafe {
            std::slice::from_raw_parts(
                self.claims.as_ptr().cast::<(std::any::TypeId, bool)>(),
                self.claimed,
            )
        };
        if taken.iter().any(|&(c, m)| c == ty && (m || mutable)) {
            return Err(WorldError::AliasedQuery { component: T::NAME });
        }
        if self.claimed == MAX_QUERY_COMPONENTS {
            return Err(WorldError::QueryTooWide {
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
    pub(crate) fn rows_of<T: Component>(&mut self) -> Option<RawRows> {
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
    pub(crate) fn changed_rows_of<T: Component>(&mut self) -> Option<(usize, RawRows, RawTicks)> {
        let col = self.index_of::<T>()?;
        let rows = self.rows_of::<T>()?;
        let ticks = self.columns[col].ticks_mut();
        if ticks.track(rows.len, self.clock.now) {
            // The ticks are column state a snapshot holds: starting them is a change of the
            // column (its content version moves, so no capture or restore skips it).
            self.epochs.bump(T::DOMAINS);
        }
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
    pub(crate) fn consider(best: &mut Option<Driver>, col: usize, rows: &RawRows) {
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
    pub(crate) fn aligned_with(
        &self,
        col: usize,
        rows: &RawRows,
        cache: &mut AlignCache,
    ) -> (usize, usize) {
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

/// Where a `&mut T` term stamps the rows it hands out (see `change_ticks`).
#[derive(Clone, Copy)]
#[doc(hidden)]
pub struct Stamp {
    /// The column's row and chunk ticks (none: the column keeps no ticks).
    pub(crate) ticks: RawTicks,
    /// Added to a row given to `at` (a driver's aligned row) to make it the column's.
    pub(crate) offset: usize,
    pub(crate) now: u64,
}

impl Stamp {
    /// Stamps row `row + offset`, and its chunk.
    ///
    /// # Safety
    /// When the column keeps ticks, `row + offset` is below its length and this run's alone.
    #[inline(always)]
    pub(crate) unsafe fn at(self, row: usize) {
        if !self.ticks.is_none() {
            // SAFETY: the caller's contract.
            unsafe { self.ticks.stamp(row + self.offset, self.now) };
        }
    }

    /// Whether the column keeps ticks (its rows must be stamped).
    #[inline(always)]
    pub(crate) fn tracked(&self) -> bool {
        !self.ticks.is_none()
    }
}

/// Where one component's values live.
pub(crate) enum Store<T> {
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
    pub(crate) col: usize,
    pub(crate) rows: RawRows,
    pub(crate) store: Store<T>,
    /// The row `locate` found.
    pub(crate) row: usize,
    /// Where the driving column's aligned rows start in this column.
    pub(crate) offset: usize,
    /// A field-SoA row, gathered (and, for `&mut T`, scattered back by `commit`).
    pub(crate) scratch: Option<T>,
    /// The column's change ticks, for `&mut T` (none: shared, or the column keeps none), and
    /// the tick a row handed out mutably is stamped with.
    pub(crate) ticks: RawTicks,
    pub(crate) now: u64,
}

impl<T: Component> ColumnFetch<T> {
    /// The AoS values from the first aligned row on.
    pub(crate) fn aos_base(&self) -> Option<*mut T> {
        match &self.store {
            // `offset` is at most the column's length (a row of it, or 0).
            Store::Aos(p) => Some(p.wrapping_add(self.offset)),
            Store::Soa(_) => None,
        }
    }

    /// The stamp for the driver's aligned rows (from the first aligned row on).
    pub(crate) fn ticks_base(&self) -> Stamp {
        Stamp {
            ticks: self.ticks,
            offset: self.offset,
            now: self.now,
        }
    }

    /// The stamp for this column's own rows.
    pub(crate) fn column_stamp(&self) -> Stamp {
        Stamp {
            ticks: self.ticks,
            offset: 0,
            now: self.now,
        }
    }

    /// Stamps row `row` (of this column) as changed.
    ///
    /// # Safety
    /// `row` is in range and this query's (chunk's) alone.
    #[inline]
    pub(crate) unsafe fn stamp(&self, row: usize) {
        // SAFETY: the caller's contract; a tracked column's ticks are as long as its rows.
        unsafe { self.column_stamp().at(row) }
    }

    /// Records where the driver's aligned rows run in this column; returns how many.
    pub(crate) fn align(&mut self, d: &Driver, cache: &mut AlignCache) -> usize {
        let (offset, n) = d.aligned_with(self.col, &self.rows, cache);
        self.offset = offset;
        n
    }

    pub(crate) fn resolve(
        view: &mut ColumnsView<'_>,
        mutable: bool,
    ) -> Result<Option<Self>, WorldError> {
        view.claim::<T>(mutable)?;
        let Some(col) = view.index_of::<T>() else {
            return Ok(None);
        };
        let c = &mut view.columns[col];
        let (ticks, now) = if mutable {
            c.ticks_mut().raw_mut()
        } else {
            (RawTicks::NONE, 0)
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

    pub(crate) fn fork(&self) -> Self {
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
    pub(crate) unsafe fn locate(&mut self, e: Entity, d: DriverRow) -> bool {
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
    pub(crate) unsafe fn shared_at<'a>(&mut self, row: usize) -> &'a T {
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
    pub(crate) unsafe fn exclusive_at<'a>(&mut self, row: usize) -> &'a mut T {
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
    pub(crate) unsafe fn shared<'a>(&mut self) -> &'a T {
        match &self.store {
            // SAFETY: the row is in range (`locate`) and only shared here.
            Store::Aos(p) => unsafe { &*p.add(self.row) },
            Store::Soa(raw) => {
                // SAFETY: the row is in range (`locate`).
                let v = self.scratch.insert(unsafe { soa_read(raw, self.row) });
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
    pub(crate) unsafe fn exclusive<'a>(&mut self) -> &'a mut T {
        // SAFETY: the caller's contract.
        unsafe { self.stamp(self.row) };
        match &self.store {
            // SAFETY: the row is in range and no other reference to it exists (the alias check
            // at resolve; each row is visited once).
            Store::Aos(p) => unsafe { &mut *p.add(self.row) },
            Store::Soa(raw) => {
                // SAFETY: as in `shared`.
                let v = self.scratch.insert(unsafe { soa_read(raw, self.row) });
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
    pub(crate) unsafe fn write_back(&mut self) {
        // By reference: the field-SoA parts are half a kilobyte, not to be copied per row.
        if let Store::Soa(raw) = &self.store {
            if let Some(v) = self.scratch.take() {
                // SAFETY: the caller's contract.
                unsafe { soa_write(raw, self.row, &v) };
            }
        }
    }
}

/// Reads field-SoA row `row`: through the component's own field-SoA impl when it has one
/// (statically, inlined), else through the codec captured at opt-in.
///
/// # Safety
/// The parts are valid and `row` is below the column's length; no `&mut` to the row is live.
#[inline]
unsafe fn soa_read<T: Component>(raw: &SoaRaw<T>, row: usize) -> T {
    // SAFETY: the caller's contract.
    match T::soa_read(unsafe { raw.row(row) }) {
        Some(v) => v,
        // SAFETY: the caller's contract.
        None => unsafe { raw.gather(row) },
    }
}

/// Writes `value` into field-SoA row `row` (see [`soa_read`]).
///
/// # Safety
/// As for `soa_read`, and no other reference to the row is live (the row is this query's
/// alone: its chunk's, in a parallel query).
#[inline]
unsafe fn soa_write<T: Component>(raw: &SoaRaw<T>, row: usize, value: &T) {
    // SAFETY: the caller's contract.
    if !value.soa_write(unsafe { raw.row_mut(row) }) {
        // SAFETY: the caller's contract.
        unsafe { raw.scatter(row, value) };
    }
}
