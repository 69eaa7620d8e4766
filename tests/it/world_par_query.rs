//! Parallel queries (`Query::par_for_each`, field-SoA chunks): the same bits as the serial
//! query whatever the chunking, rows handed to the lane's workers (not run on the caller),
//! filters honoured, a panicking closure a typed error, and a world without lanes (or whose
//! lanes are gone) running them on the caller.

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use lanegraph::hooks::{QueryHooks, WorldHooks};
use lanegraph::jobs::plan::{machine_cores, LaneKind};
use lanegraph::jobs::{LanePlan, Lanes};
use lanegraph::world::WorldError;
use lanegraph::world::{Component, Entity, StateHash, World};

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
#[component(domains(TRANSFORM))]
struct Pos([f32; 3]);

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
#[component(domains(PHYSICS))]
struct Vel([f32; 3]);

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
#[component(domains(GAMEPLAY))]
struct Frozen;

/// `n` entities with both components (aligned), then 300 with `Vel` inserted in reverse order
/// (misaligned rows), every 5th frozen.
fn world(n: usize) -> (World, Vec<Entity>) {
    let mut w = World::new();
    let mut es = Vec::new();
    for i in 0..n {
        let e = w.spawn();
        let f = i as f32;
        w.insert(e, Pos([f, -f, f * 0.5])).unwrap();
        w.insert(e, Vel([1.0 + f * 1e-3, -2.0, 0.25])).unwrap();
        es.push(e);
    }
    let late: Vec<Entity> = (0..300)
        .map(|i| {
            let e = w.spawn();
            w.insert(e, Pos([i as f32; 3])).unwrap();
            e
        })
        .collect();
    for &e in late.iter().rev() {
        w.insert(e, Vel([3.0, 2.0, 1.0])).unwrap();
    }
    es.extend(late);
    for &e in es.iter().step_by(5) {
        w.insert(e, Frozen).unwrap();
    }
    (w, es)
}

fn step(_: Entity, p: &mut Pos, v: &mut Vel) {
    for a in 0..3 {
        v.0[a] = (v.0[a] + -9.81 * 0.016) * (1.0 - 0.1 * 0.016);
        p.0[a] += v.0[a] * 0.016;
        if p.0[a] < -100.0 {
            p.0[a] = -100.0;
            v.0[a] = -v.0[a];
        } else if p.0[a] > 100.0 {
            p.0[a] = 100.0;
            v.0[a] = -v.0[a];
        }
    }
}

/// A physics lane of two workers that the calling thread does not serve: every parallel chunk
/// runs on one of them. (With a single thread serving the lane the World runs the query on the
/// caller: a lone worker while the caller waits would only add a hand-off.)
fn physics_lanes() -> Arc<Lanes> {
    let cores = machine_cores();
    let plan = LanePlan::empty(&cores)
        .with_lane("physics", LaneKind::FrameCritical, vec![None, None])
        .unwrap();
    Arc::new(Lanes::start(plan).unwrap())
}

/// The serial reference: every entity with both components, in row order.
fn serial(w: &mut World) -> usize {
    w.query::<(Entity, &mut Pos, &mut Vel)>()
        .unwrap()
        .for_each(|(e, p, v)| step(e, p, v))
}

/// The same step through `Query::par_for_each`, split into chunks of `chunk` rows (the World
/// picks no chunk size here: a set one makes every call split), `f` run first on each row.
fn parallel(
    w: &mut World,
    chunk: usize,
    f: impl Fn(Entity) + Send + Sync,
) -> Result<usize, lanegraph::jobs::JobPanicked> {
    let run = w
        .query::<(Entity, &mut Pos, &mut Vel)>()
        .unwrap()
        .chunk_rows(chunk)
        .par_for_each(|(e, p, v)| {
            f(e);
            step(e, p, v)
        })?;
    Ok(run.visited)
}

#[test]
fn parallel_query_matches_the_serial_one_bit_for_bit_and_runs_on_the_lane() {
    let lanes = physics_lanes();
    let physics = lanes.lane("physics").unwrap();
    let (mut reference, _) = world(50_000);
    let (mut par, _) = world(50_000);
    par.set_parallel_lane(&lanes, physics);
    let caller = std::thread::current().id();
    let off_caller = std::sync::atomic::AtomicUsize::new(0);
    for _ in 0..5 {
        assert_eq!(serial(&mut reference), 50_300);
        let n = parallel(&mut par, 4096, |_| {
            if std::thread::current().id() != caller {
                off_caller.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        })
        .unwrap();
        assert_eq!(n, 50_300);
    }
    assert_eq!(par.state_hash(), reference.state_hash());
    // The chunks ran on the lane's workers (the caller does not serve this lane).
    assert!(off_caller.into_inner() > 0);
}

#[test]
fn filtered_parallel_query_visits_exactly_the_serial_set() {
    use lanegraph::world::Without;
    let lanes = physics_lanes();
    let (mut reference, _) = world(20_000);
    let (mut par, _) = world(20_000);
    par.set_parallel_lane(&lanes, lanes.lane("physics").unwrap());
    let a = reference
        .query_filtered::<(Entity, &mut Pos, &mut Vel), Without<Frozen>>()
        .unwrap()
        .for_each(|(e, p, v)| step(e, p, v));
    let b = par
        .query_filtered::<(Entity, &mut Pos, &mut Vel), Without<Frozen>>()
        .unwrap()
        .chunk_rows(4096)
        .par_for_each(|(e, p, v)| step(e, p, v))
        .unwrap()
        .visited;
    assert_eq!((a, b), (16_240, 16_240));
    assert_eq!(par.state_hash(), reference.state_hash());
}

#[test]
fn a_panicking_closure_is_a_typed_error_and_the_world_lives_on() {
    let lanes = physics_lanes();
    let (mut w, es) = world(30_000);
    w.set_parallel_lane(&lanes, lanes.lane("physics").unwrap());
    let bad = es[12_345];
    let err = parallel(&mut w, 4096, |e| {
        if e == bad {
            panic!("bad particle");
        }
    })
    .unwrap_err();
    assert!(err.message.contains("bad particle"), "{err}");
    assert_eq!(parallel(&mut w, 4096, |_| {}).unwrap(), 30_300);
}

#[test]
fn without_lanes_or_after_they_are_gone_the_caller_runs_the_query() {
    let (mut reference, _) = world(10_000);
    let (mut bare, _) = world(10_000);
    let (mut orphan, _) = world(10_000);
    {
        let lanes = physics_lanes();
        orphan.set_parallel_lane(&lanes, lanes.lane("physics").unwrap());
        assert_eq!(orphan.parallel_lane(), lanes.lane("physics"));
    } // the lanes are dropped (joined) here; the world held only a weak handle
    assert_eq!(orphan.parallel_lane(), None);
    let caller = std::thread::current().id();
    let threads = Mutex::new(Vec::<ThreadId>::new());
    serial(&mut reference);
    for w in [&mut bare, &mut orphan] {
        parallel(w, 4096, |_| {
            let id = std::thread::current().id();
            if id != caller {
                threads.lock().unwrap().push(id);
            }
        })
        .unwrap();
        assert_eq!(w.state_hash(), reference.state_hash());
    }
    assert!(threads.into_inner().unwrap().is_empty());
}

#[test]
fn parallel_query_errors_are_the_serial_ones() {
    let mut w = World::new();
    let e = w.spawn();
    w.insert(e, Pos([0.0; 3])).unwrap();
    assert!(matches!(
        w.query::<(&mut Pos, &mut Pos)>().map(|_| ()),
        Err(WorldError::AliasedQuery { .. })
    ));
    // Nothing has Vel yet: nothing visited.
    assert_eq!(parallel(&mut w, 4096, |_| {}).unwrap(), 0);
}

#[test]
fn an_engine_runs_its_worlds_parallel_queries_on_the_physics_lane() {
    let engine = lanegraph::Engine::builder().build().unwrap();
    let physics = engine.lanes().lane("physics");
    assert!(physics.is_some(), "the default plan has a physics lane");
    assert_eq!(engine.world().parallel_lane(), physics);
}

mod soa_chunks {
    use super::*;
    use lanegraph::simd::kernels::integrate;
    use lanegraph::simd::SoaComponent;

    #[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, SoaComponent)]
    #[component(domains(TRANSFORM))]
    struct P {
        x: f32,
        y: f32,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, SoaComponent)]
    #[component(domains(PHYSICS))]
    struct V {
        x: f32,
        y: f32,
    }

    /// `n` particles; `V` inserted in reverse order when `misaligned`.
    fn soa_world(n: usize, misaligned: bool) -> World {
        let mut w = World::new();
        w.use_field_soa::<P>().unwrap();
        w.use_field_soa::<V>().unwrap();
        let es: Vec<Entity> = (0..n)
            .map(|i| {
                let e = w.spawn();
                w.insert(
                    e,
                    P {
                        x: i as f32,
                        y: -(i as f32),
                    },
                )
                .unwrap();
                e
            })
            .collect();
        let order: Vec<Entity> = if misaligned {
            es.iter().rev().copied().collect()
        } else {
            es
        };
        for (k, &e) in order.iter().enumerate() {
            w.insert(
                e,
                V {
                    x: 1.0 + k as f32 * 1e-3,
                    y: 0.5,
                },
            )
            .unwrap();
        }
        w
    }

    fn kernel_step(w: &mut World) -> Result<usize, WorldError> {
        w.par_soa_chunks2::<P, V, _, _>(|p, v| {
            let ([px, py], [vx, vy]) = (p.fields, v.fields);
            integrate::integrate(px, vx, 0.25).unwrap();
            integrate::integrate(py, vy, 0.25).unwrap();
        })
    }

    /// The same step by the per-entity query (the reference).
    fn query_step(w: &mut World) {
        w.query::<(&mut P, &V)>().unwrap().for_each(|(p, v)| {
            p.x += v.x * 0.25;
            p.y += v.y * 0.25;
        });
    }

    #[test]
    fn chunks_on_the_lane_match_the_per_entity_query_aligned_or_not() {
        let lanes = physics_lanes();
        let physics = lanes.lane("physics").unwrap();
        for misaligned in [false, true] {
            let mut reference = soa_world(70_001, misaligned);
            let mut par = soa_world(70_001, misaligned);
            par.set_parallel_lane(&lanes, physics);
            let mut bare = soa_world(70_001, misaligned);
            for _ in 0..4 {
                query_step(&mut reference);
                assert_eq!(kernel_step(&mut par), Ok(70_001));
                assert_eq!(kernel_step(&mut bare), Ok(70_001));
            }
            assert_eq!(
                par.state_hash(),
                reference.state_hash(),
                "misaligned {misaligned}"
            );
            assert_eq!(
                bare.state_hash(),
                reference.state_hash(),
                "misaligned {misaligned}"
            );
        }
    }

    #[test]
    fn warm_chunked_steps_allocate_nothing_on_the_caller() {
        let lanes = physics_lanes();
        let mut w = soa_world(50_000, false);
        w.set_parallel_lane(&lanes, lanes.lane("physics").unwrap());
        for _ in 0..5 {
            kernel_step(&mut w).unwrap();
        }
        let (r, allocs) = lanegraph_tests::count_allocs(|| {
            for _ in 0..50 {
                kernel_step(&mut w).unwrap();
            }
        });
        let _: () = r;
        assert_eq!(allocs, 0);
        // The counter is live.
        let ((), control) = lanegraph_tests::count_allocs(|| drop(std::hint::black_box(vec![1u8])));
        assert!(control >= 1);
    }

    #[test]
    fn errors_are_typed_and_a_panic_is_reported() {
        let lanes = physics_lanes();
        // Different entity sets cannot be aligned.
        let mut w = soa_world(100, false);
        let extra = w.spawn();
        w.insert(extra, P { x: 0.0, y: 0.0 }).unwrap();
        assert!(matches!(
            kernel_step(&mut w),
            Err(WorldError::NotAligned { .. })
        ));
        // A component stored AoS is the wrong layout.
        let mut aos = World::new();
        let e = aos.spawn();
        aos.insert(e, P { x: 0.0, y: 0.0 }).unwrap();
        aos.insert(e, V { x: 0.0, y: 0.0 }).unwrap();
        assert!(matches!(
            kernel_step(&mut aos),
            Err(WorldError::WrongLayout { .. })
        ));
        // A panicking chunk.
        let mut w = soa_world(60_000, false);
        w.set_parallel_lane(&lanes, lanes.lane("physics").unwrap());
        let err = w
            .par_soa_chunks2::<P, V, 2, 2>(|p, _| {
                if p.first_row > 0 {
                    panic!("chunk at row {}", p.first_row);
                }
            })
            .unwrap_err();
        assert!(
            matches!(&err, WorldError::Panicked(p) if p.message.contains("chunk at row")),
            "{err:?}"
        );
        // Never opted in: nothing to sweep.
        assert_eq!(kernel_step(&mut World::new()), Ok(0));
    }
}

/// With a single thread serving the lane (one worker, a caller that does not serve it) the
/// query runs on the caller, and a panic is the same typed error as on the lane.
#[test]
fn one_thread_runs_on_the_caller_with_the_same_panic_report() {
    let cores = machine_cores();
    let plan = LanePlan::empty(&cores)
        .with_lane("physics", LaneKind::FrameCritical, vec![None])
        .unwrap();
    let lanes = Arc::new(Lanes::start(plan).unwrap());
    let (mut w, es) = world(20_000);
    w.set_parallel_lane(&lanes, lanes.lane("physics").unwrap());
    let caller = std::thread::current().id();
    let elsewhere = std::sync::atomic::AtomicUsize::new(0);
    parallel(&mut w, 4096, |_| {
        if std::thread::current().id() != caller {
            elsewhere.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    })
    .unwrap();
    assert_eq!(elsewhere.into_inner(), 0);
    let bad = es[10];
    let err = parallel(&mut w, 4096, |e| assert!(e != bad, "bad row")).unwrap_err();
    assert!(err.message.contains("bad row"), "{err:?}");
}

/// A payload whose destructor panics as well.
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("the payload's own drop");
    }
}

/// A panic in a parallel query is one report wherever the query ran: on a two-worker lane or
/// on the caller (a lane of one worker the caller does not serve), for a message, a payload
/// that is not a string, and a payload whose `Drop` panics (an `Err` on both, never an unwind
/// into the system).
#[test]
fn a_panic_reads_the_same_on_the_caller_and_on_a_lane() {
    let two = physics_lanes();
    let cores = machine_cores();
    let one = Arc::new(
        Lanes::start(
            LanePlan::empty(&cores)
                .with_lane("physics", LaneKind::FrameCritical, vec![None])
                .unwrap(),
        )
        .unwrap(),
    );
    let report = |lanes: &Arc<Lanes>, payload: u8| {
        let (mut w, es) = world(20_000);
        w.set_parallel_lane(lanes, lanes.lane("physics").unwrap());
        let bad = es[10_000];
        parallel(&mut w, 4096, |e| {
            if e == bad {
                match payload {
                    0 => panic!("bad row"),
                    1 => std::panic::panic_any(7u32),
                    _ => std::panic::panic_any(PanicsOnDrop),
                }
            }
        })
        .unwrap_err()
    };
    for payload in 0..3 {
        let on_lane = report(&two, payload);
        let on_caller = report(&one, payload);
        assert_eq!(on_lane, on_caller, "payload {payload}");
        assert_eq!(on_lane.job, "par_for_each");
    }
    assert_eq!(report(&one, 0).message, "bad row");
    assert_eq!(report(&one, 1).message, "(non-string panic payload)");
}
