//! The `lanes` bench suite: the point of lanes, measured. A physics fork-join's latency with and
//! without an asset-lane flood, against the same work on one shared rayon pool (where physics and
//! asset jobs compete for the same threads).
//!
//! Owns: the isolation benchmark. Must never: assert on timing.
//!
//! Cases: `isolation_p50`, `isolation_p99` (fork-join latency under the flood, ours against the
//! shared pool), plus the unloaded figures of both for reference.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use lanegraph_jobs::clock;
use lanegraph_jobs::{LanePlan, Lanes};

use super::stats::percentile;
use super::{busy, BenchError, BenchOptions, Figure};

const SUITE: &str = "lanes";
/// Chunks of the physics fork-join, and the work in each (a fixed step's worth of SoA work on a
/// small machine: 8 x 20 us).
const CHUNKS: usize = 8;
const CHUNK_NS: u64 = 20_000;
/// One asset job of the flood: a PNG decode's order of magnitude.
const ASSET_JOB_NS: u64 = 200_000;

fn fail(why: impl Into<String>) -> BenchError {
    BenchError::failed(SUITE, why)
}

/// Latency samples (us) of `runs` fork-joins after a tenth as many for warm-up.
fn sample(
    runs: usize,
    mut fork_join: impl FnMut() -> Result<(), BenchError>,
) -> Result<Vec<f64>, BenchError> {
    let mut v = Vec::with_capacity(runs);
    for i in 0..runs + runs / 10 {
        let t = clock::now();
        fork_join()?;
        if i >= runs / 10 {
            v.push(clock::now().ns_since(t) as f64 / 1000.0);
        }
    }
    Ok(v)
}

/// Runs the suite.
pub fn run(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    clock::init();
    let runs = if opts.quick { 300 } else { 2000 };
    let cores = lanegraph_jobs::plan::machine_cores().len();

    // Ours: the automatic plan; physics fork-join on the physics lane, flood on the asset lane.
    let lanes = Lanes::start(LanePlan::auto()).map_err(|e| fail(e.to_string()))?;
    let physics = lanes
        .lane("physics")
        .ok_or_else(|| fail("no physics lane"))?;
    let asset = lanes.lane("asset").ok_or_else(|| fail("no asset lane"))?;
    let physics_workers = lanes
        .plan()
        .lane(physics)
        .map_or(1, |l| l.worker_cores.len());
    let fork_join = || {
        lanes
            .parallel_for(physics, 0..CHUNKS, 1, |_, _| busy(CHUNK_NS))
            .map_err(|e| fail(e.to_string()))
    };
    let mut ours_idle = sample(runs, fork_join)?;
    let per_run_us = percentile(&mut ours_idle.clone(), 50.0);
    let flood_jobs =
        ((runs as f64 * 1.5 * per_run_us) / (ASSET_JOB_NS as f64 / 1000.0)) as usize + 64;
    let stop = Arc::new(AtomicBool::new(false));
    for _ in 0..flood_jobs {
        let stop = Arc::clone(&stop);
        lanes
            .spawn_detached(asset, move || {
                if !stop.load(Ordering::Relaxed) {
                    busy(ASSET_JOB_NS);
                }
            })
            .map_err(|e| fail(e.to_string()))?;
    }
    let mut ours_loaded = sample(runs, fork_join)?;
    stop.store(true, Ordering::Relaxed);
    drop(lanes);

    // Baseline: one shared rayon pool with a thread per core; the same fork-join and flood.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cores)
        .build()
        .map_err(|e| fail(e.to_string()))?;
    let rayon_fork_join = || {
        pool.install(|| {
            use rayon::prelude::*;
            (0..CHUNKS).into_par_iter().for_each(|_| busy(CHUNK_NS));
        });
        Ok(())
    };
    let mut theirs_idle = sample(runs, rayon_fork_join)?;
    let stop = Arc::new(AtomicBool::new(false));
    for _ in 0..flood_jobs {
        let stop = Arc::clone(&stop);
        pool.spawn(move || {
            if !stop.load(Ordering::Relaxed) {
                busy(ASSET_JOB_NS);
            }
        });
    }
    let mut theirs_loaded = sample(runs, rayon_fork_join)?;
    stop.store(true, Ordering::Relaxed);

    let base = "one shared rayon pool";
    let mut out = Vec::new();
    for (case, p) in [("isolation_p50", 50.0), ("isolation_p99", 99.0)] {
        out.push(
            Figure::new(
                SUITE,
                case,
                physics_workers,
                "fork_join_us_under_asset_flood",
                "us",
                percentile(&mut ours_loaded, p),
            )
            .with_baseline(base, percentile(&mut theirs_loaded, p)),
        );
        out.push(
            Figure::new(
                SUITE,
                case,
                physics_workers,
                "fork_join_us_idle",
                "us",
                percentile(&mut ours_idle, p),
            )
            .with_baseline(base, percentile(&mut theirs_idle, p)),
        );
    }
    Ok(out)
}
