//! Field-SoA components in the World: opt-in, resident columns, and the one-step loan of
//! disjoint `Send` chunks to other threads (the physics lane's pattern).

use lanegraph::hooks::{ColumnLayout, EntityHooks, WorldHooks};
use lanegraph::simd::{SoaComponent, SoaTable};
use lanegraph::world::WorldError;
use lanegraph::world::{Component, Domain, DomainSet, StateHash, World};

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, SoaComponent)]
#[component(domains(TRANSFORM))]
struct Pos {
    x: f32,
    y: f32,
    z: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, SoaComponent)]
#[component(domains(PHYSICS))]
struct Vel {
    x: f32,
    y: f32,
    z: f32,
}

fn world(n: usize) -> World {
    let mut w = World::new();
    w.use_field_soa::<Pos>().unwrap();
    w.use_field_soa::<Vel>().unwrap();
    for i in 0..n {
        let e = w.spawn();
        let f = i as f32;
        w.insert(
            e,
            Pos {
                x: f,
                y: 0.0,
                z: -f,
            },
        )
        .unwrap();
        w.insert(
            e,
            Vel {
                x: 1.0,
                y: 2.0,
                z: f,
            },
        )
        .unwrap();
    }
    w
}

fn field<'a>(t: &'a SoaTable, name: &str) -> &'a [f32] {
    t.field(name).unwrap()
}

#[test]
fn lent_chunks_are_written_in_parallel_on_other_threads() {
    let mut w = world(1000);
    let before = w.epochs();
    let dt = 0.5f32;
    {
        let (mut pos, vel) = w.lend_soa_pair::<Pos, Vel>().unwrap().unwrap();
        assert_eq!(pos.len(), 1000);
        let vel_t = vel.table();
        let (vx, vy, vz) = (field(vel_t, "x"), field(vel_t, "y"), field(vel_t, "z"));
        let mut lanes = pos.lanes_mut();
        let chunks: Vec<_> = lanes.chunks::<3>(16).unwrap().collect();
        assert!(chunks.len() > 1);
        std::thread::scope(|s| {
            for chunk in chunks {
                s.spawn(move || {
                    let [px, py, pz] = chunk.fields;
                    for (k, ((x, y), z)) in px
                        .iter_mut()
                        .zip(py.iter_mut())
                        .zip(pz.iter_mut())
                        .enumerate()
                    {
                        let mut xs = x.to_array();
                        let mut ys = y.to_array();
                        let mut zs = z.to_array();
                        for l in 0..8 {
                            let row = chunk.first_row + k * 8 + l;
                            if row < chunk.first_row + chunk.rows {
                                xs[l] += vx[row] * dt;
                                ys[l] += vy[row] * dt;
                                zs[l] += vz[row] * dt;
                            }
                        }
                        *x = xs.into();
                        *y = ys.into();
                        *z = zs.into();
                    }
                });
            }
        });
    }
    assert!(before.changed_in(&w.epochs(), DomainSet::of(Domain::TRANSFORM)));
    for &e in w.entities() {
        let p = w.get_fields::<Pos>(e).unwrap();
        let i = e.index() as f32;
        assert_eq!(
            p,
            Pos {
                x: i + 0.5,
                y: 1.0,
                z: -i + i * 0.5
            }
        );
    }
}

#[test]
fn rows_stay_aligned_under_despawn_and_realign_on_request() {
    let mut w = world(40);
    let kill: Vec<_> = w.entities().iter().copied().step_by(3).collect();
    for e in kill {
        w.despawn(e).unwrap();
    }
    assert!(
        w.lend_soa_pair::<Pos, Vel>().unwrap().is_some(),
        "despawn keeps alignment"
    );
    // Removing one component from one entity and adding it back breaks alignment.
    let e = w.entities()[0];
    let v = w.remove::<Vel>(e).unwrap();
    w.insert(e, v).unwrap();
    assert!(matches!(
        w.lend_soa_pair::<Pos, Vel>().map(|_| ()),
        Err(WorldError::NotAligned { .. })
    ));
    let h = w.state_hash();
    assert!(w.align_soa_rows::<Pos, Vel>().unwrap());
    assert_eq!(w.state_hash(), h, "realignment moves rows, not data");
    let (p, v) = w.lend_soa_pair::<Pos, Vel>().unwrap().unwrap();
    assert_eq!(p.entities(), v.entities());
}

#[test]
fn soa_columns_are_resident_and_reported_as_such() {
    let mut w = world(100);
    let ptr_before = w
        .soa_columns::<Pos>()
        .unwrap()
        .unwrap()
        .table()
        .field("x")
        .unwrap()
        .as_ptr();
    for _ in 0..10 {
        let mut p = w.lend_soa::<Pos>().unwrap().unwrap();
        for x in p.field_mut("x").unwrap() {
            *x += 1.0;
        }
    }
    let ptr_after = w
        .soa_columns::<Pos>()
        .unwrap()
        .unwrap()
        .table()
        .field("x")
        .unwrap()
        .as_ptr();
    assert_eq!(
        ptr_before, ptr_after,
        "no per-frame transpose or reallocation"
    );
    let a = w.component_access();
    let pos = a.iter().find(|c| c.name == "Pos").unwrap();
    assert_eq!(pos.layout, ColumnLayout::FieldSoa);
    assert_eq!(pos.size_bytes, 12);
    assert_eq!(pos.query_count, 12);
    assert_eq!(pos.rows_scanned, 1200);
    assert!(matches!(
        w.lend_soa_pair::<Pos, Pos>().map(|_| ()),
        Err(WorldError::AliasedQuery { .. })
    ));
}

/// Two-component queries, serial and parallel, over field-SoA components (either or both,
/// rows aligned or not, filtered) end in the same state as over AoS ones: the layout is
/// storage, not semantics.
#[test]
fn pair_queries_over_field_soa_components_match_the_aos_ones() {
    use lanegraph::hooks::QueryHooks;
    use lanegraph::world::{Entity, Without};
    #[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
    #[component(domains(GAMEPLAY))]
    struct Sleeping;

    let step = |_: Entity, p: &mut Pos, v: &mut Vel| {
        v.y = (v.y - 9.81 * 0.5) * 0.99;
        p.x += v.x * 0.5;
        p.y += v.y * 0.5;
        if p.y < -10.0 {
            p.y = -10.0;
            v.y = -v.y;
        }
    };
    // 500 entities with both (aligned), then 50 whose Vel is inserted in reverse (misaligned),
    // every 7th sleeping; `soa` says which components are field-SoA.
    let build = |soa: [bool; 2]| {
        let mut w = world_in_layout(soa);
        let mut late = Vec::new();
        for i in 0..550 {
            let f = i as f32;
            let e = w.spawn();
            w.insert(
                e,
                Pos {
                    x: f,
                    y: 1.0,
                    z: -f,
                },
            )
            .unwrap();
            if i < 500 {
                w.insert(
                    e,
                    Vel {
                        x: 1.0,
                        y: f * 0.1,
                        z: 0.0,
                    },
                )
                .unwrap();
            } else {
                late.push(e);
            }
            if i % 7 == 0 {
                w.insert(e, Sleeping).unwrap();
            }
        }
        for &e in late.iter().rev() {
            w.insert(
                e,
                Vel {
                    x: -1.0,
                    y: 3.0,
                    z: 0.5,
                },
            )
            .unwrap();
        }
        w
    };
    type Pair<'a> = (Entity, &'a mut Pos, &'a mut Vel);
    let serial = |w: &mut World| {
        let all = w
            .query::<Pair>()
            .unwrap()
            .for_each(|(e, p, v)| step(e, p, v));
        let some = w
            .query_filtered::<Pair, Without<Sleeping>>()
            .unwrap()
            .for_each(|(e, p, v)| step(e, p, v));
        (all, some)
    };
    let mut reference = build([false, false]);
    for _ in 0..3 {
        assert_eq!(serial(&mut reference), (550, 550 - 79));
    }
    for soa in [[true, false], [false, true], [true, true]] {
        for parallel in [false, true] {
            let mut w = build(soa);
            for _ in 0..3 {
                let (all, some) = if parallel {
                    (
                        w.query::<Pair>()
                            .unwrap()
                            .chunk_rows(64)
                            .par_for_each(|(e, p, v)| step(e, p, v))
                            .unwrap()
                            .visited,
                        w.query_filtered::<Pair, Without<Sleeping>>()
                            .unwrap()
                            .chunk_rows(64)
                            .par_for_each(|(e, p, v)| step(e, p, v))
                            .unwrap()
                            .visited,
                    )
                } else {
                    serial(&mut w)
                };
                assert_eq!((all, some), (550, 550 - 79), "soa {soa:?}");
            }
            assert_eq!(
                w.state_hash(),
                reference.state_hash(),
                "soa {soa:?} parallel {parallel}"
            );
        }
    }
}

/// A three-component query over every mix of layouts, rows aligned or not, filtered or not,
/// ends in the state the per-entity `get`/`insert` path gives; a component named twice is a
/// typed error.
#[test]
fn three_component_queries_match_the_per_entity_path_in_every_layout() {
    use lanegraph::world::{Entity, Without};
    #[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
    #[component(domains(PHYSICS))]
    struct Mass(f32);
    #[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
    #[component(domains(GAMEPLAY))]
    struct Pinned;

    let step = |p: &mut Pos, v: &mut Vel, m: &mut Mass| {
        v.x += 10.0 / m.0 * 0.5;
        p.x += v.x * 0.5;
        m.0 *= 0.999;
    };
    // 400 entities with all three (aligned), 40 with Mass inserted in reverse (misaligned),
    // 20 without Mass; every 9th pinned.
    let build = |soa: [bool; 2]| {
        let mut w = world_in_layout(soa);
        let mut late = Vec::new();
        let mut es = Vec::new();
        for i in 0..460 {
            let f = i as f32;
            let e = w.spawn();
            w.insert(
                e,
                Pos {
                    x: f,
                    y: 0.0,
                    z: 0.0,
                },
            )
            .unwrap();
            w.insert(
                e,
                Vel {
                    x: 1.0,
                    y: 0.0,
                    z: f,
                },
            )
            .unwrap();
            if i < 400 {
                w.insert(e, Mass(1.0 + f)).unwrap();
            } else if i < 440 {
                late.push(e);
            }
            if i % 9 == 0 {
                w.insert(e, Pinned).unwrap();
            }
            es.push(e);
        }
        for &e in late.iter().rev() {
            w.insert(e, Mass(2.0)).unwrap();
        }
        (w, es)
    };
    let pinned = (0..440).filter(|i| i % 9 == 0).count();
    // The reference: per entity, through get/insert, on AoS storage.
    let (mut reference, es) = build([false, false]);
    let per_entity = |w: &mut World, e: Entity, only_free: bool| {
        if only_free && w.has::<Pinned>(e).unwrap() {
            return;
        }
        let (Ok(mut p), Ok(mut v), Ok(mut m)) = (
            w.get::<Pos>(e).copied(),
            w.get::<Vel>(e).copied(),
            w.get::<Mass>(e).copied(),
        ) else {
            return;
        };
        step(&mut p, &mut v, &mut m);
        w.insert(e, p).unwrap();
        w.insert(e, v).unwrap();
        w.insert(e, m).unwrap();
    };
    for _ in 0..2 {
        for &e in &es {
            per_entity(&mut reference, e, false);
        }
        for &e in &es {
            per_entity(&mut reference, e, true);
        }
    }
    for soa in [[false, false], [true, false], [false, true], [true, true]] {
        let (mut w, _) = build(soa);
        for _ in 0..2 {
            assert_eq!(
                w.query::<(&mut Mass, &mut Pos, &mut Vel)>()
                    .unwrap()
                    .for_each(|(m, p, v)| step(p, v, m)),
                440,
                "soa {soa:?}"
            );
            assert_eq!(
                w.query_filtered::<(&mut Mass, &mut Pos, &mut Vel), Without<Pinned>>()
                    .unwrap()
                    .for_each(|(m, p, v)| step(p, v, m)),
                440 - pinned,
                "soa {soa:?}"
            );
        }
        assert_eq!(w.state_hash(), reference.state_hash(), "soa {soa:?}");
    }
    let (mut w, _) = build([false, false]);
    assert!(matches!(
        w.query::<(&mut Pos, &mut Vel, &mut Pos)>().map(|_| ()),
        Err(WorldError::AliasedQuery { .. })
    ));
}

/// An empty world with `Pos` and `Vel` field-SoA as `soa` says (`[pos, vel]`), AoS otherwise.
fn world_in_layout(soa: [bool; 2]) -> World {
    let mut w = World::new();
    if soa[0] {
        w.use_field_soa::<Pos>().unwrap();
    }
    if soa[1] {
        w.use_field_soa::<Vel>().unwrap();
    }
    w
}
