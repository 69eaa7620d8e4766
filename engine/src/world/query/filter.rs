//! Which entities a typed query keeps: [`QueryFilter`] ([`With`], [`Without`], [`Changed`] and
//! tuples of 1-4 of them).
//!
//! Owns: the filters. Must never: fetch a component (a filter only tests presence or change).

// Opted in from the workspace's `unsafe_code = "deny"`: see `query::data`'s module docs (raw
// parts resolved once per query; each unsafe block states why its pointer is valid and
// unaliased).
#![allow(unsafe_code)]

use std::marker::PhantomData;

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
