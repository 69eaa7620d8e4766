//! The ecs_bench_suite workloads run on lanegraph with hecs as the baseline in the same run
//! (issue 25). So far: `simple_insert`.
//!
//! Owns: the suite's workloads and their lanegraph and hecs forms. Must never: assert on a
//! figure, or compare runs whose checksums differ (each case checks both sides built the same
//! data before it reports).
//!
//! - `ecs_suite_simple_insert`: a new world, then 10,000 entities spawned with four components
//!   (`Transform`: a 4x4 `f32` matrix, `Position`, `Rotation`, `Velocity`: 3 `f32` each), the
//!   idiomatic way in each library (lanegraph: `spawn` and four `insert`s; hecs: `spawn` of a
//!   tuple). Microseconds per world, median of interleaved samples; goal <= 0.5x hecs.

use std::hint::black_box;

use lanegraph::world::{Component, StateHash, World};
use lanegraph_jobs::clock;

use super::stats::median;
use super::{BenchError, BenchOptions, Figure};

const SUITE: &str = "ecs";
const ENTITIES: usize = 10_000;

#[derive(Clone, Copy, Component, StateHash)]
#[component(domains(TRANSFORM))]
struct Transform([f32; 16]);
#[derive(Clone, Copy, Component, StateHash)]
#[component(domains(TRANSFORM))]
struct Position([f32; 3]);
#[derive(Clone, Copy, Component, StateHash)]
#[component(domains(TRANSFORM))]
struct Rotation([f32; 3]);
#[derive(Clone, Copy, Component, StateHash)]
#[component(domains(PHYSICS))]
struct Velocity([f32; 3]);

fn ours() -> Result<World, BenchError> {
    let mut w = World::new();
    let fail = |e: lanegraph::world::ComponentError| BenchError::Failed {
        suite: SUITE,
        why: e.to_string(),
    };
    for i in 0..ENTITIES {
        let e = w.spawn();
        w.insert(e, Transform([1.0; 16])).map_err(fail)?;
        w.insert(e, Position([i as f32, 0.0, 0.0])).map_err(fail)?;
        w.insert(e, Rotation([0.0, 1.0, 0.0])).map_err(fail)?;
        w.insert(e, Velocity([1.0, 0.0, 0.0])).map_err(fail)?;
    }
    Ok(w)
}

fn theirs() -> hecs::World {
    let mut w = hecs::World::new();
    for i in 0..ENTITIES {
        w.spawn((
            Transform([1.0; 16]),
            Position([i as f32, 0.0, 0.0]),
            Rotation([0.0, 1.0, 0.0]),
            Velocity([1.0, 0.0, 0.0]),
        ));
    }
    w
}

/// Runs the suite's cases.
pub fn run(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    let samples = if opts.quick { 21 } else { 61 };
    // Same data on both sides: the sum of every position's x.
    let ours_sum: f32 = ours()?
        .column::<Position>()
        .map_or(0.0, |c| c.values().iter().map(|p| p.0[0]).sum());
    let mut h = theirs();
    let theirs_sum: f32 = h.query_mut::<&Position>().into_iter().map(|p| p.0[0]).sum();
    if ours_sum != theirs_sum {
        return Err(BenchError::Failed {
            suite: SUITE,
            why: format!("simple_insert checksums differ: {ours_sum} vs {theirs_sum}"),
        });
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..samples {
        let t0 = clock::now();
        black_box(ours()?);
        a.push(clock::now().ns_since(t0) as f64 / 1e3);
        let t0 = clock::now();
        black_box(theirs());
        b.push(clock::now().ns_since(t0) as f64 / 1e3);
    }
    Ok(vec![Figure::new(
        SUITE,
        "ecs_suite_simple_insert",
        1,
        "us_per_world_of_10k_x4",
        "us",
        median(&mut a),
    )
    .with_baseline("hecs spawn of a 4-tuple", median(&mut b))])
}
