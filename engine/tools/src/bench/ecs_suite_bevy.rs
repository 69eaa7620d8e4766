//! The ecs_bench_suite workloads against bevy_ecs, in the same run as the hecs rows:
//! built with `--features bevy-baseline` (off by default, so the `lanegraph` binary does not
//! build bevy_ecs).
//!
//! Owns: the bevy_ecs form of each `ecs_suite` case and its `ecs_suite_<case>_vs_bevy` row.
//! Must never: assert on a figure, or report a case whose two sides computed different data
//! (each compares a checksum of both worlds after the timed runs).
//!
//! The lanegraph side is the same idiomatic code as the hecs rows' (`super::ecs_suite`); the
//! bevy side is what bevy's own docs write: `World::spawn_batch`, `QueryState::iter_mut`, a
//! `Schedule` of three chained systems (single-threaded executor: the lanegraph schedule and the
//! hecs loops run on one thread too), `par_iter_mut` with bevy's default batching on a
//! two-thread `ComputeTaskPool`, and `EntityWorldMut::insert` / `remove`.

use bevy_ecs::prelude::{Component, Query, Schedule, World as BevyWorld};
use bevy_ecs::schedule::{IntoScheduleConfigs, SingleThreadedExecutor};
use lanegraph::hooks::WorldHooks;

use super::ecs_suite::{
    check, fail, frag_ours, heavy_row, identity, interleave, lane, ours_batch, ours_sum_x,
    schedule_ours, Data, Position, Transform, ENTITIES, FRAG_PASSES, SA, SB, SC, SUITE,
};
use super::{BenchError, Figure};

#[derive(Component, Clone, Copy)]
struct BTransform(Transform);
#[derive(Component, Clone, Copy)]
struct BPosition([f32; 3]);
#[derive(Component, Clone, Copy)]
struct BRotation(#[allow(dead_code)] [f32; 3]);
#[derive(Component, Clone, Copy)]
struct BVelocity([f32; 3]);

fn bundle(i: usize) -> (BTransform, BPosition, BRotation, BVelocity) {
    (
        BTransform(Transform([1.0; 16])),
        BPosition([i as f32, 0.0, 0.0]),
        BRotation([0.0, 1.0, 0.0]),
        BVelocity([1.0, 0.0, 0.0]),
    )
}

fn bevy_batch() -> BevyWorld {
    let mut w = BevyWorld::new();
    w.spawn_batch((0..ENTITIES).map(bundle)).for_each(drop);
    w
}

fn bevy_sum_x(w: &mut BevyWorld) -> f64 {
    w.query::<&BPosition>().iter(w).map(|p| p.0[0] as f64).sum()
}

fn row(case: &str, metric: &str, threads: usize, ours: f64, theirs: f64, what: &str) -> Figure {
    Figure::new(
        SUITE,
        format!("ecs_suite_{case}_vs_bevy"),
        threads,
        metric,
        "us",
        ours,
    )
    .with_baseline(what, theirs)
}

fn simple_insert(samples: usize) -> Result<Figure, BenchError> {
    check(
        "simple_insert (bevy)",
        ours_sum_x(&mut ours_batch()?),
        bevy_sum_x(&mut bevy_batch()),
    )?;
    let mut err = None;
    let (a, b) = interleave(
        samples,
        || match ours_batch() {
            Ok(w) => drop(std::hint::black_box(w)),
            Err(e) => err = Some(e),
        },
        || drop(std::hint::black_box(bevy_batch())),
    );
    if let Some(e) = err {
        return Err(e);
    }
    Ok(row(
        "simple_insert",
        "us_per_world_of_10k_x4",
        1,
        a,
        b,
        "bevy_ecs spawn_batch",
    ))
}

fn simple_iter(samples: usize) -> Result<Figure, BenchError> {
    let mut ours = ours_batch()?;
    let mut theirs = bevy_batch();
    let mut state = theirs.query::<(&BVelocity, &mut BPosition)>();
    let (a, b) = interleave(
        samples,
        || {
            if let Ok(mut q) = ours.query::<(&super::ecs_suite::Velocity, &mut Position)>() {
                q.for_each(|(v, p)| {
                    p.0[0] += v.0[0];
                    p.0[1] += v.0[1];
                    p.0[2] += v.0[2];
                });
            }
        },
        || {
            for (v, mut p) in state.iter_mut(&mut theirs) {
                p.0[0] += v.0[0];
                p.0[1] += v.0[1];
                p.0[2] += v.0[2];
            }
        },
    );
    check(
        "simple_iter (bevy)",
        ours_sum_x(&mut ours),
        bevy_sum_x(&mut theirs),
    )?;
    Ok(row(
        "simple_iter",
        "us_per_pass_of_10k",
        1,
        a,
        b,
        "bevy_ecs QueryState::iter_mut",
    ))
}

#[derive(Component, Clone, Copy)]
struct BData(f32);

macro_rules! bevy_frag {
    ($($t:ident),+) => {
        fn frag_bevy() -> BevyWorld {
            $(
                #[derive(Component, Clone, Copy)]
                struct $t(#[allow(dead_code)] f32);
            )+
            let mut w = BevyWorld::new();
            $(w.spawn_batch((0..20).map(|_| ($t(0.0), BData(1.0)))).for_each(drop);)+
            w
        }
    };
}
bevy_frag!(A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S, T, U, V, W, X, Y, Z);

fn frag_iter(samples: usize) -> Result<Figure, BenchError> {
    let mut ours = frag_ours()?;
    let mut theirs = frag_bevy();
    let mut state = theirs.query::<&mut BData>();
    let (a, b) = interleave(
        samples,
        || {
            for _ in 0..FRAG_PASSES {
                if let Ok(mut q) = ours.query::<&mut Data>() {
                    q.for_each(|d| d.0 *= -1.0);
                }
            }
        },
        || {
            for _ in 0..FRAG_PASSES {
                for mut d in state.iter_mut(&mut theirs) {
                    d.0 *= -1.0;
                }
            }
        },
    );
    let (a, b) = (a / FRAG_PASSES as f64, b / FRAG_PASSES as f64);
    let mut s_ours = 0.0f64;
    if let Ok(mut q) = ours.query::<&Data>() {
        q.for_each(|d| s_ours += d.0 as f64);
    }
    let s_theirs: f64 = theirs
        .query::<&BData>()
        .iter(&theirs)
        .map(|d| d.0 as f64)
        .sum();
    check("frag_iter (bevy)", s_ours, s_theirs)?;
    Ok(row(
        "frag_iter",
        "us_per_pass_of_26x20",
        1,
        a,
        b,
        "bevy_ecs QueryState::iter_mut",
    ))
}

#[derive(Component, Clone, Copy)]
struct BA(f32);
#[derive(Component, Clone, Copy)]
struct BB(f32);
#[derive(Component, Clone, Copy)]
struct BC(f32);
#[derive(Component, Clone, Copy)]
struct BD(f32);
#[derive(Component, Clone, Copy)]
struct BE(f32);

fn ab(mut q: Query<(&mut BA, &mut BB)>) {
    for (mut a, mut b) in &mut q {
        std::mem::swap(&mut a.0, &mut b.0);
    }
}
fn cd(mut q: Query<(&mut BC, &mut BD)>) {
    for (mut c, mut d) in &mut q {
        std::mem::swap(&mut c.0, &mut d.0);
    }
}
fn ce(mut q: Query<(&mut BC, &mut BE)>) {
    for (mut c, mut e) in &mut q {
        std::mem::swap(&mut c.0, &mut e.0);
    }
}

fn schedule(samples: usize) -> Result<Figure, BenchError> {
    let mut ours = schedule_ours()?;
    let mut theirs = BevyWorld::new();
    let n = ENTITIES;
    theirs
        .spawn_batch((0..n).map(|_| (BA(0.0), BB(1.0))))
        .for_each(drop);
    theirs
        .spawn_batch((0..n).map(|_| (BA(0.0), BB(1.0), BC(2.0))))
        .for_each(drop);
    theirs
        .spawn_batch((0..n).map(|_| (BA(0.0), BB(1.0), BC(2.0), BD(3.0))))
        .for_each(drop);
    theirs
        .spawn_batch((0..n).map(|_| (BA(0.0), BB(1.0), BC(2.0), BE(4.0))))
        .for_each(drop);
    let mut sched = Schedule::default();
    sched.set_executor(SingleThreadedExecutor::new());
    sched.add_systems((ab, cd, ce).chain());
    let (a, b) = interleave(samples, || ours.run_systems(), || sched.run(&mut theirs));
    let mut s_ours = 0.0f64;
    if let Ok(mut q) = ours.query::<(&SA, &SC)>() {
        q.for_each(|(a, c)| s_ours += (a.0 + 10.0 * c.0) as f64);
    }
    let s_theirs: f64 = theirs
        .query::<(&BA, &BC)>()
        .iter(&theirs)
        .map(|(a, c)| (a.0 + 10.0 * c.0) as f64)
        .sum();
    check("schedule (bevy)", s_ours, s_theirs)?;
    Ok(row(
        "schedule",
        "us_per_step_of_3_systems_40k",
        1,
        a,
        b,
        "bevy_ecs Schedule of 3 chained systems (single-threaded executor)",
    ))
}

fn heavy_compute(samples: usize) -> Result<Figure, BenchError> {
    let lanes = lane(2)?;
    let mut ours = lanegraph::world::World::new();
    ours.spawn_batch((0..1_000).map(|i| {
        (
            Transform(identity()),
            Position([i as f32, 0.0, 0.0]),
            super::ecs_suite::Velocity([1.0, 0.0, 0.0]),
        )
    }))
    .map_err(fail)?;
    ours.set_parallel_lane(
        &lanes,
        lanes
            .lane("physics")
            .ok_or_else(|| fail("no physics lane"))?,
    );
    let mut theirs = BevyWorld::new();
    theirs
        .spawn_batch((0..1_000).map(|i| {
            (
                BTransform(Transform(identity())),
                BPosition([i as f32, 0.0, 0.0]),
                BVelocity([1.0, 0.0, 0.0]),
            )
        }))
        .for_each(drop);
    // Two threads, as the lane and the hecs rayon pool have (the first use sets the pool).
    bevy_tasks::ComputeTaskPool::get_or_init(|| {
        bevy_tasks::TaskPoolBuilder::new().num_threads(2).build()
    });
    let mut state = theirs.query::<(&mut BTransform, &mut BPosition, &BVelocity)>();
    let mut err = None;
    let (a, b) = interleave(
        samples,
        || {
            let run = ours
                .query::<(&mut Transform, &mut Position, &super::ecs_suite::Velocity)>()
                .map_err(fail)
                .and_then(|mut q| q.par_for_each(|(t, p, v)| heavy_row(t, p, v)).map_err(fail));
            if let Err(e) = run {
                err = Some(e);
            }
        },
        || {
            state
                .par_iter_mut(&mut theirs)
                .for_each(|(mut t, mut p, v)| {
                    let mut pos = Position(p.0);
                    heavy_row(&mut t.0, &mut pos, &super::ecs_suite::Velocity(v.0));
                    p.0 = pos.0;
                });
        },
    );
    if let Some(e) = err {
        return Err(e);
    }
    check(
        "heavy_compute (bevy)",
        ours_sum_x(&mut ours),
        bevy_sum_x(&mut theirs),
    )?;
    Ok(row(
        "heavy_compute",
        "us_per_pass_of_1k_x100_inversions",
        2,
        a,
        b,
        "bevy_ecs par_iter_mut on a 2-thread ComputeTaskPool",
    ))
}

fn add_remove(samples: usize) -> Result<Figure, BenchError> {
    let mut ours = lanegraph::world::World::new();
    let es = ours
        .spawn_batch((0..ENTITIES).map(|_| (SA(0.0),)))
        .map_err(fail)?
        .to_vec();
    let mut theirs = BevyWorld::new();
    let bs: Vec<_> = theirs
        .spawn_batch((0..ENTITIES).map(|_| (BA(0.0),)))
        .collect();
    let mut failures = 0usize;
    let (a, b) = interleave(
        samples,
        || {
            for &e in &es {
                failures += usize::from(ours.insert(e, SB(1.0)).is_err());
            }
            for &e in &es {
                failures += usize::from(ours.remove::<SB>(e).is_err());
            }
        },
        || {
            for &e in &bs {
                theirs.entity_mut(e).insert(BB(1.0));
            }
            for &e in &bs {
                theirs.entity_mut(e).remove::<BB>();
            }
        },
    );
    if failures > 0 {
        return Err(fail(format!("add_remove: {failures} operations failed")));
    }
    Ok(row(
        "add_remove",
        "us_per_pass_of_10k_add_then_remove",
        1,
        a,
        b,
        "bevy_ecs EntityWorldMut insert/remove",
    ))
}

/// The suite's cases against bevy_ecs, one row each.
pub(super) fn run(samples: usize) -> Result<Vec<Figure>, BenchError> {
    Ok(vec![
        simple_insert(samples)?,
        simple_iter(samples * 5)?,
        frag_iter(samples)?,
        schedule(samples)?,
        heavy_compute(samples)?,
        add_remove(samples)?,
    ])
}
