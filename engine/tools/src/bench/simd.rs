//! The `simd` bench suite (see `docs/simd.md` and `docs/bench-notes/simd.md`).
//!
//! Owns: the quick form of this suite's benchmarks. Must never: assert on timing.
//!
//! # Cases (stable names)
//! Throughput is `Gentity/s` (entities of 24 bytes: position and velocity, x y z), higher is
//! better, so `ratio = ours / baseline` is a speed-up.
//! - `integrate_l1`, `integrate_l2`, `integrate_llc`, `integrate_mem`: `pos += vel * dt` over a
//!   working set placed by this machine's caches (`lanegraph_simd::working_sets`: half of L1d,
//!   half of L2, half of the LLC, 4x the LLC). Metric `throughput`: the `f32x8` kernel on
//!   field-SoA columns (a `SoaTable`), baseline the scalar array-of-structs loop. Metric
//!   `scalar_soa_throughput`: the scalar loop on the same columns, same baseline (layout alone,
//!   without SIMD). Metric `portable_throughput`: the same kernel forced onto the portable
//!   `f32x8` path (`force_kernel_path`), same baseline; metric `path_speedup`: the path chosen
//!   at run time (AVX2 where the CPU has it, see `lanegraph_simd::dispatch`) against the forced
//!   portable one.
//! - `bandwidth_fraction`: at the `mem` size, the field-SoA kernel's bandwidth (36 B moved per
//!   entity: 24 read, 12 written back; no write-allocate, see `kernels::stream`) against the
//!   matched streaming read-modify-write reference over the same bytes on two flat arrays; at
//!   1 thread and at every core, each thread owning a disjoint chunk (`LanesMut::chunks`).
//! - `transpose_trap`: at the `l2` size, each 8 AoS bodies transposed into registers, the `f32x8` kernel,
//!   scattered back (metric `throughput`, baseline scalar AoS; metric `vs_resident`, baseline
//!   the resident field-SoA kernel).
//!
//! Not here: `engine_path` (the kernel through the World's columns and the physics lane against
//! the bare kernel) belongs with the World and the physics lane, which are built elsewhere.
//!
//! Every figure is the median over samples; variants run interleaved within each sample so
//! drift (frequency, other processes) hits them alike. Timed with the engine clock. The build
//! level and each working set's placement go to stderr.

use std::hint::black_box;

use lanegraph_jobs::clock;
use lanegraph_simd::kernels::aos::{self, Body, BODY_BYTES};
use lanegraph_simd::kernels::integrate;
use lanegraph_simd::kernels::stream::{stream_rmw, INTEGRATE_BYTES_PER_ENTITY};
use lanegraph_simd::{
    f32x8, force_kernel_path, kernel_path, working_sets, BuildLevel, CacheSizes, KernelPath,
    SoaTable, WorkingSet,
};

use super::stats::median;
use super::{BenchError, BenchOptions, Figure};

const SUITE: &str = "simd";

/// The step: a power of two, so repeated passes move positions by exact amounts.
const DT: f32 = 1.0 / 1024.0;

/// Field order of the bench table: position then velocity.
const FIELDS: [&str; 6] = ["px", "py", "pz", "vx", "vy", "vz"];

/// Quick mode caps the `mem` working set at 256 MiB per layout so the suite stays near 30 s
/// (it is not reached on a 32 MiB-LLC machine; on a 260 MiB-LLC machine it would be, and the
/// case note on stderr then says the set is not past the LLC).
const QUICK_MEM_CAP: usize = 256 << 20;

struct Plan {
    samples: usize,
    /// Entity updates per timed sample (passes = this / entities, at least 1).
    updates_per_sample: usize,
}

impl Plan {
    fn new(opts: BenchOptions) -> Self {
        if opts.quick {
            Plan {
                samples: 15,
                updates_per_sample: 4 << 20,
            }
        } else {
            Plan {
                samples: 41,
                updates_per_sample: 16 << 20,
            }
        }
    }

    fn passes(&self, entities: usize) -> usize {
        (self.updates_per_sample / entities.max(1)).max(1)
    }
}

/// Runs the suite.
pub fn run(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    let level = lanegraph_simd::check_cpu().map_err(|e| BenchError::Unavailable {
        suite: SUITE,
        why: e.to_string(),
        fix: "run the portable build".into(),
    })?;
    let plan = Plan::new(opts);
    let caches = CacheSizes::detect();
    let cap = opts.quick.then_some(QUICK_MEM_CAP);
    let sets = working_sets(&caches, BODY_BYTES, cap);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    eprintln!(
        "# simd: build level {} ({}), kernel path {}; caches from {}: L1d {} KiB, L2 {} KiB, LLC {} MiB",
        level.name(),
        level_note(level),
        kernel_path().name(),
        caches.source,
        caches.l1d >> 10,
        caches.l2 >> 10,
        caches.llc >> 20
    );
    let mut figures = Vec::new();
    for set in &sets {
        eprintln!(
            "# simd: integrate_{}: {} entities, {} KiB per layout ({})",
            set.level,
            set.entities,
            set.bytes >> 10,
            set.note
        );
        let mut bench = Bodies::new(set.entities)?;
        let case = format!("integrate_{}", set.level);
        // [f32x8 SoA, scalar SoA, scalar AoS, trap]: ns per pass; the trap runs at l2 only.
        let [simd, scalar_soa, aos_ns, trap, portable] =
            bench.integrate_variants(&plan, set.level == "l2");
        let [simd, scalar_soa, aos_ns, portable] =
            [simd, scalar_soa, aos_ns, portable].map(|v| v.unwrap_or(f64::NAN));
        let tput = |ns: f64| set.entities as f64 / ns; // entities per ns = Gentity/s
        figures.push(
            Figure::new(SUITE, &case, 1, "throughput", "Gentity/s", tput(simd))
                .with_baseline("scalar AoS", tput(aos_ns)),
        );
        figures.push(
            Figure::new(
                SUITE,
                &case,
                1,
                "portable_throughput",
                "Gentity/s",
                tput(portable),
            )
            .with_baseline("scalar AoS", tput(aos_ns)),
        );
        figures.push(
            Figure::new(SUITE, &case, 1, "path_speedup", "Gentity/s", tput(simd))
                .with_baseline("f32x8 forced portable", tput(portable)),
        );
        figures.push(
            Figure::new(
                SUITE,
                &case,
                1,
                "scalar_soa_throughput",
                "Gentity/s",
                tput(scalar_soa),
            )
            .with_baseline("scalar AoS", tput(aos_ns)),
        );
        if let Some(trap) = trap {
            figures.push(
                Figure::new(
                    SUITE,
                    "transpose_trap",
                    1,
                    "throughput",
                    "Gentity/s",
                    tput(trap),
                )
                .with_baseline("scalar AoS", tput(aos_ns)),
            );
            figures.push(
                Figure::new(
                    SUITE,
                    "transpose_trap",
                    1,
                    "vs_resident",
                    "Gentity/s",
                    tput(trap),
                )
                .with_baseline("f32x8 field-SoA resident", tput(simd)),
            );
        }
        if set.level == "mem" {
            drop(bench.aos);
            figures.extend(bandwidth(&plan, set, &mut bench.table, threads)?);
        }
    }
    // The engine path through the World's columns and the physics lane, against the bare kernel:
    // 64 Ki particles (a 22 us step here: the lane hand-off is a visible share of it) and 1 Mi
    // (a step of ~1 ms, a game-sized physics step).
    let samples = if opts.quick { 200 } else { 2000 };
    for entities in [64 * 1024, 1024 * 1024] {
        figures.extend(super::simd_engine_path::engine_path(entities, samples)?);
    }
    Ok(figures)
}

fn level_note(level: BuildLevel) -> &'static str {
    match level {
        BuildLevel::V3 => "f32x8 = one AVX register",
        BuildLevel::Baseline => "f32x8 = two SSE registers",
        BuildLevel::OtherArch => "portable",
    }
}

/// One working set in both layouts, holding the same values.
struct Bodies {
    entities: usize,
    table: SoaTable,
    aos: Vec<Body>,
}

impl Bodies {
    fn new(entities: usize) -> Result<Self, BenchError> {
        let failed = |why: String| BenchError::Failed { suite: SUITE, why };
        let mut table = SoaTable::new(&FIELDS).map_err(|e| failed(e.to_string()))?;
        table.reserve(entities);
        let mut aos = Vec::with_capacity(entities);
        for i in 0..entities {
            // Small, varied, finite values (no subnormal or NaN slow paths in any variant).
            let f = (i % 1000) as f32;
            let b = Body {
                pos: [f, f * 0.5, -f],
                vel: [1.0 + f * 1e-3, -2.0, 0.25],
            };
            let row = [b.pos[0], b.pos[1], b.pos[2], b.vel[0], b.vel[1], b.vel[2]];
            table.push_row(&row).map_err(|e| failed(e.to_string()))?;
            aos.push(b);
        }
        Ok(Bodies {
            entities,
            table,
            aos,
        })
    }

    /// Median ns per pass of: the dispatched kernel on SoA, scalar SoA, scalar AoS, (if asked)
    /// the trap, and the kernel forced onto the portable path.
    fn integrate_variants(&mut self, plan: &Plan, with_trap: bool) -> [Option<f64>; 5] {
        let passes = plan.passes(self.entities);
        let mut samples: [Vec<f64>; 5] = Default::default();
        for s in 0..=plan.samples {
            for (v, out) in samples.iter_mut().enumerate() {
                if v == 3 && !with_trap {
                    continue;
                }
                let t0 = clock::now();
                for _ in 0..passes {
                    self.pass(v);
                }
                let ns = clock::now().ns_since(t0) as f64 / passes as f64;
                if s > 0 {
                    // Sample 0 warms caches, pages and branch predictors.
                    out.push(ns);
                }
            }
        }
        samples.map(|mut v| (!v.is_empty()).then(|| median(&mut v)))
    }

    fn pass(&mut self, variant: usize) {
        match variant {
            0 => {
                let mut lanes = self.table.lanes_mut();
                let [px, py, pz, vx, vy, vz] = lanes.fields::<6>().expect("6 fields");
                integrate::integrate3([px, py, pz], [vx, vy, vz], DT).expect("equal columns");
            }
            1 => {
                let [px, py, pz, vx, vy, vz] = self.table.fields_mut::<6>().expect("6 fields");
                integrate::integrate3_scalar([px, py, pz], [vx, vy, vz], DT)
                    .expect("equal columns");
            }
            2 => aos::integrate_aos(&mut self.aos, DT),
            3 => aos::integrate_transposed(&mut self.aos, DT),
            _ => {
                force_kernel_path(Some(KernelPath::Portable));
                let mut lanes = self.table.lanes_mut();
                let [px, py, pz, vx, vy, vz] = lanes.fields::<6>().expect("6 fields");
                integrate::integrate3([px, py, pz], [vx, vy, vz], DT).expect("equal columns");
                force_kernel_path(None);
            }
        }
        black_box(&mut self.table);
        black_box(&mut self.aos);
    }
}

/// The `bandwidth_fraction` figures: field-SoA kernel vs the matched stream reference, GB/s.
fn bandwidth(
    plan: &Plan,
    set: &WorkingSet,
    table: &mut SoaTable,
    threads: usize,
) -> Result<Vec<Figure>, BenchError> {
    let lanes = table.lane_count();
    // The reference's two flat arrays: as many floats as the three position and the three
    // velocity columns, in two streams instead of six.
    let mut a = vec![f32x8::splat(1.0); lanes * 3];
    let b = vec![f32x8::splat(0.5); lanes * 3];
    let bytes = (set.entities * INTEGRATE_BYTES_PER_ENTITY) as f64;
    let mut figures = Vec::new();
    let mut counts = vec![1];
    if threads > 1 {
        counts.push(threads);
    }
    for &t in &counts {
        let mut ours = Vec::new();
        let mut reference = Vec::new();
        for s in 0..=plan.samples {
            let t0 = clock::now();
            kernel_on_threads(table, t);
            let k = clock::now().ns_since(t0) as f64;
            let t0 = clock::now();
            stream_on_threads(&mut a, &b, t);
            let r = clock::now().ns_since(t0) as f64;
            if s > 0 {
                ours.push(bytes / k); // bytes per ns = GB/s
                reference.push(bytes / r);
            }
        }
        figures.push(
            Figure::new(
                SUITE,
                "bandwidth_fraction",
                t,
                "bandwidth",
                "GB/s",
                median(&mut ours),
            )
            .with_baseline("stream RMW (matched bytes)", median(&mut reference)),
        );
    }
    black_box(&mut a);
    Ok(figures)
}

fn kernel_on_threads(table: &mut SoaTable, threads: usize) {
    let mut lanes = table.lanes_mut();
    let per = lanes.lane_count().div_ceil(threads).max(1);
    let chunks = lanes.chunks::<6>(per).expect("6 fields, chunk >= 1");
    std::thread::scope(|s| {
        for chunk in chunks {
            s.spawn(move || {
                let [px, py, pz, vx, vy, vz] = chunk.fields;
                integrate::integrate3([px, py, pz], [vx, vy, vz], DT).expect("equal chunks");
            });
        }
    });
}

fn stream_on_threads(a: &mut [f32x8], b: &[f32x8], threads: usize) {
    let per = a.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for (a, b) in a.chunks_mut(per).zip(b.chunks(per)) {
            s.spawn(move || stream_rmw(a, b, DT).expect("equal chunks"));
        }
    });
}
