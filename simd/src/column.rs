//! One field column: a contiguous, 64-byte aligned, padded `f32` array.
//!
//! Owns: the storage of one `f32` field of a field-SoA table, its alignment, its padding and its
//! density (swap-remove). Must never: expose a way to change its length other than through
//! `push`, `swap_remove`, `truncate` and `clear`, or leave a padding lane holding anything but
//! [`PAD`] when it returns.
//!
//! # Layout
//! Storage is a `Vec<Line>`, where a `Line` is one 64-byte cache line of 16 `f32`s with
//! `#[repr(C, align(64))]`. A `Vec` of an align-64 type allocates with align 64, and growing it
//! reallocates with the same alignment, so the first row of the column starts on a cache line
//! for the column's whole life without any `unsafe` in this file. The rows `0..len` are the data;
//! the rows `len..padded_len()` (padding up to the next multiple of [`LANES`]) hold [`PAD`], and
//! so does the rest of the last line.

use bytemuck::{Pod, Zeroable};
use wide::f32x8;

/// Lanes in one SIMD vector (`wide::f32x8`): every column is padded to a multiple of this.
pub const LANES: usize = 8;

/// `f32`s in one storage line: 64 bytes (one x86-64 cache line) / 4 bytes.
pub const LINE_FLOATS: usize = 16;

/// The value every padding lane holds at rest.
///
/// Zero, because kernels run over whole vectors, padded lanes included: with zeros there, every
/// kernel in this crate does finite arithmetic on the padding (no NaN, no infinity, no
/// subnormal slow path), and `0 * x + 0` style updates keep it zero. Reductions and culls mask
/// the tail by row count and never read padding as data.
pub const PAD: f32 = 0.0;

/// One 64-byte cache line of column storage: two `f32x8` vectors.
///
/// `#[repr(C, align(64))]` over `[f32x8; 2]` (size 64, align 64) has no padding bytes, which is
/// what makes the `Pod` impl below sound.
#[derive(Clone, Copy, PartialEq)]
#[repr(C, align(64))]
pub(crate) struct Line([f32x8; 2]);

#[allow(unsafe_code)] // Reason: bytemuck marker traits for the storage line; see SAFETY.
                      // SAFETY: (Zeroable) the all-zero bit pattern is two f32x8 of +0.0, a valid value.
unsafe impl Zeroable for Line {}
#[allow(unsafe_code)] // Reason: as above.
                      // SAFETY: (Pod) checklist: (1) `repr(C)` with a single field `[f32x8; 2]`; (2) size 64 == field
                      // size 64, so no padding bytes (asserted at compile time below); (3) `f32x8` is `Pod` (wide), so
                      // every bit pattern is valid and there are no pointers or interior mutability; (4) `Copy` and
                      // `'static`.
unsafe impl Pod for Line {}

const _: () = assert!(std::mem::size_of::<Line>() == 64);
const _: () = assert!(std::mem::align_of::<Line>() == 64);
const _: () = assert!(std::mem::size_of::<Line>() == LINE_FLOATS * 4);

impl Line {
    const PADDED: Line = Line([f32x8::new([PAD; 8]); 2]);
}

/// `n` rounded up to the next multiple of [`LANES`].
pub const fn padded_len(n: usize) -> usize {
    n.div_ceil(LANES) * LANES
}

/// One field of a field-SoA table: `len` rows of `f32`, 64-byte aligned, padded with [`PAD`].
///
/// Columns are normally owned by a [`crate::SoaTable`], which keeps its columns equally long;
/// a lone column is useful for kernels and tests.
#[derive(Clone, Default)]
pub struct Column {
    lines: Vec<Line>,
    len: usize,
}

impl std::fmt::Debug for Column {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Column")
            .field("len", &self.len)
            .field("capacity", &self.capacity())
            .finish()
    }
}

impl Column {
    /// An empty column; allocates nothing.
    pub fn new() -> Self {
        Column::default()
    }

    /// An empty column with room for at least `rows` rows without reallocating.
    pub fn with_capacity(rows: usize) -> Self {
        Column {
            lines: Vec::with_capacity(rows.div_ceil(LINE_FLOATS)),
            len: 0,
        }
    }

    /// A column holding `values`, in order.
    pub fn from_slice(values: &[f32]) -> Self {
        let mut c = Column::with_capacity(values.len());
        c.extend_from_slice(values);
        c
    }

    /// Rows of data.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Rows the column can hold before it reallocates.
    pub fn capacity(&self) -> usize {
        self.lines.capacity() * LINE_FLOATS
    }

    /// Reserves room for `additional` more rows (alignment is kept: see the module docs).
    pub fn reserve(&mut self, additional: usize) {
        let need_lines = (self.len + additional).div_ceil(LINE_FLOATS);
        self.lines
            .reserve(need_lines.saturating_sub(self.lines.len()));
    }

    /// Appends one row.
    pub fn push(&mut self, value: f32) {
        if self.len == self.lines.len() * LINE_FLOATS {
            self.lines.push(Line::PADDED);
        }
        let row = self.len;
        self.len += 1;
        self.floats_mut()[row] = value;
    }

    /// Appends every value of `values`, in order.
    pub fn extend_from_slice(&mut self, values: &[f32]) {
        let start = self.len;
        let new_len = start + values.len();
        let need_lines = new_len.div_ceil(LINE_FLOATS);
        if need_lines > self.lines.len() {
            self.lines.resize(need_lines, Line::PADDED);
        }
        self.len = new_len;
        self.floats_mut()[start..new_len].copy_from_slice(values);
    }

    /// Removes row `row` by moving the last row into its place (O(1), keeps the column dense)
    /// and returns the removed value; `None` (and no change) when `row >= len`.
    pub fn swap_remove(&mut self, row: usize) -> Option<f32> {
        if row >= self.len {
            return None;
        }
        let last = self.len - 1;
        let floats = self.floats_mut();
        let removed = floats[row];
        floats[row] = floats[last];
        floats[last] = PAD;
        self.len = last;
        Some(removed)
    }

    /// Shortens the column to `len` rows (no-op when already shorter); freed rows become padding.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        let old = self.len;
        self.floats_mut()[len..old].fill(PAD);
        self.len = len;
        self.lines.truncate(len.div_ceil(LINE_FLOATS));
    }

    /// Removes every row; keeps the allocation.
    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// The rows `0..len`.
    pub fn as_slice(&self) -> &[f32] {
        &self.floats()[..self.len]
    }

    /// The rows `0..len`, mutable. Padding is not reachable through this slice.
    pub fn as_mut_slice(&mut self) -> &mut [f32] {
        let len = self.len;
        &mut self.floats_mut()[..len]
    }

    /// The rows plus padding: `padded_len(len)` floats, the tail equal to [`PAD`].
    pub fn padded(&self) -> &[f32] {
        &self.floats()[..padded_len(self.len)]
    }

    /// The padded rows as `f32x8` vectors: `padded_len(len) / 8` of them, 32-byte aligned (the
    /// first also 64-byte aligned). Lanes past `len` in the last vector hold [`PAD`].
    pub fn lanes(&self) -> &[f32x8] {
        let all: &[f32x8] = bytemuck::cast_slice(&self.lines);
        &all[..padded_len(self.len) / LANES]
    }

    /// The padded rows as mutable `f32x8` vectors, for kernels (padding lanes may be written).
    ///
    /// Crate-private: the public route is [`crate::LanesMut`], which puts [`PAD`] back into the
    /// padding lanes when the borrow ends.
    pub(crate) fn lanes_mut_raw(&mut self) -> &mut [f32x8] {
        let n = padded_len(self.len) / LANES;
        let all: &mut [f32x8] = bytemuck::cast_slice_mut(&mut self.lines);
        &mut all[..n]
    }

    /// The padded rows as mutable `f32x8` vectors, for kernels over a lone column. Padding
    /// lanes may be written through the guard; they are reset to [`PAD`] when it drops.
    pub fn lanes_mut(&mut self) -> ColumnLanesMut<'_> {
        ColumnLanesMut { column: self }
    }

    /// Writes [`PAD`] into the padding lanes `len..padded_len(len)`.
    pub(crate) fn restore_padding(&mut self) {
        let (len, end) = (self.len, padded_len(self.len));
        self.floats_mut()[len..end].fill(PAD);
    }

    /// Makes this column a copy of `src`, reusing its allocation (no allocation once it is
    /// large enough).
    pub fn copy_from(&mut self, src: &Column) {
        self.lines.clone_from(&src.lines);
        self.len = src.len;
    }

    /// Address of the first row (for alignment checks and diagnostics).
    pub fn as_ptr(&self) -> *const f32 {
        self.floats().as_ptr()
    }

    fn floats(&self) -> &[f32] {
        bytemuck::cast_slice(&self.lines)
    }

    fn floats_mut(&mut self) -> &mut [f32] {
        bytemuck::cast_slice_mut(&mut self.lines)
    }
}

/// Mutable vectors of one [`Column`] (see [`Column::lanes_mut`]); restores padding on drop.
pub struct ColumnLanesMut<'a> {
    column: &'a mut Column,
}

impl std::ops::Deref for ColumnLanesMut<'_> {
    type Target = [f32x8];
    fn deref(&self) -> &[f32x8] {
        self.column.lanes()
    }
}

impl std::ops::DerefMut for ColumnLanesMut<'_> {
    fn deref_mut(&mut self) -> &mut [f32x8] {
        self.column.lanes_mut_raw()
    }
}

impl Drop for ColumnLanesMut<'_> {
    fn drop(&mut self) {
        self.column.restore_padding();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aligned(c: &Column) -> bool {
        c.as_ptr() as usize % 64 == 0
    }

    #[test]
    fn padded_len_rounds_up_to_lanes() {
        assert_eq!(padded_len(0), 0);
        assert_eq!(padded_len(1), 8);
        assert_eq!(padded_len(8), 8);
        assert_eq!(padded_len(9), 16);
    }

    #[test]
    fn growth_keeps_alignment_values_and_padding() {
        let mut c = Column::new();
        for i in 0..1000 {
            c.push(i as f32 + 0.5);
            assert!(aligned(&c), "misaligned after {} pushes", i + 1);
            assert_eq!(c.len(), i + 1);
            assert_eq!(c.padded().len() % LANES, 0);
            assert!(c.padded()[c.len()..]
                .iter()
                .all(|&p| p.to_bits() == PAD.to_bits()));
        }
        for (i, v) in c.as_slice().iter().enumerate() {
            assert_eq!(*v, i as f32 + 0.5);
        }
        assert_eq!(c.lanes().len(), 1000 / 8);
        assert_eq!(c.lanes()[3].to_array()[1], 25.5);
    }

    #[test]
    fn swap_remove_moves_last_row_and_repads() {
        let mut c = Column::from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        assert_eq!(c.swap_remove(1), Some(2.0));
        assert_eq!(c.as_slice(), &[1.0, 9.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
        assert_eq!(c.padded().len(), 8);
        assert_eq!(c.swap_remove(7), Some(8.0));
        assert_eq!(c.padded(), &[1.0, 9.0, 3.0, 4.0, 5.0, 6.0, 7.0, PAD]);
        assert_eq!(c.swap_remove(7), None);
        assert_eq!(c.len(), 7);
    }

    #[test]
    fn truncate_and_clear_repad() {
        let mut c = Column::from_slice(&[1.0; 40]);
        c.truncate(3);
        assert_eq!(c.padded(), &[1.0, 1.0, 1.0, PAD, PAD, PAD, PAD, PAD]);
        c.push(2.0);
        assert_eq!(c.padded()[3..], [2.0, PAD, PAD, PAD, PAD]);
        c.clear();
        assert!(c.is_empty());
        assert!(c.lanes().is_empty());
        c.extend_from_slice(&[7.0; 17]);
        assert_eq!(c.padded().len(), 24);
        assert!(c.padded()[17..].iter().all(|&p| p == PAD));
        assert!(aligned(&c));
    }

    #[test]
    fn column_guard_restores_padding() {
        let mut c = Column::from_slice(&[1.0; 3]);
        {
            let mut l = c.lanes_mut();
            l[0] += f32x8::splat(5.0);
        }
        assert_eq!(c.padded(), &[6.0, 6.0, 6.0, PAD, PAD, PAD, PAD, PAD]);
    }

    #[test]
    fn reserve_does_not_move_on_later_pushes() {
        let mut c = Column::new();
        c.reserve(100);
        assert!(c.capacity() >= 100);
        c.push(1.0);
        let p = c.as_ptr();
        for _ in 0..99 {
            c.push(1.0);
        }
        assert_eq!(p, c.as_ptr());
    }
}
