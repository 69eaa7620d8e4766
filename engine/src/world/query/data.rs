//! What a typed query asks for and which entities it keeps: [`QueryData`] (`&T`, `&mut T`,
//! `Option<&T>`, `Option<&mut T>`, [`Entity`] and tuples of 1-8 of them) and [`QueryFilter`]
//! ([`With`], [`Without`], [`Changed`] and tuples of 1-4), over AoS and field-SoA columns alike.
//!
//! Owns: resolving each requested component to its column once per query (as raw parts), the
//! aliasing check (`&mut T` beside any other access to `T` is [`WorldError::AliasedQuery`]), the
//! per-row lookup, and the field-SoA row codec (a row is gathered into a `T` before the closure
//! and, for `&mut T`, scattered back after it). Must never: hand one row to two `&mut`s, let an
//! item outlive the closure call it was made for (the closures take items for every lifetime,
//! so they cannot keep them), or touch a column the query did not claim.
//!
//! Why gather/scatter for field-SoA rather than a second API: whether a component is stored
//! AoS or field-SoA is a storage choice, and a system written against `&mut Position` must not
//! change when the layout does. The kernels keep their typed per-field slices for speed
//! ([`World::lend_soa`](crate::world::World::lend_soa)); a query over a field-SoA component costs one
//! gather (and one scatter when mutable) of its fields per row.

// Opted in from the workspace's `unsafe_code = "deny"`: a query holds several columns of one
// world at once, some mutably, resolved once into raw parts so that per-row access is an
// indexed load (no downcast, no borrow-checker split per column). Each unsafe block states why
// its pointer is valid and unaliased; the invariants are the alias check at resolve and "each
// driving row is visited once".
#![allow(unsafe_code)]

use crate::world::component::Component;
use crate::world::entity::Entity;

pub use super::fetch::MAX_QUERY_COMPONENTS;
pub(crate) use super::fetch::*;
pub use super::filter::{Changed, QueryFilter, With, Without};
use crate::world::error::WorldError;

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
    fn init(view: &mut ColumnsView<'_>) -> Result<Option<Self::Fetch>, WorldError>;
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
    /// The query ended after handing out `visited` items: a `&mut T` part that stamped as
    /// many rows as its column holds stamped every row, and says so to the column's chunks.
    ///
    /// # Safety
    /// The query ran over these parts and has ended; `visited` is how many items it handed out.
    #[doc(hidden)]
    unsafe fn all_stamped(_: &Self::Fetch, _visited: usize) {}
}

impl<T: Component> sealed::Data for &T {}
impl<T: Component> QueryData for &T {
    type Item<'a> = &'a T;
    type Fetch = ColumnFetch<T>;
    fn init(view: &mut ColumnsView<'_>) -> Result<Option<Self::Fetch>, WorldError> {
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
    fn init(view: &mut ColumnsView<'_>) -> Result<Option<Self::Fetch>, WorldError> {
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
        stamp.tracked()
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
    unsafe fn all_stamped(f: &Self::Fetch, visited: usize) {
        // Each item stamped one distinct row of the column: as many items as rows is all.
        if !f.ticks.is_none() && visited == f.rows.len {
            // SAFETY: forwarded contract; a tracked column has a chunk per 64 of its rows.
            unsafe { f.ticks.all_stamped(f.rows.len, f.now) };
        }
    }
}

/// An optional component's fetch: `None` when the world has no column for it.
pub struct OptionFetch<T> {
    inner: Option<ColumnFetch<T>>,
    found: bool,
}

impl<T: Component> OptionFetch<T> {
    fn resolve(view: &mut ColumnsView<'_>, mutable: bool) -> Result<Self, WorldError> {
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
    fn init(view: &mut ColumnsView<'_>) -> Result<Option<Self::Fetch>, WorldError> {
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
    fn init(view: &mut ColumnsView<'_>) -> Result<Option<Self::Fetch>, WorldError> {
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
        let stamp = f.inner.as_ref().map(|c| c.column_stamp());
        Some(
            f.aos_base()?
                .map(|(p, rows)| (p, rows, stamp.expect("a column"))),
        )
    }
    fn stamps(b: &Self::Base) -> bool {
        b.is_some_and(|(_, _, stamp)| stamp.tracked())
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
    fn init(_: &mut ColumnsView<'_>) -> Result<Option<()>, WorldError> {
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
            fn init(view: &mut ColumnsView<'_>) -> Result<Option<Self::Fetch>, WorldError> {
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
            unsafe fn all_stamped(f: &Self::Fetch, visited: usize) {
                // SAFETY: forwarded contract.
                unsafe { $($name::all_stamped(&f.$idx, visited);)+ }
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
