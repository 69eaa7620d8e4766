//! Reductions and culls against their scalar twins: min/max and AABB (NaN skipped, padded tail
//! never read as data), sphere and frustum culls (bit masks equal, padding never visible).
#![allow(clippy::needless_range_loop)] // Tests index parallel columns side by side.

use crate::common;
use common::*;
use lanegraph_simd::kernels::cull::{self, Frustum};
use lanegraph_simd::kernels::reduce::{self, MinMax};
use lanegraph_simd::LANES;

#[test]
fn min_max_matches_scalar_and_ignores_padding() {
    let mut rng = Rng::new(3);
    for &n in &SIZES {
        // Padding holding extreme values must not leak into the result.
        for &pad in &[0.0, f32::NEG_INFINITY, f32::INFINITY, f32::NAN] {
            for edge in [0, 3, 1] {
                let v = padded(values(&mut rng, n, 1.0e6, edge), pad);
                let s = reduce::min_max_scalar(&v, n).unwrap();
                let l = reduce::min_max(&to_lanes(&v), n).unwrap();
                assert_eq!(
                    s.min.to_bits(),
                    l.min.to_bits(),
                    "n {n} pad {pad} edge {edge}"
                );
                assert_eq!(
                    s.max.to_bits(),
                    l.max.to_bits(),
                    "n {n} pad {pad} edge {edge}"
                );
                // Against the obvious definition (values compare equal; +-0 may differ in sign).
                let data: Vec<f32> = v[..n].iter().copied().filter(|x| !x.is_nan()).collect();
                let min = data.iter().copied().fold(f32::INFINITY, f32::min);
                let max = data.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                assert!(s.min == min && s.max == max, "n {n}: {s:?} vs {min} {max}");
            }
        }
    }
}

#[test]
fn min_max_empty_and_all_nan_is_the_empty_interval() {
    let v = to_lanes(&[f32::NAN; 16]);
    assert!(reduce::min_max(&v, 16).unwrap().is_empty());
    assert_eq!(reduce::min_max(&v, 0).unwrap(), MinMax::EMPTY);
    let e = reduce::min_max(&v, 17).unwrap_err();
    assert_eq!((e.rows, e.capacity), (17, 16));
}

#[test]
fn aabb_matches_scalar() {
    let mut rng = Rng::new(11);
    let n = 333;
    let f: Vec<Vec<f32>> = (0..3)
        .map(|_| padded(values(&mut rng, n, 40.0, 9), 0.0))
        .collect();
    let s = reduce::aabb_scalar(&f[0], &f[1], &f[2], n).unwrap();
    let l = reduce::aabb(&to_lanes(&f[0]), &to_lanes(&f[1]), &to_lanes(&f[2]), n).unwrap();
    assert_eq!(
        s.min.map(f32::to_bits).to_vec(),
        l.min.map(f32::to_bits).to_vec()
    );
    assert_eq!(
        s.max.map(f32::to_bits).to_vec(),
        l.max.map(f32::to_bits).to_vec()
    );
    assert!(reduce::aabb(&to_lanes(&f[0]), &to_lanes(&f[1][..8]), &to_lanes(&f[2]), n).is_err());
}

fn positions(rng: &mut Rng, n: usize, pad: f32) -> Vec<Vec<f32>> {
    (0..3)
        .map(|_| padded(values(rng, n, 20.0, 13), pad))
        .collect()
}

#[test]
fn sphere_cull_matches_scalar_and_never_marks_padding() {
    let mut rng = Rng::new(5);
    for &n in &SIZES {
        for &pad in &PADS {
            let p = positions(&mut rng, n, pad);
            let lanes = p[0].len() / LANES;
            let (mut ms, mut ml) = (vec![0u8; lanes], vec![0xAAu8; lanes]);
            let cs =
                cull::cull_sphere_scalar([&p[0], &p[1], &p[2]], n, [1.0, -2.0, 0.5], 12.0, &mut ms)
                    .unwrap();
            let (x, y, z) = (to_lanes(&p[0]), to_lanes(&p[1]), to_lanes(&p[2]));
            let cl = cull::cull_sphere([&x, &y, &z], n, [1.0, -2.0, 0.5], 12.0, &mut ml).unwrap();
            assert_eq!(ms, ml, "n {n} pad {pad}");
            assert_eq!(cs, cl);
            if n % LANES != 0 {
                assert_eq!(
                    ml[lanes - 1] >> (n % LANES),
                    0,
                    "padding lane marked visible"
                );
            }
            let brute = (0..n)
                .filter(|&i| {
                    let d = [p[0][i] - 1.0, p[1][i] + 2.0, p[2][i] - 0.5];
                    d[0] * d[0] + d[1] * d[1] + d[2] * d[2] <= 144.0
                })
                .count();
            assert_eq!(cl, brute);
        }
    }
}

fn ortho_frustum() -> Frustum {
    // Identity view-projection: the clip box itself, x, y in [-1, 1], z in [0, 1].
    Frustum::from_view_proj([
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ])
}

#[test]
fn frustum_planes_from_matrix_bound_the_clip_box() {
    let f = ortho_frustum();
    let inside = |p: [f32; 3]| {
        f.planes
            .iter()
            .all(|q| q[0] * p[0] + q[1] * p[1] + q[2] * p[2] + q[3] >= 0.0)
    };
    assert!(inside([0.0, 0.0, 0.5]));
    assert!(inside([1.0, -1.0, 1.0]));
    assert!(!inside([1.1, 0.0, 0.5]));
    assert!(!inside([0.0, 0.0, -0.1]));
    assert!(!inside([0.0, 0.0, 1.1]));
}

#[test]
fn frustum_cull_matches_scalar() {
    let mut rng = Rng::new(17);
    let f = ortho_frustum();
    for &n in &SIZES {
        for &pad in &PADS {
            let p: Vec<Vec<f32>> = (0..3)
                .map(|_| padded(values(&mut rng, n, 2.0, 13), pad))
                .collect();
            let r = padded(
                values(&mut rng, n, 0.3, 13)
                    .into_iter()
                    .map(f32::abs)
                    .collect(),
                pad,
            );
            let lanes = p[0].len() / LANES;
            let (mut ms, mut ml) = (vec![0u8; lanes], vec![0u8; lanes]);
            let cs = cull::cull_frustum_scalar([&p[0], &p[1], &p[2]], &r, n, &f, &mut ms).unwrap();
            let (x, y, z, rl) = (
                to_lanes(&p[0]),
                to_lanes(&p[1]),
                to_lanes(&p[2]),
                to_lanes(&r),
            );
            let cl = cull::cull_frustum([&x, &y, &z], &rl, n, &f, &mut ml).unwrap();
            assert_eq!(ms, ml, "n {n} pad {pad}");
            assert_eq!(cs, cl);
        }
    }
}

#[test]
fn cull_output_length_is_checked() {
    let x = to_lanes(&[0.0; 16]);
    let mut out = vec![0u8; 1];
    assert!(cull::cull_sphere([&x, &x, &x], 16, [0.0; 3], 1.0, &mut out).is_err());
}
