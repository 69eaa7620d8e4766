//! The AoS baselines give the same bits as the field-SoA kernel: the benches compare equal work.
#![allow(clippy::needless_range_loop)] // Tests index parallel columns side by side.

use crate::common;
use common::*;
use lanegraph_simd::kernels::aos::{self, Body};
use lanegraph_simd::kernels::{integrate, stream};

fn bodies(rng: &mut Rng, n: usize) -> Vec<Body> {
    let v = values(rng, n * 6, 100.0, 17);
    v.chunks(6)
        .map(|c| Body {
            pos: [c[0], c[1], c[2]],
            vel: [c[3], c[4], c[5]],
        })
        .collect()
}

#[test]
fn aos_transposed_and_soa_integrate_agree_bit_for_bit() {
    let mut rng = Rng::new(21);
    for &n in &SIZES {
        let b = bodies(&mut rng, n);
        let mut a = b.clone();
        aos::integrate_aos(&mut a, 0.02);
        let mut t = b.clone();
        aos::integrate_transposed(&mut t, 0.02);
        let cols: Vec<Vec<f32>> = (0..6)
            .map(|k| {
                padded(
                    b.iter()
                        .map(|b| if k < 3 { b.pos[k] } else { b.vel[k - 3] })
                        .collect(),
                    0.0,
                )
            })
            .collect();
        let mut l: Vec<Vec<_>> = cols.iter().map(|c| to_lanes(c)).collect();
        let (pos, vel) = l.split_at_mut(3);
        let [px, py, pz] = pos else { unreachable!() };
        integrate::integrate3([px, py, pz], [&vel[0], &vel[1], &vel[2]], 0.02).unwrap();
        for i in 0..n {
            for k in 0..3 {
                let soa = from_lanes(&l[k])[i];
                assert_eq!(a[i].pos[k].to_bits(), soa.to_bits(), "aos vs soa row {i}");
                assert_eq!(t[i].pos[k].to_bits(), soa.to_bits(), "trap vs soa row {i}");
            }
            assert_eq!(a[i].vel.map(f32::to_bits), b[i].vel.map(f32::to_bits));
        }
    }
}

#[test]
fn stream_reference_does_the_same_operation() {
    let mut rng = Rng::new(2);
    let a = padded(values(&mut rng, 100, 10.0, 9), 0.0);
    let b = padded(values(&mut rng, 100, 10.0, 9), 0.0);
    let mut s = a.clone();
    integrate::integrate_scalar(&mut s, &b, 0.5).unwrap();
    let mut l = to_lanes(&a);
    stream::stream_rmw(&mut l, &to_lanes(&b), 0.5).unwrap();
    assert_bits("stream_rmw", &l, &s, &[&a, &b]);
}
