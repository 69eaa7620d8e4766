//! Borrows of one component's dense column: [`ColumnRef`] (shared) and [`ColumnMut`]
//! (exclusive), as the `World`'s column queries hand them out (`query`).
//!
//! Owns: the two borrow types and their row iterators. Must never: outlive the borrow of the
//! world that made them.

use super::entity::Entity;

/// A shared borrow of one component's dense column.
#[derive(Debug)]
pub struct ColumnRef<'w, T> {
    pub(crate) entities: &'w [Entity],
    pub(crate) values: &'w [T],
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
    pub(crate) entities: &'w [Entity],
    pub(crate) values: &'w mut [T],
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
