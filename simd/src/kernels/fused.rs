//! The whole particle step in one pass: forces, integrate and walls over six columns.
//!
//! Owns: [`particle_step`] and its scalar twin, which do per element exactly what
//! [`super::forces::gravity_drag3`], then [`super::integrate::integrate3`], then a wall kernel
//! ([`super::bounds::clamp_negate`] or [`super::bounds::reflect`]) on each axis do, in the same
//! order, so the fused step and the three-kernel sequence agree bit for bit. Must never: change
//! an operation or its order relative to the separate kernels (the world hash depends on it), or
//! use fused multiply-add.
//!
//! Why fuse: each separate kernel sweeps its columns once, so a step reads and writes the six
//! columns about three times; past the last-level cache the step is memory-bound and the
//! fused pass moves a third of the bytes.

use super::bounds::{check_bounds, clamp_negate_one, clamp_negate_x8, reflect_one, ReflectX8};
use super::check_len;
use crate::dispatch::{floats_mut, run};
use crate::error::{InvalidBounds, LengthMismatch};
use wide::f32x8;

/// The wall rule a fused step applies on every axis after integrating.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Walls {
    /// No walls.
    None,
    /// [`super::bounds::clamp_negate`]: clamp to the wall crossed, `v = -v`.
    ClampNegate {
        /// Lower wall.
        lo: f32,
        /// Upper wall.
        hi: f32,
    },
    /// [`super::bounds::reflect`]: mirror back in, velocity `|v| * ±restitution`.
    Reflect {
        /// Lower wall.
        lo: f32,
        /// Upper wall.
        hi: f32,
        /// Restitution factor.
        restitution: f32,
    },
}

/// What one particle step does: constant acceleration, linear drag, the step, the walls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParticleStep {
    /// Acceleration per axis (gravity: `[0.0, -9.81, 0.0]`).
    pub accel: [f32; 3],
    /// Linear drag rate, 1/s.
    pub drag: f32,
    /// The step, s.
    pub dt: f32,
    /// The walls.
    pub walls: Walls,
}

/// A fused step refused its input.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum ParticleStepError {
    /// The six columns differ in length.
    #[error(transparent)]
    Length(#[from] LengthMismatch),
    /// The walls are not a finite interval.
    #[error(transparent)]
    Bounds(#[from] InvalidBounds),
}

impl ParticleStep {
    fn check(&self, kernel: &'static str, lens: [usize; 6]) -> Result<(), ParticleStepError> {
        for &l in &lens[1..] {
            check_len(kernel, lens[0], l)?;
        }
        if let Walls::ClampNegate { lo, hi } | Walls::Reflect { lo, hi, .. } = self.walls {
            check_bounds(kernel, lo, hi)?;
        }
        Ok(())
    }

    /// `(accel * dt, 1 - drag * dt)` per axis, derived as `gravity_drag` derives them.
    fn coefficients(&self) -> ([f32; 3], f32) {
        (self.accel.map(|a| a * self.dt), 1.0 - self.drag * self.dt)
    }
}

/// The six columns' lengths, `pos` then `vel`, for [`ParticleStep::check`].
fn column_lens<T>(pos: &[&mut [T]; 3], vel: &[&mut [T]; 3]) -> [usize; 6] {
    let [px, py, pz] = pos;
    let [vx, vy, vz] = vel;
    [px.len(), py.len(), pz.len(), vx.len(), vy.len(), vz.len()]
}

/// One fused step over field-SoA columns `pos = [x, y, z]`, `vel = [x, y, z]` (every lane,
/// padding included): `v = (v + a*dt) * (1 - drag*dt)`, `p = p + v*dt`, then the walls.
pub fn particle_step(
    pos: [&mut [f32x8]; 3],
    vel: [&mut [f32x8]; 3],
    step: &ParticleStep,
) -> Result<(), ParticleStepError> {
    step.check("particle_step", column_lens(&pos, &vel))?;
    let (adt, keep) = step.coefficients();
    let [px, py, pz] = pos;
    let [vx, vy, vz] = vel;
    run(
        (px, py, pz, vx, vy, vz),
        #[inline(always)]
        |(px, py, pz, vx, vy, vz)| {
            let adt = adt.map(f32x8::splat);
            let (keep, dt) = (f32x8::splat(keep), f32x8::splat(step.dt));
            let (pos, vel) = ([px, py, pz], [vx, vy, vz]);
            // The rule chosen once, so the loop body stays branch-free.
            match step.walls {
                Walls::None => sweep(pos, vel, adt, keep, dt, |_, _| {}),
                Walls::ClampNegate { lo, hi } => {
                    let (lo, hi) = (f32x8::splat(lo), f32x8::splat(hi));
                    sweep(pos, vel, adt, keep, dt, |p, v| {
                        clamp_negate_x8(p, v, lo, hi)
                    })
                }
                Walls::Reflect {
                    lo,
                    hi,
                    restitution,
                } => {
                    let wall = ReflectX8::new(lo, hi, restitution);
                    sweep(pos, vel, adt, keep, dt, |p, v| wall.apply(p, v))
                }
            }
        },
        #[inline(always)]
        |(px, py, pz, vx, vy, vz)| {
            step_body(
                [floats_mut(px), floats_mut(py), floats_mut(pz)],
                [floats_mut(vx), floats_mut(vy), floats_mut(vz)],
                adt,
                keep,
                step.dt,
                step.walls,
            )
        },
    );
    Ok(())
}

/// The twin's pass (also the AVX2 path of [`particle_step`], see [`crate::dispatch`]): the
/// wall rule chosen once, outside the loop, so the compiler can vectorise it. Lengths are
/// already checked equal.
#[inline(always)]
fn step_body(
    pos: [&mut [f32]; 3],
    vel: [&mut [f32]; 3],
    adt: [f32; 3],
    keep: f32,
    dt: f32,
    walls: Walls,
) {
    match walls {
        Walls::None => sweep(pos, vel, adt, keep, dt, |_, _| {}),
        Walls::ClampNegate { lo, hi } => sweep(pos, vel, adt, keep, dt, |p, v| {
            clamp_negate_one(p, v, lo, hi)
        }),
        Walls::Reflect {
            lo,
            hi,
            restitution,
        } => sweep(pos, vel, adt, keep, dt, |p, v| {
            reflect_one(p, v, lo, hi, restitution)
        }),
    }
}

/// One pass of forces, integrate and `wall` per axis, per element: an `f32x8` (the portable
/// path) or an `f32` (the twin, and the AVX2 path), the same operations in the same order.
#[inline(always)]
fn sweep<T>(
    pos: [&mut [T]; 3],
    vel: [&mut [T]; 3],
    adt: [T; 3],
    keep: T,
    dt: T,
    wall: impl Fn(&mut T, &mut T),
) where
    T: Copy + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    let [px, py, pz] = pos;
    let [vx, vy, vz] = vel;
    let n = px.len();
    let (py, pz) = (&mut py[..n], &mut pz[..n]);
    let (vx, vy, vz) = (&mut vx[..n], &mut vy[..n], &mut vz[..n]);
    for i in 0..n {
        let mut x = (vx[i] + adt[0]) * keep;
        let mut y = (vy[i] + adt[1]) * keep;
        let mut z = (vz[i] + adt[2]) * keep;
        let mut a = px[i] + x * dt;
        let mut b = py[i] + y * dt;
        let mut c = pz[i] + z * dt;
        wall(&mut a, &mut x);
        wall(&mut b, &mut y);
        wall(&mut c, &mut z);
        (px[i], py[i], pz[i]) = (a, b, c);
        (vx[i], vy[i], vz[i]) = (x, y, z);
    }
}

/// Scalar twin of [`particle_step`], over padded or plain `f32` columns.
pub fn particle_step_scalar(
    pos: [&mut [f32]; 3],
    vel: [&mut [f32]; 3],
    step: &ParticleStep,
) -> Result<(), ParticleStepError> {
    step.check("particle_step_scalar", column_lens(&pos, &vel))?;
    let (adt, keep) = step.coefficients();
    step_body(pos, vel, adt, keep, step.dt, step.walls);
    Ok(())
}
