//! One field-SoA column as raw parts for typed queries: each field's first row and the row
//! codec ([`SoaRaw`]), and the cached field pointers ([`FieldPtrs`]) they point into.
//!
//! Owns: gathering a row from its fields and scattering it back. Must never: be used after the
//! `&mut World` that made the parts is released.

// Opted in from the workspace's `unsafe_code = "deny"`: a row is gathered and scattered
// through raw field pointers (see `query::data`'s module docs for the invariants).
#![allow(unsafe_code)]

use lanegraph_simd::MAX_FIELDS;

/// A field-SoA column's field pointers, cached for typed queries.
pub(crate) struct FieldPtrs(pub(crate) [*mut f32; MAX_FIELDS]);

// SAFETY: the pointers are into the column's own field buffers; they are written by
// `raw_parts` (`&mut self`) and dereferenced only by a typed query made from that same
// exclusive borrow of the world, so moving or sharing the column between threads never lets
// two threads use them unsynchronized.
unsafe impl Send for FieldPtrs {}
// SAFETY: as above.
unsafe impl Sync for FieldPtrs {}

/// One field-SoA column as raw parts: each field's first row and the row codec.
#[doc(hidden)]
pub(crate) struct SoaRaw<T> {
    /// Each field's first row, in the column's own cache (`SoaColumn::raw_parts` fills it):
    /// one pointer here, so a query over a field-SoA component does not carry (and copy) half a
    /// kilobyte of field pointers.
    pub(crate) fields: *const [*mut f32; MAX_FIELDS],
    pub(crate) n: usize,
    pub(crate) from_fields: fn(&[f32]) -> T,
    pub(crate) to_fields: fn(&T, &mut [f32]),
}

impl<T> Clone for SoaRaw<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SoaRaw<T> {}

impl<T> SoaRaw<T> {
    /// Gathers row `row`.
    ///
    /// # Safety
    /// The parts are valid and `row` is below the column's length; no `&mut` to the row is live.
    pub(crate) unsafe fn read(&self, row: usize) -> T {
        let mut buf = [0.0f32; MAX_FIELDS];
        // SAFETY: the column (boxed, borrowed by the query) owns the array, written only by
        // `raw_parts` before the query was made.
        let fields = unsafe { &*self.fields };
        for (b, f) in buf.iter_mut().zip(&fields[..self.n]) {
            // SAFETY: `f` is a live field column with more than `row` rows (the contract).
            *b = unsafe { *f.add(row) };
        }
        (self.from_fields)(&buf[..self.n])
    }

    /// Scatters `value` into row `row`.
    ///
    /// # Safety
    /// As for `read`, and no other reference to the row is live (the row is this query's
    /// alone: its chunk's, in a parallel query).
    pub(crate) unsafe fn write(&self, row: usize, value: &T) {
        let mut buf = [0.0f32; MAX_FIELDS];
        (self.to_fields)(value, &mut buf[..self.n]);
        // SAFETY: as in `read`.
        let fields = unsafe { &*self.fields };
        for (b, f) in buf.iter().zip(&fields[..self.n]) {
            // SAFETY: as in `read`; the row is written by this thread only.
            unsafe { *f.add(row) = *b };
        }
    }
}
