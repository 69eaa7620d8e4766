//! World snapshots: a restored world has the same state hash, iteration order,
//! entity ids and next spawn as the one captured, over AoS and field-SoA columns, resources and
//! event queues; a capture into a warm snapshot and its restore allocate nothing; a component
//! or resource that cannot be copied is a typed error naming it.

use lanegraph::hooks::{EntityHooks, SnapshotHooks};
use lanegraph::prelude::*;
use lanegraph::simd::SoaComponent;
use lanegraph::world::WorldError;
use lanegraph::world::{Snapshot, SnapshotRing};

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, SoaComponent)]
struct Pos {
    x: f32,
    y: f32,
}
#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
struct Hp(i32);
#[derive(Debug, Clone, PartialEq, Component, StateHash)]
struct Name(String);
#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
struct Late(u8);
#[derive(Debug, Clone, Resource, StateHash)]
struct Rng(u64);
#[derive(Debug, Clone, StateHash)]
struct Hit(u32);
impl Event for Hit {
    const NAME: &'static str = "Hit";
}

fn world(soa: bool) -> World {
    let mut w = World::new();
    if soa {
        w.use_field_soa::<Pos>().unwrap();
    }
    w.insert_resource(Rng(7)).unwrap();
    w.add_event::<Hit>().unwrap();
    let es = w
        .spawn_batch((0..500).map(|i| {
            (
                Pos {
                    x: i as f32,
                    y: 0.0,
                },
                Hp(100),
            )
        }))
        .unwrap()
        .to_vec();
    for e in es.iter().step_by(7) {
        w.insert(*e, Name(format!("e{}", e.index()))).unwrap();
    }
    for e in es.iter().step_by(11) {
        w.despawn(*e).unwrap();
    }
    w.register_system(SystemDef::new("step", 1.0, |w: &mut World, ctx| {
        let c = ctx.commands();
        let (mut comps, (rng,), _) = w.split::<(&mut Rng,)>().unwrap();
        comps
            .query::<(Entity, &mut Pos, &mut Hp)>()
            .unwrap()
            .for_each(|(e, p, hp)| {
                rng.0 = rng.0.wrapping_mul(6364136223846793005).wrapping_add(1);
                p.x += (rng.0 >> 60) as f32;
                hp.0 -= (rng.0 >> 61) as i32;
                if hp.0 < 95 {
                    c.despawn(e);
                    c.spawn((Pos { x: 0.0, y: 1.0 }, Hp(100)));
                    c.send(Hit(e.index()));
                }
            });
    }))
    .unwrap();
    w.run_systems();
    w
}

/// Everything a caller can observe of the order and identity of entities and rows.
fn fingerprint(w: &mut World) -> (u64, Vec<Entity>, Vec<(Entity, i32)>, usize) {
    let mut rows = Vec::new();
    w.query::<(Entity, &Hp)>()
        .unwrap()
        .for_each(|(e, hp)| rows.push((e, hp.0)));
    let events = w.events::<Hit>().unwrap().iter().count();
    (w.state_hash(), w.entities().to_vec(), rows, events)
}

#[test]
fn a_restored_world_is_the_captured_one_in_either_layout() {
    for soa in [false, true] {
        let mut w = world(soa);
        let mut snap = Snapshot::default();
        w.snapshot_into(&mut snap).unwrap();
        assert_eq!(snap.tick(), Some(1));
        let before = fingerprint(&mut w);
        // Run on, change everything a snapshot covers, use a new component.
        for _ in 0..5 {
            w.run_systems();
        }
        let e = w.spawn();
        w.insert(e, Late(1)).unwrap();
        w.resource_mut::<Rng>().unwrap().0 = 0;
        assert_ne!(fingerprint(&mut w).0, before.0);
        w.restore(&snap).unwrap();
        let after = fingerprint(&mut w);
        assert_eq!(after, before, "soa = {soa}");
        assert_eq!(w.tick(), 1);
        assert_eq!(w.query::<&Late>().unwrap().count(), 0);
        // The same next spawn, and the same future: one more step from each gives one hash.
        let mut again = world(soa);
        assert_eq!(w.spawn(), again.spawn(), "the same next spawn");
        w.run_systems();
        again.run_systems();
        assert_eq!(w.state_hash(), again.state_hash());
    }
}

#[test]
fn a_warm_capture_and_restore_allocate_nothing() {
    let mut w = world(true);
    let mut snap = Snapshot::default();
    w.snapshot_into(&mut snap).unwrap();
    w.restore(&snap).unwrap();
    let (_, allocs) = lanegraph_tests::count_allocs(|| {
        for _ in 0..3 {
            w.query::<&mut Hp>().unwrap().for_each(|hp| hp.0 -= 1);
            w.snapshot_into(&mut snap).unwrap();
            w.restore(&snap).unwrap();
        }
    });
    // `Name` holds a `String`: copying one allocates by nature. It shares `Hp`'s domains
    // (every domain, the default), so `Hp`'s writes count as changes to it too and each
    // capture copies it (the restore right after finds the snapshot's own version and copies
    // nothing); every other column, the entity table, the resources and the event queues are
    // copied into the snapshot's own buffers.
    let names = w.query::<&Name>().unwrap().count() as u64;
    assert_eq!(allocs, 3 * names, "only the Strings are allocated");
    // Nothing changed between captures: neither the capture nor the restore copies a column.
    let (_, allocs) = lanegraph_tests::count_allocs(|| {
        for _ in 0..3 {
            w.snapshot_into(&mut snap).unwrap();
            w.restore(&snap).unwrap();
        }
    });
    assert_eq!(allocs, 0);
    assert_eq!(snap.columns_copied(), 0);
}

#[test]
fn what_cannot_be_copied_is_named_and_misuse_is_typed() {
    #[derive(Component, StateHash)]
    struct Opaque(u32);
    let mut w = world(false);
    let e = w.spawn();
    w.insert(e, Opaque(1)).unwrap();
    let mut snap = Snapshot::default();
    let err = w.snapshot_into(&mut snap).unwrap_err();
    assert_eq!(
        err,
        WorldError::NotCloneable {
            kind: "component",
            name: "Opaque"
        }
    );
    assert!(err.to_string().contains("fix:"), "{err}");
    assert_eq!(w.restore(&snap), Err(WorldError::SnapshotEmpty));
    let mut other = World::new();
    let mut theirs = Snapshot::default();
    other.snapshot_into(&mut theirs).unwrap();
    assert_eq!(w.restore(&theirs), Err(WorldError::SnapshotOfOtherWorld));
    #[derive(Resource, StateHash)]
    struct Handle(u32);
    other.insert_resource(Handle(3)).unwrap();
    assert_eq!(
        other.snapshot_into(&mut theirs).unwrap_err(),
        WorldError::NotCloneable {
            kind: "resource",
            name: "Handle"
        }
    );
}

#[test]
fn a_ring_keeps_the_last_n_steps() {
    let mut w = world(false);
    let mut ring = SnapshotRing::new(4);
    let mut hashes = Vec::new();
    for _ in 0..6 {
        ring.save(&w).unwrap();
        hashes.push((w.tick(), w.state_hash()));
        w.run_systems();
    }
    assert!(ring.at_tick(hashes[1].0).is_none(), "overwritten");
    for &(tick, hash) in &hashes[2..] {
        w.restore(ring.at_tick(tick).unwrap()).unwrap();
        assert_eq!(w.state_hash(), hash, "tick {tick}");
    }
    // A rollback re-simulates a step with other inputs and captures it again: the ring then
    // holds two captures of that step, and the latest is the one found.
    let (tick, _) = hashes[4];
    w.restore(ring.at_tick(tick).unwrap()).unwrap();
    w.spawn();
    let changed = w.state_hash();
    ring.save(&w).unwrap();
    w.run_systems();
    w.restore(ring.at_tick(tick).unwrap()).unwrap();
    assert_eq!(
        w.state_hash(),
        changed,
        "the re-simulated capture, not the first"
    );
}

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
#[component(domains(TRANSFORM))]
struct Moving(f32);
#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
#[component(domains(GAMEPLAY))]
struct Terrain(u32);
#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
#[component(domains(PHYSICS))]
struct Mass(f32);

#[test]
fn a_capture_skips_columns_unchanged_since_the_slots_last_capture_and_restores_the_same() {
    let mut w = World::new();
    let es = w
        .spawn_batch((0..100).map(|i| (Moving(i as f32), Terrain(i), Mass(1.0))))
        .unwrap()
        .to_vec();
    let mut snap = Snapshot::default();
    w.snapshot_into(&mut snap).unwrap();
    assert_eq!(
        snap.columns_copied(),
        3,
        "a first capture copies everything"
    );

    // Only the TRANSFORM column moves: the terrain and mass copies stand.
    w.query::<&mut Moving>().unwrap().for_each(|m| m.0 += 1.0);
    w.snapshot_into(&mut snap).unwrap();
    assert_eq!(snap.columns_copied(), 1);
    let at_capture = w.state_hash();

    // Every kind of change after the capture is undone by the restore.
    w.query::<&mut Moving>().unwrap().for_each(|m| m.0 += 1.0);
    w.get_mut::<Mass>(es[3]).unwrap().0 = 9.0;
    w.despawn(es[5]).unwrap();
    w.remove::<Terrain>(es[7]).unwrap();
    w.restore(&snap).unwrap();
    assert_eq!(w.state_hash(), at_capture);

    // A restored world holds the snapshot's content: a capture into it copies nothing.
    w.snapshot_into(&mut snap).unwrap();
    assert_eq!(snap.columns_copied(), 0);
    // One column changed since: that one is copied, and the snapshot restores the same world.
    w.query::<&mut Moving>().unwrap().for_each(|m| m.0 += 1.0);
    w.snapshot_into(&mut snap).unwrap();
    assert_eq!(snap.columns_copied(), 1);
    let at_capture = w.state_hash();
    w.get_mut::<Mass>(es[1]).unwrap().0 = 2.0;
    w.restore(&snap).unwrap();
    assert_eq!(w.state_hash(), at_capture);

    // A snapshot that last held another world copies everything.
    let mut other = World::new();
    other.spawn_batch((0..3).map(|i| (Terrain(i),))).unwrap();
    other.snapshot_into(&mut snap).unwrap();
    w.snapshot_into(&mut snap).unwrap();
    assert_eq!(snap.columns_copied(), 3);
}

/// A capture through the game loop holds the time owed to the next step: restored, the frames
/// after it run the steps the frames after the capture ran.
#[test]
fn a_game_loop_snapshot_puts_back_the_time_owed_to_the_next_step() {
    use lanegraph::hooks::GameLoop;
    use lanegraph::hooks::LoopOptions;
    use lanegraph::hooks::ManualClock;
    let clock = ManualClock::new();
    let mut w = World::new();
    w.spawn_batch((0..4).map(|i| (Hp(i),))).unwrap();
    w.register_system(SystemDef::new("heal", 1.0, |w: &mut World, _| {
        w.query::<&mut Hp>().unwrap().for_each(|h| h.0 += 1);
    }))
    .unwrap();
    let mut lp = GameLoop::with_clock(w, clock.clone(), LoopOptions::default()).unwrap();
    // 60 Hz: 25 ms is one and a half steps: one runs, half a step is owed.
    clock.advance_ns(25_000_000);
    assert_eq!(lp.frame().steps, 1);
    let mut snap = Snapshot::default();
    lp.snapshot_into(&mut snap).unwrap();
    let owed = lp.leftover_units();
    let at_capture = lp.world().state_hash();

    // 10 ms later: 1.1 steps owed, one runs, 0.1 left.
    clock.advance_ns(10_000_000);
    assert_eq!(lp.frame().steps, 1);
    assert_ne!(lp.leftover_units(), owed);
    lp.restore(&snap).unwrap();
    assert_eq!(lp.leftover_units(), owed, "the half step owed is back");
    assert_eq!(lp.world().state_hash(), at_capture);
    // 8.4 ms more is just over half a step: with the half owed, one step is due (with the 0.1
    // left before the restore, none would be).
    clock.advance_ns(8_400_000);
    assert_eq!(lp.frame().steps, 1);

    // A World-only snapshot leaves the accumulator as it is.
    let mut world_only = Snapshot::default();
    lp.world().snapshot_into(&mut world_only).unwrap();
    let left = lp.leftover_units();
    clock.advance_ns(5_000_000);
    lp.frame();
    let now = lp.leftover_units();
    assert_ne!(now, left);
    lp.restore(&world_only).unwrap();
    assert_eq!(lp.leftover_units(), now);
}

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
#[component(domains())]
struct Untracked(u32);

/// Captures and restores skip what is unchanged (by content version) and the hash reuses
/// digests across restores; a model of the world, kept in plain vectors, says what every
/// column must hold after each of 3,000 random writes, spawns, despawns, captures and
/// restores of a four-slot ring, across columns of one domain, another, none and every one.
#[test]
fn random_captures_and_restores_always_hold_what_a_plain_model_holds() {
    type Row = (Option<f32>, Option<u32>, Option<f32>, Option<u32>);
    let mut w = World::new();
    let mut model: Vec<Option<Row>> = Vec::new();
    // A slot: the snapshot, the model at its capture and the hash then.
    type Held = (Snapshot, Vec<Option<Row>>, u64);
    let mut ring: Vec<Option<Held>> = (0..4).map(|_| None).collect();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for step in 0..3_000u32 {
        let es = w.entities().to_vec();
        match next(9) {
            0 | 1 if !es.is_empty() => {
                // A write to one column of one entity, through each kind of write.
                let e = es[next(es.len() as u64) as usize];
                let row = model[e.index() as usize].as_mut().unwrap();
                match next(4) {
                    0 => {
                        w.insert(e, Moving(step as f32)).unwrap();
                        row.0 = Some(step as f32);
                    }
                    1 => {
                        w.insert(e, Terrain(step)).unwrap();
                        row.1 = Some(step);
                    }
                    2 => {
                        w.query::<&mut Mass>().unwrap().for_each(|m| m.0 += 1.0);
                        for r in model.iter_mut().flatten() {
                            if let Some(m) = r.2.as_mut() {
                                *m += 1.0;
                            }
                        }
                    }
                    _ => {
                        w.insert(e, Untracked(step)).unwrap();
                        row.3 = Some(step);
                    }
                }
            }
            2 if !es.is_empty() => {
                let e = es[next(es.len() as u64) as usize];
                w.despawn(e).unwrap();
                model[e.index() as usize] = None;
            }
            3 | 4 => {
                let e = w.spawn();
                w.insert(e, Mass(1.0)).unwrap();
                let i = e.index() as usize;
                if model.len() <= i {
                    model.resize(i + 1, None);
                }
                model[i] = Some((None, None, Some(1.0), None));
            }
            5 | 6 => {
                let k = next(4) as usize;
                let mut snap = ring[k].take().map(|r| r.0).unwrap_or_default();
                w.snapshot_into(&mut snap).unwrap();
                ring[k] = Some((snap, model.clone(), w.state_hash()));
            }
            _ => {
                let k = next(4) as usize;
                if let Some((snap, held, hash)) = &ring[k] {
                    w.restore(snap).unwrap();
                    model = held.clone();
                    assert_eq!(w.state_hash(), *hash, "step {step}: the hash at capture");
                }
            }
        }
        // The world holds what the model holds.
        let mut seen: Vec<Option<Row>> = vec![None; model.len().max(w.entities().len())];
        for &e in w.entities() {
            let i = e.index() as usize;
            if seen.len() <= i {
                seen.resize(i + 1, None);
            }
            seen[i] = Some((
                w.get::<Moving>(e).ok().map(|m| m.0),
                w.get::<Terrain>(e).ok().map(|t| t.0),
                w.get::<Mass>(e).ok().map(|m| m.0),
                w.get::<Untracked>(e).ok().map(|u| u.0),
            ));
        }
        seen.resize(model.len().max(seen.len()), None);
        let mut want = model.clone();
        want.resize(seen.len(), None);
        assert_eq!(seen, want, "step {step}");
    }
}
