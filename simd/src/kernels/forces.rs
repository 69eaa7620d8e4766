//! Gravity and linear drag on one velocity field.
//!
//! Owns: `v' = (v + accel * dt) * (1 - drag * dt)`. Must never: fuse, or reorder the two
//! scalar pre-products (both twins compute them the same way, once).

use super::check_len;
use crate::dispatch::{floats_mut, run};
use crate::error::LengthMismatch;
use wide::f32x8;

/// The two per-call scalars both twins derive the same way: `(accel * dt, 1 - drag * dt)`.
#[inline]
fn coefficients(accel: f32, drag: f32, dt: f32) -> (f32, f32) {
    (accel * dt, 1.0 - drag * dt)
}

/// `vel[i] = (vel[i] + accel * dt) * (1 - drag * dt)` for every lane (padding included).
///
/// `accel` is this axis' constant acceleration (gravity: `-9.81` on y), `drag` a linear drag
/// rate in 1/s; `drag * dt > 1` reverses velocities, which is the caller's choice to make.
pub fn gravity_drag(vel: &mut [f32x8], accel: f32, drag: f32, dt: f32) {
    let (adt, keep) = coefficients(accel, drag, dt);
    run(
        vel,
        #[inline(always)]
        |vel| {
            let (adt, keep) = (f32x8::splat(adt), f32x8::splat(keep));
            for v in vel.iter_mut() {
                *v = (*v + adt) * keep;
            }
        },
        #[inline(always)]
        |vel| gravity_drag_body(floats_mut(vel), adt, keep),
    );
}

/// The twin's loop (also the AVX2 path of [`gravity_drag`]).
#[inline(always)]
fn gravity_drag_body(vel: &mut [f32], adt: f32, keep: f32) {
    for v in vel.iter_mut() {
        *v = (*v + adt) * keep;
    }
}

/// Scalar twin of [`gravity_drag`].
pub fn gravity_drag_scalar(vel: &mut [f32], accel: f32, drag: f32, dt: f32) {
    let (adt, keep) = coefficients(accel, drag, dt);
    gravity_drag_body(vel, adt, keep);
}

/// [`gravity_drag`] on three axes with one acceleration vector; checks the lengths agree.
pub fn gravity_drag3(
    vel: [&mut [f32x8]; 3],
    accel: [f32; 3],
    drag: f32,
    dt: f32,
) -> Result<(), LengthMismatch> {
    let n = vel[0].len();
    for s in &vel[1..] {
        check_len("gravity_drag3", n, s.len())?;
    }
    for (v, a) in vel.into_iter().zip(accel) {
        gravity_drag(v, a, drag, dt);
    }
    Ok(())
}
