//! Elementwise kernels against their scalar twins, lane by lane, bit for bit: integrate,
//! gravity + drag, reflect at bounds; seeded random data with edge values and padded tails
//! holding several padding values.
#![allow(clippy::needless_range_loop)] // Tests index parallel columns side by side.

use crate::common;
use common::*;
use lanegraph_simd::f32x8;
use lanegraph_simd::kernels::{bounds, forces, integrate};

const DTS: [f32; 4] = [1.0 / 60.0, 0.0, -0.5, 1.0e-3];

#[test]
fn integrate_matches_scalar_bit_for_bit() {
    let mut rng = Rng::new(0x1234);
    for &n in &SIZES {
        for &pad in &PADS {
            for &dt in &DTS {
                let p = padded(values(&mut rng, n, 1.0e4, 7), pad);
                let v = padded(values(&mut rng, n, 1.0e3, 7), pad);
                let mut ps = p.clone();
                integrate::integrate_scalar(&mut ps, &v, dt).unwrap();
                let mut pv = to_lanes(&p);
                integrate::integrate(&mut pv, &to_lanes(&v), dt).unwrap();
                assert_bits("integrate", &pv, &ps, &[&p, &v]);
            }
        }
    }
}

#[test]
fn integrate3_matches_scalar_and_single_axis() {
    let mut rng = Rng::new(99);
    let n = 203;
    let f: Vec<Vec<f32>> = (0..6)
        .map(|_| padded(values(&mut rng, n, 50.0, 11), 0.0))
        .collect();
    let mut s: Vec<Vec<f32>> = f.clone();
    let (pos, vel) = s.split_at_mut(3);
    let [px, py, pz] = pos else { unreachable!() };
    integrate::integrate3_scalar([px, py, pz], [&vel[0], &vel[1], &vel[2]], 0.016).unwrap();
    let mut l: Vec<Vec<_>> = f.iter().map(|c| to_lanes(c)).collect();
    let (pos, vel) = l.split_at_mut(3);
    let [px, py, pz] = pos else { unreachable!() };
    integrate::integrate3([px, py, pz], [&vel[0], &vel[1], &vel[2]], 0.016).unwrap();
    for a in 0..3 {
        assert_bits("integrate3", &l[a], &s[a], &[&f[a], &f[3 + a]]);
        let mut one = f[a].clone();
        integrate::integrate_scalar(&mut one, &f[3 + a], 0.016).unwrap();
        assert_eq!(
            one.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            s[a].iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn length_mismatch_is_a_typed_error_not_a_truncation() {
    let mut p = to_lanes(&[1.0; 16]);
    let v = to_lanes(&[1.0; 8]);
    let e = integrate::integrate(&mut p, &v, 1.0).unwrap_err();
    assert_eq!((e.got, e.expected), (1, 2));
    assert_eq!(from_lanes(&p), vec![1.0; 16], "nothing written on error");
    let mut ps = vec![0.0; 3];
    assert!(integrate::integrate_scalar(&mut ps, &[0.0; 2], 1.0).is_err());
}

#[test]
fn gravity_drag_matches_scalar_bit_for_bit() {
    let mut rng = Rng::new(7);
    for &n in &SIZES {
        for &pad in &PADS {
            for (accel, drag) in [(-9.81, 0.1), (0.0, 0.0), (3.0, 2.0), (f32::INFINITY, 0.5)] {
                let v = padded(values(&mut rng, n, 100.0, 5), pad);
                let mut vs = v.clone();
                forces::gravity_drag_scalar(&mut vs, accel, drag, 1.0 / 60.0);
                let mut vv = to_lanes(&v);
                forces::gravity_drag(&mut vv, accel, drag, 1.0 / 60.0);
                assert_bits("gravity_drag", &vv, &vs, &[&v]);
            }
        }
    }
}

#[test]
fn gravity_drag_does_what_it_says() {
    let mut v = to_lanes(&[10.0; 8]);
    forces::gravity_drag(&mut v, -10.0, 0.5, 0.1);
    // (10 + -10 * 0.1) * (1 - 0.5 * 0.1) = 9 * 0.95
    assert_eq!(v[0].to_array()[3], 9.0f32 * 0.95);
}

#[test]
fn reflect_matches_scalar_bit_for_bit() {
    let mut rng = Rng::new(0xBEEF);
    for &n in &SIZES {
        for &pad in &PADS {
            for (lo, hi, e) in [(-10.0, 10.0, 0.8), (0.0, 0.0, 1.0), (-1.0e3, 5.0, -0.5)] {
                let p = padded(values(&mut rng, n, 30.0, 6), pad);
                let v = padded(values(&mut rng, n, 5.0, 6), pad);
                let (mut ps, mut vs) = (p.clone(), v.clone());
                bounds::reflect_scalar(&mut ps, &mut vs, lo, hi, e).unwrap();
                let (mut pv, mut vv) = (to_lanes(&p), to_lanes(&v));
                bounds::reflect(&mut pv, &mut vv, lo, hi, e).unwrap();
                assert_bits("reflect pos", &pv, &ps, &[&p, &v]);
                assert_bits("reflect vel", &vv, &vs, &[&p, &v]);
            }
        }
    }
}

#[test]
fn reflect_mirrors_and_turns_inward() {
    let mut p = to_lanes(&[-12.0, 11.0, 5.0, f32::NAN, 0.0, 0.0, 0.0, 0.0]);
    let mut v = to_lanes(&[-3.0, 2.0, 1.0, 1.0, -0.0, 0.0, 0.0, 0.0]);
    bounds::reflect(&mut p, &mut v, -10.0, 10.0, 0.5).unwrap();
    let (p, v) = (p[0].to_array(), v[0].to_array());
    assert_eq!(&p[..3], &[-8.0, 9.0, 5.0]);
    assert!(p[3].is_nan());
    assert_eq!(&v[..4], &[1.5, -1.0, 1.0, 1.0]);
    assert_eq!(
        v[4].to_bits(),
        (-0.0f32).to_bits(),
        "untouched lanes keep their sign"
    );
}

#[test]
fn clamp_negate_matches_scalar_bit_for_bit() {
    let mut rng = Rng::new(0xC1A4);
    for &n in &SIZES {
        for &pad in &PADS {
            for (lo, hi) in [(-10.0, 10.0), (0.0, 0.0), (-1.0e3, 5.0)] {
                let p = padded(values(&mut rng, n, 30.0, 6), pad);
                let v = padded(values(&mut rng, n, 5.0, 6), pad);
                let (mut ps, mut vs) = (p.clone(), v.clone());
                bounds::clamp_negate_scalar(&mut ps, &mut vs, lo, hi).unwrap();
                let (mut pv, mut vv) = (to_lanes(&p), to_lanes(&v));
                bounds::clamp_negate(&mut pv, &mut vv, lo, hi).unwrap();
                assert_bits("clamp_negate pos", &pv, &ps, &[&p, &v]);
                assert_bits("clamp_negate vel", &vv, &vs, &[&p, &v]);
            }
        }
    }
}

#[test]
fn clamp_negate_clamps_and_flips_the_sign_like_scalar_negation() {
    let mut p = to_lanes(&[-12.0, 11.0, 5.0, f32::NAN, -20.0, 30.0, 10.0, -10.0]);
    let mut v = to_lanes(&[-3.0, 2.0, 1.0, 1.0, 0.0, -0.0, 4.0, 4.0]);
    bounds::clamp_negate(&mut p, &mut v, -10.0, 10.0).unwrap();
    let (p, v) = (p[0].to_array(), v[0].to_array());
    assert_eq!(&p[..3], &[-10.0, 10.0, 5.0]);
    assert!(p[3].is_nan(), "NaN positions are left alone");
    assert_eq!(&p[4..], &[-10.0, 10.0, 10.0, -10.0]);
    assert_eq!(&v[..4], &[3.0, -2.0, 1.0, 1.0]);
    // A zero velocity at a wall flips its sign, as `-v` does (`0 - v` would not).
    assert_eq!(v[4].to_bits(), (-0.0f32).to_bits());
    assert_eq!(v[5].to_bits(), 0.0f32.to_bits());
    assert_eq!(&v[6..], &[4.0, 4.0], "on the wall is inside: untouched");
    let e = bounds::clamp_negate(&mut [f32x8::ZERO], &mut [], -1.0, 1.0).unwrap_err();
    assert!(e.to_string().contains("fix:"), "{e}");
    let e = bounds::clamp_negate(&mut [], &mut [], 1.0, -1.0).unwrap_err();
    assert!(e.to_string().contains("fix:"), "{e}");
}

#[test]
fn reflect_rejects_bad_bounds() {
    let mut p = to_lanes(&[0.0; 8]);
    let mut v = to_lanes(&[0.0; 8]);
    for (lo, hi) in [(1.0, -1.0), (f32::NAN, 1.0), (0.0, f32::INFINITY)] {
        let e = bounds::reflect(&mut p, &mut v, lo, hi, 1.0).unwrap_err();
        assert!(e.to_string().contains("fix:"), "{e}");
    }
}

/// The fused particle step equals the three separate kernels run one after another (forces,
/// integrate, walls), and its scalar twin, bit for bit, for every wall rule.
#[test]
fn the_fused_step_equals_the_separate_kernels_and_its_twin() {
    use lanegraph_simd::kernels::fused::{self, ParticleStep, Walls};
    let mut rng = Rng::new(0xF05E);
    let walls = [
        Walls::None,
        Walls::ClampNegate {
            lo: -10.0,
            hi: 10.0,
        },
        Walls::Reflect {
            lo: -10.0,
            hi: 10.0,
            restitution: 0.8,
        },
    ];
    for &n in &SIZES {
        for &pad in &PADS {
            for walls in walls {
                let step = ParticleStep {
                    accel: [0.5, -9.81, 0.0],
                    drag: 0.3,
                    dt: 1.0 / 60.0,
                    walls,
                };
                let p: Vec<Vec<f32>> = (0..3)
                    .map(|_| padded(values(&mut rng, n, 12.0, 7), pad))
                    .collect();
                let v: Vec<Vec<f32>> = (0..3)
                    .map(|_| padded(values(&mut rng, n, 40.0, 7), pad))
                    .collect();
                // The three kernels in sequence.
                let mut sp: Vec<Vec<f32x8>> = p.iter().map(|c| to_lanes(c)).collect();
                let mut sv: Vec<Vec<f32x8>> = v.iter().map(|c| to_lanes(c)).collect();
                {
                    let [vx, vy, vz] = &mut sv[..] else {
                        unreachable!()
                    };
                    forces::gravity_drag3([vx, vy, vz], step.accel, step.drag, step.dt).unwrap();
                }
                {
                    let [px, py, pz] = &mut sp[..] else {
                        unreachable!()
                    };
                    integrate::integrate3([px, py, pz], [&sv[0], &sv[1], &sv[2]], step.dt).unwrap();
                }
                for (pa, va) in sp.iter_mut().zip(sv.iter_mut()) {
                    match walls {
                        Walls::None => {}
                        Walls::ClampNegate { lo, hi } => {
                            bounds::clamp_negate(pa, va, lo, hi).unwrap()
                        }
                        Walls::Reflect {
                            lo,
                            hi,
                            restitution,
                        } => bounds::reflect(pa, va, lo, hi, restitution).unwrap(),
                    }
                }
                // Fused, SIMD.
                let mut fp: Vec<Vec<f32x8>> = p.iter().map(|c| to_lanes(c)).collect();
                let mut fv: Vec<Vec<f32x8>> = v.iter().map(|c| to_lanes(c)).collect();
                {
                    let [px, py, pz] = &mut fp[..] else {
                        unreachable!()
                    };
                    let [vx, vy, vz] = &mut fv[..] else {
                        unreachable!()
                    };
                    fused::particle_step([px, py, pz], [vx, vy, vz], &step).unwrap();
                }
                // Fused, scalar.
                let (mut cp, mut cv) = (p.clone(), v.clone());
                {
                    let [px, py, pz] = &mut cp[..] else {
                        unreachable!()
                    };
                    let [vx, vy, vz] = &mut cv[..] else {
                        unreachable!()
                    };
                    fused::particle_step_scalar([px, py, pz], [vx, vy, vz], &step).unwrap();
                }
                for a in 0..3 {
                    let ins: [&[f32]; 2] = [&p[a], &v[a]];
                    assert_bits(
                        &format!("{walls:?} pos[{a}]: fused vs scalar"),
                        &fp[a],
                        &cp[a],
                        &ins,
                    );
                    assert_bits(
                        &format!("{walls:?} vel[{a}]: fused vs scalar"),
                        &fv[a],
                        &cv[a],
                        &ins,
                    );
                    let seq_p = from_lanes(&sp[a]);
                    let seq_v = from_lanes(&sv[a]);
                    assert_bits(
                        &format!("{walls:?} pos[{a}]: fused vs sequence"),
                        &fp[a],
                        &seq_p,
                        &ins,
                    );
                    assert_bits(
                        &format!("{walls:?} vel[{a}]: fused vs sequence"),
                        &fv[a],
                        &seq_v,
                        &ins,
                    );
                }
            }
        }
    }
}

#[test]
fn the_fused_step_refuses_unequal_columns_and_bad_walls() {
    use lanegraph_simd::kernels::fused::{particle_step, ParticleStep, Walls};
    let mut step = ParticleStep {
        accel: [0.0; 3],
        drag: 0.0,
        dt: 0.1,
        walls: Walls::None,
    };
    let z = || vec![f32x8::ZERO; 2];
    let (mut a, mut b, mut c, mut d, mut e) = (z(), z(), z(), z(), z());
    let mut short = vec![f32x8::ZERO; 1];
    let err = particle_step(
        [&mut a, &mut b, &mut c],
        [&mut d, &mut e, &mut short],
        &step,
    )
    .unwrap_err();
    assert!(err.to_string().contains("fix:"), "{err}");
    step.walls = Walls::ClampNegate {
        lo: 1.0,
        hi: f32::NAN,
    };
    let mut f = z();
    let err = particle_step([&mut a, &mut b, &mut c], [&mut d, &mut e, &mut f], &step).unwrap_err();
    assert!(err.to_string().contains("fix:"), "{err}");
}
