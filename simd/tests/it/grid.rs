//! The uniform-grid neighbour pass: SIMD equals its scalar twin bit for bit, and both find
//! exactly the neighbours a brute-force O(n^2) search finds.
#![allow(clippy::needless_range_loop)] // Tests index parallel columns side by side.

use crate::common;
use common::*;
use lanegraph_simd::kernels::grid::{GridError, NeighbourSums, UniformGrid};

fn cloud(rng: &mut Rng, n: usize, extent: f32, edge_every: u64) -> [Vec<f32>; 6] {
    [
        values(rng, n, extent, edge_every),
        values(rng, n, extent, edge_every),
        values(rng, n, extent, edge_every),
        values(rng, n, 2.0, 0),
        values(rng, n, 2.0, 0),
        values(rng, n, 2.0, 0),
    ]
}

fn build(c: &[Vec<f32>; 6], radius: f32) -> UniformGrid {
    let mut g = UniformGrid::new();
    g.rebuild([&c[0], &c[1], &c[2]], [&c[3], &c[4], &c[5]], radius)
        .unwrap();
    g
}

fn bits(s: &NeighbourSums) -> Vec<u32> {
    std::iter::once(&s.count)
        .chain(&s.offset)
        .chain(&s.velocity)
        .flat_map(|v| v.iter().map(|x| canon(*x)))
        .collect()
}

#[test]
fn simd_equals_scalar_twin_bit_for_bit() {
    let mut rng = Rng::new(42);
    for (n, extent, radius, edges) in [
        (0, 1.0, 1.0, 0),
        (1, 1.0, 1.0, 0),
        (9, 1.0, 0.5, 0),
        (500, 10.0, 1.5, 0),
        (700, 5.0, 1.0, 23),   // NaN / inf / extreme positions mixed in
        (300, 1.0e6, 0.01, 0), // sparse: cell size doubles to bound the grid
    ] {
        let c = cloud(&mut rng, n, extent, edges);
        let g = build(&c, radius);
        let (mut a, mut b) = (NeighbourSums::default(), NeighbourSums::default());
        g.neighbour_sums(&mut a);
        g.neighbour_sums_scalar(&mut b);
        assert_eq!(a.count.len(), n);
        assert_eq!(bits(&a), bits(&b), "n {n} extent {extent}");
    }
}

#[test]
fn finds_exactly_the_brute_force_neighbours() {
    let mut rng = Rng::new(7);
    let n = 600;
    let r = 1.25f32;
    let c = cloud(&mut rng, n, 4.0, 31);
    let g = build(&c, r);
    assert!(g.cell_size() >= r);
    let mut s = NeighbourSums::default();
    g.neighbour_sums(&mut s);
    let mut total = 0.0;
    for i in 0..n {
        let mut count = 0.0f32;
        let mut off = [0.0f64; 3];
        let mut vel = [0.0f64; 3];
        for j in 0..n {
            if i == j {
                continue;
            }
            let d = [c[0][j] - c[0][i], c[1][j] - c[1][i], c[2][j] - c[2][i]];
            if d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < r * r {
                count += 1.0;
                for a in 0..3 {
                    off[a] += d[a] as f64;
                    vel[a] += c[3 + a][j] as f64;
                }
            }
        }
        assert_eq!(s.count[i], count, "row {i}");
        for a in 0..3 {
            // Sums in another order: equal to within f32 rounding of the terms.
            assert!(
                (s.offset[a][i] as f64 - off[a]).abs() < 1e-3,
                "offset row {i}"
            );
            assert!(
                (s.velocity[a][i] as f64 - vel[a]).abs() < 1e-3,
                "velocity row {i}"
            );
        }
        total += count;
    }
    assert!(
        total > n as f32,
        "test cloud too sparse to mean anything: {total}"
    );
}

#[test]
fn rebuild_reuses_and_validates() {
    let mut rng = Rng::new(1);
    let c = cloud(&mut rng, 50, 3.0, 0);
    let mut g = build(&c, 1.0);
    assert_eq!(g.len(), 50);
    for bad in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        let e = g
            .rebuild([&c[0], &c[1], &c[2]], [&c[3], &c[4], &c[5]], bad)
            .unwrap_err();
        assert!(matches!(e, GridError::Radius { .. }), "{e}");
    }
    let e = g
        .rebuild([&c[0], &c[1][..3], &c[2]], [&c[3], &c[4], &c[5]], 1.0)
        .unwrap_err();
    assert!(matches!(e, GridError::Length(_)));
}

/// The ranged pass (slot ranges, then a row gather), cut at any chunk size, equals the whole
/// pass bit for bit, including NaN / inf particles and ranges that end mid-vector.
#[test]
fn ranged_pass_equals_whole_pass_for_any_cut() {
    let mut rng = Rng::new(99);
    for (n, extent, radius, edges) in [(0, 1.0, 1.0, 0), (1, 1.0, 1.0, 0), (701, 6.0, 1.0, 17)] {
        let c = cloud(&mut rng, n, extent, edges);
        let g = build(&c, radius);
        let mut whole = NeighbourSums::default();
        g.neighbour_sums(&mut whole);
        for chunk in [1, 7, 64, 1000] {
            let mut slots = NeighbourSums::default();
            slots.reset(n);
            let mut start = 0;
            while start < n {
                let end = (start + chunk).min(n);
                let cols = slots.columns_mut().map(|v| &mut v[start..end]);
                g.neighbour_sums_slots(start, cols).unwrap();
                start = end;
            }
            let mut rows = NeighbourSums::default();
            rows.reset(n);
            let src = slots.columns();
            let mut start = 0;
            while start < n {
                let end = (start + chunk).min(n);
                let cols = rows.columns_mut().map(|v| &mut v[start..end]);
                g.rows_from_slots(start, src, cols).unwrap();
                start = end;
            }
            assert_eq!(bits(&rows), bits(&whole), "n {n} chunk {chunk}");
        }
        // A range past the particles, or columns of unequal length, are typed errors.
        let mut a = vec![0.0; 2];
        let mut b = vec![0.0; 2];
        let mut c1 = vec![0.0; 2];
        let mut d = vec![0.0; 2];
        let mut e = vec![0.0; 2];
        let mut f = vec![0.0; 2];
        let mut short = vec![0.0; 1];
        assert!(g
            .neighbour_sums_slots(
                n,
                [&mut a, &mut b, &mut c1, &mut d, &mut e, &mut f, &mut short]
            )
            .is_err());
        let mut h = vec![0.0; 2];
        assert!(g
            .neighbour_sums_slots(n, [&mut a, &mut b, &mut c1, &mut d, &mut e, &mut f, &mut h])
            .is_err());
    }
}
