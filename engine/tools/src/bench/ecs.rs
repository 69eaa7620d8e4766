//! The `ecs` bench suite: the particle step a game writes, against a plain loop in the same run.
//!
//! Owns: the quick form of the particle-step comparisons listed below. Must never: assert on
//! timing.
//!
//! # The step (the same arithmetic in every variant, f32, no FMA)
//! `v = (v + g*dt) * (1 - drag*dt)`, `p = p + v*dt`, then per axis clamp-and-negate walls in
//! `[-100, 100]`, at 10 Ki, 100 Ki and 1 Mi entities.
//!
//! # Cases (stable names; metric `ns_per_entity`, lower is better, so `ratio < 1` is faster)
//! - `fused_soa_step_{n}`: [`particle_step`] over six resident field-SoA columns (a
//!   `SoaTable`), one pass; baseline the plain loop.
//! - `kernel_sequence_step_{n}`: the same step as three separate kernels (forces, integrate,
//!   walls), three passes over the columns; baseline the plain loop.
//! - `query_loop_step_{n}`: the loop a game writes on the World: `Position` and `Velocity`
//!   components (AoS, inserted together), `World::query` with the plain loop's body;
//!   baseline the plain loop.
//! - `checksum_equal_{n}`: 1 when the fused step's final columns, the kernel sequence's and
//!   the World's components all equal the plain loop's bit for bit after every timed pass (the
//!   same operations in the same order), else 0.
//!
//! - `parallel_fused_step_1Mi` (2 threads): the fused step through the World on field-SoA
//!   components, `World::par_soa_chunks2` splitting the columns (the World picks the chunk
//!   size) on a physics lane of one worker that the calling thread serves too (the engine's
//!   plan on 2 cores); baseline the same call on a world without a lane (one chunk, the
//!   calling thread), interleaved; the state hashes must match.
//! - `allocs_per_step` (metrics `query_loop`, `fused_table`, `parallel_query`,
//!   `parallel_fused`): heap allocations per step on every thread at 100 Ki after a warm-up,
//!   when the binary has the tracking allocator; the goal is 0.
//! - `plan_physics_step_10k` (2-core machines only): the fused step at 10 Ki through the World
//!   on the automatic plan against the earlier plan that put physics on render's core.
//!
//! - `parallel_query_step_1Mi` (2 threads): `Query::par_for_each` with the query loop's
//!   body, on the same physics lane (the World picks the chunks); baseline `for_each` on
//!   the calling thread alone, interleaved; the two worlds' state hashes must match.
//!
//! The plain loop is what a game writes without an engine: two `Vec`s of `{x, y, z}` structs
//! (positions, velocities), one `for` over both.
//!
//! Every figure is the median over samples; the variants run interleaved within each sample,
//! each on its own copy of the same starting state.

use std::hint::black_box;

use lanegraph::hooks::WorldHooks;
use lanegraph::simd::SoaComponent;
use lanegraph::world::{Component, Entity, StateHash, World};
use lanegraph_jobs::clock;
use lanegraph_simd::kernels::fused::{particle_step, ParticleStep, Walls};
use lanegraph_simd::kernels::{bounds, forces, integrate};
use lanegraph_simd::SoaTable;

use super::stats::median;
use super::{BenchError, BenchOptions, Figure};

const SUITE: &str = "ecs";

const STEP: ParticleStep = ParticleStep {
    accel: [0.0, -9.81, 0.0],
    drag: 0.1,
    dt: 1.0 / 60.0,
    walls: Walls::ClampNegate {
        lo: -100.0,
        hi: 100.0,
    },
};

/// Six fields, position then velocity.
const FIELDS: [&str; 6] = ["px", "py", "pz", "vx", "vy", "vz"];

#[derive(Clone, Copy, StateHash)]
struct Vec3 {
    x: f32,
    y: f32,
    z: f32,
}

/// The World's position component.
#[derive(Clone, Copy, Component, StateHash)]
#[component(domains(TRANSFORM), all_f32)]
struct Position(Vec3);
/// The World's velocity component.
#[derive(Clone, Copy, Component, StateHash)]
#[component(domains(PHYSICS), all_f32)]
struct Velocity(Vec3);

/// The plain loop a game writes without an engine.
fn plain_step(pos: &mut [Vec3], vel: &mut [Vec3]) {
    for (p, v) in pos.iter_mut().zip(vel.iter_mut()) {
        body(p, v);
    }
}

/// The World's query loop: the same body through `World::query`.
fn query_step(world: &mut World) -> Result<(), BenchError> {
    world
        .query::<(&mut Position, &mut Velocity)>()
        .map(|mut q| {
            q.for_each(|(p, v)| body(&mut p.0, &mut v.0));
        })
        .map_err(|e| BenchError::failed(SUITE, e.to_string()))
}

/// The query loop through `Query::par_for_each` (the World picks the split).
fn par_query_step(world: &mut World) -> Result<(), BenchError> {
    let mut q = world
        .query::<(&mut Position, &mut Velocity)>()
        .map_err(|e| BenchError::failed(SUITE, e.to_string()))?;
    q.par_for_each(|(p, v)| body(&mut p.0, &mut v.0))
        .map(drop)
        .map_err(|e| BenchError::failed(SUITE, e.to_string()))
}

fn world(entities: usize) -> Result<(World, Vec<Entity>), BenchError> {
    let mut w = World::new();
    let mut es = Vec::with_capacity(entities);
    for i in 0..entities {
        let (p, v) = start(i);
        let e = w.spawn();
        w.insert(e, Position(p))
            .and_then(|_| w.insert(e, Velocity(v)))
            .map_err(|e| BenchError::failed(SUITE, e.to_string()))?;
        es.push(e);
    }
    Ok((w, es))
}

/// One entity's step, as a game writes it.
#[inline(always)]
fn body(p: &mut Vec3, v: &mut Vec3) {
    let s = &STEP;
    let (lo, hi) = match s.walls {
        Walls::ClampNegate { lo, hi } => (lo, hi),
        _ => (f32::NEG_INFINITY, f32::INFINITY),
    };
    let (ax, ay, az) = (s.accel[0] * s.dt, s.accel[1] * s.dt, s.accel[2] * s.dt);
    let keep = 1.0 - s.drag * s.dt;
    let wall = |p: &mut f32, v: &mut f32| {
        if *p < lo {
            *p = lo;
            *v = -*v;
        } else if *p > hi {
            *p = hi;
            *v = -*v;
        }
    };
    v.x = (v.x + ax) * keep;
    v.y = (v.y + ay) * keep;
    v.z = (v.z + az) * keep;
    p.x += v.x * s.dt;
    p.y += v.y * s.dt;
    p.z += v.z * s.dt;
    wall(&mut p.x, &mut v.x);
    wall(&mut p.y, &mut v.y);
    wall(&mut p.z, &mut v.z);
}

/// The starting state of entity `i`: spread over the box, some heading out of it.
fn start(i: usize) -> (Vec3, Vec3) {
    let f = (i % 2000) as f32 * 0.1 - 100.0;
    (
        Vec3 {
            x: f,
            y: -f * 0.5,
            z: (i % 7) as f32,
        },
        Vec3 {
            x: 30.0 - (i % 60) as f32,
            y: 5.0,
            z: -((i % 13) as f32),
        },
    )
}

fn table(entities: usize) -> Result<SoaTable, BenchError> {
    let failed = |e: String| BenchError::failed(SUITE, e);
    let mut t = SoaTable::new(&FIELDS).map_err(|e| failed(e.to_string()))?;
    t.reserve(entities);
    for i in 0..entities {
        let (p, v) = start(i);
        t.push_row(&[p.x, p.y, p.z, v.x, v.y, v.z])
            .map_err(|e| failed(e.to_string()))?;
    }
    Ok(t)
}

fn fused(t: &mut SoaTable) -> Result<(), BenchError> {
    let mut lanes = t.lanes_mut();
    let [px, py, pz, vx, vy, vz] = lanes
        .fields::<6>()
        .map_err(|e| BenchError::failed(SUITE, e.to_string()))?;
    particle_step([px, py, pz], [vx, vy, vz], &STEP)
        .map_err(|e| BenchError::failed(SUITE, e.to_string()))
}

fn sequence(t: &mut SoaTable) -> Result<(), BenchError> {
    let err = |e: String| BenchError::failed(SUITE, e);
    let mut lanes = t.lanes_mut();
    let [px, py, pz, vx, vy, vz] = lanes.fields::<6>().map_err(|e| err(e.to_string()))?;
    forces::gravity_drag3(
        [&mut *vx, &mut *vy, &mut *vz],
        STEP.accel,
        STEP.drag,
        STEP.dt,
    )
    .map_err(|e| err(e.to_string()))?;
    integrate::integrate3([&mut *px, &mut *py, &mut *pz], [&*vx, &*vy, &*vz], STEP.dt)
        .map_err(|e| err(e.to_string()))?;
    let Walls::ClampNegate { lo, hi } = STEP.walls else {
        return Err(err("the suite's step has clamp-and-negate walls".into()));
    };
    for (p, v) in [(px, vx), (py, vy), (pz, vz)] {
        bounds::clamp_negate(p, v, lo, hi).map_err(|e| err(e.to_string()))?;
    }
    Ok(())
}

/// Runs the suite.
pub fn run(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    let samples = if opts.quick { 15 } else { 41 };
    let updates_per_sample: usize = if opts.quick { 4 << 20 } else { 16 << 20 };
    let mut figures = Vec::new();
    for (label, entities) in [("10k", 10_000), ("100k", 100_000), ("1Mi", 1 << 20)] {
        let passes = (updates_per_sample / entities).max(1);
        let mut t_fused = table(entities)?;
        let mut t_seq = table(entities)?;
        let (mut pos, mut vel): (Vec<Vec3>, Vec<Vec3>) = (0..entities).map(start).unzip();
        let (mut w, es) = world(entities)?;
        let (mut f_ns, mut s_ns, mut p_ns) = (Vec::new(), Vec::new(), Vec::new());
        let mut q_ns = Vec::new();
        for _ in 0..samples {
            let t0 = clock::now();
            for _ in 0..passes {
                query_step(black_box(&mut w))?;
            }
            q_ns.push(clock::now().ns_since(t0) as f64 / (passes * entities) as f64);
            let t0 = clock::now();
            for _ in 0..passes {
                fused(black_box(&mut t_fused))?;
            }
            f_ns.push(clock::now().ns_since(t0) as f64 / (passes * entities) as f64);
            let t0 = clock::now();
            for _ in 0..passes {
                sequence(black_box(&mut t_seq))?;
            }
            s_ns.push(clock::now().ns_since(t0) as f64 / (passes * entities) as f64);
            let t0 = clock::now();
            for _ in 0..passes {
                plain_step(black_box(&mut pos), black_box(&mut vel));
            }
            p_ns.push(clock::now().ns_since(t0) as f64 / (passes * entities) as f64);
        }
        let plain = median(&mut p_ns);
        figures.push(
            Figure::new(
                SUITE,
                format!("query_loop_step_{label}"),
                1,
                "ns_per_entity",
                "ns",
                median(&mut q_ns),
            )
            .with_baseline("plain two-Vec loop", plain),
        );
        figures.push(
            Figure::new(
                SUITE,
                format!("fused_soa_step_{label}"),
                1,
                "ns_per_entity",
                "ns",
                median(&mut f_ns),
            )
            .with_baseline("plain two-Vec loop", plain),
        );
        figures.push(
            Figure::new(
                SUITE,
                format!("kernel_sequence_step_{label}"),
                1,
                "ns_per_entity",
                "ns",
                median(&mut s_ns),
            )
            .with_baseline("plain two-Vec loop", plain),
        );
        figures.push(Figure::new(
            SUITE,
            format!("checksum_equal_{label}"),
            1,
            "equal",
            "bool",
            f64::from(u8::from(
                same_state(&t_fused, &t_seq, &pos, &vel)? && same_world(&w, &es, &pos, &vel),
            )),
        ));
    }
    figures.push(parallel(if opts.quick { 40 } else { 200 })?);
    figures.push(parallel_query(if opts.quick { 40 } else { 200 })?);
    figures.extend(allocations()?);
    if let Some(f) = plan_placement(if opts.quick { 5 } else { 20 })? {
        figures.push(f);
    }
    Ok(figures)
}

/// The query loop at 1 Mi on two threads (`Query::par_for_each` on a physics lane of one
/// worker the calling thread serves too, as in the engine) against `for_each` on one.
fn parallel_query(samples: usize) -> Result<Figure, BenchError> {
    let entities = 1 << 20;
    let (w_par, _) = world(entities)?;
    let (w_one, _) = world(entities)?;
    two_threads_against_one(
        "parallel_query_step_1Mi",
        "query loop, 1 thread",
        samples,
        entities,
        [w_par, w_one],
        par_query_step,
        query_step,
    )
}

/// The fused step at 1 Mi on two threads through the World (`par_soa_chunks2` on a physics
/// lane of one worker the calling thread serves too) against the same call on a world without
/// a lane (one chunk, the calling thread).
fn parallel(samples: usize) -> Result<Figure, BenchError> {
    let entities = 1 << 20;
    two_threads_against_one(
        "parallel_fused_step_1Mi",
        "fused step, 1 thread",
        samples,
        entities,
        [soa_world(entities)?, soa_world(entities)?],
        fused_world_step,
        fused_world_step,
    )
}

/// `par` on the first world (given a physics lane of one worker that the calling thread
/// serves too: two threads) against `one` on the second (no lane: the calling thread),
/// interleaved, `samples` steps each; both worlds must end in the same state.
fn two_threads_against_one(
    case: &str,
    baseline: &str,
    samples: usize,
    entities: usize,
    worlds: [World; 2],
    par: impl Fn(&mut World) -> Result<(), BenchError>,
    one: impl Fn(&mut World) -> Result<(), BenchError>,
) -> Result<Figure, BenchError> {
    let err = |e: String| BenchError::failed(SUITE, e);
    let lanes = std::sync::Arc::new(super::dispatch::physics_lanes_owner_helps(1));
    let physics = lanes
        .lane("physics")
        .ok_or_else(|| err("no physics lane".into()))?;
    let [mut w_par, mut w_one] = worlds;
    w_par.set_parallel_lane(&lanes, physics);
    let (mut t_par, mut t_one) = (Vec::new(), Vec::new());
    for _ in 0..samples {
        let t0 = clock::now();
        par(black_box(&mut w_par))?;
        t_par.push(clock::now().ns_since(t0) as f64 / entities as f64);
        let t0 = clock::now();
        one(black_box(&mut w_one))?;
        t_one.push(clock::now().ns_since(t0) as f64 / entities as f64);
    }
    if w_par.state_hash() != w_one.state_hash() {
        return Err(err(format!(
            "{case}: the two-thread step ended in another state than the one-thread step"
        )));
    }
    Ok(
        Figure::new(SUITE, case, 2, "ns_per_entity", "ns", median(&mut t_par))
            .with_baseline(baseline, median(&mut t_one)),
    )
}

/// The particle's position, stored field-SoA (the fused kernels' input).
#[derive(Clone, Copy, Component, StateHash, SoaComponent)]
#[component(domains(TRANSFORM))]
struct SoaPos {
    x: f32,
    y: f32,
    z: f32,
}

/// The particle's velocity, stored field-SoA.
#[derive(Clone, Copy, Component, StateHash, SoaComponent)]
#[component(domains(PHYSICS))]
struct SoaVel {
    x: f32,
    y: f32,
    z: f32,
}

/// A world of `entities` particles stored field-SoA, from [`start`].
fn soa_world(entities: usize) -> Result<World, BenchError> {
    let err = |e: String| BenchError::failed(SUITE, e);
    let mut w = World::new();
    w.use_field_soa::<SoaPos>()
        .map_err(|e| err(e.to_string()))?;
    w.use_field_soa::<SoaVel>()
        .map_err(|e| err(e.to_string()))?;
    for i in 0..entities {
        let (p, v) = start(i);
        let e = w.spawn();
        w.insert(
            e,
            SoaPos {
                x: p.x,
                y: p.y,
                z: p.z,
            },
        )
        .and_then(|_| {
            w.insert(
                e,
                SoaVel {
                    x: v.x,
                    y: v.y,
                    z: v.z,
                },
            )
        })
        .map_err(|e| err(e.to_string()))?;
    }
    Ok(w)
}

/// The fused step through the World: chunks chosen by the World, on its parallel lane if any.
fn fused_world_step(w: &mut World) -> Result<(), BenchError> {
    w.par_soa_chunks2::<SoaPos, SoaVel, _, _>(|p, v| {
        let [px, py, pz] = p.fields;
        let [vx, vy, vz] = v.fields;
        let _ = particle_step([px, py, pz], [vx, vy, vz], &STEP);
    })
    .map(drop)
    .map_err(|e| BenchError::failed(SUITE, e.to_string()))
}

/// `plan_physics_step_10k`: the fused step at 10 Ki through `par_soa_chunks2` on the
/// automatic plan of a 2-core machine (physics alone on core 1, render and asset on core 0,
/// the owner serving physics) against the earlier plan (physics sharing render's core 1, so
/// its worker never spins and each fork-join wakes it). Blocks of 200 steps alternate, so one
/// plan's spinning worker never runs beside the other's steps. `None` unless this machine has
/// exactly 2 cores (the plans differ only there).
fn plan_placement(rounds: usize) -> Result<Option<Figure>, BenchError> {
    use lanegraph::jobs::plan::{machine_cores, names, LaneKind};
    use lanegraph::jobs::LanePlan;
    let cores = machine_cores();
    if cores.len() != 2 {
        eprintln!("# ecs: plan_physics_step_10k skipped: the plans differ on 2 cores only");
        return Ok(None);
    }
    let err = |e: String| BenchError::failed(SUITE, e);
    let serve = |p: LanePlan| {
        p.with_owner_lane(names::PHYSICS)
            .ok_or_else(|| err("no physics lane".into()))
    };
    let shared = LanePlan::empty(&cores)
        .with_lane(
            names::PHYSICS,
            LaneKind::FrameCritical,
            vec![Some(cores[1])],
        )
        .and_then(|p| p.with_lane(names::RENDER, LaneKind::FrameCritical, vec![Some(cores[1])]))
        .and_then(|p| p.with_lane(names::ASSET, LaneKind::Background, vec![Some(cores[0])]))
        .map_err(|e| err(e.to_string()))?;
    let mut runs = Vec::new();
    for plan in [serve(LanePlan::auto())?, serve(shared)?] {
        let lanes = std::sync::Arc::new(
            lanegraph::jobs::Lanes::start(plan).map_err(|e| err(e.to_string()))?,
        );
        let physics = lanes
            .lane(names::PHYSICS)
            .ok_or_else(|| err("no physics lane".into()))?;
        let mut w = soa_world(10_000)?;
        w.set_parallel_lane(&lanes, physics);
        runs.push((lanes, w, Vec::new()));
    }
    for _ in 0..rounds {
        for (lanes, w, samples) in runs.iter_mut() {
            lanes.register_owner();
            for _ in 0..200 {
                let t0 = clock::now();
                fused_world_step(black_box(w))?;
                samples.push(clock::now().ns_since(t0) as f64 / 10_000.0);
            }
        }
    }
    let [auto, old] = &mut runs[..] else {
        return Err(err("two plans".into()));
    };
    Ok(Some(
        Figure::new(
            SUITE,
            "plan_physics_step_10k",
            2,
            "ns_per_entity",
            "ns",
            median(&mut auto.2),
        )
        .with_baseline("physics sharing render's core", median(&mut old.2)),
    ))
}

/// One path's step, for [`allocations`].
type StepFn<'a> = dyn FnMut() -> Result<(), BenchError> + 'a;

/// `allocs_per_step`: heap allocations per step (every thread) of each path at 100 Ki, after a
/// warm-up, when the binary has the tracking allocator (the `lanegraph` binary does).
fn allocations() -> Result<Vec<Figure>, BenchError> {
    if !lanegraph::hooks::telemetry::alloc::is_installed() {
        eprintln!("# ecs: allocs_per_step skipped: no tracking allocator installed");
        return Ok(Vec::new());
    }
    let err = |e: String| BenchError::failed(SUITE, e);
    let entities = 100_000;
    let lanes = std::sync::Arc::new(super::dispatch::physics_lanes_owner_helps(1));
    let physics = lanes
        .lane("physics")
        .ok_or_else(|| err("no physics lane".into()))?;
    let (mut aos, _) = world(entities)?;
    let mut soa = soa_world(entities)?;
    let mut t = table(entities)?;
    let (mut aos_par, _) = world(entities)?;
    aos_par.set_parallel_lane(&lanes, physics);
    soa.set_parallel_lane(&lanes, physics);
    let mut paths: Vec<(&str, usize, Box<StepFn<'_>>)> = vec![
        ("query_loop", 1, Box::new(|| query_step(&mut aos))),
        ("fused_table", 1, Box::new(|| fused(&mut t))),
    ];
    paths.push((
        "parallel_query",
        2,
        Box::new(|| par_query_step(&mut aos_par)),
    ));
    paths.push(("parallel_fused", 2, Box::new(|| fused_world_step(&mut soa))));
    let mut figures = Vec::new();
    for (name, threads, step) in &mut paths {
        for _ in 0..20 {
            step()?;
        }
        let steps = 200;
        let before = lanegraph::hooks::telemetry::memory_stats().allocations;
        for _ in 0..steps {
            step()?;
        }
        let n = lanegraph::hooks::telemetry::memory_stats().allocations - before;
        figures.push(Figure::new(
            SUITE,
            "allocs_per_step",
            *threads,
            *name,
            "allocs",
            n as f64 / f64::from(steps),
        ));
    }
    Ok(figures)
}

/// Whether two tables hold the same bits in every field.
fn same_tables(a: &SoaTable, b: &SoaTable) -> Result<bool, BenchError> {
    for name in FIELDS {
        let (x, y) = (field(a, name)?, field(b, name)?);
        if !x
            .iter()
            .map(|v| v.to_bits())
            .eq(y.iter().map(|v| v.to_bits()))
        {
            return Ok(false);
        }
    }
    Ok(true)
}

fn field<'t>(t: &'t SoaTable, name: &str) -> Result<&'t [f32], BenchError> {
    t.field(name)
        .map_err(|e| BenchError::failed(SUITE, e.to_string()))
}

/// Whether the fused columns equal both the kernel sequence's and the plain loop's, bit for
/// bit (all ran the same number of steps from the same start).
fn same_state(
    fused: &SoaTable,
    seq: &SoaTable,
    pos: &[Vec3],
    vel: &[Vec3],
) -> Result<bool, BenchError> {
    if !same_tables(fused, seq)? {
        return Ok(false);
    }
    let plain: [&dyn Fn(usize) -> f32; 6] = [
        &|i| pos[i].x,
        &|i| pos[i].y,
        &|i| pos[i].z,
        &|i| vel[i].x,
        &|i| vel[i].y,
        &|i| vel[i].z,
    ];
    for (name, want) in FIELDS.iter().zip(plain) {
        let got = field(fused, name)?;
        if got.len() != pos.len()
            || !got
                .iter()
                .enumerate()
                .all(|(i, v)| v.to_bits() == want(i).to_bits())
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether the World's components equal the plain loop's state bit for bit.
fn same_world(w: &World, es: &[Entity], pos: &[Vec3], vel: &[Vec3]) -> bool {
    let bits = |v: &Vec3| [v.x.to_bits(), v.y.to_bits(), v.z.to_bits()];
    es.iter().zip(pos.iter().zip(vel)).all(|(&e, (p, v))| {
        matches!(
            (w.get::<Position>(e), w.get::<Velocity>(e)),
            (Ok(wp), Ok(wv)) if bits(&wp.0) == bits(p) && bits(&wv.0) == bits(v)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checksum figure can fail: a plain loop one step ahead differs.
    #[test]
    fn the_four_paths_agree_and_a_step_apart_they_do_not() {
        let n = 1000;
        let (mut ft, mut st) = (table(n).unwrap(), table(n).unwrap());
        let (mut pos, mut vel): (Vec<Vec3>, Vec<Vec3>) = (0..n).map(start).unzip();
        let (mut w, es) = world(n).unwrap();
        for _ in 0..50 {
            fused(&mut ft).unwrap();
            sequence(&mut st).unwrap();
            query_step(&mut w).unwrap();
            plain_step(&mut pos, &mut vel);
        }
        assert!(same_state(&ft, &st, &pos, &vel).unwrap());
        assert!(same_world(&w, &es, &pos, &vel));
        plain_step(&mut pos, &mut vel);
        assert!(!same_state(&ft, &st, &pos, &vel).unwrap());
        assert!(!same_world(&w, &es, &pos, &vel));
    }
}
