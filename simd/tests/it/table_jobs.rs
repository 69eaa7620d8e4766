//! The World's use of the crate, end to end: a component declared field-SoA, stored in a
//! `SoaTable`, integrated by `f32x8` kernels in disjoint chunks on several threads at once,
//! with rows removed in between; the result equals the scalar AoS computation bit for bit and
//! the padding is back to `PAD` afterwards.

use lanegraph_simd::kernels::{bounds, forces, integrate};
use lanegraph_simd::{soa_component, SoaTable, PAD};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Body {
    px: f32,
    py: f32,
    pz: f32,
    vx: f32,
    vy: f32,
    vz: f32,
}
soa_component!(Body {
    px,
    py,
    pz,
    vx,
    vy,
    vz
});

fn step_scalar(b: &mut Body, dt: f32) {
    let keep = 1.0 - 0.1 * dt;
    b.vx = (b.vx + 0.0 * dt) * keep;
    b.vy = (b.vy + -9.81 * dt) * keep;
    b.vz = (b.vz + 0.0 * dt) * keep;
    b.px += b.vx * dt;
    b.py += b.vy * dt;
    b.pz += b.vz * dt;
    for (p, v) in [
        (&mut b.px, &mut b.vx),
        (&mut b.py, &mut b.vy),
        (&mut b.pz, &mut b.vz),
    ] {
        let speed = v.abs();
        if *p < -5.0 {
            *p = -10.0 - *p;
            *v = speed * 0.8;
        } else if *p > 5.0 {
            *p = 10.0 - *p;
            *v = speed * -0.8;
        }
    }
}

/// FNV-1a of every column's bits after the 120 steps below, recorded from the x86-64 build.
const GOLDEN_HASH: u64 = 0x2398_cdd1_39d6_73ab;

#[test]
fn chunked_parallel_step_equals_scalar_aos() {
    let dt = 1.0 / 60.0;
    let mut table = SoaTable::for_component::<Body>().unwrap();
    let mut aos = Vec::new();
    for i in 0..1003 {
        let f = i as f32;
        let b = Body {
            px: (f * 0.37) % 9.0 - 4.5,
            py: (f * 0.11) % 9.0 - 4.5,
            pz: (f * 0.53) % 9.0 - 4.5,
            vx: (f % 7.0) - 3.0,
            vy: (f % 5.0) - 2.0,
            vz: (f % 3.0) - 1.0,
        };
        table.push(&b).unwrap();
        aos.push(b);
    }
    for step in 0..120 {
        if step % 30 == 29 {
            // Despawn: the World mirrors swap_remove on its own arrays.
            let row = (step * 7) % table.len();
            table.swap_remove(row).unwrap();
            aos.swap_remove(row);
        }
        {
            let mut lanes = table.lanes_mut();
            let chunks = lanes.chunks::<6>(16).unwrap();
            std::thread::scope(|s| {
                for chunk in chunks {
                    s.spawn(move || {
                        let [px, py, pz, vx, vy, vz] = chunk.fields;
                        forces::gravity_drag3([vx, vy, vz], [0.0, -9.81, 0.0], 0.1, dt).unwrap();
                        integrate::integrate3([px, py, pz], [vx, vy, vz], dt).unwrap();
                        for (p, v) in [(px, vx), (py, vy), (pz, vz)] {
                            bounds::reflect(p, v, -5.0, 5.0, 0.8).unwrap();
                        }
                    });
                }
            });
        }
        for b in &mut aos {
            step_scalar(b, dt);
        }
    }
    assert_eq!(table.len(), aos.len());
    for (row, b) in aos.iter().enumerate() {
        let got: Body = table.get(row).unwrap();
        assert_eq!(
            [got.px, got.py, got.pz, got.vx, got.vy, got.vz].map(f32::to_bits),
            [b.px, b.py, b.pz, b.vx, b.vy, b.vz].map(f32::to_bits),
            "row {row}"
        );
    }
    // The same bits at every build level: scripts/simd-levels runs this at x86-64 and at
    // x86-64-v3, so both must produce this hash (no FMA, same operation order).
    let mut hash = 0xcbf2_9ce4_8422_2325u64; // FNV-1a 64
    for c in 0..6 {
        for v in table.column(c).unwrap().as_slice() {
            for byte in v.to_bits().to_le_bytes() {
                hash = (hash ^ byte as u64).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    assert_eq!(
        hash, GOLDEN_HASH,
        "state hash {hash:#018x} differs from the golden one"
    );
    for c in 0..6 {
        let col = table.column(c).unwrap();
        assert!(col.padded()[col.len()..]
            .iter()
            .all(|v| v.to_bits() == PAD.to_bits()));
        assert_eq!(col.as_ptr() as usize % 64, 0);
    }
}
