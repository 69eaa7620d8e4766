//! Deferred commands and gameplay events: spawning, despawning, inserting and
//! removing from inside a query's closure, applied right after the system in queue order;
//! events read once per reader by later systems in the same step and by every system in the
//! next; both in the state hash; no allocation once warm.

use std::sync::{Arc, Mutex};

use lanegraph::systems::SystemDef;
use lanegraph::world::{Component, Entity, Event, EventCursor, StateHash, World};

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
#[component(domains(TRANSFORM))]
struct Pos(f32);

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
#[component(domains(PHYSICS))]
struct Vel(f32);

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
#[component(domains(GAMEPLAY))]
struct Spark;

#[derive(Debug, Clone, PartialEq, StateHash)]
struct Crossed {
    x: f32,
}
impl Event for Crossed {
    const NAME: &'static str = "Crossed";
}

/// A world whose `move` system spawns a spark (and sends an event) for every body that crosses
/// x = 10, from inside its query, and despawns the body; `count` runs after it and sees them.
fn game(
    seen_after: Arc<Mutex<Vec<(u64, usize, usize)>>>,
    seen_before: Arc<Mutex<Vec<usize>>>,
) -> World {
    let mut w = World::new();
    w.add_event::<Crossed>().unwrap();
    for i in 0..20 {
        let e = w.spawn();
        w.insert(e, Pos(i as f32)).unwrap();
        w.insert(e, Vel(1.0)).unwrap();
    }
    // Registered first: runs before the sender, so it reads last step's events.
    let mut early = EventCursor::default();
    w.register_system(SystemDef::new(
        "early_reader",
        1.0,
        move |w: &mut World, _| {
            let n = w.events::<Crossed>().unwrap().read(&mut early).count();
            seen_before.lock().unwrap().push(n);
        },
    ))
    .unwrap();
    w.register_system(SystemDef::new("move", 1.0, |w: &mut World, ctx| {
        let c = ctx.commands();
        w.query::<(Entity, &mut Pos, &Vel)>()
            .unwrap()
            .for_each(|(e, p, v)| {
                let before = p.0;
                p.0 += v.0;
                if before < 10.0 && p.0 >= 10.0 {
                    c.spawn((Pos(p.0), Spark));
                    c.send(Crossed { x: p.0 });
                    c.despawn(e);
                }
            });
    }))
    .unwrap();
    let mut late = EventCursor::default();
    w.register_system(SystemDef::new("count", 1.0, move |w: &mut World, ctx| {
        let sparks = w.query::<&Spark>().map_or(0, |mut q| q.count());
        let events = w.events::<Crossed>().unwrap().read(&mut late).count();
        seen_after
            .lock()
            .unwrap()
            .push((ctx.tick(), sparks, events));
    }))
    .unwrap();
    w
}

#[test]
fn commands_from_inside_a_query_apply_after_the_system_and_events_reach_every_reader_once() {
    let after = Arc::new(Mutex::new(Vec::new()));
    let before = Arc::new(Mutex::new(Vec::new()));
    let mut w = game(after.clone(), before.clone());
    for _ in 0..12 {
        w.run_systems();
    }
    let after = after.lock().unwrap().clone();
    let before = before.lock().unwrap().clone();
    // Body i crosses x = 10 on step 10 - i (0-based ticks): one per step for bodies 9..0.
    // `count` (after the sender) sees each step's spark and event in that same step.
    for (tick, sparks, events) in &after {
        let expected_sparks = (*tick as usize + 1).min(10);
        assert_eq!(*sparks, expected_sparks, "tick {tick}: {after:?}");
        assert_eq!(*events, usize::from(*tick < 10), "tick {tick}: {after:?}");
    }
    // `early_reader` (before the sender) reads each event one step later, once.
    assert_eq!(before[0], 0);
    assert_eq!(before.iter().sum::<usize>(), 10, "{before:?}");
    // Every crossing body was despawned: 20 bodies, 10 crossed, 10 sparks.
    assert_eq!(w.query::<&Vel>().unwrap().count(), 10);
    assert_eq!(w.command_failures().0, 0);
}

#[test]
fn commands_and_events_are_deterministic_and_in_the_state_hash() {
    let run = |extra_event: bool| {
        let mut w = game(Default::default(), Default::default());
        for _ in 0..5 {
            w.run_systems();
        }
        if extra_event {
            w.send_event(Crossed { x: 99.0 }).unwrap();
        }
        w.state_hash()
    };
    assert_eq!(run(false), run(false));
    assert_ne!(run(false), run(true), "a pending event changes the hash");
}

#[test]
fn a_failed_command_is_counted_with_its_error_and_the_rest_still_apply() {
    let mut w = World::new();
    let e = w.spawn();
    w.insert(e, Pos(1.0)).unwrap();
    let mut c = lanegraph::world::Commands::default();
    c.despawn(e);
    c.insert(e, Vel(2.0)); // the entity is gone by then
    c.spawn((Pos(5.0), Vel(5.0)));
    c.send(Crossed { x: 0.0 }); // no queue added
    let failed = w.apply_commands(&mut c);
    assert_eq!(failed, 2);
    // Applying drained the queue: a second apply does nothing and fails nothing.
    assert_eq!(w.apply_commands(&mut c), 0);
    assert_eq!(w.len(), 1);
    let (n, last) = w.command_failures();
    assert_eq!(n, 2);
    assert!(last.unwrap().to_string().contains("add_event"), "{last:?}");
    let mut alive: Vec<Entity> = Vec::new();
    w.query::<(Entity, &Pos)>()
        .unwrap()
        .for_each(|(e, _)| alive.push(e));
    assert_eq!(alive.len(), 1);
    assert_eq!(*w.get::<Vel>(alive[0]).unwrap(), Vel(5.0));
}

#[test]
fn commands_and_events_allocate_nothing_once_warm() {
    let mut w = World::new();
    w.add_event::<Crossed>().unwrap();
    let e = w.spawn();
    w.insert(e, Pos(0.0)).unwrap();
    let mut cursor = EventCursor::default();
    w.register_system(SystemDef::new("churn", 1.0, move |w: &mut World, ctx| {
        let c = ctx.commands();
        // One spawn and one despawn per step, an insert, a remove and an event.
        c.spawn((Pos(1.0), Vel(1.0)));
        c.insert(e, Vel(3.0));
        c.remove::<Vel>(e);
        c.send(Crossed { x: 1.0 });
        let n = w.events::<Crossed>().unwrap().read(&mut cursor).count();
        std::hint::black_box(n);
    }))
    .unwrap();
    w.register_system(SystemDef::new("reap", 1.0, |w: &mut World, ctx| {
        let c = ctx.commands();
        if let Ok(mut q) = w.query::<(Entity, &Vel)>() {
            q.for_each(|(e, _)| c.despawn(e));
        }
    }))
    .unwrap();
    for _ in 0..200 {
        w.run_systems();
    }
    let allocs = lanegraph_tests::count_allocs(|| {
        for _ in 0..1000 {
            w.run_systems();
        }
    })
    .1;
    assert_eq!(allocs, 0, "allocations in 1,000 warm steps");
    assert_eq!(w.command_failures().0, 0);
}
