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

/// One row of a field-SoA column, to read: what a component's own `SoaComponent` impl reads
/// field by field, statically (`ComponentMeta::soa_read`), with no row gathered into a buffer
/// or codec called through a pointer.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct SoaRow<'a> {
    fields: &'a [*mut f32; MAX_FIELDS],
    n: usize,
    row: usize,
}

impl<'a> SoaRow<'a> {
    /// # Safety
    /// `fields[..n]` are live field columns with more than `row` rows, and no `&mut` to the
    /// row is live while the value exists.
    pub(crate) unsafe fn new(fields: &'a [*mut f32; MAX_FIELDS], n: usize, row: usize) -> Self {
        SoaRow { fields, n, row }
    }

    /// Field `i`'s value in this row (0 past the column's fields).
    #[inline(always)]
    pub fn get(&self, i: usize) -> f32 {
        if i >= self.n {
            return 0.0;
        }
        // SAFETY: the constructor's contract; `i` is one of the column's fields.
        unsafe { *self.fields[i].add(self.row) }
    }
}

/// One row of a field-SoA column, to write (see [`SoaRow`]).
#[doc(hidden)]
pub struct SoaRowMut<'a> {
    fields: &'a [*mut f32; MAX_FIELDS],
    n: usize,
    row: usize,
}

impl<'a> SoaRowMut<'a> {
    /// # Safety
    /// As for [`SoaRow::new`], and no other reference to the row is live (the row is this
    /// query's, or its chunk's, alone).
    pub(crate) unsafe fn new(fields: &'a [*mut f32; MAX_FIELDS], n: usize, row: usize) -> Self {
        SoaRowMut { fields, n, row }
    }

    /// Sets field `i` of this row (a field past the column's is ignored).
    #[inline(always)]
    pub fn set(&mut self, i: usize, value: f32) {
        if i < self.n {
            // SAFETY: the constructor's contract; `i` is one of the column's fields.
            unsafe { *self.fields[i].add(self.row) = value };
        }
    }
}

impl<T> SoaRaw<T> {
    /// Row `row`, to read field by field ([`SoaRow`]).
    ///
    /// # Safety
    /// The parts are valid and `row` is below the column's length; no `&mut` to the row is live
    /// while the value exists.
    #[inline]
    pub(crate) unsafe fn row(&self, row: usize) -> SoaRow<'_> {
        // SAFETY: the column (boxed, borrowed by the query) owns the array, written only by
        // `raw_parts` before the query was made; the caller's contract for the row.
        unsafe { SoaRow::new(&*self.fields, self.n, row) }
    }

    /// Row `row`, to write field by field ([`SoaRowMut`]).
    ///
    /// # Safety
    /// As for [`row`](Self::row), and no other reference to the row is live (the row is this
    /// query's, or its chunk's, alone).
    #[inline]
    pub(crate) unsafe fn row_mut(&self, row: usize) -> SoaRowMut<'_> {
        // SAFETY: as in `row`.
        unsafe { SoaRowMut::new(&*self.fields, self.n, row) }
    }
}

impl<T> SoaRaw<T> {
    /// Gathers row `row` through the codec.
    ///
    /// # Safety
    /// The parts are valid and `row` is below the column's length; no `&mut` to the row is live.
    pub(crate) unsafe fn gather(&self, row: usize) -> T {
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

    /// Scatters `value` into row `row` through the codec.
    ///
    /// # Safety
    /// As for `gather`, and no other reference to the row is live.
    pub(crate) unsafe fn scatter(&self, row: usize, value: &T) {
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
