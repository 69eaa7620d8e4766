//! Integrate: `position += velocity * dt`, per field and for three axes at once.
//!
//! Owns: the explicit-Euler position step. Must never: fuse the multiply and add (see the
//! kernel contract in [`crate::kernels`]).

use super::check_len;
use crate::error::LengthMismatch;
use wide::f32x8;

/// `pos[i] = pos[i] + vel[i] * dt` for every lane (padding included).
pub fn integrate(pos: &mut [f32x8], vel: &[f32x8], dt: f32) -> Result<(), LengthMismatch> {
    check_len("integrate", pos.len(), vel.len())?;
    let dt = f32x8::splat(dt);
    for (p, v) in pos.iter_mut().zip(vel) {
        *p = *p + *v * dt;
    }
    Ok(())
}

/// Scalar twin of [`integrate`].
pub fn integrate_scalar(pos: &mut [f32], vel: &[f32], dt: f32) -> Result<(), LengthMismatch> {
    check_len("integrate_scalar", pos.len(), vel.len())?;
    for (p, v) in pos.iter_mut().zip(vel) {
        *p = *p + *v * dt;
    }
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
    let dt = f32x8::splat(dt);
    let [px, py, pz] = pos;
    let [vx, vy, vz] = vel;
    for i in 0..n {
        px[i] = px[i] + vx[i] * dt;
        py[i] = py[i] + vy[i] * dt;
        pz[i] = pz[i] + vz[i] * dt;
    }
    Ok(())
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
    let [px, py, pz] = pos;
    let [vx, vy, vz] = vel;
    for i in 0..n {
        px[i] = px[i] + vx[i] * dt;
        py[i] = py[i] + vy[i] * dt;
        pz[i] = pz[i] + vz[i] * dt;
    }
    Ok(())
}
