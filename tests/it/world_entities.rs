//! The World through its public API: handles, components, queries, epochs, hash, telemetry.

use lanegraph::hooks::{ColumnLayout, EntityHooks, WorldHooks};
use lanegraph::systems::SystemDef;
use lanegraph::world::Entity;
use lanegraph::world::WorldError;
use lanegraph::world::{Component, Domain, DomainSet, StateHash, World};
use proptest::prelude::*;

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
#[component(domains(TRANSFORM, RENDER))]
struct Position([f32; 3]);

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
#[component(domains(GAMEPLAY))]
struct Health(u32);

#[test]
fn stale_handles_are_errors_never_another_entity() {
    let mut w = World::new();
    let a = w.spawn();
    w.insert(a, Health(10)).unwrap();
    w.despawn(a).unwrap();
    let b = w.spawn(); // reuses a's slot under a new generation
    w.insert(b, Health(99)).unwrap();
    assert_eq!(a.index(), b.index());
    assert_ne!(a, b);
    assert!(matches!(
        w.get::<Health>(a),
        Err(WorldError::StaleEntity { .. })
    ));
    assert!(matches!(
        w.insert(a, Health(1)),
        Err(WorldError::StaleEntity { .. })
    ));
    assert!(matches!(
        w.remove::<Health>(a),
        Err(WorldError::StaleEntity { .. })
    ));
    assert!(w.despawn(a).is_err());
    assert!(w.has::<Health>(a).is_err());
    assert_eq!(*w.get::<Health>(b).unwrap(), Health(99));
    let msg = w.get::<Health>(a).unwrap_err().to_string();
    assert!(msg.contains("stale") && msg.contains("fix:"), "{msg}");
}

#[test]
fn missing_components_are_typed_errors() {
    let mut w = World::new();
    let e = w.spawn();
    assert!(
        matches!(w.get::<Health>(e), Err(WorldError::MissingComponent { component, .. }) if component == "Health")
    );
    assert!(matches!(
        w.get_mut::<Health>(e),
        Err(WorldError::MissingComponent { .. })
    ));
    assert!(matches!(
        w.remove::<Health>(e),
        Err(WorldError::MissingComponent { .. })
    ));
    assert!(!w.has::<Health>(e).unwrap());
}

#[test]
fn storage_stays_dense_and_queries_see_every_live_row() {
    let mut w = World::new();
    let es: Vec<_> = (0..1000).map(|_| w.spawn()).collect();
    for (i, &e) in es.iter().enumerate() {
        w.insert(e, Health(i as u32)).unwrap();
        if i % 2 == 0 {
            w.insert(e, Position([i as f32, 0.0, 0.0])).unwrap();
        }
    }
    for &e in es.iter().filter(|e| e.index() % 3 == 0) {
        w.despawn(e).unwrap();
    }
    let live = es.iter().filter(|e| e.index() % 3 != 0).count();
    assert_eq!(w.len(), live);
    assert_eq!(w.query::<&Health>().unwrap().count(), live);
    let mut rows = Vec::new();
    w.query::<(Entity, &Health)>()
        .unwrap()
        .for_each(|(e, h)| rows.push((e, h.0)));
    for (e, h) in rows {
        assert!(w.is_alive(e));
        assert_eq!(h, e.index());
    }
    let mut pairs = Vec::new();
    w.query::<(Entity, &Position, &Health)>()
        .unwrap()
        .for_each(|(e, p, h)| pairs.push((e, *p, *h)));
    assert_eq!(
        pairs.len(),
        es.iter()
            .filter(|e| e.index() % 3 != 0 && e.index() % 2 == 0)
            .count()
    );
    for (e, p, h) in pairs {
        assert_eq!(p.0[0] as u32, h.0);
        assert_eq!(h.0, e.index());
    }
    // A mutable query writes through.
    w.query::<(&mut Health, &Position)>()
        .unwrap()
        .for_each(|(h, p)| h.0 = p.0[0] as u32 + 1);
    let e2 = es[2];
    assert_eq!(w.get::<Health>(e2).unwrap().0, 3);
    assert!(matches!(
        w.query::<(&mut Health, &Health)>().map(|_| ()),
        Err(WorldError::AliasedQuery { .. })
    ));
}

#[test]
fn every_kind_of_mutation_bumps_exactly_its_domains() {
    let mut w = World::new();
    let transform = DomainSet::of(Domain::TRANSFORM);
    let render = DomainSet::of(Domain::RENDER);
    let gameplay = DomainSet::of(Domain::GAMEPLAY);
    let structure = DomainSet::of(Domain::STRUCTURE);
    let physics = DomainSet::of(Domain::PHYSICS);

    let e0 = w.epochs();
    let e = w.spawn();
    assert!(e0.changed_in(&w.epochs(), structure));
    assert!(!e0.changed_in(&w.epochs(), transform));

    let e1 = w.epochs();
    w.insert(e, Position([0.0; 3])).unwrap();
    assert!(e1.changed_in(&w.epochs(), transform) && e1.changed_in(&w.epochs(), render));
    assert!(!e1.changed_in(&w.epochs(), gameplay | physics | structure));

    let e2 = w.epochs();
    w.insert(e, Health(1)).unwrap();
    assert!(e2.changed_in(&w.epochs(), gameplay) && !e2.changed_in(&w.epochs(), transform));

    // Shared reads bump nothing.
    let e3 = w.epochs();
    let _ = w.get::<Position>(e).unwrap();
    let _ = w.query::<&Position>().unwrap().count();
    let _ = w.query::<(&Position, &Health)>().unwrap().count();
    let _ = w.state_hash();
    w.run_systems();
    assert_eq!(e3, w.epochs());

    // Mutable access bumps when handed out.
    w.get_mut::<Health>(e).unwrap();
    assert!(e3.changed_in(&w.epochs(), gameplay));
    let e4 = w.epochs();
    w.query::<&mut Position>().unwrap();
    assert!(e4.changed_in(&w.epochs(), transform));
    let e5 = w.epochs();
    w.query::<(&mut Health, &Position)>()
        .unwrap()
        .for_each(|_| {});
    assert!(e5.changed_in(&w.epochs(), gameplay) && !e5.changed_in(&w.epochs(), transform));

    // Remove and despawn bump the component's domains.
    let e6 = w.epochs();
    w.remove::<Health>(e).unwrap();
    assert!(e6.changed_in(&w.epochs(), gameplay));
    let e7 = w.epochs();
    w.despawn(e).unwrap();
    assert!(e7.changed_in(&w.epochs(), structure | transform | render));
    assert!(!e7.changed_in(&w.epochs(), gameplay)); // it no longer had Health

    // Compaction and explicit loads.
    let e8 = w.epochs();
    w.compact();
    assert!(e8.changed_in(&w.epochs(), structure));
    let e9 = w.epochs();
    w.mark_changed(physics);
    assert!(e9.changed_in(&w.epochs(), physics) && !e9.changed_in(&w.epochs(), structure));
    // Epochs only grow.
    assert!(w.epochs().get(Domain::STRUCTURE) > e0.get(Domain::STRUCTURE));
    // Distinct worlds have distinct ids.
    assert_ne!(World::new().id(), w.id());
}

#[test]
fn state_hash_is_deterministic_order_independent_and_timing_free() {
    let build = |reverse: bool| {
        let mut w = World::new();
        let es: Vec<_> = (0..100).map(|_| w.spawn()).collect();
        let order: Vec<_> = if reverse {
            es.iter().rev().copied().collect()
        } else {
            es.clone()
        };
        // Insertion order differs (so dense row order differs); the data does not.
        for e in order {
            w.insert(e, Health(e.index() * 7)).unwrap();
            w.insert(e, Position([e.index() as f32, 1.0, -2.5]))
                .unwrap();
        }
        w
    };
    let mut a = build(false);
    let b = build(true);
    assert_eq!(a.state_hash(), b.state_hash());
    // Running timed systems (which do not touch components) leaves the hash alone.
    let h = a.state_hash();
    a.register_system(SystemDef::new("spin", 0.000_001, |_, _| {
        std::hint::black_box((0..1000).sum::<u64>());
    }))
    .unwrap();
    for _ in 0..50 {
        a.run_systems();
    }
    assert_eq!(a.state_hash(), h);
    // Any data change moves it.
    let e = a.entities()[10];
    a.get_mut::<Health>(e).unwrap().0 += 1;
    assert_ne!(a.state_hash(), h);
    a.get_mut::<Health>(e).unwrap().0 -= 1;
    assert_eq!(a.state_hash(), h);
    // Entity identity is part of it.
    let mut c = build(false);
    let e = c.entities()[5];
    let v = *c.get::<Health>(e).unwrap();
    let p = *c.get::<Position>(e).unwrap();
    c.despawn(e).unwrap();
    let e2 = c.spawn();
    c.insert(e2, v).unwrap();
    c.insert(e2, p).unwrap();
    assert_ne!(
        c.state_hash(),
        h,
        "same data under a new generation is a different state"
    );
}

#[test]
fn access_telemetry_counts_queries_rows_and_bytes() {
    let mut w = World::new();
    for i in 0..64 {
        let e = w.spawn();
        w.insert(e, Position([i as f32; 3])).unwrap();
        if i < 16 {
            w.insert(e, Health(i)).unwrap();
        }
    }
    for _ in 0..10 {
        let _ = w.query::<&Position>().unwrap().count();
    }
    let _ = w.query::<(&Health, &Position)>().unwrap().count();
    let t = w.component_access();
    assert_eq!(t.len(), 2);
    let pos = t.iter().find(|a| a.name == "Position").unwrap();
    assert_eq!(pos.layout, ColumnLayout::Aos);
    assert_eq!(pos.size_bytes, 12);
    assert_eq!(pos.rows, 64);
    assert_eq!(pos.query_count, 11);
    // A query records every row of each column it borrows (the pair query borrowed all 64
    // rows of `Position`, though it visited the 16 that have `Health`).
    assert_eq!(pos.rows_scanned, 11 * 64);
    assert_eq!(pos.bytes_scanned, 11 * 64 * 12);
    let h = t.iter().find(|a| a.name == "Health").unwrap();
    assert_eq!((h.query_count, h.rows_scanned), (1, 16));
}

#[derive(Debug, Clone)]
enum Op {
    Spawn,
    Despawn(usize),
    Insert(usize, u32),
    Remove(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::Spawn),
        (0usize..64).prop_map(Op::Despawn),
        (0usize..64, any::<u32>()).prop_map(|(i, v)| Op::Insert(i, v)),
        (0usize..64).prop_map(Op::Remove),
    ]
}

proptest! {
    /// Random spawn/despawn/insert/remove against a simple model: every live handle sees its
    /// own data, every dead one is an error, and columns hold exactly the live rows.
    #[test]
    fn world_matches_a_model(ops in proptest::collection::vec(op(), 1..300)) {
        let mut w = World::new();
        let mut handles = Vec::new(); // every handle ever made
        let mut model = std::collections::HashMap::new(); // live handle -> Option<Health>
        for op in ops {
            match op {
                Op::Spawn => {
                    let e = w.spawn();
                    handles.push(e);
                    model.insert(e, None);
                }
                Op::Despawn(i) if !handles.is_empty() => {
                    let e = handles[i % handles.len()];
                    let r = w.despawn(e);
                    prop_assert_eq!(r.is_ok(), model.remove(&e).is_some());
                }
                Op::Insert(i, v) if !handles.is_empty() => {
                    let e = handles[i % handles.len()];
                    let r = w.insert(e, Health(v));
                    match model.get_mut(&e) {
                        Some(slot) => prop_assert_eq!(r.unwrap(), slot.replace(Health(v))),
                        None => prop_assert!(r.is_err()),
                    }
                }
                Op::Remove(i) if !handles.is_empty() => {
                    let e = handles[i % handles.len()];
                    let r = w.remove::<Health>(e);
                    match model.get_mut(&e) {
                        Some(slot) => match slot.take() {
                            Some(h) => prop_assert_eq!(r.unwrap(), h),
                            None => prop_assert!(r.is_err()),
                        },
                        None => prop_assert!(r.is_err()),
                    }
                }
                _ => {}
            }
        }
        prop_assert_eq!(w.len(), model.len());
        for e in &handles {
            prop_assert_eq!(w.is_alive(*e), model.contains_key(e));
            match model.get(e) {
                Some(Some(h)) => prop_assert_eq!(w.get::<Health>(*e).unwrap(), h),
                Some(None) => prop_assert!(w.get::<Health>(*e).is_err()),
                None => {
                    let stale = matches!(w.get::<Health>(*e), Err(WorldError::StaleEntity { .. }));
                    prop_assert!(stale)
                }
            }
        }
        let with_health = model.values().filter(|v| v.is_some()).count();
        prop_assert_eq!(w.query::<&Health>().unwrap().count(), with_health);
    }
}

/// A query writing two components writes both in one loop, on aligned columns (inserted
/// together) and misaligned ones (inserted in another order, some entities with one component
/// only), exactly as the per-entity `get_mut` path does; it bumps both components' domains.
#[test]
fn a_two_component_query_writes_both_whatever_the_row_order() {
    #[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
    #[component(domains(PHYSICS))]
    struct Velocity([f32; 3]);
    let step = |p: &mut Position, v: &mut Velocity| {
        for a in 0..3 {
            v.0[a] = (v.0[a] - 1.5) * 0.99;
            p.0[a] += v.0[a] * 0.25;
            if p.0[a] < -10.0 {
                p.0[a] = -10.0;
                v.0[a] = -v.0[a];
            }
        }
    };
    for aligned in [true, false] {
        let (mut fast, mut slow) = (World::new(), World::new());
        let mut es = Vec::new();
        for w in [&mut fast, &mut slow] {
            es.clear();
            for i in 0..500u32 {
                es.push(w.spawn());
                let f = i as f32;
                if aligned || i % 3 != 0 {
                    w.insert(es[i as usize], Position([f, -f, f * 0.5]))
                        .unwrap();
                }
            }
            // Misaligned: velocities go in in reverse order, and every 5th entity has none.
            let order: Vec<usize> = if aligned {
                (0..500).collect()
            } else {
                (0..500).rev().filter(|i| i % 5 != 0).collect()
            };
            for i in order {
                let f = i as f32;
                w.insert(es[i], Velocity([1.0, f * 0.1, -f])).unwrap();
            }
        }
        // Rounds with structural changes between them: the cached row alignment must follow.
        for round in 0..4 {
            let mut expected_visits = 0;
            for &e in &es {
                if slow.is_alive(e)
                    && slow.has::<Position>(e).unwrap()
                    && slow.has::<Velocity>(e).unwrap()
                {
                    let mut v = *slow.get::<Velocity>(e).unwrap();
                    step(slow.get_mut::<Position>(e).unwrap(), &mut v);
                    slow.insert(e, v).unwrap();
                    expected_visits += 1;
                }
            }
            let before = fast.epochs();
            let visits = fast
                .query::<(&mut Position, &mut Velocity)>()
                .unwrap()
                .for_each(|(p, v)| step(p, v));
            assert_eq!(visits, expected_visits, "aligned {aligned}, round {round}");
            assert!(before.changed_in(&fast.epochs(), DomainSet::of(Domain::TRANSFORM)));
            assert!(before.changed_in(&fast.epochs(), DomainSet::of(Domain::PHYSICS)));
            for &e in &es {
                if slow.is_alive(e) {
                    assert_eq!(fast.get::<Position>(e).ok(), slow.get::<Position>(e).ok());
                    assert_eq!(fast.get::<Velocity>(e).ok(), slow.get::<Velocity>(e).ok());
                }
            }
            assert_eq!(fast.state_hash(), slow.state_hash(), "aligned {aligned}");
            for w in [&mut fast, &mut slow] {
                match round {
                    // Swap-removes move rows: the aligned prefix shrinks.
                    0 => {
                        for &e in es.iter().skip(7).step_by(11) {
                            let _ = w.remove::<Velocity>(e);
                        }
                    }
                    1 => {
                        for &e in es.iter().skip(3).step_by(17) {
                            let _ = w.despawn(e);
                        }
                    }
                    // Back in, at the end of one column only, then compacted.
                    2 => {
                        for &e in es.iter().skip(7).step_by(11) {
                            if w.is_alive(e) {
                                w.insert(e, Velocity([0.5, 0.5, 0.5])).unwrap();
                            }
                        }
                        w.compact();
                    }
                    _ => {}
                }
            }
        }
    }
    // The same component twice is a typed error; a missing one visits nothing.
    let mut w = World::new();
    let e = w.spawn();
    w.insert(e, Position([0.0; 3])).unwrap();
    let err = w
        .query::<(&mut Position, &mut Position)>()
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(err, WorldError::AliasedQuery { .. }), "{err}");
    assert!(err.to_string().contains("fix:"), "{err}");
    assert_eq!(
        w.query::<(&mut Position, &mut Health)>()
            .unwrap()
            .for_each(|_| {}),
        0
    );
}

/// Resources: typed singletons a system reads and writes, in the state hash, bumping their
/// domains, with typed errors for a missing one and a name clash.
#[test]
fn resources_are_state_systems_write_them_and_errors_say_how_to_fix() {
    use lanegraph::world::Resource;
    #[derive(Debug, Clone, Copy, PartialEq, Resource, StateHash)]
    #[resource(domains(GAMEPLAY))]
    struct Score(u64);
    #[derive(Debug, Clone, Copy, PartialEq, Resource, StateHash)]
    #[resource(domains(PHYSICS))]
    struct Wind(f32);
    #[derive(Debug, Resource, StateHash)]
    #[resource(name = "Score", domains(GAMEPLAY))]
    struct FakeScore(u64);

    let mut w = World::new();
    let e = w.spawn();
    w.insert(e, Health(3)).unwrap();
    let bare = w.state_hash();
    let err: WorldError = w.resource::<Score>().unwrap_err();
    assert!(err.to_string().contains("Score") && err.to_string().contains("fix:"));
    assert!(w.resource_mut::<Score>().is_err());

    let e0 = w.epochs();
    assert_eq!(w.insert_resource(Wind(1.5)).unwrap(), None);
    assert_eq!(w.insert_resource(Score(0)).unwrap(), None);
    assert!(e0.changed_in(&w.epochs(), DomainSet::of(Domain::GAMEPLAY)));
    assert_eq!(w.resource_count(), 2);
    let clash: WorldError = w.insert_resource(FakeScore(1)).unwrap_err();
    assert!(clash.to_string().contains("fix:"), "{clash}");

    // A system writes the score from the world's health each step.
    w.register_system(SystemDef::new("scoring", 1.0, |w: &mut World, _| {
        let mut total = 0u64;
        w.query::<&Health>()
            .unwrap()
            .for_each(|h| total += u64::from(h.0));
        w.resource_mut::<Score>().unwrap().0 += total;
    }))
    .unwrap();
    let with_zero = w.state_hash();
    assert_ne!(with_zero, bare, "a resource is state: it enters the hash");
    let e1 = w.epochs();
    w.run_systems();
    w.run_systems();
    assert_eq!(*w.resource::<Score>().unwrap(), Score(6));
    assert!(e1.changed_in(&w.epochs(), DomainSet::of(Domain::GAMEPLAY)));
    assert!(!e1.changed_in(&w.epochs(), DomainSet::of(Domain::PHYSICS)));
    assert_ne!(
        w.state_hash(),
        with_zero,
        "the score moved: so does the hash"
    );

    // The same state built in another order hashes alike (resources hash in name order).
    let mut v = World::new();
    let f = v.spawn();
    v.insert(f, Health(3)).unwrap();
    v.insert_resource(Score(6)).unwrap();
    v.insert_resource(Wind(1.5)).unwrap();
    assert_eq!(v.state_hash(), w.state_hash());

    // Replace and remove hand the old value back; without resources the hash is the bare one.
    assert_eq!(w.insert_resource(Score(1)).unwrap(), Some(Score(6)));
    assert_eq!(w.remove_resource::<Score>(), Some(Score(1)));
    assert_eq!(w.remove_resource::<Score>(), None);
    assert_eq!(w.remove_resource::<Wind>(), Some(Wind(1.5)));
    assert_eq!(w.state_hash(), bare);
}

/// Filters: `With` and `Without` components decide which entities a two-component query
/// visits, over aligned and misaligned rows alike.
#[test]
fn a_filtered_query_visits_exactly_the_entities_that_pass() {
    use lanegraph::world::{With, Without};
    #[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
    #[component(domains(GAMEPLAY))]
    struct Frozen;
    #[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
    #[component(domains(GAMEPLAY))]
    struct Tag(u8);
    let mut w = World::new();
    let mut es = Vec::new();
    for i in 0..300u32 {
        let e = w.spawn();
        w.insert(e, Position([i as f32; 3])).unwrap();
        es.push(e);
    }
    // Health in another order (misaligned after the first 100), Frozen on every 3rd, Tag on
    // every 2nd.
    for (i, &e) in es.iter().enumerate().take(100) {
        w.insert(e, Health(i as u32)).unwrap();
    }
    for (i, &e) in es.iter().enumerate().skip(100).rev() {
        w.insert(e, Health(i as u32)).unwrap();
    }
    for &e in es.iter().step_by(3) {
        w.insert(e, Frozen).unwrap();
    }
    for &e in es.iter().step_by(2) {
        w.insert(e, Tag(1)).unwrap();
    }
    let mut seen = Vec::new();
    let n = w
        .query_filtered::<(Entity, &mut Position, &mut Health), (With<Tag>, Without<Frozen>)>()
        .unwrap()
        .for_each(|(e, p, h)| {
            p.0[0] = -1.0;
            h.0 += 1000;
            seen.push(e);
        });
    let want: Vec<_> = es
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 2 == 0 && i % 3 != 0)
        .map(|(_, &e)| e)
        .collect();
    assert_eq!(n, want.len());
    seen.sort_by_key(|e| e.index());
    assert_eq!(seen, want);
    for (i, &e) in es.iter().enumerate() {
        let hit = i % 2 == 0 && i % 3 != 0;
        assert_eq!(
            w.get::<Position>(e).unwrap().0[0] == -1.0,
            hit,
            "entity {i}"
        );
        assert_eq!(w.get::<Health>(e).unwrap().0 >= 1000, hit, "entity {i}");
    }
    // A `with` component never stored matches nothing; a `without` one excludes nothing.
    #[derive(Debug, Component, StateHash)]
    #[component(domains(GAMEPLAY))]
    struct Never;
    assert_eq!(
        w.query_filtered::<(&mut Position, &mut Health), With<Never>>()
            .unwrap()
            .for_each(|_| {}),
        0
    );
    assert_eq!(
        w.query_filtered::<(&mut Position, &mut Health), Without<Never>>()
            .unwrap()
            .for_each(|_| {}),
        300
    );
}
