//! Walls at bounds, two rules per axis:
//! - [`reflect`]: a position that left `[lo, hi]` is mirrored back in and its velocity turned
//!   inwards, scaled by a restitution factor (the particle demo's box).
//! - [`clamp_negate`]: a position that left `[lo, hi]` is clamped to the wall it crossed and its
//!   velocity negated (the rule most game code writes: `if p < lo { p = lo; v = -v }`).
//!
//! Owns: per-axis box collision. Must never: branch per lane (the SIMD forms select with
//! masks) or negate with `0 - x` (it differs from a scalar `-x` on zero: `0 - 0.0` is `+0.0`,
//! `-(0.0)` is `-0.0`); negation is a sign-bit flip ([`super::flip_sign`]) or is built from
//! `abs` and a pre-signed factor.

use super::{check_len, flip_sign};
use crate::dispatch::{floats_mut, run};
use crate::error::{InvalidBounds, LengthMismatch};
use wide::{f32x8, CmpGt, CmpLt};

/// Reflecting failed.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum ReflectError {
    /// Position and velocity slices differ in length.
    #[error(transparent)]
    Length(#[from] LengthMismatch),
    /// The bounds are not a finite interval.
    #[error(transparent)]
    Bounds(#[from] InvalidBounds),
}

pub(crate) fn check_bounds(kernel: &'static str, lo: f32, hi: f32) -> Result<(), InvalidBounds> {
    if lo.is_finite() && hi.is_finite() && lo <= hi {
        Ok(())
    } else {
        Err(InvalidBounds { kernel, lo, hi })
    }
}

/// For every lane: if `p < lo`, `p = (lo + lo) - p` and `v = |v| * e`; if `p > hi`,
/// `p = (hi + hi) - p` and `v = |v| * -e` (both tests on the incoming `p`). NaN positions are
/// left alone (both tests are false). One mirror per step: a body that overshoots by more than
/// `hi - lo` stays outside and is mirrored again next step.
pub fn reflect(
    pos: &mut [f32x8],
    vel: &mut [f32x8],
    lo: f32,
    hi: f32,
    restitution: f32,
) -> Result<(), ReflectError> {
    check_len("reflect", pos.len(), vel.len())?;
    check_bounds("reflect", lo, hi)?;
    run(
        (pos, vel),
        #[inline(always)]
        |(pos, vel)| {
            let wall = ReflectX8::new(lo, hi, restitution);
            for (p, v) in pos.iter_mut().zip(vel.iter_mut()) {
                wall.apply(p, v);
            }
        },
        #[inline(always)]
        |(pos, vel)| {
            for (p, v) in floats_mut(pos).iter_mut().zip(floats_mut(vel)) {
                reflect_one(p, v, lo, hi, restitution);
            }
        },
    );
    Ok(())
}

/// [`reflect`]'s constants, splatted once per call; [`ReflectX8::apply`] is one vector of it
/// (the fused step applies the same).
#[derive(Clone, Copy)]
pub(crate) struct ReflectX8 {
    lo: f32x8,
    hi: f32x8,
    lo2: f32x8,
    hi2: f32x8,
    up: f32x8,
    down: f32x8,
}

impl ReflectX8 {
    pub(crate) fn new(lo: f32, hi: f32, restitution: f32) -> Self {
        ReflectX8 {
            lo: f32x8::splat(lo),
            hi: f32x8::splat(hi),
            lo2: f32x8::splat(lo + lo),
            hi2: f32x8::splat(hi + hi),
            up: f32x8::splat(restitution),
            down: f32x8::splat(-restitution),
        }
    }

    #[inline(always)]
    pub(crate) fn apply(&self, p: &mut f32x8, v: &mut f32x8) {
        let below = p.cmp_lt(self.lo);
        let above = p.cmp_gt(self.hi);
        let speed = v.abs();
        *p = below.blend(self.lo2 - *p, *p);
        *p = above.blend(self.hi2 - *p, *p);
        *v = below.blend(speed * self.up, *v);
        *v = above.blend(speed * self.down, *v);
    }
}

/// One float of [`reflect_scalar`].
#[inline(always)]
pub(crate) fn reflect_one(p: &mut f32, v: &mut f32, lo: f32, hi: f32, restitution: f32) {
    // Selects rather than stores under branches, so the compiler can vectorise the twin (it
    // is also the AVX2 path, see `crate::dispatch`); `below` and `above` never both hold.
    let below = *p < lo;
    let above = *p > hi;
    let speed = v.abs();
    let (p0, v0) = (*p, *v);
    *p = if below {
        (lo + lo) - p0
    } else if above {
        (hi + hi) - p0
    } else {
        p0
    };
    *v = if below {
        speed * restitution
    } else if above {
        speed * -restitution
    } else {
        v0
    };
}

/// One vector of [`clamp_negate`] (`lo`, `hi` splatted).
#[inline(always)]
pub(crate) fn clamp_negate_x8(p: &mut f32x8, v: &mut f32x8, lo: f32x8, hi: f32x8) {
    let below = p.cmp_lt(lo);
    let above = p.cmp_gt(hi);
    *p = below.blend(lo, *p);
    *p = above.blend(hi, *p);
    *v = (below | above).blend(flip_sign(*v), *v);
}

/// One float of [`clamp_negate_scalar`].
#[inline(always)]
pub(crate) fn clamp_negate_one(p: &mut f32, v: &mut f32, lo: f32, hi: f32) {
    // Selects, as in `reflect_one`: same results as `if p < lo { p = lo; v = -v } else if ..`.
    let below = *p < lo;
    let above = *p > hi;
    let (p0, v0) = (*p, *v);
    *p = if below {
        lo
    } else if above {
        hi
    } else {
        p0
    };
    *v = if below || above { -v0 } else { v0 };
}

/// For every lane: if `p < lo`, `p = lo` and `v = -v`; if `p > hi`, `p = hi` and `v = -v`
/// (both tests on the incoming `p`; `lo <= hi`, so at most one holds). NaN positions are left
/// alone. `-v` is a sign-bit flip, exactly Rust's scalar `-v`, so a plain scalar loop of the
/// same rule ([`clamp_negate_scalar`]) agrees bit for bit, zero's sign included.
pub fn clamp_negate(
    pos: &mut [f32x8],
    vel: &mut [f32x8],
    lo: f32,
    hi: f32,
) -> Result<(), ReflectError> {
    check_len("clamp_negate", pos.len(), vel.len())?;
    check_bounds("clamp_negate", lo, hi)?;
    run(
        (pos, vel),
        #[inline(always)]
        |(pos, vel)| {
            let (lo, hi) = (f32x8::splat(lo), f32x8::splat(hi));
            for (p, v) in pos.iter_mut().zip(vel.iter_mut()) {
                clamp_negate_x8(p, v, lo, hi);
            }
        },
        #[inline(always)]
        |(pos, vel)| {
            for (p, v) in floats_mut(pos).iter_mut().zip(floats_mut(vel)) {
                clamp_negate_one(p, v, lo, hi);
            }
        },
    );
    Ok(())
}

/// Scalar twin of [`clamp_negate`]: the rule as game code writes it.
pub fn clamp_negate_scalar(
    pos: &mut [f32],
    vel: &mut [f32],
    lo: f32,
    hi: f32,
) -> Result<(), ReflectError> {
    check_len("clamp_negate_scalar", pos.len(), vel.len())?;
    check_bounds("clamp_negate_scalar", lo, hi)?;
    for (p, v) in pos.iter_mut().zip(vel.iter_mut()) {
        clamp_negate_one(p, v, lo, hi);
    }
    Ok(())
}

/// Scalar twin of [`reflect`].
pub fn reflect_scalar(
    pos: &mut [f32],
    vel: &mut [f32],
    lo: f32,
    hi: f32,
    restitution: f32,
) -> Result<(), ReflectError> {
    check_len("reflect_scalar", pos.len(), vel.len())?;
    check_bounds("reflect_scalar", lo, hi)?;
    for (p, v) in pos.iter_mut().zip(vel.iter_mut()) {
        reflect_one(p, v, lo, hi, restitution);
    }
    Ok(())
}
