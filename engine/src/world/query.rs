//! Queries: borrowing component columns densely, alone or joined with a second column.
//!
//! Owns: the pair iterators and the `World` methods that hand out column borrows
//! ([`ColumnRef`], [`ColumnMut`], defined in `column_refs`). Must never: hand out a mutable borrow without bumping the component's domains (a cached
//! view would miss the write), or alias one column mutably and shared at once.
//!
//! Every query records itself in the column's access telemetry (once per query, from the column
//! length), and a mutable query bumps the component's domain epochs when it is handed out.

use std::any::TypeId;
use std::collections::HashMap;

use super::column::{AosColumn, ErasedColumn, SparseIndex};
use super::component::Component;
use super::entity::Entity;
use super::mixed_query::mixed_rows;
use super::World;

pub use super::column_refs::{ColumnMut, ColumnRef};
use crate::world::error::WorldError;

impl World {
    /// The AoS column of `T`, or `None` when `T` was never stored; `WorldError` when `T` lives
    /// in field-SoA columns.
    fn aos<T: Component>(&self) -> Result<Option<&AosColumn<T>>, WorldError> {
        let Some(i) = self.ids.get::<T>() else {
            return Ok(None);
        };
        match self.columns[i].as_any().downcast_ref::<AosColumn<T>>() {
            Some(c) => Ok(Some(c)),
            None => Err(self.wrong_layout::<T>(i, "AoS")),
        }
    }

    pub(crate) fn wrong_layout<T: Component>(
        &self,
        i: usize,
        requested: &'static str,
    ) -> WorldError {
        WorldError::WrongLayout {
            component: T::NAME,
            actual: self.columns[i].layout().name(),
            requested,
        }
    }

    /// The body of [`WorldHooks::column`](crate::hooks::WorldHooks::column), which documents it.
    pub(crate) fn column<T: Component>(&self) -> Result<ColumnRef<'_, T>, WorldError> {
        Ok(match self.aos::<T>()? {
            Some(c) => {
                c.access_counters().record(c.values.len());
                ColumnRef {
                    entities: &c.entities,
                    values: &c.values,
                }
            }
            None => ColumnRef {
                entities: &[],
                values: &[],
            },
        })
    }

    /// The body of [`WorldHooks::column_mut`](crate::hooks::WorldHooks::column_mut), which documents it.
    pub(crate) fn column_mut<T: Component>(&mut self) -> Result<ColumnMut<'_, T>, WorldError> {
        let Some(i) = self.ids.get::<T>() else {
            return Ok(ColumnMut {
                entities: &[],
                values: &mut [],
            });
        };
        if self.columns[i]
            .as_any()
            .downcast_ref::<AosColumn<T>>()
            .is_none()
        {
            return Err(self.wrong_layout::<T>(i, "AoS"));
        }
        self.epochs.bump(T::DOMAINS);
        let c = self.columns[i]
            .as_any_mut()
            .downcast_mut::<AosColumn<T>>()
            .expect("column type checked above");
        c.access_counters().record(c.values.len());
        c.ticks.stamp_all();
        Ok(ColumnMut {
            entities: &c.entities,
            values: &mut c.values,
        })
    }

    /// The body of [`WorldHooks::query_pair`](crate::hooks::WorldHooks::query_pair), which documents it.
    pub(crate) fn query_pair<A: Component, B: Component>(
        &self,
    ) -> Result<impl Iterator<Item = (Entity, &A, &B)> + '_, WorldError> {
        let a = self.aos::<A>()?;
        let b = self.aos::<B>()?;
        let rows = a.map_or(0, |a| a.values.len());
        if let (Some(a), Some(b)) = (a, b) {
            a.access_counters().record(rows);
            b.access_counters().record(rows);
        }
        let pairs = a.zip(b).into_iter().flat_map(|(a, b)| {
            a.entities
                .iter()
                .zip(a.values.iter())
                .filter_map(move |(&e, va)| b.get(e).map(|vb| (e, va, vb)))
        });
        Ok(pairs)
    }

    /// The body of [`WorldHooks::query_pair_mut`](crate::hooks::WorldHooks::query_pair_mut), which documents it.
    pub(crate) fn query_pair_mut<A: Component, B: Component>(
        &mut self,
    ) -> Result<impl Iterator<Item = (Entity, &mut A, &B)> + '_, WorldError> {
        if TypeId::of::<A>() == TypeId::of::<B>() {
            return Err(WorldError::AliasedQuery { component: A::NAME });
        }
        self.aos::<A>()?;
        self.aos::<B>()?;
        let ia = self.ids.get::<A>();
        let ib = self.ids.get::<B>();
        let (ia, ib) = match (ia, ib) {
            (Some(ia), Some(ib)) => (ia, ib),
            _ => return Ok(PairMutIter::empty()),
        };
        self.epochs.bump(A::DOMAINS);
        let (a, b) = two_aos_mut::<A, B>(&mut self.columns, ia, ib);
        a.ticks.stamp_all();
        let b = &*b;
        Ok(PairMutIter {
            inner: Some((a.entities.iter().zip(a.values.iter_mut()), b)),
        })
    }
}

impl World {
    /// The body of [`WorldHooks::for_each_mut2`](crate::hooks::WorldHooks::for_each_mut2), which documents it.
    pub(crate) fn for_each_mut2<A: Component, B: Component>(
        &mut self,
        f: impl FnMut(Entity, &mut A, &mut B),
    ) -> Result<usize, WorldError> {
        self.for_each_mut2_filtered(&Filter::new(), f)
    }

    /// The body of [`WorldHooks::for_each_mut2_filtered`](crate::hooks::WorldHooks::for_each_mut2_filtered), which documents it.
    pub(crate) fn for_each_mut2_filtered<A: Component, B: Component>(
        &mut self,
        filter: &Filter,
        mut f: impl FnMut(Entity, &mut A, &mut B),
    ) -> Result<usize, WorldError> {
        let parts = match self.pair_columns::<A, B>(filter)? {
            None => return Ok(0),
            Some(PairColumns::Mixed(split)) => return Ok(mixed_rows(split, f)),
            Some(PairColumns::Aos(parts)) => parts,
        };
        let aligned = parts.aligned;
        let visited = sweep_aligned(
            &parts.a_entities[..aligned],
            &mut parts.a_values[..aligned],
            &mut parts.b_values[..aligned],
            parts.filter,
            &mut f,
        );
        Ok(visited + tail_rows(parts, &mut f))
    }

    /// The checked, borrowed columns of a mutable pair query, by layout: both AoS with how
    /// many leading rows are aligned (the linear-sweep path), or either field-SoA (rows read
    /// and written whole, `mixed_query`). Bumps both components' domains. `None` when either
    /// component (or a `with` filter component) was never stored.
    pub(crate) fn pair_columns<A: Component, B: Component>(
        &mut self,
        filter: &Filter,
    ) -> Result<Option<PairColumns<'_, A, B>>, WorldError> {
        let Some(split) = self.split_pair::<A, B>(filter)? else {
            return Ok(None);
        };
        if !(split.a.as_any().is::<AosColumn<A>>() && split.b.as_any().is::<AosColumn<B>>()) {
            return Ok(Some(PairColumns::Mixed(split)));
        }
        let SplitPair {
            a: ca,
            b: cb,
            ia,
            ib,
            filter,
            pair_rows,
        } = split;
        let (a, b) = downcast_pair::<A, B>(ca, cb);
        // Whole-column write access: every row counts as changed (`change_ticks`).
        a.ticks.stamp_all();
        b.ticks.stamp_all();
        let aligned = aligned_rows(
            pair_rows,
            (ia, a.order_gen, &a.entities),
            (ib, b.order_gen, &b.entities),
        );
        Ok(Some(PairColumns::Aos(PairParts {
            a_entities: &a.entities,
            a_values: &mut a.values,
            b_entities: &b.entities,
            b_values: &mut b.values,
            b_index: &b.index,
            aligned,
            filter,
        })))
    }

    /// The layout-independent part of a mutable pair query: checks `A != B` and the filter,
    /// borrows `A`'s and `B`'s columns mutably and the filter's shared, and bumps both
    /// components' domains. `None` when either component (or a `with` filter component) was
    /// never stored.
    pub(crate) fn split_pair<A: Component, B: Component>(
        &mut self,
        filter: &Filter,
    ) -> Result<Option<SplitPair<'_>>, WorldError> {
        let Some(split) = self.split_columns([query_type::<A>(), query_type::<B>()], filter)?
        else {
            return Ok(None);
        };
        let [(a, ia), (b, ib)] = split.columns;
        Ok(Some(SplitPair {
            a,
            b,
            ia,
            ib,
            filter: split.filter,
            pair_rows: split.pair_rows,
        }))
    }

    /// [`World::split_pair`] for `N` components: checks they are distinct and not named by the
    /// filter, borrows their columns mutably (in the order given, with their indices) and the
    /// filter's shared, and bumps every component's domains. `None` when any component (or a
    /// `with` filter component) was never stored.
    pub(crate) fn split_columns<const N: usize>(
        &mut self,
        types: [QueryType; N],
        filter: &Filter,
    ) -> Result<Option<SplitColumns<'_, N>>, WorldError> {
        for (k, t) in types.iter().enumerate() {
            if types[..k].iter().any(|u| u.id == t.id) {
                return Err(WorldError::AliasedQuery { component: t.name });
            }
        }
        if filter.overflow {
            return Err(WorldError::TooManyFilters { max: Filter::MAX });
        }
        for t in filter.with.iter().chain(&filter.without).flatten() {
            if types.iter().any(|u| u.id == t.0) {
                return Err(WorldError::AliasedQuery { component: t.1 });
            }
        }
        let World {
            columns,
            ids,
            epochs,
            pair_rows,
            ..
        } = self;
        let idx = types.map(|t| ids.get_type(t.id));
        if idx.iter().any(Option::is_none) {
            return Ok(None);
        }
        let idx = idx.map(|i| i.unwrap_or(usize::MAX));
        let index_of = |t: &Option<(TypeId, &'static str)>| t.map(|t| ids.get_type(t.0));
        let with_idx = filter.with.each_ref().map(index_of);
        let without_idx = filter.without.each_ref().map(index_of);
        if with_idx.iter().any(|w| matches!(w, Some(None))) {
            return Ok(None);
        }
        epochs.bump(
            types
                .iter()
                .fold(crate::world::DomainSet::EMPTY, |d, t| d.union(t.domains)),
        );
        // Borrow the queried columns mutably and the filter columns shared, in one pass.
        let mut mine: [Option<&mut Box<dyn ErasedColumn>>; N] = std::array::from_fn(|_| None);
        let mut with: [Option<&dyn ErasedColumn>; Filter::MAX] = [None; Filter::MAX];
        let mut without: [Option<&dyn ErasedColumn>; Filter::MAX] = [None; Filter::MAX];
        for (i, c) in columns.iter_mut().enumerate() {
            if let Some(k) = idx.iter().position(|&x| x == i) {
                mine[k] = Some(c);
            } else {
                let c: &dyn ErasedColumn = &**c;
                for (slot, w) in with.iter_mut().zip(&with_idx) {
                    if *w == Some(Some(i)) {
                        *slot = Some(c);
                    }
                }
                for (slot, w) in without.iter_mut().zip(&without_idx) {
                    if *w == Some(Some(i)) {
                        *slot = Some(c);
                    }
                }
            }
        }
        let mut k = 0;
        let columns = mine.map(|c| {
            let out = (c.expect("every index comes from ids"), idx[k]);
            k += 1;
            out
        });
        Ok(Some(SplitColumns {
            columns,
            filter: FilterColumns { with, without },
            pair_rows,
        }))
    }
}

/// How many leading rows of two AoS columns hold the same entity: cached per column pair
/// (`(index, order generation, entities)` each), recounted only when either column's row
/// order changed since.
pub(crate) fn aligned_rows(
    cache: &mut HashMap<(usize, usize), (u64, u64, usize)>,
    a: (usize, u64, &[Entity]),
    b: (usize, u64, &[Entity]),
) -> usize {
    match cache.get(&(a.0, b.0)) {
        Some(&(ga, gb, n)) if (ga, gb) == (a.1, b.1) => n,
        _ => {
            let n = a.2.iter().zip(b.2).take_while(|(x, y)| x == y).count();
            cache.insert((a.0, b.0), (a.1, b.1, n));
            n
        }
    }
}

/// A queried component's identity (see [`World::split_columns`]).
#[derive(Clone, Copy)]
pub(crate) struct QueryType {
    id: TypeId,
    name: &'static str,
    domains: crate::world::DomainSet,
}

/// `T` as a queried component.
pub(crate) fn query_type<T: Component>() -> QueryType {
    QueryType {
        id: TypeId::of::<T>(),
        name: T::NAME,
        domains: T::DOMAINS,
    }
}

/// `N` components' columns borrowed for a query, with their indices (see
/// [`World::split_columns`]).
pub(crate) struct SplitColumns<'w, const N: usize> {
    pub(crate) columns: [(&'w mut Box<dyn ErasedColumn>, usize); N],
    pub(crate) filter: FilterColumns<'w>,
    pub(crate) pair_rows: &'w mut HashMap<(usize, usize), (u64, u64, usize)>,
}

/// `A`'s and `B`'s columns borrowed for a pair query (see [`World::split_pair`]).
pub(crate) struct SplitPair<'w> {
    pub(crate) a: &'w mut Box<dyn ErasedColumn>,
    pub(crate) b: &'w mut Box<dyn ErasedColumn>,
    pub(crate) ia: usize,
    pub(crate) ib: usize,
    pub(crate) filter: FilterColumns<'w>,
    pub(crate) pair_rows: &'w mut HashMap<(usize, usize), (u64, u64, usize)>,
}

/// A mutable pair query's columns, by layout (see [`World::pair_columns`]).
pub(crate) enum PairColumns<'w, A, B> {
    /// Both AoS.
    Aos(PairParts<'w, A, B>),
    /// Either field-SoA.
    Mixed(SplitPair<'w>),
}

/// Calls `f` on rows that hold the same entity in all three slices (the aligned head of a
/// pair query), only those passing `conditions` when it has any; returns how many it visited.
/// Unfiltered, the loop is the plain two-`Vec` loop (no per-row test).
#[inline]
pub(crate) fn sweep_aligned<A, B>(
    entities: &[Entity],
    a: &mut [A],
    b: &mut [B],
    conditions: FilterColumns<'_>,
    mut f: impl FnMut(Entity, &mut A, &mut B),
) -> usize {
    let rows = entities.iter().zip(a).zip(b);
    if conditions.is_some() {
        let mut visited = 0;
        for ((&e, va), vb) in rows {
            if conditions.passes(e) {
                f(e, va, vb);
                visited += 1;
            }
        }
        visited
    } else {
        for ((&e, va), vb) in rows {
            f(e, va, vb);
        }
        entities.len()
    }
}

/// The borrowed pieces of a mutable pair query (see [`World::pair_columns`]). Rows `..aligned`
/// of `A` and `B` hold the same entities.
pub(crate) struct PairParts<'w, A, B> {
    pub(crate) a_entities: &'w [Entity],
    pub(crate) a_values: &'w mut [A],
    pub(crate) b_entities: &'w [Entity],
    pub(crate) b_values: &'w mut [B],
    pub(crate) b_index: &'w SparseIndex,
    pub(crate) aligned: usize,
    pub(crate) filter: FilterColumns<'w>,
}

/// A filter's columns, resolved (a `without` component never stored is `None`: it excludes
/// nothing).
#[derive(Clone, Copy)]
pub(crate) struct FilterColumns<'w> {
    with: [Option<&'w dyn ErasedColumn>; Filter::MAX],
    without: [Option<&'w dyn ErasedColumn>; Filter::MAX],
}

impl FilterColumns<'_> {
    /// Whether any condition is set.
    pub(crate) fn is_some(&self) -> bool {
        self.with.iter().chain(&self.without).any(Option::is_some)
    }

    /// Whether `e` has every `with` component and no `without` one.
    #[inline]
    pub(crate) fn passes(&self, e: Entity) -> bool {
        self.with.iter().flatten().all(|c| c.contains(e))
            && !self.without.iter().flatten().any(|c| c.contains(e))
    }
}

/// The rows of `A` past the aligned ones: each uses `B`'s row at the same index when it holds
/// the same entity, else `B`'s sparse index; returns how many it visited.
pub(crate) fn tail_rows<A, B>(
    parts: PairParts<'_, A, B>,
    mut f: impl FnMut(Entity, &mut A, &mut B),
) -> usize {
    let PairParts {
        a_entities,
        a_values,
        b_entities,
        b_values,
        b_index,
        aligned,
        filter,
    } = parts;
    let filtered = filter.is_some();
    let mut visited = 0;
    let rows = a_entities[aligned..].iter().zip(&mut a_values[aligned..]);
    for (i, (&e, va)) in rows.enumerate() {
        let i = i + aligned;
        let row = if b_entities.get(i) == Some(&e) {
            i
        } else if let Some(r) = b_index.row(e) {
            r
        } else {
            continue;
        };
        if filtered && !filter.passes(e) {
            continue;
        }
        f(e, va, &mut b_values[row]);
        visited += 1;
    }
    visited
}

/// The AoS columns at two distinct indices `ia != ib`, both mutably (the column list is split
/// so the borrows are disjoint).
fn two_aos_mut<A: Component, B: Component>(
    columns: &mut [Box<dyn ErasedColumn>],
    ia: usize,
    ib: usize,
) -> (&mut AosColumn<A>, &mut AosColumn<B>) {
    let (ca, cb) = if ia < ib {
        let (lo, hi) = columns.split_at_mut(ib);
        (&mut lo[ia], &mut hi[0])
    } else {
        let (lo, hi) = columns.split_at_mut(ia);
        (&mut hi[0], &mut lo[ib])
    };
    downcast_pair(ca, cb)
}

/// Two erased columns as `A`'s and `B`'s AoS columns, each recording one query of `A`'s row
/// count. The caller has checked both layouts and the types (`World::aos`).
fn downcast_pair<'c, A: Component, B: Component>(
    ca: &'c mut Box<dyn ErasedColumn>,
    cb: &'c mut Box<dyn ErasedColumn>,
) -> (&'c mut AosColumn<A>, &'c mut AosColumn<B>) {
    let a = ca
        .as_any_mut()
        .downcast_mut::<AosColumn<A>>()
        .expect("layout checked by the caller");
    let b = cb
        .as_any_mut()
        .downcast_mut::<AosColumn<B>>()
        .expect("layout checked by the caller");
    a.access_counters().record(a.values.len());
    b.access_counters().record(a.values.len());
    (a, b)
}

/// Which other components an entity must have (`with`) or lack (`without`) to be visited by
/// [`WorldHooks::for_each_mut2_filtered`](crate::hooks::WorldHooks::for_each_mut2_filtered). Holds at most [`Filter::MAX`] of each; building it never
/// allocates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Filter {
    with: [Option<(TypeId, &'static str)>; Filter::MAX],
    without: [Option<(TypeId, &'static str)>; Filter::MAX],
    overflow: bool,
}

impl Filter {
    /// The most `with` (and, separately, `without`) components a filter holds.
    pub const MAX: usize = 4;

    /// No conditions.
    pub fn new() -> Self {
        Filter::default()
    }

    /// Entities must also have `T`.
    pub fn with<T: Component>(mut self) -> Self {
        self.overflow |= !push(&mut self.with, (TypeId::of::<T>(), T::NAME));
        self
    }

    /// Entities must not have `T`.
    pub fn without<T: Component>(mut self) -> Self {
        self.overflow |= !push(&mut self.without, (TypeId::of::<T>(), T::NAME));
        self
    }
}

/// Puts `t` in the first free slot; false when there is none.
fn push(
    slots: &mut [Option<(TypeId, &'static str)>; Filter::MAX],
    t: (TypeId, &'static str),
) -> bool {
    match slots.iter_mut().find(|s| s.is_none()) {
        Some(s) => {
            *s = Some(t);
            true
        }
        None => false,
    }
}

type PairMutInner<'w, A, B> = (
    std::iter::Zip<std::slice::Iter<'w, Entity>, std::slice::IterMut<'w, A>>,
    &'w AosColumn<B>,
);

/// The iterator of [`World::query_pair_mut`].
struct PairMutIter<'w, A, B> {
    inner: Option<PairMutInner<'w, A, B>>,
}

impl<A, B> PairMutIter<'_, A, B> {
    fn empty() -> Self {
        PairMutIter { inner: None }
    }
}

impl<'w, A: Send + Sync + 'static, B: Send + Sync + 'static> Iterator for PairMutIter<'w, A, B> {
    type Item = (Entity, &'w mut A, &'w B);

    fn next(&mut self) -> Option<Self::Item> {
        let (rows, b) = self.inner.as_mut()?;
        for (&e, va) in rows.by_ref() {
            if let Some(vb) = b.get(e) {
                return Some((e, va, vb));
            }
        }
        None
    }
}
