//! Array-of-structs baselines: the layout a game writes first, and the transpose "trap".
//!
//! Owns: the baselines the benches compare the field-SoA kernels against. Must never: be used
//! by the engine's hot path; they exist to be measured against.

use super::check_len;
use super::integrate::integrate3;
use crate::error::LengthMismatch;
use wide::f32x8;

/// One body as a game would first write it: position and velocity side by side, 24 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Body {
    /// Position (x, y, z).
    pub pos: [f32; 3],
    /// Velocity (x, y, z).
    pub vel: [f32; 3],
}

const _: () = assert!(std::mem::size_of::<Body>() == 24);

/// Bytes of one [`Body`]: the "entity size" the benches place in each cache level.
pub const BODY_BYTES: usize = std::mem::size_of::<Body>();

/// The scalar AoS integrate (the benches' baseline): `pos += vel * dt` per body, in the same
/// order of operations as [`integrate3`], so its results equal the SoA kernels' bit for bit.
/// (The compiler may vectorise this loop with shuffles as it sees fit; the baseline is the
/// natural code, optimised as the compiler optimises it.)
pub fn integrate_aos(bodies: &mut [Body], dt: f32) {
    for b in bodies.iter_mut() {
        b.pos[0] = b.pos[0] + b.vel[0] * dt;
        b.pos[1] = b.pos[1] + b.vel[1] * dt;
        b.pos[2] = b.pos[2] + b.vel[2] * dt;
    }
}

/// Scratch field columns for the transpose trap: six `f32x8` arrays (pos x, y, z, vel x, y, z).
#[derive(Debug, Default, Clone)]
pub struct TransposeScratch {
    cols: [Vec<f32x8>; 6],
}

/// The trap: gather AoS into field-SoA scratch, run the `f32x8` kernel, scatter back.
///
/// This is what "use SIMD on AoS data" costs when the data is not kept field-SoA resident: the
/// per-lane transposes cost more than the arithmetic they enable. Results equal
/// [`integrate_aos`] bit for bit. Allocates only to grow `scratch`.
pub fn integrate_transposed(
    bodies: &mut [Body],
    dt: f32,
    scratch: &mut TransposeScratch,
) -> Result<(), LengthMismatch> {
    let lanes = bodies.len().div_ceil(8);
    for c in &mut scratch.cols {
        c.resize(lanes, f32x8::splat(0.0));
    }
    for (chunk, i) in bodies.chunks(8).zip(0..) {
        let mut t = [[0.0f32; 8]; 6];
        for (l, b) in chunk.iter().enumerate() {
            t[0][l] = b.pos[0];
            t[1][l] = b.pos[1];
            t[2][l] = b.pos[2];
            t[3][l] = b.vel[0];
            t[4][l] = b.vel[1];
            t[5][l] = b.vel[2];
        }
        for (c, t) in scratch.cols.iter_mut().zip(t) {
            c[i] = f32x8::new(t);
        }
    }
    let [px, py, pz, vx, vy, vz] = &mut scratch.cols;
    check_len("integrate_transposed", px.len(), lanes)?;
    integrate3([px, py, pz], [vx, vy, vz], dt)?;
    for (chunk, i) in bodies.chunks_mut(8).zip(0..) {
        let (x, y, z) = (px[i].to_array(), py[i].to_array(), pz[i].to_array());
        for (l, b) in chunk.iter_mut().enumerate() {
            b.pos = [x[l], y[l], z[l]];
        }
    }
    Ok(())
}
