//! Pair queries where either component is stored field-SoA: the same `for_each_mut2` a game
//! writes for AoS components, over any mix of layouts.
//!
//! Owns: [`QuerySide`], one component's rows in either layout (also the three-component
//! query's), and the mixed-layout pair loop.
//! Must never: visit an entity that lacks either component, or leave a field-SoA row
//! half-written (each row is read whole into a `T`, handed to the closure, and written back
//! whole).
//!
//! Import cycle with `query`, kept on purpose: `query` borrows a pair's columns (`SplitPair`)
//! and hands the pairs where either side is field-SoA to the loop here, so that `query` keeps
//! only the AoS fast path; the loop needs the borrow's type to take it.
//!
//! Cost, stated: a field-SoA row is gathered from and scattered back to its field columns
//! through function pointers captured at opt-in (the query's bounds are only `Component`), so
//! this path is for convenience, not speed: the `f32x8` kernels over `lend_soa`/`lend_soa_pair`
//! are the fast path for field-SoA data (docs/simd.md). Two AoS components take the query's
//! linear-sweep path instead.

use super::column::{AosColumn, ErasedColumn, SparseIndex};
use super::component::Component;
use super::entity::Entity;
use super::query::SplitPair;
use super::soa::{SoaColumn, SoaRowsMut};

/// One component's rows in either layout.
pub(crate) enum QuerySide<'w, T> {
    /// Dense values.
    Aos {
        entities: &'w [Entity],
        values: &'w mut [T],
        index: &'w SparseIndex,
        /// The column's row-order generation (for the aligned-rows cache).
        order_gen: u64,
    },
    /// Field columns.
    Soa(SoaRowsMut<'w, T>),
}

impl<'w, T: Component> QuerySide<'w, T> {
    /// `T`'s column as a side (records one query of `rows` rows on it).
    pub(crate) fn of(column: &'w mut Box<dyn ErasedColumn>, rows: usize) -> Self {
        if column.as_any().is::<AosColumn<T>>() {
            let c = column
                .as_any_mut()
                .downcast_mut::<AosColumn<T>>()
                .expect("type checked above");
            c.access_counters().record(rows);
            c.ticks.stamp_all();
            QuerySide::Aos {
                entities: &c.entities,
                values: &mut c.values,
                index: &c.index,
                order_gen: c.order_gen,
            }
        } else {
            let c = column
                .as_any_mut()
                .downcast_mut::<SoaColumn<T>>()
                .expect("a column of T is AoS or field-SoA (broken invariant)");
            QuerySide::Soa(c.rows_mut(rows))
        }
    }

    pub(crate) fn entities(&self) -> &[Entity] {
        match self {
            QuerySide::Aos { entities, .. } => entities,
            QuerySide::Soa(s) => s.entities,
        }
    }

    pub(crate) fn index(&self) -> &SparseIndex {
        match self {
            QuerySide::Aos { index, .. } => index,
            QuerySide::Soa(s) => s.index,
        }
    }

    /// Calls `g` with row `row` as a `&mut T` (a field-SoA row is read whole and written
    /// back whole afterwards).
    #[inline]
    pub(crate) fn with_row<R>(&mut self, row: usize, g: impl FnOnce(&mut T) -> R) -> R {
        match self {
            QuerySide::Aos { values, .. } => g(&mut values[row]),
            QuerySide::Soa(s) => {
                let mut v = (s.io.read)(s.table, row);
                let r = g(&mut v);
                (s.io.write)(s.table, row, &v);
                r
            }
        }
    }
}

/// The pair query's loop when either component is field-SoA (see the module docs); returns
/// how many entities it visited.
pub(crate) fn mixed_rows<A: Component, B: Component>(
    split: SplitPair<'_>,
    mut f: impl FnMut(Entity, &mut A, &mut B),
) -> usize {
    let rows = split.a.len();
    let mut a = QuerySide::<A>::of(split.a, rows);
    let mut b = QuerySide::<B>::of(split.b, rows);
    let conditions = split.filter;
    let filtered = conditions.is_some();
    let mut visited = 0;
    for i in 0..rows {
        let e = a.entities()[i];
        let Some(j) = row_of(&b, i, e) else {
            continue;
        };
        if filtered && !conditions.passes(e) {
            continue;
        }
        a.with_row(i, |va| b.with_row(j, |vb| f(e, va, vb)));
        visited += 1;
    }
    visited
}

/// `e`'s row in `side`: row `i` when it holds `e` (aligned), else the sparse index's.
#[inline]
pub(crate) fn row_of<T: Component>(side: &QuerySide<'_, T>, i: usize, e: Entity) -> Option<usize> {
    if side.entities().get(i) == Some(&e) {
        Some(i)
    } else {
        side.index().row(e)
    }
}
