//! Unit tests of the world: entities, components, epochs, the hash, telemetry, SoA columns.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos {
    x: f32,
    y: f32,
}
impl StateHash for Pos {
    fn hash_state(&self, h: &mut StateHasher) {
        self.x.hash_state(h);
        self.y.hash_state(h);
    }
}
impl Component for Pos {
    const NAME: &'static str = "Pos";
    const DOMAINS: DomainSet = DomainSet::of(Domain::TRANSFORM);
}
lanegraph_simd::soa_component!(Pos { x, y });

#[derive(Debug, Clone, PartialEq)]
struct Name(String);
impl StateHash for Name {
    fn hash_state(&self, h: &mut StateHasher) {
        self.0.hash_state(h);
    }
}
impl Component for Name {
    const NAME: &'static str = "Name";
    const DOMAINS: DomainSet = DomainSet::of(Domain::GAMEPLAY);
}

#[derive(Debug, Clone, PartialEq)]
struct FakePos(u8);
impl StateHash for FakePos {
    fn hash_state(&self, h: &mut StateHasher) {
        self.0.hash_state(h);
    }
}
impl Component for FakePos {
    const NAME: &'static str = "Pos";
    const DOMAINS: DomainSet = DomainSet::EMPTY;
}

#[test]
fn name_clash_is_a_typed_error() {
    let mut w = World::new();
    let e = w.spawn();
    w.insert(e, Pos { x: 1.0, y: 2.0 }).unwrap();
    let err = w.insert(e, FakePos(1)).unwrap_err();
    assert!(matches!(
        err,
        ComponentError::NameClash(ComponentNameClash { name: "Pos", .. })
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
        Err(ComponentError::WrongLayout(_))
    ));
    assert!(w.column::<Pos>().is_err());
    assert_eq!(w.remove::<Pos>(e).unwrap(), Pos { x: 3.0, y: 4.0 });
    assert!(matches!(
        w.get_fields::<Pos>(e),
        Err(ComponentError::Missing(_))
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
    let col = w.column::<Name>().unwrap();
    assert!(col
        .entities()
        .windows(2)
        .all(|p| p[0].index() < p[1].index()));
}

#[test]
fn world_and_lent_chunks_can_move_to_other_threads() {
    fn assert_send<T: Send>() {}
    assert_send::<World>();
    assert_send::<lanegraph_simd::SoaChunkMut<'static, 3>>();
    assert_send::<crate::systems::SystemDef>();
}
