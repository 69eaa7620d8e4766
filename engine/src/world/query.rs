//! Queries: borrowing component columns densely, alone or joined with a second column.
//!
//! Owns: [`ColumnRef`], [`ColumnMut`], the pair iterators, and the `World` methods that hand them
//! out. Must never: hand out a mutable borrow without bumping the component's domains (a cached
//! view would miss the write), or alias one column mutably and shared at once.
//!
//! Every query records itself in the column's access telemetry (once per query, from the column
//! length), and a mutable query bumps the component's domain epochs when it is handed out.

use std::any::TypeId;

use super::column::{AosColumn, ErasedColumn};
use super::component::{AliasedQuery, Component, WrongLayout};
use super::entity::Entity;
use super::World;

/// A shared borrow of one component's dense column.
#[derive(Debug)]
pub struct ColumnRef<'w, T> {
    entities: &'w [Entity],
    values: &'w [T],
}

impl<'w, T> ColumnRef<'w, T> {
    /// The owning entities, row by row.
    pub fn entities(&self) -> &'w [Entity] {
        self.entities
    }
    /// The values, row by row (same order as [`entities`](Self::entities)).
    pub fn values(&self) -> &'w [T] {
        self.values
    }
    /// Rows in the column.
    pub fn len(&self) -> usize {
        self.values.len()
    }
    /// Whether the column is empty.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
    /// `(entity, &value)` row by row.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (Entity, &'w T)> + 'w {
        self.entities.iter().copied().zip(self.values.iter())
    }
}

/// A mutable borrow of one component's dense column (values mutable, entities not).
#[derive(Debug)]
pub struct ColumnMut<'w, T> {
    entities: &'w [Entity],
    values: &'w mut [T],
}

impl<T> ColumnMut<'_, T> {
    /// The owning entities, row by row.
    pub fn entities(&self) -> &[Entity] {
        self.entities
    }
    /// The values, row by row, mutably.
    pub fn values_mut(&mut self) -> &mut [T] {
        self.values
    }
    /// The values, row by row.
    pub fn values(&self) -> &[T] {
        self.values
    }
    /// Rows in the column.
    pub fn len(&self) -> usize {
        self.values.len()
    }
    /// Whether the column is empty.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
    /// `(entity, &mut value)` row by row.
    pub fn iter_mut(&mut self) -> impl ExactSizeIterator<Item = (Entity, &mut T)> + '_ {
        self.entities.iter().copied().zip(self.values.iter_mut())
    }
}

impl World {
    /// The AoS column of `T`, or `None` when `T` was never stored; `WrongLayout` when `T` lives
    /// in field-SoA columns.
    fn aos<T: Component>(&self) -> Result<Option<&AosColumn<T>>, WrongLayout> {
        let Some(&i) = self.by_type.get(&TypeId::of::<T>()) else {
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
    ) -> WrongLayout {
        WrongLayout {
            component: T::NAME,
            actual: self.columns[i].layout().name(),
            requested,
        }
    }

    /// Borrows `T`'s column for reading (empty when no entity has `T`).
    pub fn column<T: Component>(&self) -> Result<ColumnRef<'_, T>, WrongLayout> {
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

    /// Borrows `T`'s column for writing; bumps `T::DOMAINS` (the caller may write any row).
    pub fn column_mut<T: Component>(&mut self) -> Result<ColumnMut<'_, T>, WrongLayout> {
        let Some(&i) = self.by_type.get(&TypeId::of::<T>()) else {
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
        Ok(ColumnMut {
            entities: &c.entities,
            values: &mut c.values,
        })
    }

    /// Every `(entity, &A, &B)` for entities that have both; iterates `A`'s column and probes
    /// `B`'s (put the rarer component first).
    pub fn query_pair<A: Component, B: Component>(
        &self,
    ) -> Result<impl Iterator<Item = (Entity, &A, &B)> + '_, WrongLayout> {
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

    /// Every `(entity, &mut A, &B)` for entities that have both; bumps `A::DOMAINS`.
    /// `A` and `B` must differ ([`AliasedQuery`] otherwise).
    pub fn query_pair_mut<A: Component, B: Component>(
        &mut self,
    ) -> Result<impl Iterator<Item = (Entity, &mut A, &B)> + '_, PairQueryError> {
        if TypeId::of::<A>() == TypeId::of::<B>() {
            return Err(AliasedQuery { component: A::NAME }.into());
        }
        self.aos::<A>()?;
        self.aos::<B>()?;
        let ia = self.by_type.get(&TypeId::of::<A>()).copied();
        let ib = self.by_type.get(&TypeId::of::<B>()).copied();
        let (ia, ib) = match (ia, ib) {
            (Some(ia), Some(ib)) => (ia, ib),
            _ => return Ok(PairMutIter::empty()),
        };
        self.epochs.bump(A::DOMAINS);
        let (a, b) = two_aos_mut::<A, B>(&mut self.columns, ia, ib);
        let b = &*b;
        Ok(PairMutIter {
            inner: Some((a.entities.iter().zip(a.values.iter_mut()), b)),
        })
    }
}

impl World {
    /// Calls `f(entity, &mut a, &mut b)` for every entity that has both `A` and `B`, writing
    /// both in one loop; returns how many it visited. Bumps `A::DOMAINS` and `B::DOMAINS`.
    /// `A` and `B` must differ ([`AliasedQuery`] otherwise) and be stored AoS
    /// ([`WrongLayout`] otherwise: a field-SoA component is swept by the kernels).
    ///
    /// Walks `A`'s dense rows (put the rarer component first). The leading rows where `B`'s row
    /// at the same index holds the same entity (all of them when the components were inserted
    /// together, or after [`World::compact`]) run as two linear sweeps with no per-row check;
    /// that count is cached per pair of columns and recounted only after a row was added,
    /// removed or reordered in either. Each later row uses `B`'s row at the same index when it
    /// holds the same entity, else `B`'s sparse index (one indexed load).
    ///
    /// ```
    /// # use lanegraph::world::{Component, Domain, DomainSet, StateHash, StateHasher, World};
    /// # #[derive(Debug, Clone, Copy, PartialEq)] struct Pos(f32);
    /// # #[derive(Debug, Clone, Copy, PartialEq)] struct Vel(f32);
    /// # impl StateHash for Pos { fn hash_state(&self, h: &mut StateHasher) { self.0.hash_state(h) } }
    /// # impl StateHash for Vel { fn hash_state(&self, h: &mut StateHasher) { self.0.hash_state(h) } }
    /// # impl Component for Pos { const NAME: &'static str = "Pos"; const DOMAINS: DomainSet = DomainSet::of(Domain::TRANSFORM); }
    /// # impl Component for Vel { const NAME: &'static str = "Vel"; const DOMAINS: DomainSet = DomainSet::of(Domain::TRANSFORM); }
    /// let mut world = World::new();
    /// let e = world.spawn();
    /// world.insert(e, Pos(120.0)).unwrap();
    /// world.insert(e, Vel(5.0)).unwrap();
    /// let dt = 0.5;
    /// world
    ///     .for_each_mut2::<Pos, Vel>(|_, p, v| {
    ///         v.0 = v.0 - 9.81 * dt;
    ///         p.0 = p.0 + v.0 * dt;
    ///         if p.0 > 100.0 {
    ///             p.0 = 100.0;
    ///             v.0 = -v.0;
    ///         }
    ///     })
    ///     .unwrap();
    /// assert_eq!(*world.get::<Pos>(e).unwrap(), Pos(100.0));
    /// assert_eq!(*world.get::<Vel>(e).unwrap(), Vel(-(5.0 - 9.81 * 0.5)));
    /// ```
    pub fn for_each_mut2<A: Component, B: Component>(
        &mut self,
        mut f: impl FnMut(Entity, &mut A, &mut B),
    ) -> Result<usize, PairQueryError> {
        if TypeId::of::<A>() == TypeId::of::<B>() {
            return Err(AliasedQuery { component: A::NAME }.into());
        }
        self.aos::<A>()?;
        self.aos::<B>()?;
        let ia = self.by_type.get(&TypeId::of::<A>()).copied();
        let ib = self.by_type.get(&TypeId::of::<B>()).copied();
        let (Some(ia), Some(ib)) = (ia, ib) else {
            return Ok(0);
        };
        self.epochs.bump(A::DOMAINS.union(B::DOMAINS));
        let (a, b) = two_aos_mut::<A, B>(&mut self.columns, ia, ib);
        // How many leading rows hold the same entity in both: cached per column pair, and
        // recounted only when either column's row order changed since.
        let gens = (a.order_gen, b.order_gen);
        let aligned = match self.pair_rows.get(&(ia, ib)) {
            Some(&(ga, gb, n)) if (ga, gb) == gens => n,
            _ => {
                let n = a
                    .entities
                    .iter()
                    .zip(&b.entities)
                    .take_while(|(x, y)| x == y)
                    .count();
                self.pair_rows.insert((ia, ib), (gens.0, gens.1, n));
                n
            }
        };
        let AosColumn {
            entities: b_entities,
            values: b_values,
            index: b_index,
            ..
        } = b;
        // The aligned rows: two linear sweeps, no per-row check.
        let (a_head, a_tail) = a.values.split_at_mut(aligned);
        for ((&e, va), vb) in a.entities.iter().zip(a_head).zip(b_values.iter_mut()) {
            f(e, va, vb);
        }
        let mut visited = aligned;
        for (i, (&e, va)) in a.entities[aligned..].iter().zip(a_tail).enumerate() {
            let i = i + aligned;
            let row = if b_entities.get(i) == Some(&e) {
                i
            } else if let Some(r) = b_index.row(e) {
                r
            } else {
                continue;
            };
            f(e, va, &mut b_values[row]);
            visited += 1;
        }
        Ok(visited)
    }
}

/// The AoS columns at two distinct indices `ia != ib`, both mutably (the column list is split
/// so the borrows are disjoint), each recording one query of `A`'s row count. The caller has
/// checked both layouts and the types (`World::aos`).
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

/// Why a mutable pair query could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PairQueryError {
    /// `A` and `B` are the same component.
    #[error(transparent)]
    Aliased(#[from] AliasedQuery),
    /// One of them is stored field-SoA.
    #[error(transparent)]
    WrongLayout(#[from] WrongLayout),
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
