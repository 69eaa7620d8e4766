//! Integrate: `position += velocity * dt`, per field and for three axes at once.
//!
//! Owns: the explicit-Euler position step. Must never: fuse the multiply and add (see the
//! kernel contract in [`crate::kernels`]).

use super::check_len;
use crate::dispatch::{floats, floats_mut, run};
use crate::error::LengthMismatch;
use wide::f32x8;

/// `pos[i] = pos[i] + vel[i] * dt` for every lane (padding included).
pub fn integrate(pos: &mut [f32x8], vel: &[f32x8], dt: f32) -> Result<(), LengthMismatch> {
    check_len("integrate", pos.len(), vel.len())?;
    run(
        (pos, vel),
        #[inline(always)]
        |(pos, vel)| {
            let dt = f32x8::splat(dt);
            for (p, v) in pos.iter_mut().zip(vel) {
                *p = *p + *v * dt;
            }
        },
        #[inline(always)]
        |(pos, vel)| integrate_body(floats_mut(pos), floats(vel), dt),
    );
    Ok(())
}

/// The twin's loop (also the AVX2 path of [`integrate`], see [`crate::dispatch`]).
#[inline(always)]
fn integrate_body(pos: &mut [f32], vel: &[f32], dt: f32) {
    for (p, v) in pos.iter_mut().zip(vel) {
        *p = *p + *v * dt;
    }
}

/// Scalar twin of [`integrate`].
pub fn integrate_scalar(pos: &mut [f32], vel: &[f32], dt: f32) -> Result<(), LengthMismatch> {
    check_len("integrate_scalar", pos.len(), vel.len())?;
    integrate_body(pos, vel, dt);
    Ok(())
}

/// [`integrate`] over three axes in one pass: `pos[a][i] += vel[a][i] * dt` for `a` in x, y, z.
pub fn integrate3(
    pos: [&mut [f32x8]; 3],
    vel: [&[f32x8]; 3],
    dt: f32,
) -> Result<(), LengthMismatch> {
    let n = pos[0].len();
    for s in &pos[1..] {
        check_len("integrate3", n, s.len())?;
    }
    for s in vel {
        check_len("integrate3", n, s.len())?;
    }
    let [px, py, pz] = pos;
    let [vx, vy, vz] = vel;
    run(
        (px, py, pz, vx, vy, vz),
        #[inline(always)]
        |(px, py, pz, vx, vy, vz)| {
            let dt = f32x8::splat(dt);
            for i in 0..n {
                px[i] = px[i] + vx[i] * dt;
                py[i] = py[i] + vy[i] * dt;
                pz[i] = pz[i] + vz[i] * dt;
            }
        },
        #[inline(always)]
        |(px, py, pz, vx, vy, vz)| {
            integrate3_body(
                [floats_mut(px), floats_mut(py), floats_mut(pz)],
                [floats(vx), floats(vy), floats(vz)],
                dt,
            )
        },
    );
    Ok(())
}

/// The twin's loop (also the AVX2 path of [`integrate3`]); lengths already checked equal.
#[inline(always)]
fn integrate3_body(pos: [&mut [f32]; 3], vel: [&[f32]; 3], dt: f32) {
    let [px, py, pz] = pos;
    let [vx, vy, vz] = vel;
    let n = px.len();
    let (py, pz, vx, vy, vz) = (&mut py[..n], &mut pz[..n], &vx[..n], &vy[..n], &vz[..n]);
    for i in 0..n {
        px[i] = px[i] + vx[i] * dt;
        py[i] = py[i] + vy[i] * dt;
        pz[i] = pz[i] + vz[i] * dt;
    }
}

/// Scalar twin of [`integrate3`].
pub fn integrate3_scalar(
    pos: [&mut [f32]; 3],
    vel: [&[f32]; 3],
    dt: f32,
) -> Result<(), LengthMismatch> {
    let n = pos[0].len();
    for s in &pos[1..] {
        check_len("integrate3_scalar", n, s.len())?;
    }
    for s in vel {
        check_len("integrate3_scalar", n, s.len())?;
    }
    integrate3_body(pos, vel, dt);
    Ok(())
}
