//! The `f32x8` kernels and their scalar twins.
//!
//! Owns: per-frame math over field-SoA columns. Must never: allocate in a kernel (the grid's
//! `rebuild` is the one documented exception: it reuses its buffers once warm), transpose, or
//! use fused multiply-add.
//!
//! # Contract shared by every kernel
//! - SIMD kernels take whole padded vectors (`&[f32x8]`, from [`crate::Column::lanes`] or a
//!   [`crate::LanesMut`]); scalar twins take the same data as `&[f32]` (padded floats, or any
//!   length for elementwise kernels).
//! - Elementwise kernels compute every lane, padding included: padding is data to them, and the
//!   guards restore it. Reductions and culls take the row count and mask the tail themselves, so
//!   they never read padding as data whatever it holds.
//! - A SIMD kernel and its twin do the same IEEE operations in the same order, so they agree bit
//!   for bit on every input, infinity, signed zero and subnormals included. The one stated
//!   exception: when a result is NaN, both are NaN but the payload may differ, because Rust
//!   leaves the payload of an arithmetic NaN unspecified among its NaN inputs and the compiler
//!   may commute `a * b` (proptest found `v * dt` with two NaN inputs returning either). Hash
//!   world state with NaN canonicalised. Reductions keep eight lane accumulators and fold them
//!   in lane order 0..8; the twins emulate those lanes.
//! - No kernel uses fused multiply-add: `wide::f32x8::mul_add` fuses only on FMA builds, so it
//!   would make the x86-64 and x86-64-v3 builds disagree in the last bit, and the World's
//!   determinism hash with them. The kernels are memory-bound at the sizes that matter, so the
//!   lost FMA costs little (docs/simd.md).
//! - Slices that must have equal lengths are checked; a mismatch is a [`crate::LengthMismatch`],
//!   never a silent truncation.

//!
//! # Writing your own kernel
//! Everything a kernel needs is re-exported by this crate (a game reaches it as
//! `lanegraph::simd`): [`crate::f32x8`], the comparison traits ([`crate::CmpLt`] and the rest),
//! [`flip_sign`] for `-x`, and [`crate::wide`] itself. Keep the contract: take whole vectors,
//! no fused multiply-add, and write a scalar twin with the same operations in the same order,
//! then test the two bit for bit. A kernel that caps speed at `max` per lane, with its twin:
//!
//! ```
//! use lanegraph_simd::{f32x8, CmpGt};
//!
//! fn cap(vel: &mut [f32x8], max: f32) {
//!     let max = f32x8::splat(max);
//!     for v in vel.iter_mut() {
//!         *v = v.cmp_gt(max).blend(max, *v);
//!     }
//! }
//!
//! fn cap_scalar(vel: &mut [f32], max: f32) {
//!     for v in vel.iter_mut() {
//!         if *v > max {
//!             *v = max;
//!         }
//!     }
//! }
//!
//! let data = [-3.0f32, 0.5, 7.0, f32::NAN, 2.0, -0.0, 9.0, 1.0];
//! let mut lanes = [f32x8::new(data)];
//! let mut scalar = data;
//! cap(&mut lanes, 2.0);
//! cap_scalar(&mut scalar, 2.0);
//! let simd = lanes[0].to_array();
//! for (a, b) in simd.iter().zip(&scalar) {
//!     assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
//! }
//! assert_eq!(simd[2], 2.0);
//! ```

// `x = x + y` rather than `x += y`: each kernel line spells out its operands in the order its
// scalar twin uses (the bit-exactness contract above), and index loops walk several parallel
// slices at once, which reads clearer than nested zips.
#![allow(clippy::assign_op_pattern, clippy::needless_range_loop)]

pub mod aos;
pub mod bounds;
pub mod cull;
pub mod forces;
pub mod fused;
pub mod grid;
pub mod integrate;
pub mod reduce;
pub mod stream;

use crate::error::{LengthMismatch, RowCountTooLarge};
use crate::LANES;
use wide::f32x8;

/// `-x` lane by lane: flips the sign bit, exactly as Rust's scalar `-x` does (`wide::f32x8` has
/// no `Neg`, and `0.0 - x` differs from `-x` on zero: `0.0 - 0.0` is `+0.0`). Use it in a custom
/// kernel whose scalar twin writes `-x`.
#[inline(always)]
pub fn flip_sign(x: f32x8) -> f32x8 {
    x ^ f32x8::splat(-0.0)
}

/// All bits set: a lane that is "true" in a comparison mask.
const TRUE_BITS: f32 = f32::from_bits(u32::MAX);

/// `FIRST_N[k]` has lanes `0..k` set (all ones) and the rest clear: the tail mask of a vector
/// holding `k` rows of data.
pub(crate) const FIRST_N: [f32x8; LANES + 1] = {
    let mut out = [f32x8::new([0.0; LANES]); LANES + 1];
    let mut k = 0;
    while k <= LANES {
        let mut lanes = [0.0f32; LANES];
        let mut l = 0;
        while l < k {
            lanes[l] = TRUE_BITS;
            l += 1;
        }
        out[k] = f32x8::new(lanes);
        k += 1;
    }
    out
};

/// The mask of data lanes in vector `index` of a column holding `rows` rows.
#[inline(always)]
pub(crate) fn tail_mask(index: usize, rows: usize) -> f32x8 {
    let start = index * LANES;
    FIRST_N[rows.saturating_sub(start).min(LANES)]
}

pub(crate) fn check_len(
    kernel: &'static str,
    expected: usize,
    got: usize,
) -> Result<(), LengthMismatch> {
    if expected == got {
        Ok(())
    } else {
        Err(LengthMismatch {
            kernel,
            got,
            expected,
        })
    }
}

pub(crate) fn check_rows(
    kernel: &'static str,
    rows: usize,
    lanes: usize,
) -> Result<(), RowCountTooLarge> {
    if rows <= lanes * LANES {
        Ok(())
    } else {
        Err(RowCountTooLarge {
            kernel,
            rows,
            capacity: lanes * LANES,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_masks_cover_exactly_the_data_lanes() {
        for rows in 0..20 {
            for index in 0..3 {
                let m = tail_mask(index, rows).move_mask();
                let expect = (0..8)
                    .filter(|l| index * 8 + l < rows)
                    .fold(0, |a, l| a | 1 << l);
                assert_eq!(m, expect, "rows {rows} vector {index}");
            }
        }
    }
}
