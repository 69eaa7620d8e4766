//! The `Changed<T>` query filter: a system sees the rows written since its own
//! previous run (every row on its first), whoever wrote them and however (a `&mut T` term, an
//! insert, a command, `get_mut`), on either layout; a query made outside systems sees what the
//! latest step changed; the parallel form keeps the same rows; and a snapshot restore rewinds
//! the change ticks, so a re-simulated step reports what the original step reported.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use lanegraph::hooks::{QueryHooks, WorldHooks};
use lanegraph::jobs::plan::{machine_cores, LaneKind};
use lanegraph::jobs::{LanePlan, Lanes};
use lanegraph::prelude::*;
use lanegraph::simd::SoaComponent;
use lanegraph::world::Snapshot;

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, SoaComponent)]
struct Pos {
    x: f32,
    y: f32,
}

/// Marks the entities the mover system moves.
#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
struct Moving;

/// What the watcher system saw changed, per step.
#[derive(Debug, Default, Clone, Component, StateHash)]
struct Seen(u32);

fn world(n: usize, soa: bool) -> World {
    let mut w = World::new();
    if soa {
        w.use_field_soa::<Pos>().unwrap();
    }
    for i in 0..n {
        let e = w.spawn();
        w.insert(
            e,
            Pos {
                x: i as f32,
                y: 0.0,
            },
        )
        .unwrap();
        if i % 3 == 0 {
            w.insert(e, Moving).unwrap();
        }
    }
    w
}

/// A mover (writes `Pos` of `Moving` entities through `&mut Pos`) and, after it, a watcher
/// that counts the `Changed<Pos>` rows it sees into `log`, spawning one entity on step 2.
fn add_systems(w: &mut World, log: Arc<std::sync::Mutex<Vec<usize>>>) {
    w.register_system(SystemDef::new("mover", 1.0, |w: &mut World, _| {
        w.query_filtered::<&mut Pos, With<Moving>>()
            .unwrap()
            .for_each(|p| p.y += 1.0);
    }))
    .unwrap();
    w.register_system(
        SystemDef::new("watcher", 1.0, move |w: &mut World, ctx| {
            let tick = ctx.tick();
            let cmd = ctx.commands();
            let n = w
                .query_filtered::<Entity, Changed<Pos>>()
                .unwrap()
                .for_each(|_| {});
            if tick == 2 {
                cmd.spawn((Pos { x: -1.0, y: 0.0 },));
            }
            log.lock().unwrap().push(n);
        })
        .after("mover"),
    )
    .unwrap();
}

#[test]
fn a_system_sees_the_rows_written_since_its_previous_run_on_either_layout() {
    for soa in [false, true] {
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut w = world(12, soa);
        add_systems(&mut w, log.clone());
        for _ in 0..5 {
            w.run_systems();
        }
        // Step 0: every row (the watcher's first run). Steps 1-4: the four moving rows; on
        // step 3 also the row the watcher's own command added after its run on step 2.
        assert_eq!(*log.lock().unwrap(), [12, 4, 4, 5, 4], "soa: {soa}");
    }
}

#[test]
fn inserts_and_get_mut_count_as_changes_and_reads_do_not() {
    let mut w = world(6, false);
    let es: Vec<Entity> = w.entities().to_vec();
    // Outside systems, before any step: every row counts (nothing was seen yet).
    let all = w
        .query_filtered::<Entity, Changed<Pos>>()
        .unwrap()
        .for_each(|_| {});
    assert_eq!(all, 6);
    // A step begins: what counts now is what changed from here on.
    w.run_systems();
    assert_eq!(
        w.query_filtered::<Entity, Changed<Pos>>()
            .unwrap()
            .for_each(|_| {}),
        0
    );
    let _ = w.query::<&Pos>().unwrap().for_each(|_| {});
    let _ = w.get::<Pos>(es[0]).unwrap();
    w.run_systems();
    w.get_mut::<Pos>(es[1]).unwrap().x = 100.0;
    w.insert(es[2], Pos { x: 0.0, y: 0.0 }).unwrap();
    let mut changed = Vec::new();
    w.query_filtered::<Entity, Changed<Pos>>()
        .unwrap()
        .for_each(|e| changed.push(e));
    assert_eq!(changed, [es[1], es[2]], "reads are not changes");
}

#[test]
fn a_component_no_entity_has_matches_nothing() {
    let mut w = world(4, false);
    assert_eq!(
        w.query_filtered::<Entity, Changed<Seen>>()
            .unwrap()
            .for_each(|_| {}),
        0
    );
}

#[test]
fn the_parallel_form_keeps_the_same_rows_and_stamps_what_it_writes() {
    let plan = LanePlan::empty(&machine_cores())
        .with_lane("physics", LaneKind::FrameCritical, vec![None, None])
        .unwrap();
    let lanes = Arc::new(Lanes::start(plan).unwrap());
    let mut w = world(3_000, false);
    w.set_parallel_lane(&lanes, lanes.lane("physics").unwrap());
    // The first `Changed` query starts the ticks (every row counts once)...
    let first = w.query_filtered::<Entity, Changed<Pos>>().unwrap().count();
    assert_eq!(first, 3_000);
    w.run_systems();
    // ...then rows 0, 3, 6, ... change, in parallel chunks; a parallel pass over the changed
    // rows visits exactly them.
    w.query_filtered::<&mut Pos, With<Moving>>()
        .unwrap()
        .chunk_rows(128)
        .par_for_each(|p| p.y = 5.0)
        .unwrap();
    let visited = AtomicUsize::new(0);
    let run = w
        .query_filtered::<&Pos, Changed<Pos>>()
        .unwrap()
        .chunk_rows(256)
        .par_for_each(|p| {
            assert_eq!(p.y, 5.0);
            visited.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    assert_eq!(run.visited, 1_000);
    assert_eq!(visited.into_inner(), 1_000);
}

#[test]
fn a_restored_world_reports_the_same_changes_as_the_original_step() {
    for soa in [false, true] {
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut w = world(9, soa);
        add_systems(&mut w, log.clone());
        w.run_systems();
        w.run_systems();
        // A write between steps, before the capture: the watcher sees it on step 2, and must
        // again after the restore (its "previous run" rewinds with the world).
        let still = w.entities()[1];
        w.insert(still, Pos { x: 50.0, y: 0.0 }).unwrap();
        let mut snap = Snapshot::default();
        w.snapshot_into(&mut snap).unwrap();
        w.run_systems(); // step 2: the watcher queues a spawn
        w.run_systems(); // step 3: it sees that row too
        let original = log.lock().unwrap().clone();
        let hash = w.state_hash();
        w.restore(&snap).unwrap();
        w.run_systems();
        w.run_systems();
        let replayed = log.lock().unwrap()[original.len()..].to_vec();
        assert_eq!(original[2..], [4, 4], "soa: {soa}");
        assert_eq!(replayed, original[2..], "soa: {soa}");
        assert_eq!(w.state_hash(), hash);
    }
}

/// The chunk-level skip never drops or adds a row: over 300 steps of random writes (inserts
/// over single rows and clustered runs, a `&mut` query over a marked subset or every row), spawns, despawns (rows moved by
/// swap-remove) and compaction (rows reordered), on both layouts, a system's `Changed<Pos>`
/// sees exactly the entities a plain model says were written since its previous run.
#[test]
fn changed_rows_are_exact_under_random_writes_despawns_and_compaction() {
    for soa in [false, true] {
        let mut w = world(5_000, soa);
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let out = seen.clone();
        w.register_system(SystemDef::new("reader", 1.0, move |w: &mut World, _| {
            let mut got = out.lock().unwrap();
            got.clear();
            w.query_filtered::<Entity, Changed<Pos>>()
                .unwrap()
                .for_each(|e| got.push(e));
        }))
        .unwrap();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        // The first run sees every row (its first look).
        w.run_systems();
        for step in 0..300 {
            let mut written = std::collections::BTreeSet::new();
            let live = w.entities().to_vec();
            match next(7) {
                0 => {
                    // A few rows anywhere.
                    for _ in 0..1 + next(20) {
                        let e = live[next(live.len())];
                        w.insert(
                            e,
                            Pos {
                                x: step as f32,
                                y: 0.0,
                            },
                        )
                        .unwrap();
                        written.insert(e);
                    }
                }
                1 => {
                    // A clustered run of rows (the case chunks skip best).
                    let start = next(live.len());
                    for &e in live.iter().skip(start).take(200) {
                        w.insert(
                            e,
                            Pos {
                                x: 0.0,
                                y: step as f32,
                            },
                        )
                        .unwrap();
                        written.insert(e);
                    }
                }
                2 => {
                    // Rows written just before despawns move them (swap-remove) into other
                    // chunks: they must still be seen.
                    for &e in live.iter().rev().take(10) {
                        w.insert(e, Pos { x: -1.0, y: 0.0 }).unwrap();
                        written.insert(e);
                    }
                    for &e in live.iter().step_by(37).take(20) {
                        w.despawn(e).unwrap();
                    }
                    for _ in 0..next(30) {
                        let e = w.spawn();
                        w.insert(e, Pos { x: 1.0, y: 2.0 }).unwrap();
                        written.insert(e);
                    }
                }
                3 => w.compact(),
                4 => {
                    // A `&mut` term stamps every row it visits.
                    w.query_filtered::<(Entity, &mut Pos), With<Moving>>()
                        .unwrap()
                        .for_each(|(e, p)| {
                            p.x -= 1.0;
                            written.insert(e);
                        });
                }
                5 => {
                    // Every row through an unfiltered `&mut` term: whole chunks changed.
                    w.query::<(Entity, &mut Pos)>().unwrap().for_each(|(e, p)| {
                        p.y *= 0.5;
                        written.insert(e);
                    });
                }
                _ => {}
            }
            w.run_systems();
            let mut got = seen.lock().unwrap().clone();
            got.sort();
            let want: Vec<Entity> = written.into_iter().filter(|e| w.is_alive(*e)).collect();
            assert!(
                got == want,
                "soa {soa}, step {step}: {} rows seen, {} written",
                got.len(),
                want.len()
            );
        }
    }
}
