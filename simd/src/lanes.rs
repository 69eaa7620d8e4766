//! Mutable whole-vector access to a table's columns, and disjoint chunks of it for jobs.
//!
//! Owns: handing out `&mut [f32x8]` views of padded columns and putting [`PAD`] back into the
//! padding lanes when they end. Must never: let two live views overlap, or change a column's
//! length.
//!
//! # Protocol
//! 1. [`crate::SoaTable::lanes_mut`] borrows the table mutably and returns a [`LanesMut`] guard.
//! 2. Through the guard, [`LanesMut::fields`] returns every column as `&mut [f32x8]`, or
//!    [`LanesMut::chunks`] splits every column at the same vector boundaries into
//!    [`SoaChunkMut`]s. Each chunk owns `&mut` slices no other chunk reaches (`split_at_mut`),
//!    so chunks are `Send` and can be moved into jobs on different threads at once; the borrow
//!    checker ends them all before the guard can be dropped.
//! 3. Kernels run over whole vectors, so the padding lanes of the last vector may be written.
//! 4. Dropping the guard writes [`PAD`] into every column's padding lanes again. (If the guard is
//!    leaked with `mem::forget` the padding keeps whatever a kernel wrote: a wrong value in the
//!    padding, never unsoundness; no code relies on padding for memory safety.)

use crate::column::{Column, LANES, PAD};
use crate::error::{FieldCountMismatch, ZeroChunkSize};
use wide::f32x8;

/// Mutable whole-vector access to all columns of one table; restores padding on drop.
pub struct LanesMut<'a> {
    columns: &'a mut [Column],
    rows: usize,
}

impl<'a> LanesMut<'a> {
    pub(crate) fn new(columns: &'a mut [Column], rows: usize) -> Self {
        LanesMut { columns, rows }
    }

    /// Rows of data (the last vector's lanes past this are padding).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Vectors per column.
    pub fn lane_count(&self) -> usize {
        self.rows.div_ceil(LANES)
    }

    /// Column `index` as mutable vectors; `None` when out of range.
    pub fn field(&mut self, index: usize) -> Option<&mut [f32x8]> {
        self.columns.get_mut(index).map(Column::lanes_mut_raw)
    }

    /// Every column as mutable vectors, in field order. `N` must equal the field count.
    pub fn fields<const N: usize>(&mut self) -> Result<[&mut [f32x8]; N], FieldCountMismatch> {
        if N != self.columns.len() {
            return Err(FieldCountMismatch {
                asked: N,
                actual: self.columns.len(),
            });
        }
        let mut it = self.columns.iter_mut();
        Ok(std::array::from_fn(|_| {
            it.next()
                .expect("LanesMut::fields: field count checked above")
                .lanes_mut_raw()
        }))
    }

    /// Splits every column at the same boundaries into chunks of `lanes_per_chunk` vectors
    /// (`8 * lanes_per_chunk` rows; the last chunk may be shorter). `N` must equal the field
    /// count. The chunks are disjoint and `Send`: hand each to a different job.
    pub fn chunks<const N: usize>(
        &mut self,
        lanes_per_chunk: usize,
    ) -> Result<SoaChunksMut<'_, N>, ChunksError> {
        if lanes_per_chunk == 0 {
            return Err(ChunksError::ZeroSize(ZeroChunkSize));
        }
        let rows = self.rows;
        let rest = self.fields::<N>()?;
        Ok(SoaChunksMut {
            rest,
            next_row: 0,
            rows,
            lanes_per_chunk,
        })
    }
}

impl Drop for LanesMut<'_> {
    fn drop(&mut self) {
        for c in self.columns.iter_mut() {
            c.restore_padding();
        }
    }
}

/// [`LanesMut::chunks`] could not split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ChunksError {
    /// Chunk size zero.
    #[error(transparent)]
    ZeroSize(#[from] ZeroChunkSize),
    /// Wrong `N`.
    #[error(transparent)]
    FieldCount(#[from] FieldCountMismatch),
}

/// Iterator over disjoint [`SoaChunkMut`]s of a table's columns (see [`LanesMut::chunks`]).
pub struct SoaChunksMut<'a, const N: usize> {
    rest: [&'a mut [f32x8]; N],
    next_row: usize,
    rows: usize,
    lanes_per_chunk: usize,
}

/// One chunk: the same vector range of every column, owned exclusively.
#[derive(Debug)]
pub struct SoaChunkMut<'a, const N: usize> {
    /// Table row of the chunk's first lane.
    pub first_row: usize,
    /// Rows of data in the chunk (the lanes past this in its last vector are padding).
    pub rows: usize,
    /// The chunk's vectors, one slice per field, in field order; all the same length.
    pub fields: [&'a mut [f32x8]; N],
}

impl<'a, const N: usize> Iterator for SoaChunksMut<'a, N> {
    type Item = SoaChunkMut<'a, N>;

    fn next(&mut self) -> Option<Self::Item> {
        let remaining_lanes = self.rest.first().map_or(0, |s| s.len());
        if remaining_lanes == 0 || self.next_row >= self.rows {
            return None;
        }
        let take = self.lanes_per_chunk.min(remaining_lanes);
        let fields = std::array::from_fn(|i| {
            let whole = std::mem::take(&mut self.rest[i]);
            let (head, tail) = whole.split_at_mut(take);
            self.rest[i] = tail;
            head
        });
        let first_row = self.next_row;
        let rows = (take * LANES).min(self.rows - first_row);
        self.next_row += rows;
        Some(SoaChunkMut {
            first_row,
            rows,
            fields,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let remaining_lanes = self.rest.first().map_or(0, |s| s.len());
        let n = remaining_lanes.div_ceil(self.lanes_per_chunk);
        (n, Some(n))
    }
}

impl<const N: usize> ExactSizeIterator for SoaChunksMut<'_, N> {}

/// The padding value as a vector (all lanes [`PAD`]).
pub const PAD_LANES: f32x8 = f32x8::new([PAD; LANES]);

#[cfg(test)]
mod tests {
    use crate::{SoaTable, PAD};
    use wide::f32x8;

    fn table(rows: usize) -> SoaTable {
        let mut t = SoaTable::new(&["a", "b"]).unwrap();
        for i in 0..rows {
            t.push_row(&[i as f32, 1.0]).unwrap();
        }
        t
    }

    #[test]
    fn padding_is_restored_when_the_guard_drops() {
        let mut t = table(13);
        {
            let mut l = t.lanes_mut();
            let [a, b] = l.fields::<2>().unwrap();
            for (a, b) in a.iter_mut().zip(b.iter()) {
                *a += *b + f32x8::splat(1.0);
            }
            assert_eq!(a[1].to_array()[7], 1.0, "kernel wrote the padding lane");
        }
        let a = t.column(0).unwrap();
        assert_eq!(a.as_slice()[12], 14.0);
        assert!(a.padded()[13..].iter().all(|v| *v == PAD));
    }

    #[test]
    fn wrong_field_count_and_zero_chunk_are_errors() {
        let mut t = table(3);
        let mut l = t.lanes_mut();
        assert!(l.fields::<3>().is_err());
        assert!(l.chunks::<2>(0).is_err());
        assert!(l.chunks::<1>(1).is_err());
    }

    #[test]
    fn chunks_are_disjoint_cover_every_row_and_run_on_threads() {
        let mut t = table(100);
        {
            let mut l = t.lanes_mut();
            let chunks: Vec<_> = l.chunks::<2>(3).unwrap().collect();
            assert_eq!(chunks.len(), 5); // 13 vectors in chunks of 3
            let rows: usize = chunks.iter().map(|c| c.rows).sum();
            assert_eq!(rows, 100);
            assert_eq!(chunks[4].first_row, 96);
            assert_eq!(chunks[4].rows, 4);
            std::thread::scope(|s| {
                for chunk in chunks {
                    s.spawn(move || {
                        let [a, b] = chunk.fields;
                        for (a, b) in a.iter_mut().zip(b.iter()) {
                            *a = *a * f32x8::splat(2.0) + *b;
                        }
                    });
                }
            });
        }
        let a = t.field("a").unwrap();
        for (i, v) in a.iter().enumerate() {
            assert_eq!(*v, i as f32 * 2.0 + 1.0);
        }
        assert!(t.column(0).unwrap().padded()[100..]
            .iter()
            .all(|v| *v == PAD));
    }

    #[test]
    fn empty_table_has_no_chunks() {
        let mut t = table(0);
        let mut l = t.lanes_mut();
        assert_eq!(l.chunks::<2>(4).unwrap().count(), 0);
    }
}
