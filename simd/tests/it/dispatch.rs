//! Run-time kernel paths: on a CPU with AVX2 a baseline build takes the AVX2 path by itself,
//! and every dispatched kernel gives the scalar twin's bits on both paths (edge values, walls,
//! odd lengths included).
//!
//! This is the one test that switches the process-wide path; the other kernel tests run on
//! whichever path is in effect, which is sound because both give the same bits (what this
//! test checks).

use crate::common::*;
use lanegraph_simd::dispatch::PATH_ENV;
use lanegraph_simd::kernels::fused::{particle_step, particle_step_scalar, ParticleStep, Walls};
use lanegraph_simd::kernels::{bounds, forces, integrate, stream};
use lanegraph_simd::{force_kernel_path, kernel_path, BuildLevel, KernelPath};

/// Every dispatched kernel on `n` rows of seeded data with edge values, against its twin.
fn check_all_kernels(path: &str, n: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    // Positions around the walls (+-100), velocities of either sign; one value in 7 an edge.
    let p0 = padded(values(&mut rng, n, 150.0, 7), 0.0);
    let v0 = padded(values(&mut rng, n, 60.0, 7), 0.0);
    let w = |s: &str| format!("{path}: {s}, n {n}");

    let mut s = p0.clone();
    integrate::integrate_scalar(&mut s, &v0, 0.016).unwrap();
    let mut l = to_lanes(&p0);
    integrate::integrate(&mut l, &to_lanes(&v0), 0.016).unwrap();
    assert_bits(&w("integrate"), &l, &s, &[&p0, &v0]);

    let mut s3 = [p0.clone(), v0.clone(), p0.clone()];
    let [a, b, c] = &mut s3;
    integrate::integrate3_scalar([a, b, c], [&v0, &p0, &v0], 0.5).unwrap();
    let (lp, lv) = (to_lanes(&p0), to_lanes(&v0));
    let mut l3 = [lp.clone(), lv.clone(), lp.clone()];
    let [a, b, c] = &mut l3;
    integrate::integrate3([a, b, c], [&lv, &lp, &lv], 0.5).unwrap();
    for k in 0..3 {
        assert_bits(&w("integrate3"), &l3[k], &s3[k], &[&p0, &v0]);
    }

    // stream_rmw is integrate's operation on two streams: integrate's twin is its twin.
    let mut s = p0.clone();
    integrate::integrate_scalar(&mut s, &v0, 0.25).unwrap();
    let mut l = to_lanes(&p0);
    stream::stream_rmw(&mut l, &lv, 0.25).unwrap();
    assert_bits(&w("stream_rmw"), &l, &s, &[&p0, &v0]);

    let mut s = v0.clone();
    forces::gravity_drag_scalar(&mut s, -9.81, 0.1, 0.016);
    let mut l = to_lanes(&v0);
    forces::gravity_drag(&mut l, -9.81, 0.1, 0.016);
    assert_bits(&w("gravity_drag"), &l, &s, &[&v0]);

    let (mut ps, mut vs) = (p0.clone(), v0.clone());
    bounds::clamp_negate_scalar(&mut ps, &mut vs, -100.0, 100.0).unwrap();
    let (mut pl, mut vl) = (to_lanes(&p0), to_lanes(&v0));
    bounds::clamp_negate(&mut pl, &mut vl, -100.0, 100.0).unwrap();
    assert_bits(&w("clamp_negate p"), &pl, &ps, &[&p0, &v0]);
    assert_bits(&w("clamp_negate v"), &vl, &vs, &[&p0, &v0]);

    let (mut ps, mut vs) = (p0.clone(), v0.clone());
    bounds::reflect_scalar(&mut ps, &mut vs, -100.0, 100.0, 0.8).unwrap();
    let (mut pl, mut vl) = (to_lanes(&p0), to_lanes(&v0));
    bounds::reflect(&mut pl, &mut vl, -100.0, 100.0, 0.8).unwrap();
    assert_bits(&w("reflect p"), &pl, &ps, &[&p0, &v0]);
    assert_bits(&w("reflect v"), &vl, &vs, &[&p0, &v0]);

    for walls in [
        Walls::None,
        Walls::ClampNegate {
            lo: -100.0,
            hi: 100.0,
        },
        Walls::Reflect {
            lo: -100.0,
            hi: 100.0,
            restitution: 0.8,
        },
    ] {
        let step = ParticleStep {
            accel: [0.0, -9.81, 1.5],
            drag: 0.1,
            dt: 1.0 / 60.0,
            walls,
        };
        let mut s = [
            p0.clone(),
            v0.clone(),
            p0.clone(),
            v0.clone(),
            p0.clone(),
            v0.clone(),
        ];
        let [a, b, c, d, e, f] = &mut s;
        particle_step_scalar([a, c, e], [b, d, f], &step).unwrap();
        let mut l = [
            lp.clone(),
            lv.clone(),
            lp.clone(),
            lv.clone(),
            lp.clone(),
            lv.clone(),
        ];
        let [a, b, c, d, e, f] = &mut l;
        particle_step([a, c, e], [b, d, f], &step).unwrap();
        for k in 0..6 {
            assert_bits(
                &w(&format!("particle_step {walls:?} column {k}")),
                &l[k],
                &s[k],
                &[&p0, &v0],
            );
        }
    }
}

#[test]
fn both_kernel_paths_give_the_twins_bits_and_avx2_is_picked_where_the_cpu_has_it() {
    let has_avx2 = cfg!(target_arch = "x86_64") && {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("avx2")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    };
    let auto = force_kernel_path(None);
    let env_portable = std::env::var(PATH_ENV).is_ok_and(|v| v == "portable");
    let want = if has_avx2 && BuildLevel::current() == BuildLevel::Baseline && !env_portable {
        KernelPath::Avx2
    } else {
        KernelPath::Portable
    };
    assert_eq!(
        auto,
        want,
        "detection: has avx2 {has_avx2}, build {:?}",
        BuildLevel::current()
    );

    assert_eq!(
        force_kernel_path(Some(KernelPath::Portable)),
        KernelPath::Portable
    );
    assert_eq!(kernel_path(), KernelPath::Portable);
    for (i, &n) in SIZES.iter().enumerate() {
        check_all_kernels("portable", n, 11 + i as u64);
    }
    let back = force_kernel_path(None);
    assert_eq!(back, want);
    for (i, &n) in SIZES.iter().enumerate() {
        check_all_kernels(back.name(), n, 11 + i as u64);
    }
}
