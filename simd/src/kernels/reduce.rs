//! Min/max reduction of one field and the axis-aligned bounding box of three.
//!
//! Owns: ordered reductions that skip NaN and the padded tail. Must never: read a padding lane
//! as data, or use `f32x8::min`/`max` (their NaN and signed-zero choices differ between the SSE
//! and AVX paths of `wide`); the kernels select with `cmp_lt`/`cmp_gt` + `blend` instead, which
//! the scalar twins mirror exactly.
//!
//! # Semantics
//! NaN rows are skipped. An empty input (or all NaN) gives the empty interval
//! `min = +inf, max = -inf` (so `min > max` means "no data"). Equal values keep the first seen
//! in each lane, so `-0.0` and `+0.0` resolve the same way in both twins.

use super::{check_len, check_rows, tail_mask};
use crate::error::{LengthMismatch, RowCountTooLarge};
use crate::LANES;
use wide::{f32x8, CmpGt, CmpLt};

/// The smallest and largest non-NaN value of a field; `min > max` when there were none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MinMax {
    /// Smallest value, `+inf` when empty.
    pub min: f32,
    /// Largest value, `-inf` when empty.
    pub max: f32,
}

impl MinMax {
    /// The empty interval.
    pub const EMPTY: MinMax = MinMax {
        min: f32::INFINITY,
        max: f32::NEG_INFINITY,
    };

    /// `true` when no value was seen.
    pub fn is_empty(&self) -> bool {
        self.min > self.max
    }
}

/// An axis-aligned bounding box over three fields.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb {
    /// Per-axis minimum (x, y, z).
    pub min: [f32; 3],
    /// Per-axis maximum (x, y, z).
    pub max: [f32; 3],
}

/// A reduction could not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReduceError {
    /// More rows than lanes.
    #[error(transparent)]
    Rows(#[from] RowCountTooLarge),
    /// Fields of different lengths.
    #[error(transparent)]
    Length(#[from] LengthMismatch),
}

/// Lane-order fold shared by both twins: `lanes[0]`, then each next lane if strictly better.
fn fold_lanes(lo: [f32; LANES], hi: [f32; LANES]) -> MinMax {
    let (mut min, mut max) = (lo[0], hi[0]);
    for l in 1..LANES {
        if lo[l] < min {
            min = lo[l];
        }
        if hi[l] > max {
            max = hi[l];
        }
    }
    MinMax { min, max }
}

/// Min and max of the first `rows` lanes of `field`, skipping NaN.
pub fn min_max(field: &[f32x8], rows: usize) -> Result<MinMax, RowCountTooLarge> {
    check_rows("min_max", rows, field.len())?;
    let (inf, ninf) = (f32x8::splat(f32::INFINITY), f32x8::splat(f32::NEG_INFINITY));
    let (mut lo, mut hi) = (inf, ninf);
    for (i, v) in field.iter().enumerate() {
        let data = tail_mask(i, rows);
        let for_min = data.blend(*v, inf);
        let for_max = data.blend(*v, ninf);
        lo = for_min.cmp_lt(lo).blend(for_min, lo);
        hi = for_max.cmp_gt(hi).blend(for_max, hi);
    }
    Ok(fold_lanes(lo.to_array(), hi.to_array()))
}

/// Scalar twin of [`min_max`] over padded floats (eight lane accumulators, same fold).
pub fn min_max_scalar(field: &[f32], rows: usize) -> Result<MinMax, RowCountTooLarge> {
    check_rows("min_max_scalar", rows, field.len() / LANES)?;
    let mut lo = [f32::INFINITY; LANES];
    let mut hi = [f32::NEG_INFINITY; LANES];
    for (i, v) in field.iter().enumerate().take(rows) {
        let l = i % LANES;
        if *v < lo[l] {
            lo[l] = *v;
        }
        if *v > hi[l] {
            hi[l] = *v;
        }
    }
    Ok(fold_lanes(lo, hi))
}

/// The bounding box of the first `rows` rows of three fields, each axis by [`min_max`].
pub fn aabb(x: &[f32x8], y: &[f32x8], z: &[f32x8], rows: usize) -> Result<Aabb, ReduceError> {
    check_len("aabb", x.len(), y.len())?;
    check_len("aabb", x.len(), z.len())?;
    let (mx, my, mz) = (min_max(x, rows)?, min_max(y, rows)?, min_max(z, rows)?);
    Ok(Aabb {
        min: [mx.min, my.min, mz.min],
        max: [mx.max, my.max, mz.max],
    })
}

/// Scalar twin of [`aabb`].
pub fn aabb_scalar(x: &[f32], y: &[f32], z: &[f32], rows: usize) -> Result<Aabb, ReduceError> {
    check_len("aabb_scalar", x.len(), y.len())?;
    check_len("aabb_scalar", x.len(), z.len())?;
    let (mx, my, mz) = (
        min_max_scalar(x, rows)?,
        min_max_scalar(y, rows)?,
        min_max_scalar(z, rows)?,
    );
    Ok(Aabb {
        min: [mx.min, my.min, mz.min],
        max: [mx.max, my.max, mz.max],
    })
}
