//! Batch spawn: `World::spawn_batch` writes bundles straight into their columns,
//! AoS and field-SoA, with the same result as one `spawn` and `insert` per component; a name
//! clash spawns nothing.

use lanegraph::prelude::*;
use lanegraph::simd::SoaComponent;
use lanegraph::world::WorldError;

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, SoaComponent)]
struct Pos {
    x: f32,
    y: f32,
}
#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
struct Hp(i32);
#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
struct Tag(u8);

fn one_by_one(w: &mut World, n: usize) {
    for i in 0..n {
        let e = w.spawn();
        w.insert(
            e,
            Pos {
                x: i as f32,
                y: 1.0,
            },
        )
        .unwrap();
        w.insert(e, Hp(i as i32)).unwrap();
        w.insert(e, Tag(7)).unwrap();
    }
}

fn bundles(n: usize) -> impl Iterator<Item = (Pos, Hp, Tag)> {
    (0..n).map(|i| {
        (
            Pos {
                x: i as f32,
                y: 1.0,
            },
            Hp(i as i32),
            Tag(7),
        )
    })
}

#[test]
fn a_batch_spawns_what_one_insert_at_a_time_would_in_either_layout() {
    for soa in [false, true] {
        let (mut a, mut b) = (World::new(), World::new());
        if soa {
            a.use_field_soa::<Pos>().unwrap();
            b.use_field_soa::<Pos>().unwrap();
        }
        // Some churn first so the batch reuses freed slots as well as fresh ones.
        for w in [&mut a, &mut b] {
            let es: Vec<Entity> = (0..10).map(|_| w.spawn()).collect();
            for e in &es[..5] {
                w.despawn(*e).unwrap();
            }
        }
        one_by_one(&mut a, 3_000);
        let spawned = b.spawn_batch(bundles(3_000)).unwrap().to_vec();
        assert_eq!(spawned.len(), 3_000);
        assert_eq!(a.state_hash(), b.state_hash(), "soa = {soa}");
        assert_eq!(b.get::<Hp>(spawned[42]).unwrap().0, 42);
        assert_eq!(b.query::<(&Pos, &Hp, &Tag)>().unwrap().count(), 3_000);
        // A batch from an iterator without a size hint works too.
        let n = b
            .spawn_batch(bundles(10).filter(|(_, hp, _)| hp.0 % 2 == 0))
            .unwrap()
            .len();
        assert_eq!(n, 5);
    }
}

#[test]
fn a_bundle_naming_a_type_twice_keeps_the_later_value_as_insert_does() {
    let mut w = World::new();
    let es = w
        .spawn_batch((0..3).map(|i| (Hp(i), Hp(10 + i))))
        .unwrap()
        .to_vec();
    let hps: Vec<i32> = es.iter().map(|&e| w.get::<Hp>(e).unwrap().0).collect();
    assert_eq!(hps, [10, 11, 12]);
}

#[test]
fn a_name_clash_spawns_nothing() {
    #[derive(Debug, Clone, Copy, Component, StateHash)]
    #[component(name = "Hp")]
    struct OtherHp(i32);
    let mut w = World::new();
    w.spawn_batch(bundles(4)).unwrap();
    let err = w
        .spawn_batch((0..5).map(|i| (Tag(1), OtherHp(i))))
        .unwrap_err();
    assert!(
        matches!(err, WorldError::ComponentNameClash { .. }),
        "{err}"
    );
    assert_eq!(w.len(), 4, "nothing of the failed batch was spawned");
    let es = w.entities().to_vec();
    w.despawn(es[0]).unwrap();
    let despawned = es.iter().filter(|&&e| w.despawn(e).is_ok()).count();
    assert_eq!(despawned, 3, "the stale one is refused");
    assert!(w.is_empty());
}
