//! Array-of-structs baselines: the layout a game writes first, and the transpose "trap".
//!
//! Owns: the baselines the benches compare the field-SoA kernels against. Must never: be used
//! by the engine's hot path; they exist to be measured against.

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
/// order of operations as [`crate::kernels::integrate::integrate3`], so its results equal the SoA kernels' bit for bit.
/// (The compiler may vectorise this loop with shuffles as it sees fit; the baseline is the
/// natural code, optimised as the compiler optimises it.)
pub fn integrate_aos(bodies: &mut [Body], dt: f32) {
    for b in bodies.iter_mut() {
        b.pos[0] = b.pos[0] + b.vel[0] * dt;
        b.pos[1] = b.pos[1] + b.vel[1] * dt;
        b.pos[2] = b.pos[2] + b.vel[2] * dt;
    }
}

/// The trap: `f32x8` on AoS data, transposing every frame: each group of eight bodies is
/// gathered into six vectors (pos and vel, x y z), integrated, and the positions scattered back.
///
/// This is the best case of "use SIMD without keeping the data field-SoA": the transpose stays
/// in registers, nothing goes through a scratch array. It still loses to plain scalar AoS,
/// because the 48 lane inserts and 24 lane extracts per eight bodies cost more than the six
/// vector operations they enable. Results equal [`integrate_aos`] bit for bit.
pub fn integrate_transposed(bodies: &mut [Body], dt: f32) {
    let dt_v = f32x8::splat(dt);
    let mut groups = bodies.chunks_exact_mut(8);
    for group in &mut groups {
        let lane = |f: &dyn Fn(&Body) -> f32| -> f32x8 {
            f32x8::new(std::array::from_fn(|l| f(&group[l])))
        };
        let (px, py, pz) = (
            lane(&|b| b.pos[0]),
            lane(&|b| b.pos[1]),
            lane(&|b| b.pos[2]),
        );
        let (vx, vy, vz) = (
            lane(&|b| b.vel[0]),
            lane(&|b| b.vel[1]),
            lane(&|b| b.vel[2]),
        );
        let (x, y, z) = (
            (px + vx * dt_v).to_array(),
            (py + vy * dt_v).to_array(),
            (pz + vz * dt_v).to_array(),
        );
        for (l, b) in group.iter_mut().enumerate() {
            b.pos = [x[l], y[l], z[l]];
        }
    }
    // The last partial group: the scalar loop (same operations).
    integrate_aos(groups.into_remainder(), dt);
}
