//! Which entities a typed query keeps: [`QueryFilter`] ([`With`], [`Without`], [`Changed`] and
//! tuples of 1-4 of them).
//!
//! Owns: the filters. Must never: fetch a component (a filter only tests presence or change).

// Opted in from the workspace's `unsafe_code = "deny"`: see `query::data`'s module docs (raw
// parts resolved once per query; each unsafe block states why its pointer is valid and
// unaliased).
#![allow(unsafe_code)]

use std::marker::PhantomData;
use std::sync::atomic::Ordering;

use crate::world::change_ticks::{RawTicks, CHUNK_ROWS};
use crate::world::component::Component;
use crate::world::entity::Entity;

use super::fetch::*;

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
    /// `matches` for the driver's row `row` (whose entity is `e`): a filter over the driving
    /// column reads the row directly instead of finding it by slot.
    ///
    /// # Safety
    /// As for `matches`; `row` is `e`'s row in the driver `d`.
    #[doc(hidden)]
    #[inline(always)]
    unsafe fn matches_row(f: &Self::Fetch, e: Entity, _d: &Driver, _row: usize) -> bool {
        // SAFETY: forwarded contract.
        unsafe { Self::matches(f, e) }
    }
    /// What the filter says of the driver's rows `start..end`, all within one chunk of
    /// `CHUNK_ROWS` rows: none match, all do, these do (bit `i`: row `start + i`), or ask
    /// each row (`matches_row`).
    ///
    /// # Safety
    /// The parts are valid and `d` is the query's driver; `start < end <= d.rows`, within one
    /// chunk.
    #[doc(hidden)]
    #[inline(always)]
    unsafe fn window(_: &Self::Fetch, _: &Driver, _start: usize, _end: usize) -> Window {
        Window::Rows
    }
    /// Whether `window` may answer other than `Rows` (the row loops ask per chunk only then).
    #[doc(hidden)]
    const SKIPS: bool = false;
}

/// What a filter says of a window of at most one chunk of the driver's rows.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// No row matches.
    None,
    /// Every row matches.
    All,
    /// Bit `i` set: row `start + i` matches (and no other filter needs asking).
    Mask(u64),
    /// Ask each row.
    Rows,
}

impl Window {
    /// What two filters that must both pass say together.
    #[inline(always)]
    fn and(self, other: Window) -> Window {
        match (self, other) {
            (Window::None, _) | (_, Window::None) => Window::None,
            (Window::All, w) | (w, Window::All) => w,
            (Window::Mask(a), Window::Mask(b)) => Window::Mask(a & b),
            _ => Window::Rows,
        }
    }
}

/// Keeps entities that have a `T` (its value is not read).
pub struct With<T>(PhantomData<fn() -> T>);

/// Keeps entities that have no `T`.
pub struct Without<T>(PhantomData<fn() -> T>);

/// Keeps entities whose `T` was added or handed out mutably since the reader last looked: in
/// a system, since that system's previous run ended (every row, on its first run); outside
/// systems, since the latest step began. "Handed out mutably" counts a `&mut T` query term, an
/// `insert`, a `get_mut`, and every row of a whole-column accessor (`lend_soa`,
/// `par_soa_chunks2`), whether or not the value moved, as in bevy.
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
    type Fetch = (Option<(usize, RawRows, RawTicks)>, u64);
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
            Some(r) => ticks.is_none() || unsafe { *ticks.rows.add(r) } > f.1,
            None => false,
        }
    }
    #[inline(always)]
    unsafe fn matches_row(f: &Self::Fetch, e: Entity, d: &Driver, row: usize) -> bool {
        match &f.0 {
            Some((col, _, ticks)) if *col == d.col => {
                ticks.is_none()
                    // SAFETY: the column keeps ticks, one per row, and `row` is one of its
                    // rows (it drives the query); written only after the row passed, on this
                    // thread.
                    || unsafe { *ticks.rows.add(row) } > f.1
            }
            // SAFETY: forwarded contract.
            _ => unsafe { Self::matches(f, e) },
        }
    }
    #[inline]
    unsafe fn window(f: &Self::Fetch, d: &Driver, start: usize, end: usize) -> Window {
        let Some((col, _, ticks)) = &f.0 else {
            return Window::None;
        };
        if *col != d.col {
            return Window::Rows;
        }
        if ticks.is_none() {
            return Window::All;
        }
        let (chunk, seen) = (start / CHUNK_ROWS, f.1);
        // SAFETY: the column keeps ticks (a chunk per 64 rows, a tick per row) and drives the
        // query, so `start..end` are its rows, in chunk `chunk`; the bounds are atomics other
        // jobs of a parallel query may store.
        unsafe {
            if (*ticks.chunks.add(chunk)).load(Ordering::Relaxed) <= seen {
                return Window::None;
            }
            if (*ticks.mins.add(chunk)).load(Ordering::Relaxed) > seen {
                return Window::All;
            }
            let rows = std::slice::from_raw_parts(ticks.rows.add(start), end - start);
            // A branch per row: rows written are few in a chunk that did not change whole,
            // so the branch is predicted and the loop runs at a compare per row.
            let mut mask = 0u64;
            for (i, &t) in rows.iter().enumerate() {
                if t > seen {
                    mask |= 1 << i;
                }
            }
            Window::Mask(mask)
        }
    }
    const SKIPS: bool = true;
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
            #[inline(always)]
            unsafe fn matches_row(f: &Self::Fetch, e: Entity, d: &Driver, row: usize) -> bool {
                // SAFETY: forwarded contract.
                unsafe { true $(&& $name::matches_row(&f.$idx, e, d, row))+ }
            }
            #[inline]
            unsafe fn window(f: &Self::Fetch, d: &Driver, start: usize, end: usize) -> Window {
                // SAFETY: forwarded contract.
                unsafe { Window::All $(.and($name::window(&f.$idx, d, start, end)))+ }
            }
            const SKIPS: bool = false $(|| $name::SKIPS)+;
        }
    };
}

filter_tuple!(A 0);
filter_tuple!(A 0, B 1);
filter_tuple!(A 0, B 1, C 2);
filter_tuple!(A 0, B 1, C 2, D 3);
