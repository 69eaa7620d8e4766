//! Pair queries where either component is stored field-SoA: the same `for_each_mut2` a game
//! writes for AoS components, over any mix of layouts.
//!
//! Owns: [`PairSide`], one component's rows in either layout, and the mixed-layout loop.
//! Must never: visit an entity that lacks either component, or leave a field-SoA row
//! half-written (each row is read whole into a `T`, handed to the closure, and written back
//! whole).
//!
//! Cost, stated: a field-SoA row is gathered from and scattered back to its field columns
//! through function pointers captured at opt-in (the query's bounds are only `Component`), so
//! this path is for convenience, not speed: the `f32x8` kernels over `lend_soa`/`lend_soa_pair`
//! are the fast path for field-SoA data (docs/simd.md). Two AoS components take the query's
//! linear-sweep path instead.

use super::column::{AosColumn, ErasedColumn, SparseIndex};
use super::component::Component;
use super::entity::Entity;
use super::query::{Filter, PairQueryError};
use super::soa::{SoaColumn, SoaRowsMut};
use super::World;
use crate::world::ColumnLayout;

/// One component's rows in either layout.
pub(crate) enum PairSide<'w, T> {
    /// Dense values.
    Aos {
        entities: &'w [Entity],
        values: &'w mut [T],
        index: &'w SparseIndex,
    },
    /// Field columns.
    Soa(SoaRowsMut<'w, T>),
}

impl<'w, T: Component> PairSide<'w, T> {
    /// `T`'s column as a side (records one query of `rows` rows on it).
    fn of(column: &'w mut Box<dyn ErasedColumn>, rows: usize) -> Self {
        if column.as_any().is::<AosColumn<T>>() {
            let c = column
                .as_any_mut()
                .downcast_mut::<AosColumn<T>>()
                .expect("type checked above");
            c.access_counters().record(rows);
            PairSide::Aos {
                entities: &c.entities,
                values: &mut c.values,
                index: &c.index,
            }
        } else {
            let c = column
                .as_any_mut()
                .downcast_mut::<SoaColumn<T>>()
                .expect("a column of T is AoS or field-SoA (broken invariant)");
            PairSide::Soa(c.rows_mut(rows))
        }
    }

    fn entities(&self) -> &[Entity] {
        match self {
            PairSide::Aos { entities, .. } => entities,
            PairSide::Soa(s) => s.entities,
        }
    }

    fn index(&self) -> &SparseIndex {
        match self {
            PairSide::Aos { index, .. } => index,
            PairSide::Soa(s) => s.index,
        }
    }

    /// Calls `g` with row `row` as a `&mut T` (a field-SoA row is read whole and written
    /// back whole afterwards).
    #[inline]
    fn with_row<R>(&mut self, row: usize, g: impl FnOnce(&mut T) -> R) -> R {
        match self {
            PairSide::Aos { values, .. } => g(&mut values[row]),
            PairSide::Soa(s) => {
                let mut v = (s.io.read)(s.table, row);
                let r = g(&mut v);
                (s.io.write)(s.table, row, &v);
                r
            }
        }
    }
}

impl World {
    /// Whether `T` is stored field-SoA.
    pub(crate) fn is_field_soa<T: Component>(&self) -> bool {
        self.column_index::<T>()
            .is_some_and(|i| self.columns[i].layout() == ColumnLayout::FieldSoa)
    }

    /// `for_each_mut2_filtered` when either component is field-SoA (see the module docs).
    pub(crate) fn for_each_mut2_mixed<A: Component, B: Component>(
        &mut self,
        filter: &Filter,
        mut f: impl FnMut(Entity, &mut A, &mut B),
    ) -> Result<usize, PairQueryError> {
        let Some(split) = self.split_pair::<A, B>(filter)? else {
            return Ok(0);
        };
        let rows = split.a.len();
        let mut a = PairSide::<A>::of(split.a, rows);
        let mut b = PairSide::<B>::of(split.b, rows);
        let conditions = split.filter;
        let filtered = conditions.is_some();
        let mut visited = 0;
        for i in 0..rows {
            let e = a.entities()[i];
            let j = if b.entities().get(i) == Some(&e) {
                i
            } else if let Some(r) = b.index().row(e) {
                r
            } else {
                continue;
            };
            if filtered && !conditions.passes(e) {
                continue;
            }
            a.with_row(i, |va| b.with_row(j, |vb| f(e, va, vb)));
            visited += 1;
        }
        Ok(visited)
    }
}
