//! Unit tests of the world: entities, components, epochs, the hash, telemetry, SoA columns.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, crate::simd::SoaComponent)]
#[component(domains(TRANSFORM))]
struct Pos {
    x: f32,
    y: f32,
}

#[derive(Debug, Clone, PartialEq, Component, StateHash)]
#[component(domains(GAMEPLAY))]
struct Name(String);

#[derive(Debug, Clone, PartialEq, Component, StateHash)]
#[component(name = "Pos", domains())]
struct FakePos(u8);

#[test]
fn name_clash_is_a_typed_error() {
    let mut w = World::new();
    let e = w.spawn();
    w.insert(e, Pos { x: 1.0, y: 2.0 }).unwrap();
    let err = w.insert(e, FakePos(1)).unwrap_err();
    assert!(matches!(
        err,
        WorldError::ComponentNameClash { name: "Pos", .. }
    ));
}

#[test]
fn aos_and_soa_storage_of_the_same_data_hash_alike() {
    let build = |soa: bool| {
        let mut w = World::new();
        if soa {
            w.use_field_soa::<Pos>().unwrap();
        }
        for i in 0..50 {
            let e = w.spawn();
            w.insert(
                e,
                Pos {
                    x: i as f32,
                    y: -(i as f32),
                },
            )
            .unwrap();
            if i % 3 == 0 {
                w.insert(e, Name(format!("e{i}"))).unwrap();
            }
        }
        let kill: Vec<_> = w.entities().iter().copied().step_by(7).collect();
        for e in kill {
            w.despawn(e).unwrap();
        }
        w.state_hash()
    };
    assert_eq!(build(false), build(true));
}

#[test]
fn opting_in_moves_existing_rows_and_changes_accessors() {
    let mut w = World::new();
    let e = w.spawn();
    w.insert(e, Pos { x: 3.0, y: 4.0 }).unwrap();
    let h = w.state_hash();
    let before = w.epochs();
    w.use_field_soa::<Pos>().unwrap();
    assert!(before.changed_in(&w.epochs(), DomainSet::of(Domain::TRANSFORM)));
    assert_eq!(w.state_hash(), h);
    assert_eq!(w.get_fields::<Pos>(e).unwrap(), Pos { x: 3.0, y: 4.0 });
    assert!(matches!(
        w.get::<Pos>(e),
        Err(WorldError::WrongLayout { .. })
    ));
    assert_eq!(w.remove::<Pos>(e).unwrap(), Pos { x: 3.0, y: 4.0 });
    assert!(matches!(
        w.get_fields::<Pos>(e),
        Err(WorldError::MissingComponent { .. })
    ));
    // Idempotent.
    w.use_field_soa::<Pos>().unwrap();
}

#[test]
fn compaction_sorts_rows_by_slot_and_keeps_the_hash() {
    let mut w = World::new();
    let es: Vec<_> = (0..20).map(|_| w.spawn()).collect();
    for &e in es.iter().rev() {
        w.insert(e, Name(format!("{}", e.index()))).unwrap();
    }
    let h = w.state_hash();
    w.compact();
    assert_eq!(w.state_hash(), h);
    // A query walks the column's rows in order.
    let mut rows = Vec::new();
    w.query::<(Entity, &Name)>()
        .unwrap()
        .for_each(|(e, _)| rows.push(e));
    assert_eq!(rows.len(), 20);
    assert!(rows.windows(2).all(|p| p[0].index() < p[1].index()));
}

#[test]
fn world_and_lent_chunks_can_move_to_other_threads() {
    fn assert_send<T: Send>() {}
    assert_send::<World>();
    assert_send::<lanegraph_simd::SoaChunkMut<'static, 3>>();
    assert_send::<crate::systems::SystemDef>();
}

/// A small world of every kind of state the hash covers: AoS and field-SoA columns, rows out
/// of slot order, a despawned hole, a string column and a resource.
fn golden_world(soa: bool) -> World {
    #[derive(Clone, Copy, Resource, StateHash)]
    struct Wind(f32);
    let mut w = World::new();
    if soa {
        w.use_field_soa::<Pos>().unwrap();
    }
    let es: Vec<_> = (0..40).map(|_| w.spawn()).collect();
    for (i, &e) in es.iter().enumerate().rev() {
        let f = i as f32;
        w.insert(e, Pos { x: f * 0.5, y: -f }).unwrap();
        if i % 4 == 0 {
            w.insert(e, Name(format!("unit {i}"))).unwrap();
        }
    }
    w.despawn(es[7]).unwrap();
    w.insert_resource(Wind(2.5)).unwrap();
    w
}

#[test]
fn the_state_hash_of_a_fixed_world_is_pinned() {
    // Format 2 (XXH3-64, per-column digests). This value changes only with a new
    // `STATE_HASH_FORMAT`: a change here that is not one is a silent break of every recorded
    // hash (saves, run logs, peers' checksums).
    assert_eq!(hash::STATE_HASH_FORMAT, 2);
    let aos = golden_world(false);
    assert_eq!(aos.state_hash(), GOLDEN);
    assert_eq!(golden_world(true).state_hash(), GOLDEN);
    let mut sorted = golden_world(false);
    sorted.compact();
    assert_eq!(sorted.state_hash(), GOLDEN);
}
const GOLDEN: u64 = 0x943b_a2f4_4df7_d780;

#[test]
fn a_cached_hash_equals_a_fresh_one_after_every_kind_of_change() {
    // A fresh hash: every digest taken anew.
    fn fresh(w: &World) -> u64 {
        *w.content.lock().unwrap() = Default::default();
        w.state_hash()
    }
    for soa in [false, true] {
        let mut w = golden_world(soa);
        let e = w.entities()[3];
        let mut seen = vec![w.state_hash()];
        type Change = Box<dyn Fn(&mut World)>;
        let changes: Vec<Change> = vec![
            Box::new(move |w| {
                w.query::<&mut Pos>().unwrap().for_each(|p| p.x += 1.0);
            }),
            Box::new(move |w| {
                w.insert(e, Name("renamed".into())).unwrap();
            }),
            Box::new(move |w| {
                w.remove::<Name>(e).unwrap();
            }),
            Box::new(move |w| {
                w.despawn(e).unwrap();
            }),
            Box::new(|w| {
                let n = w.spawn();
                w.insert(n, Pos { x: 9.0, y: 9.0 }).unwrap();
            }),
            Box::new(|w| w.compact()),
        ];
        for change in &changes {
            let before = w.state_hash();
            change(&mut w);
            let now = w.state_hash();
            assert_eq!(now, fresh(&w), "soa {soa}");
            seen.push(now);
            if seen.len() < 7 {
                assert_ne!(now, before, "soa {soa}: a change that moved nothing");
            }
        }
    }
}

mod derives {
    use super::*;
    use crate::world::component::ComponentMeta;

    #[derive(Component, StateHash)]
    struct Defaulted {
        a: f32,
        b: f32,
    }

    #[derive(StateHash)]
    struct WithCache {
        value: u64,
        #[state_hash(skip)]
        _cache: u64,
    }

    #[derive(StateHash)]
    enum Mode {
        Idle,
        Walking(f32),
        Jumping { height: f32, airborne: bool },
    }

    #[derive(Component, StateHash)]
    #[component(name = "Custom", domains(PHYSICS, crate::world::Domain::RENDER))]
    struct Named(u32);

    /// A vector of `f32`s the derive cannot see through: `all_f32` says so.
    #[derive(Component, StateHash)]
    #[component(all_f32)]
    struct Wide([f32; 3]);

    fn hash_of(x: &impl StateHash) -> u64 {
        let mut h = StateHasher::default();
        x.hash_state(&mut h);
        h.finish()
    }

    fn hash_by_hand(feed: impl FnOnce(&mut StateHasher)) -> u64 {
        let mut h = StateHasher::default();
        feed(&mut h);
        h.finish()
    }

    #[test]
    fn component_defaults_are_the_type_name_every_domain_and_the_field_types() {
        assert_eq!(Defaulted::NAME, "Defaulted");
        assert_eq!(Defaulted::DOMAINS, DomainSet::ALL);
        let all_f32 = [
            Defaulted::ALL_F32,
            Name::ALL_F32,
            Wide::ALL_F32,
            Named::ALL_F32,
        ];
        assert_eq!(all_f32, [true, false, true, false]);
        assert_eq!(Named::NAME, "Custom");
        assert_eq!(
            Named::DOMAINS,
            DomainSet::of(Domain::PHYSICS).with(Domain::RENDER)
        );
        assert_eq!(FakePos::DOMAINS, DomainSet::EMPTY);
    }

    #[test]
    fn derived_hash_feeds_fields_in_declaration_order_like_a_hand_written_one() {
        let d = Defaulted { a: 1.5, b: -2.0 };
        let by_hand = hash_by_hand(|h| {
            1.5f32.hash_state(h);
            (-2.0f32).hash_state(h);
        });
        assert_eq!(hash_of(&d), by_hand);
        let swapped = hash_by_hand(|h| {
            (-2.0f32).hash_state(h);
            1.5f32.hash_state(h);
        });
        assert_ne!(hash_of(&d), swapped, "order must matter");
        assert_eq!(
            hash_of(&Name("ab".into())),
            hash_by_hand(|h| "ab".hash_state(h))
        );
    }

    #[test]
    fn skipped_fields_do_not_reach_the_hash() {
        let a = WithCache {
            value: 7,
            _cache: 1,
        };
        let b = WithCache {
            value: 7,
            _cache: 2,
        };
        assert_eq!(hash_of(&a), hash_of(&b));
        assert_eq!(hash_of(&a), hash_by_hand(|h| 7u64.hash_state(h)));
    }

    #[test]
    fn enums_hash_the_variant_index_then_its_fields() {
        assert_eq!(hash_of(&Mode::Idle), hash_by_hand(|h| h.write_u32(0)));
        assert_eq!(
            hash_of(&Mode::Walking(3.0)),
            hash_by_hand(|h| {
                h.write_u32(1);
                3.0f32.hash_state(h);
            })
        );
        assert_eq!(
            hash_of(&Mode::Jumping {
                height: 2.0,
                airborne: true
            }),
            hash_by_hand(|h| {
                h.write_u32(2);
                2.0f32.hash_state(h);
                true.hash_state(h);
            })
        );
        assert_ne!(hash_of(&Mode::Walking(0.0)), hash_of(&Mode::Idle));
    }

    #[test]
    fn derived_soa_layout_round_trips_bit_for_bit() {
        use crate::simd::SoaComponent;
        assert_eq!(Pos::FIELDS, &["x", "y"]);
        let p = Pos {
            x: -0.0,
            y: f32::from_bits(0x7fc0_0001),
        };
        let mut out = [0.0; 2];
        p.write(&mut out);
        let back = Pos::read(&out);
        assert_eq!(back.x.to_bits(), p.x.to_bits());
        assert_eq!(back.y.to_bits(), p.y.to_bits());
    }
}
