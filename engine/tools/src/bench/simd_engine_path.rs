//! The `simd` suite's `engine_path` case: the integrate kernel run the way the engine runs it
//! (`World::par_soa_chunks2`: field-SoA columns split by the World into chunks that run on the
//! physics lane) against the bare kernel on plain slices, in one run, interleaved.
//!
//! Two designs of the hand-off, both measured every run (metric suffixes):
//! - *(none)*: the engine's plan. The owner thread serves the physics lane
//!   ([`lanegraph_jobs::plan::LanePlan::with_owner_lane`]): while it waits for the scope it runs
//!   physics chunks itself, beside the lane's worker.
//! - `_owner_waits`: the first design. The owner only publishes the chunks and sleeps until the
//!   lane's worker has run them all.
//!
//! Owns: that one measurement. Must never: assert on timing.

use lanegraph::hooks::WorldHooks;
use lanegraph_jobs::clock;
use lanegraph_simd::kernels::integrate;
use lanegraph_simd::{f32x8, SoaChunkMut};

use super::stats::percentile;
use super::{BenchError, Figure};
use lanegraph::world::World;
use lanegraph_demo::world::{Position, Velocity};

fn fail(why: impl Into<String>) -> BenchError {
    BenchError::failed("simd", why)
}

/// `entities` particles, `samples` interleaved steps of each path: ns per entity of the engine's
/// design, then of the first design (`_owner_waits`), each against the bare kernel.
pub fn engine_path(entities: usize, samples: usize) -> Result<Vec<Figure>, BenchError> {
    Ok(vec![
        one_design(entities, samples, true)?,
        one_design(entities, samples, false)?,
    ])
}

fn one_design(entities: usize, samples: usize, owner_helps: bool) -> Result<Figure, BenchError> {
    // The engine path: a World with Position and Velocity stored field-SoA and row-aligned, a
    // physics lane with one worker (the lane a 2-core machine's automatic plan gives physics).
    let mut world = World::new();
    world
        .use_field_soa::<Position>()
        .map_err(|e| fail(e.to_string()))?;
    world
        .use_field_soa::<Velocity>()
        .map_err(|e| fail(e.to_string()))?;
    for i in 0..entities {
        let e = world.spawn();
        let f = i as f32;
        world
            .insert(e, Position { x: f, y: -f })
            .map_err(|e| fail(e.to_string()))?;
        world
            .insert(e, Velocity { x: 1.0, y: 0.5 })
            .map_err(|e| fail(e.to_string()))?;
    }
    world
        .align_soa_rows::<Position, Velocity>()
        .map_err(|e| fail(e.to_string()))?;
    let lanes = if owner_helps {
        super::dispatch::physics_lanes_owner_helps(1)
    } else {
        super::dispatch::physics_lanes(1)
    };
    let physics = lanes
        .lane("physics")
        .ok_or_else(|| fail("no physics lane"))?;
    let dt = 1.0 / 60.0;
    let lanes = std::sync::Arc::new(lanes);
    world.set_parallel_lane(&lanes, physics);
    let kernel = |p: SoaChunkMut<'_, 2>, v: SoaChunkMut<'_, 2>| {
        let [px, py] = p.fields;
        let [vx, vy] = v.fields;
        let _ = integrate::integrate(px, vx, dt);
        let _ = integrate::integrate(py, vy, dt);
    };
    // The path a game takes: the World splits the columns and runs the chunks on its parallel
    // lane (allocation-free). The first design (owner waits) hands every chunk to the lane's one
    // worker explicitly: the World itself would run a one-thread query on the caller.
    let engine_step = |world: &mut World| -> Result<(), BenchError> {
        if owner_helps {
            return world
                .par_soa_chunks2::<Position, Velocity, _, _>(kernel)
                .map(drop)
                .map_err(|e| fail(e.to_string()));
        }
        let (mut pos, mut vel) = world
            .lend_soa_pair::<Position, Velocity>()
            .map_err(|e| fail(e.to_string()))?
            .ok_or_else(|| fail("columns not field-SoA"))?;
        let (mut pl, mut vl) = (pos.lanes_mut(), vel.lanes_mut());
        // 512-vector chunks (the first design's), fewer and larger past 64 of them.
        let chunk = entities.div_ceil(8).div_ceil(64).max(512);
        let pairs = pl
            .chunks::<2>(chunk)
            .map_err(|e| fail(e.to_string()))?
            .zip(vl.chunks::<2>(chunk).map_err(|e| fail(e.to_string()))?);
        let mut slots: [Option<(SoaChunkMut<'_, 2>, SoaChunkMut<'_, 2>)>; 64] =
            std::array::from_fn(|_| None);
        let mut k = 0;
        for (slot, pair) in slots.iter_mut().zip(pairs) {
            *slot = Some(pair);
            k += 1;
        }
        lanes
            .parallel_chunks_mut(physics, &mut slots[..k], 1, |_, c| {
                for (p, v) in c.iter_mut().filter_map(Option::take) {
                    kernel(p, v);
                }
            })
            .map_err(|e| fail(e.to_string()))
    };
    // The bare kernel on plain slices, on the calling thread.
    let n8 = entities.div_ceil(8);
    let mut px = vec![f32x8::splat(0.0); n8];
    let mut py = vec![f32x8::splat(0.0); n8];
    let vx = vec![f32x8::splat(1.0); n8];
    let vy = vec![f32x8::splat(0.5); n8];
    let mut bare_step = || {
        let _ = integrate::integrate(&mut px, &vx, dt);
        let _ = integrate::integrate(&mut py, &vy, dt);
        std::hint::black_box((&px, &py));
    };
    for _ in 0..samples / 10 + 1 {
        engine_step(&mut world)?;
        bare_step();
    }
    let mut ours = Vec::with_capacity(samples);
    let mut bare = Vec::with_capacity(samples);
    for _ in 0..samples {
        let t = clock::now();
        engine_step(&mut world)?;
        ours.push(clock::now().ns_since(t) as f64 / entities as f64);
        let t = clock::now();
        bare_step();
        bare.push(clock::now().ns_since(t) as f64 / entities as f64);
    }
    // Time ratio engine / bare: the goal ">= 0.90 of the bare kernel's throughput" is a ratio
    // of at most 1 / 0.90 = 1.11.
    let suffix = if owner_helps { "" } else { "_owner_waits" };
    // Threads doing kernel work: the lane's worker, plus the owner when it serves the lane.
    let threads = if owner_helps { 2 } else { 1 };
    Ok(Figure::new(
        "simd",
        "engine_path",
        threads,
        format!("ns_per_entity_{}k{suffix}", entities / 1024),
        "ns",
        percentile(&mut ours, 50.0),
    )
    .with_baseline("bare kernel on plain slices", percentile(&mut bare, 50.0)))
}
