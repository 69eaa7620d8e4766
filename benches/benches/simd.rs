//! Criterion: the SIMD kernels against their obvious alternatives, in one run.
//!
//! - `integrate/<level>/<set>`: `pos += vel * dt` over working sets placed by this machine's
//!   caches (L1d/2, L2/2, LLC/2, 4x LLC; `lanegraph_simd::working_sets`): `f32x8` on field-SoA,
//!   scalar on field-SoA, scalar on AoS (the baseline), and `f32x8` with a transpose to AoS and
//!   back (the trap; at L1 and L2 only, it is slow enough).
//! - `bandwidth/<level>/mem`: the field-SoA kernel against the matched streaming
//!   read-modify-write reference over the same bytes (36 B per entity, no write-allocate).
//! - `kernels/<level>/<name>`: every other kernel at the L2 size, `f32x8` against its scalar
//!   twin: gravity + drag, reflect, min/max, sphere cull, frustum cull, grid neighbour sums.
//!
//! `<level>` names the build level (`x86-64` or `x86-64-v3`), so figures from the two builds
//! never mix. Run: `cargo bench -p lanegraph-benches --bench simd`, and for v3
//! `RUSTFLAGS="-C target-cpu=x86-64-v3" cargo bench -p lanegraph-benches --bench simd`
//! (in its own target dir: see scripts/simd-levels).

// `criterion_group!` expands to an undocumented `pub fn`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lanegraph_simd::kernels::aos::{self, Body, BODY_BYTES};
use lanegraph_simd::kernels::cull::{self, Frustum};
use lanegraph_simd::kernels::grid::{NeighbourSums, UniformGrid};
use lanegraph_simd::kernels::stream::{stream_rmw, INTEGRATE_BYTES_PER_ENTITY};
use lanegraph_simd::kernels::{bounds, forces, integrate, reduce};
use lanegraph_simd::{f32x8, working_sets, BuildLevel, CacheSizes, SoaTable};

const DT: f32 = 1.0 / 1024.0;
const FIELDS: [&str; 6] = ["px", "py", "pz", "vx", "vy", "vz"];

fn level() -> &'static str {
    BuildLevel::current().name()
}

fn bodies(n: usize) -> (SoaTable, Vec<Body>) {
    let mut t = SoaTable::new(&FIELDS).expect("valid fields");
    t.reserve(n);
    let mut a = Vec::with_capacity(n);
    for i in 0..n {
        let f = (i % 1000) as f32;
        let b = Body {
            pos: [f, f * 0.5, -f],
            vel: [1.0 + f * 1e-3, -2.0, 0.25],
        };
        t.push_row(&[b.pos[0], b.pos[1], b.pos[2], b.vel[0], b.vel[1], b.vel[2]])
            .expect("6 values");
        a.push(b);
    }
    (t, a)
}

fn simd_pass(t: &mut SoaTable) {
    let mut l = t.lanes_mut();
    let [px, py, pz, vx, vy, vz] = l.fields::<6>().expect("6 fields");
    integrate::integrate3([px, py, pz], [vx, vy, vz], DT).expect("equal columns");
}

fn integrate_benches(c: &mut Criterion) {
    lanegraph_simd::check_cpu().expect("this build runs on this CPU");
    let caches = CacheSizes::detect();
    for set in working_sets(&caches, BODY_BYTES, None) {
        let (mut table, mut aos_data) = bodies(set.entities);
        let mut g = c.benchmark_group(format!("integrate/{}/{}", level(), set.level));
        g.throughput(Throughput::Elements(set.entities as u64));
        if set.level == "llc" || set.level == "mem" {
            g.sample_size(20).measurement_time(Duration::from_secs(4));
        }
        g.bench_function("f32x8_soa", |b| b.iter(|| simd_pass(black_box(&mut table))));
        g.bench_function("scalar_soa", |b| {
            b.iter(|| {
                let [px, py, pz, vx, vy, vz] = table.fields_mut::<6>().expect("6 fields");
                integrate::integrate3_scalar([px, py, pz], [vx, vy, vz], DT).expect("equal");
            })
        });
        g.bench_function("scalar_aos", |b| {
            b.iter(|| aos::integrate_aos(black_box(&mut aos_data), DT))
        });
        if set.level == "l1" || set.level == "l2" {
            g.bench_function("f32x8_transpose_trap", |b| {
                b.iter(|| aos::integrate_transposed(black_box(&mut aos_data), DT))
            });
        }
        g.finish();
        if set.level == "mem" {
            drop(aos_data);
            let lanes = table.lane_count();
            let mut a = vec![f32x8::splat(1.0); lanes * 3];
            let bvec = vec![f32x8::splat(0.5); lanes * 3];
            let mut g = c.benchmark_group(format!("bandwidth/{}/mem", level()));
            g.throughput(Throughput::Bytes(
                (set.entities * INTEGRATE_BYTES_PER_ENTITY) as u64,
            ));
            g.sample_size(20).measurement_time(Duration::from_secs(4));
            g.bench_function("f32x8_soa_integrate", |b| {
                b.iter(|| simd_pass(black_box(&mut table)))
            });
            g.bench_function("stream_rmw_reference", |b| {
                b.iter(|| stream_rmw(black_box(&mut a), &bvec, DT).expect("equal"))
            });
            g.finish();
        }
    }
}

/// Seeded values in [-scale, scale): the same data for both twins.
fn data(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

fn lanes(v: &[f32]) -> Vec<f32x8> {
    v.chunks(8)
        .map(|c| {
            let mut a = [0.0; 8];
            a[..c.len()].copy_from_slice(c);
            f32x8::new(a)
        })
        .collect()
}

fn kernel_benches(c: &mut Criterion) {
    let caches = CacheSizes::detect();
    let n = working_sets(&caches, BODY_BYTES, None)[1].entities;
    let mut g = c.benchmark_group(format!("kernels/{}", level()));
    g.throughput(Throughput::Elements(n as u64));
    let (x, y, z) = (data(n, 1, 50.0), data(n, 2, 50.0), data(n, 3, 50.0));
    let (lx, ly, lz) = (lanes(&x), lanes(&y), lanes(&z));
    let mut v = data(n, 4, 5.0);
    let mut lv = lanes(&v);

    g.bench_function("gravity_drag/f32x8", |b| {
        b.iter(|| forces::gravity_drag(black_box(&mut lv), -9.81, 0.1, DT))
    });
    g.bench_function("gravity_drag/scalar", |b| {
        b.iter(|| forces::gravity_drag_scalar(black_box(&mut v), -9.81, 0.1, DT))
    });
    let (mut px, mut lpx) = (x.clone(), lx.clone());
    g.bench_function("reflect/f32x8", |b| {
        b.iter(|| bounds::reflect(black_box(&mut lpx), &mut lv, -40.0, 40.0, 0.9).expect("ok"))
    });
    g.bench_function("reflect/scalar", |b| {
        b.iter(|| bounds::reflect_scalar(black_box(&mut px), &mut v, -40.0, 40.0, 0.9).expect("ok"))
    });
    g.bench_function("min_max/f32x8", |b| {
        b.iter(|| reduce::min_max(black_box(&lx), n).expect("ok"))
    });
    let px_padded: Vec<f32> = lx.iter().flat_map(|v| v.to_array()).collect();
    g.bench_function("min_max/scalar", |b| {
        b.iter(|| reduce::min_max_scalar(black_box(&px_padded), n).expect("ok"))
    });
    let (py_padded, pz_padded): (Vec<f32>, Vec<f32>) = (
        ly.iter().flat_map(|v| v.to_array()).collect(),
        lz.iter().flat_map(|v| v.to_array()).collect(),
    );
    let mut mask = vec![0u8; lx.len()];
    g.bench_function("cull_sphere/f32x8", |b| {
        b.iter(|| cull::cull_sphere([&lx, &ly, &lz], n, [1.0, 2.0, 3.0], 30.0, &mut mask))
    });
    g.bench_function("cull_sphere/scalar", |b| {
        b.iter(|| {
            cull::cull_sphere_scalar(
                [&px_padded, &py_padded, &pz_padded],
                n,
                [1.0, 2.0, 3.0],
                30.0,
                &mut mask,
            )
        })
    });
    let frustum = Frustum::from_view_proj([
        [0.02, 0.0, 0.0, 0.0],
        [0.0, 0.02, 0.0, 0.0],
        [0.0, 0.0, 0.01, 0.5],
        [0.0, 0.0, 0.0, 1.0],
    ]);
    let radius = vec![f32x8::splat(0.5); lx.len()];
    let radius_flat = vec![0.5f32; lx.len() * 8];
    g.bench_function("cull_frustum/f32x8", |b| {
        b.iter(|| cull::cull_frustum([&lx, &ly, &lz], &radius, n, &frustum, &mut mask))
    });
    g.bench_function("cull_frustum/scalar", |b| {
        b.iter(|| {
            cull::cull_frustum_scalar(
                [&px_padded, &py_padded, &pz_padded],
                &radius_flat,
                n,
                &frustum,
                &mut mask,
            )
        })
    });
    g.finish();

    // The neighbour pass: 4096 particles in a 16^3 box, radius 1.5 (about 14 neighbours each).
    let m = 4096;
    let p = [data(m, 5, 8.0), data(m, 6, 8.0), data(m, 7, 8.0)];
    let vel = [data(m, 8, 1.0), data(m, 9, 1.0), data(m, 10, 1.0)];
    let mut grid = UniformGrid::new();
    let mut sums = NeighbourSums::default();
    let mut g = c.benchmark_group(format!("grid/{}", level()));
    g.throughput(Throughput::Elements(m as u64));
    g.bench_function("rebuild", |b| {
        b.iter(|| {
            grid.rebuild([&p[0], &p[1], &p[2]], [&vel[0], &vel[1], &vel[2]], 1.5)
                .expect("valid")
        })
    });
    g.bench_function("neighbour_sums/f32x8", |b| {
        b.iter(|| grid.neighbour_sums(black_box(&mut sums)))
    });
    g.bench_function("neighbour_sums/scalar", |b| {
        b.iter(|| grid.neighbour_sums_scalar(black_box(&mut sums)))
    });
    g.finish();
}

criterion_group!(
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = integrate_benches, kernel_benches
);
criterion_main!(benches);
