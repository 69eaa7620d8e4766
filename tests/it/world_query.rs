//! Typed queries of any width, one API for every layout: `World::query` over 1-8
//! components with `&T`, `&mut T`, `Option<&T>`, `Entity` and `With`/`Without` filters gives
//! the same result whether a component is stored AoS or field-SoA; aliasing is a typed error;
//! commands queue from inside the closure; resources, components and input are held at once
//! (`World::split`); the parallel form matches the serial one bit for bit, says when and why
//! it ran on the caller, and splits only work it has priced.

use std::sync::Arc;

use lanegraph::hooks::{EntityHooks, QueryHooks, WorldHooks};
use lanegraph::jobs::plan::{machine_cores, LaneKind};
use lanegraph::jobs::{LanePlan, Lanes};
use lanegraph::prelude::*;
use lanegraph::simd::SoaComponent;
use lanegraph::world::SerialReason;
use lanegraph::world::WorldError;

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, SoaComponent)]
#[component(domains(TRANSFORM))]
struct Pos {
    x: f32,
    y: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, SoaComponent)]
#[component(domains(PHYSICS))]
struct Vel {
    x: f32,
    y: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
struct Mass(f32);
#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
struct Drag(f32);
#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
struct Hp(i32);
#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
struct Team(u8);
#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
struct Age(u32);
#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
struct Frozen;

#[derive(Debug, Resource, StateHash)]
struct Score(u64);
#[derive(Debug, Resource, StateHash)]
struct Wind(f32);

/// `n` bodies with position, velocity, mass, hp, team and age; every third has drag, every
/// fifth is frozen. `soa`: position and velocity are stored field-SoA.
fn world(n: usize, soa: bool) -> World {
    let mut w = World::new();
    if soa {
        w.use_field_soa::<Pos>().unwrap();
        w.use_field_soa::<Vel>().unwrap();
    }
    for i in 0..n {
        let e = w.spawn();
        let f = i as f32;
        w.insert(e, Pos { x: f, y: -f }).unwrap();
        w.insert(e, Vel { x: 1.0, y: 0.5 }).unwrap();
        w.insert(e, Mass(1.0 + (i % 7) as f32)).unwrap();
        w.insert(e, Hp(100)).unwrap();
        w.insert(e, Team((i % 3) as u8)).unwrap();
        w.insert(e, Age(0)).unwrap();
        if i % 3 == 0 {
            w.insert(e, Drag(0.25)).unwrap();
        }
        if i % 5 == 0 {
            w.insert(e, Frozen).unwrap();
        }
    }
    w.insert_resource(Score(0)).unwrap();
    w.insert_resource(Wind(0.1)).unwrap();
    w
}

/// One step over eight query terms: every term's value reaches the result.
fn step8(w: &mut World) -> usize {
    w.query_filtered::<(
        Entity,
        &mut Pos,
        &mut Vel,
        &Mass,
        Option<&Drag>,
        &mut Hp,
        &Team,
        &mut Age,
    ), Without<Frozen>>()
        .unwrap()
        .for_each(|(e, p, v, m, drag, hp, team, age)| {
            let d = drag.map_or(0.0, |d| d.0);
            v.x -= d * v.x / m.0;
            v.y += 0.01 * team.0 as f32;
            p.x += v.x;
            p.y += v.y;
            hp.0 -= (e.index() % 4) as i32;
            age.0 += 1;
        })
}

#[test]
fn an_eight_wide_query_gives_the_same_state_over_aos_and_field_soa() {
    let mut aos = world(1_000, false);
    let mut soa = world(1_000, true);
    for _ in 0..5 {
        assert_eq!(
            step8(&mut aos),
            800,
            "the 200 frozen bodies are filtered out"
        );
        assert_eq!(step8(&mut soa), 800);
    }
    // The state hash is layout-blind, so equal hashes mean equal values for every entity.
    assert_eq!(aos.state_hash(), soa.state_hash());
    let e = aos.entities()[1];
    let p = *aos.get::<Pos>(e).unwrap();
    assert!((p.x - (1.0 + 5.0)).abs() < 1e-5, "moved 5 steps: {p:?}");
    assert_eq!(soa.get_fields::<Pos>(e).unwrap(), p);
    assert_eq!(aos.get::<Age>(e).unwrap().0, 5);
    let frozen = aos.entities()[0];
    assert_eq!(
        aos.get::<Age>(frozen).unwrap().0,
        0,
        "frozen bodies untouched"
    );
}

#[test]
fn options_entities_and_filters_keep_exactly_the_matching_rows() {
    let mut w = world(30, false);
    let mut with_drag = 0;
    let mut without_drag = 0;
    let n = w
        .query::<(Entity, Option<&Drag>)>()
        .unwrap()
        .for_each(|(_, d)| {
            if d.is_some() {
                with_drag += 1;
            } else {
                without_drag += 1;
            }
        });
    assert_eq!((n, with_drag, without_drag), (30, 10, 20));
    let mut seen = Vec::new();
    w.query_filtered::<Entity, (With<Drag>, Without<Frozen>)>()
        .unwrap()
        .for_each(|e| seen.push(e.index()));
    seen.sort_unstable();
    let expected: Vec<u32> = (0..30u32).filter(|i| i % 3 == 0 && i % 5 != 0).collect();
    assert_eq!(seen, expected);
    // A filter on a component no entity ever had matches nothing; a required one too.
    #[derive(Clone, Copy, Component, StateHash)]
    struct Never;
    assert_eq!(w.query_filtered::<&Hp, With<Never>>().unwrap().count(), 0);
    assert_eq!(w.query::<(&Hp, &Never)>().unwrap().count(), 0);
    assert_eq!(
        w.query_filtered::<&Hp, Without<Never>>().unwrap().count(),
        30
    );
    // Option<&mut T> writes where present.
    w.query::<(&Hp, Option<&mut Drag>)>()
        .unwrap()
        .for_each(|(_, d)| {
            if let Some(d) = d {
                d.0 = 1.0;
            }
        });
    let ones = w
        .query::<&Drag>()
        .unwrap()
        .for_each(|d| assert_eq!(d.0, 1.0));
    assert_eq!(ones, 10);
}

#[test]
fn asking_for_one_component_mutably_and_again_is_a_typed_error() {
    let mut w = world(10, false);
    for err in [
        w.query::<(&mut Hp, &Hp)>().map(|_| ()).unwrap_err(),
        w.query::<(&Hp, &mut Hp)>().map(|_| ()).unwrap_err(),
        w.query::<(&mut Hp, &mut Hp)>().map(|_| ()).unwrap_err(),
        w.query::<(&mut Hp, Option<&Hp>)>().map(|_| ()).unwrap_err(),
    ] {
        assert!(
            matches!(err, WorldError::AliasedQuery { component } if component == "Hp"),
            "{err}"
        );
        assert!(err.to_string().contains("fix:"), "{err}");
    }
    // Shared twice is fine; so is the same query on a world that never saw the component.
    assert_eq!(w.query::<(&Hp, &Hp)>().unwrap().count(), 10);
    let mut empty = World::new();
    assert!(empty.query::<(&mut Hp, &Hp)>().is_err());
}

#[test]
fn commands_queue_from_inside_a_query_and_apply_after_the_system() {
    let mut w = world(12, true);
    w.register_system(SystemDef::new("cull", 1.0, |w: &mut World, ctx| {
        let cmd = ctx.commands();
        w.query::<(Entity, &mut Hp, &Pos)>()
            .unwrap()
            .for_each(|(e, hp, p)| {
                hp.0 -= 60;
                if p.x >= 6.0 {
                    cmd.despawn(e);
                    cmd.spawn((Pos { x: -p.x, y: 0.0 }, Vel { x: 0.0, y: 0.0 }));
                }
            });
    }))
    .unwrap();
    w.run_systems();
    assert_eq!(w.len(), 12, "six despawned, six spawned");
    let mut xs = Vec::new();
    w.query::<&Pos>().unwrap().for_each(|p| xs.push(p.x));
    xs.sort_by(f32::total_cmp);
    assert_eq!(
        xs,
        [-11.0, -10.0, -9.0, -8.0, -7.0, -6.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );
}

#[test]
fn a_system_holds_components_several_resources_and_input_at_once() {
    let mut w = world(9, false);
    w.register_system(SystemDef::new("score", 1.0, |w: &mut World, _| {
        let (mut components, (score, wind), input) = w.split::<(&mut Score, &Wind)>().unwrap();
        let bonus = if input.is_down(KeyCode::Space) { 10 } else { 1 };
        components
            .query::<(&mut Vel, &Team)>()
            .unwrap()
            .for_each(|(v, t)| {
                v.x += wind.0;
                score.0 += bonus * t.0 as u64;
            });
    }))
    .unwrap();
    w.run_systems();
    assert_eq!(
        w.resource::<Score>().unwrap().0,
        9,
        "teams 0,1,2 three times"
    );
    let v = w
        .query::<&Vel>()
        .unwrap()
        .for_each(|v| assert!((v.x - 1.1).abs() < 1e-6));
    assert_eq!(v, 9);
    // Naming a resource twice, or a missing one, is a typed error.
    assert!(matches!(
        w.resources_mut::<(&mut Score, &Score)>().map(|_| ()),
        Err(WorldError::AliasedResource { resource: "Score" })
    ));
    w.remove_resource::<Wind>();
    assert!(matches!(
        w.split::<(&Wind,)>().map(|_| ()),
        Err(WorldError::MissingResource { .. })
    ));
}

#[test]
fn query_loops_allocate_nothing() {
    let mut w = world(2_000, true);
    step8(&mut w);
    // A `Changed` filter's first use starts the column's ticks (allocates once); after that,
    // filtering and stamping allocate nothing either.
    let changed = |w: &mut World| {
        w.query_filtered::<(&mut Hp, &Pos), Changed<Pos>>()
            .unwrap()
            .for_each(|(hp, _)| hp.0 += 1)
    };
    changed(&mut w);
    let (_, allocs) = lanegraph_tests::count_allocs(|| {
        for _ in 0..10 {
            step8(&mut w);
            w.query::<(&mut Pos, &Vel)>()
                .unwrap()
                .for_each(|(p, v)| p.x += v.x);
            assert_eq!(
                changed(&mut w),
                2_000,
                "no step ran: every row counts as changed"
            );
        }
    });
    assert_eq!(allocs, 0);
}

/// A physics lane of two workers the calling thread does not serve.
fn physics_lanes() -> Arc<Lanes> {
    let plan = LanePlan::empty(&machine_cores())
        .with_lane("physics", LaneKind::FrameCritical, vec![None, None])
        .unwrap();
    Arc::new(Lanes::start(plan).unwrap())
}

/// Costly per-row work: a few hundred dependent float operations.
fn heavy(p: &mut Pos, v: &Vel) {
    let mut x = p.x;
    for _ in 0..200 {
        x = x * 0.999 + v.x * 0.001;
    }
    p.x = x;
    p.y += v.y;
}

#[test]
fn a_parallel_query_matches_the_serial_one_and_says_why_it_ran_on_the_caller() {
    for soa in [false, true] {
        let mut serial = world(20_000, soa);
        let mut par = world(20_000, soa);
        // No lane: runs on the caller and says so.
        let run = par
            .query::<(&mut Pos, &Vel)>()
            .unwrap()
            .par_for_each(|(p, v)| heavy(p, v))
            .unwrap();
        assert_eq!(run.serial, Some(SerialReason::NoLane));
        assert_eq!((run.visited, run.chunks), (20_000, 1));
        serial
            .query::<(&mut Pos, &Vel)>()
            .unwrap()
            .for_each(|(p, v)| heavy(p, v));

        let lanes = physics_lanes();
        par.set_parallel_lane(&lanes, lanes.lane("physics").unwrap());
        let mut reasons = Vec::new();
        for _ in 0..6 {
            // One call site: its first three runs are timed on the caller (the least cost per
            // row among them is its estimate), later ones split.
            let run = par
                .query::<(&mut Pos, &Vel)>()
                .unwrap()
                .par_for_each(|(p, v)| heavy(p, v))
                .unwrap();
            assert_eq!(run.visited, 20_000);
            reasons.push((run.serial, run.chunks));
            serial
                .query::<(&mut Pos, &Vel)>()
                .unwrap()
                .for_each(|(p, v)| heavy(p, v));
        }
        assert_eq!(reasons[..3], [(Some(SerialReason::Learning), 1); 3]);
        assert!(
            reasons[3..].iter().all(|&(s, c)| s.is_none() && c >= 2),
            "20,000 rows of ~200 flops each are worth splitting: {reasons:?}"
        );
        assert_eq!(par.state_hash(), serial.state_hash(), "soa = {soa}");
    }
}

#[test]
fn cheap_parallel_queries_stay_on_the_caller_and_a_set_chunk_size_splits() {
    let lanes = physics_lanes();
    let mut w = world(200, false);
    w.set_parallel_lane(&lanes, lanes.lane("physics").unwrap());
    let mut last = None;
    // Three learning runs on the caller; the fourth knows the work is too little to split.
    for _ in 0..4 {
        last = Some(
            w.query::<(&mut Pos, &Vel)>()
                .unwrap()
                .par_for_each(|(p, v)| p.x += v.x)
                .unwrap(),
        );
    }
    let run = last.unwrap();
    // The reason says the threshold in force: the site's first, twice the chunk minimum, not
    // raised by any split, and above the predicted work.
    match run.serial {
        Some(SerialReason::TooLittleWork {
            predicted_ns,
            threshold_ns,
            raised,
        }) => {
            assert_eq!(
                threshold_ns,
                2 * lanegraph::hooks::PAR_CHUNK_MIN_NS,
                "{run:?}"
            );
            assert!(predicted_ns < threshold_ns && !raised, "{run:?}");
        }
        other => panic!("expected TooLittleWork, got {other:?}"),
    }
    let run = w
        .query::<(&mut Pos, &Vel)>()
        .unwrap()
        .chunk_rows(50)
        .par_for_each(|(p, v)| p.x += v.x)
        .unwrap();
    assert_eq!((run.serial, run.chunks, run.visited), (None, 4, 200));
    // A panic in a chunk is the query's error, not the thread's.
    let err = w
        .query::<&Pos>()
        .unwrap()
        .chunk_rows(50)
        .par_for_each(|p| assert!(p.x < 100.0, "boom"))
        .unwrap_err();
    assert!(err.message.contains("boom"), "{err}");
}

#[test]
fn a_parallel_query_says_in_the_trace_where_and_why_it_ran() {
    use lanegraph::hooks::telemetry::{spans, TrackKind};
    let _serial = crate::telemetry_trace::serial();
    let was = spans::is_enabled();
    spans::set_enabled(true);
    let _ = spans::collect(); // start from empty rings
                              // A bare world: the run is on the caller, and its span says there is no lane. Row counts
                              // no other test uses tell these spans apart from theirs.
    let mut bare = world(777, false);
    bare.query::<&mut Pos>()
        .unwrap()
        .par_for_each(|p| p.x += 1.0)
        .unwrap();
    let lanes = physics_lanes();
    let mut w = world(1_000, false);
    w.set_parallel_lane(&lanes, lanes.lane("physics").unwrap());
    let run = w
        .query::<&mut Pos>()
        .unwrap()
        .chunk_rows(125)
        .par_for_each(|p| p.x += 1.0)
        .unwrap();
    assert_eq!(run.chunks, 8);
    let got = spans::collect().spans;
    let serial: Vec<_> = got
        .iter()
        .filter(|s| s.name.starts_with("par_query.serial") && s.n == Some(777))
        .collect();
    assert_eq!(serial.len(), 1, "{got:?}");
    assert_eq!(serial[0].name, "par_query.serial.no_lane");
    let chunks: Vec<_> = got
        .iter()
        .filter(|s| s.name == "par_query.chunk" && s.n == Some(125))
        .collect();
    assert_eq!(chunks.len(), 8, "one span per chunk");
    // Each chunk is on the track of the thread that ran it: a physics worker's, or this
    // (the caller's) thread's when it helped.
    let tracks = spans::tracks();
    let here = spans::current_thread_track();
    for c in &chunks {
        let t = tracks.iter().find(|t| t.id == c.track).unwrap();
        let on_lane = matches!(&t.kind, TrackKind::LaneWorker { lane, .. } if lane == "physics");
        assert!(on_lane || Some(c.track) == here, "{t:?}");
    }
    spans::set_enabled(was);
}
