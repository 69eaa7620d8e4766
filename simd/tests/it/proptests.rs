//! Property tests: arbitrary f32 bit patterns (every NaN payload, subnormal, infinity) through
//! the kernels, SIMD against scalar twin, bit for bit (NaN results: NaN in both, see
//! `common::canon`).
#![allow(clippy::needless_range_loop)] // Tests index parallel columns side by side.

use crate::common;
use common::*;
use lanegraph_simd::kernels::{bounds, forces, integrate, reduce};
use proptest::prelude::*;

fn any_f32s(max: usize) -> impl Strategy<Value = Vec<f32>> {
    prop::collection::vec(any::<u32>().prop_map(f32::from_bits), 0..max)
}

proptest! {
    #[test]
    fn integrate_any_bits(p in any_f32s(70), dt in any::<u32>().prop_map(f32::from_bits)) {
        let n = p.len();
        let p = padded(p, 0.0);
        let v: Vec<f32> = p.iter().rev().copied().collect();
        let mut s = p.clone();
        integrate::integrate_scalar(&mut s, &v, dt).unwrap();
        let mut l = to_lanes(&p);
        integrate::integrate(&mut l, &to_lanes(&v), dt).unwrap();
        prop_assert_eq!(from_lanes(&l).iter().map(|x| canon(*x)).collect::<Vec<_>>(),
                        s.iter().map(|x| canon(*x)).collect::<Vec<_>>(), "n {}", n);
    }

    #[test]
    fn gravity_drag_and_reflect_any_bits(v in any_f32s(40), p in any_f32s(40), a in -20.0f32..20.0, d in 0.0f32..5.0) {
        let n = v.len().min(p.len());
        let v = padded(v[..n].to_vec(), 0.0);
        let p = padded(p[..n].to_vec(), 0.0);
        let mut vs = v.clone();
        forces::gravity_drag_scalar(&mut vs, a, d, 0.016);
        let mut vl = to_lanes(&v);
        forces::gravity_drag(&mut vl, a, d, 0.016);
        prop_assert_eq!(from_lanes(&vl).iter().map(|x| canon(*x)).collect::<Vec<_>>(),
                        vs.iter().map(|x| canon(*x)).collect::<Vec<_>>());
        let (mut ps, mut vs) = (p.clone(), v.clone());
        bounds::reflect_scalar(&mut ps, &mut vs, -1.0, 1.0, 0.9).unwrap();
        let (mut pl, mut vl) = (to_lanes(&p), to_lanes(&v));
        bounds::reflect(&mut pl, &mut vl, -1.0, 1.0, 0.9).unwrap();
        prop_assert_eq!(from_lanes(&pl).iter().map(|x| canon(*x)).collect::<Vec<_>>(),
                        ps.iter().map(|x| canon(*x)).collect::<Vec<_>>());
        prop_assert_eq!(from_lanes(&vl).iter().map(|x| canon(*x)).collect::<Vec<_>>(),
                        vs.iter().map(|x| canon(*x)).collect::<Vec<_>>());
    }

    #[test]
    fn min_max_any_bits(v in any_f32s(70)) {
        let n = v.len();
        let v = padded(v, f32::NAN);
        let s = reduce::min_max_scalar(&v, n).unwrap();
        let l = reduce::min_max(&to_lanes(&v), n).unwrap();
        prop_assert_eq!(s.min.to_bits(), l.min.to_bits());
        prop_assert_eq!(s.max.to_bits(), l.max.to_bits());
    }
}
