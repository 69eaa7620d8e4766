//! Savegames: a World written with `SaveSchema::save` / `save_text` and read back
//! by `load_into` is the same world (state hash, row order, entity ids, next spawn, layouts,
//! counters); a changed type migrates through serde's attributes or is a typed error naming
//! both shapes; damaged files (10,000 fuzzed ones) are typed errors, never a panic, and leave
//! the world as it was.

use std::panic::{catch_unwind, AssertUnwindSafe};

use lanegraph::game_loop::FixedStep;
use lanegraph::hooks::WorldHooks;
use lanegraph::prelude::*;
use lanegraph::simd::SoaComponent;
use lanegraph::systems::SystemDef;
use lanegraph::world::WorldError;
use lanegraph::world::{LoadError, SaveSchema};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, Serialize, Deserialize)]
struct Pos {
    x: f32,
    y: f32,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Component, StateHash, SoaComponent, Serialize, Deserialize,
)]
struct Vel {
    x: f32,
    y: f32,
}

#[derive(Debug, Clone, PartialEq, Component, StateHash, Serialize, Deserialize)]
struct Name(String);

/// Not in the schema: its rows do not survive a load.
#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
struct Scratch(u32);

#[derive(Debug, Clone, Copy, PartialEq, Resource, StateHash, Serialize, Deserialize)]
struct Score(u64);

#[derive(Debug, Clone, Copy, PartialEq, Resource, StateHash)]
struct Settings(u32);

fn schema() -> SaveSchema {
    SaveSchema::default()
        .component::<Pos>()
        .component::<Vel>()
        .component::<Name>()
        .resource::<Score>()
}

/// A world with both layouts, holes in its entity table, a resource and moved counters.
fn populated() -> World {
    let mut w = World::new();
    w.use_field_soa::<Vel>().unwrap();
    let es = w
        .spawn_batch((0..200).map(|i| {
            (
                Pos {
                    x: i as f32,
                    y: -(i as f32),
                },
                Vel {
                    x: 0.5 * i as f32,
                    y: 1.0,
                },
            )
        }))
        .unwrap()
        .to_vec();
    for (k, e) in es.iter().enumerate() {
        if k % 7 == 0 {
            w.insert(*e, Name(format!("ship-{k}"))).unwrap();
        }
    }
    // Holes: despawned slots go to the free list (the next spawn reuses the last one freed).
    for e in es.iter().step_by(13) {
        w.despawn(*e).unwrap();
    }
    // Rows out of spawn order: remove and re-insert some positions.
    for e in es.iter().skip(1).step_by(11) {
        if let Ok(p) = w.remove::<Pos>(*e) {
            w.insert(*e, p).unwrap();
        }
    }
    w.insert_resource(Score(4_242)).unwrap();
    w.set_fixed_step(FixedStep::from_hz(30).unwrap());
    w.register_system(SystemDef::new("drift", 1_000.0, |w: &mut World, _| {
        w.query::<(&mut Pos, &Vel)>().unwrap().for_each(|(p, v)| {
            p.x += v.x;
            p.y += v.y;
        });
    }))
    .unwrap();
    for _ in 0..3 {
        w.begin_frame();
        w.run_systems();
    }
    w
}

fn pos_order(w: &mut World) -> Vec<(Entity, Pos)> {
    let mut out = Vec::new();
    w.query::<(Entity, &Pos)>()
        .unwrap()
        .for_each(|(e, p)| out.push((e, *p)));
    out
}

fn check_same(original: &mut World, loaded: &mut World) {
    assert_eq!(loaded.state_hash(), original.state_hash());
    assert_eq!(pos_order(loaded), pos_order(original), "row order and ids");
    assert_eq!(loaded.tick(), original.tick());
    assert_eq!(loaded.fixed_step(), original.fixed_step());
    assert_eq!(loaded.resource::<Score>().unwrap(), &Score(4_242));
    // Vel was stored field-SoA and comes back field-SoA: it derives SoaComponent, so the
    // schema's plain `component::<Vel>()` knows how.
    let some = pos_order(original)[0].0;
    assert_eq!(
        loaded.get_fields::<Vel>(some).unwrap(),
        original.get_fields::<Vel>(some).unwrap()
    );
    assert!(matches!(
        loaded.get::<Vel>(some),
        Err(WorldError::WrongLayout { .. })
    ));
    assert_eq!(loaded.spawn(), original.spawn(), "the same next spawn");
    assert_eq!(loaded.spawn(), original.spawn(), "and the one after");
}

#[test]
fn a_saved_world_loads_as_the_same_world_in_both_forms() {
    let schema = schema();
    let mut original = populated();
    let mut cbor = Vec::new();
    schema.save(&mut original, &mut cbor).unwrap();
    let mut text = Vec::new();
    schema.save_text(&mut original, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("\"magic\": \"lanegraph-save\""),
        "{text:.200}"
    );
    assert!(text.contains("Pos{x:f32,y:f32}"), "the shape is written");
    assert!(cbor.len() < text.len(), "the binary form is the smaller");

    for bytes in [&cbor[..], text.as_bytes()] {
        let mut original = populated();
        let mut loaded = World::new();
        let report = schema.load_into(&mut loaded, bytes).unwrap();
        assert!(report.migrated.is_empty());
        assert_eq!(report.entities, original.len());
        assert_eq!(report.tick, 3);
        check_same(&mut original, &mut loaded);
    }
}

#[test]
fn loading_replaces_the_simulation_state_and_keeps_systems_and_unsaved_resources() {
    let schema = schema();
    let mut saved = populated();
    let mut file = Vec::new();
    schema.save(&mut saved, &mut file).unwrap();

    let mut w = populated();
    // Moves on, gains rows of an unsaved component and an unsaved resource.
    for _ in 0..5 {
        w.begin_frame();
        w.run_systems();
    }
    let extra = w.spawn();
    w.insert(extra, Scratch(9)).unwrap();
    w.insert_resource(Settings(3)).unwrap();
    w.insert_resource(Score(1)).unwrap();
    schema.load_into(&mut w, &file[..]).unwrap();

    assert_eq!(w.tick(), 3);
    assert_eq!(
        w.resource::<Score>().unwrap(),
        &Score(4_242),
        "saved: replaced"
    );
    assert_eq!(
        w.resource::<Settings>().unwrap(),
        &Settings(3),
        "unsaved: kept"
    );
    assert_eq!(
        w.query::<&Scratch>().unwrap().count(),
        0,
        "an unsaved component's rows belong to the replaced entity table"
    );
    // The system is still registered and runs on the loaded state, as the saved world would.
    for _ in 0..2 {
        for x in [&mut w, &mut saved] {
            x.begin_frame();
            x.run_systems();
        }
    }
    assert_eq!(
        w.query::<&Pos>().unwrap().count(),
        saved.query::<&Pos>().unwrap().count()
    );
    assert_eq!(pos_order(&mut w), pos_order(&mut saved));
}

mod v1 {
    use super::*;

    /// The previous version of the ship.
    #[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, Serialize, Deserialize)]
    #[component(name = "Ship")]
    pub struct Ship {
        pub x: f32,
        pub y: f32,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, Serialize, Deserialize)]
    #[component(name = "Hull")]
    pub struct Hull(pub i32);
}

mod v2 {
    use super::*;

    /// `y` renamed `height`, `shield` added with a default: serde migrates both.
    #[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, Serialize, Deserialize)]
    #[component(name = "Ship")]
    pub struct Ship {
        pub x: f32,
        #[serde(alias = "y")]
        pub height: f32,
        #[serde(default)]
        pub shield: u32,
    }

    /// A changed field type serde cannot read from the old one.
    #[derive(Debug, Clone, PartialEq, Component, StateHash, Serialize, Deserialize)]
    #[component(name = "Hull")]
    pub struct Hull(pub Vec<String>);
}

/// The world the v1 fixture holds.
fn v1_world() -> World {
    let mut w = World::new();
    w.spawn_batch((0..5).map(|i| {
        (v1::Ship {
            x: i as f32,
            y: 10.0 + i as f32,
        },)
    }))
    .unwrap();
    w
}

/// The save `tests/fixtures/ship_v1_save.json` was written by `v1` (regenerate with
/// `LANEGRAPH_WRITE_FIXTURES=1`): it pins the format of an earlier build as well as the type.
fn v1_file() -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/ship_v1_save.json");
    if std::env::var_os("LANEGRAPH_WRITE_FIXTURES").is_some() {
        let mut w = v1_world();
        let mut out = Vec::new();
        SaveSchema::default()
            .component::<v1::Ship>()
            .save_text(&mut w, &mut out)
            .unwrap();
        std::fs::write(path, &out).unwrap();
    }
    std::fs::read(path).expect("the v1 fixture")
}

#[test]
fn a_save_of_the_previous_component_version_migrates() {
    let file = v1_file();
    let mut w = World::new();
    let report = SaveSchema::default()
        .component::<v2::Ship>()
        .load_into(&mut w, &file[..])
        .unwrap();
    assert_eq!(report.migrated, vec!["Ship"]);
    let mut ships = Vec::new();
    w.query::<&v2::Ship>().unwrap().for_each(|s| ships.push(*s));
    assert_eq!(ships.len(), 5);
    for (i, s) in ships.iter().enumerate() {
        assert_eq!(
            *s,
            v2::Ship {
                x: i as f32,
                height: 10.0 + i as f32,
                shield: 0
            }
        );
    }
    // The same file still loads into the version that wrote it, unmigrated.
    let mut same = World::new();
    let report = SaveSchema::default()
        .component::<v1::Ship>()
        .load_into(&mut same, &file[..])
        .unwrap();
    assert!(report.migrated.is_empty());
    // Its recorded hash is of state-hash format 1 (it says none): not compared with this
    // build's, which would call a good save damaged; the world it loads is the one saved.
    assert_eq!(same.state_hash(), v1_world().state_hash());
    let text = String::from_utf8_lossy(&file);
    assert!(
        !text.contains("state_hash_format"),
        "the fixture predates the format field"
    );
}

#[test]
fn a_save_records_its_hash_format_and_a_wrong_hash_of_that_format_is_refused() {
    let mut w = v1_world();
    let schema = SaveSchema::default().component::<v1::Ship>();
    let mut text = Vec::new();
    schema.save_text(&mut w, &mut text).unwrap();
    let body = String::from_utf8(text).unwrap();
    assert!(body.contains("\"state_hash_format\": 2"), "{body}");
    // The same document with the hash changed, sealed again so only the hash is wrong.
    let (_, doc) = body.split_once('\n').unwrap();
    let saved = w.state_hash().to_string();
    let bad_doc = doc.replace(&saved, &(w.state_hash() ^ 1).to_string());
    assert_ne!(bad_doc, doc);
    let err = schema
        .load_into(
            &mut World::new(),
            &SaveSchema::reseal(bad_doc.as_bytes())[..],
        )
        .unwrap_err();
    assert!(matches!(err, LoadError::HashMismatch { .. }), "{err}");
}

#[test]
fn a_changed_or_unknown_type_is_a_typed_error_and_the_world_is_unchanged() {
    let mut old = World::new();
    old.spawn_batch((0..3).map(|i| (v1::Hull(i), v1::Ship { x: 0.0, y: 0.0 })))
        .unwrap();
    let mut file = Vec::new();
    SaveSchema::default()
        .component::<v1::Hull>()
        .component::<v1::Ship>()
        .save(&mut old, &mut file)
        .unwrap();

    let mut w = populated();
    let before = w.state_hash();
    let err = SaveSchema::default()
        .component::<v2::Hull>()
        .component::<v1::Ship>()
        .load_into(&mut w, &file[..])
        .unwrap_err();
    match &err {
        LoadError::ChangedComponent {
            name,
            saved,
            current,
            ..
        } => {
            assert_eq!(name, "Hull");
            assert_eq!(saved, "Hull(i32)");
            assert_eq!(*current, "Hull(Vec<String>)");
        }
        other => panic!("expected ChangedComponent, got {other:?}"),
    }
    assert!(err.to_string().contains("fix:"), "{err}");
    assert_eq!(w.state_hash(), before, "nothing written");

    let err = SaveSchema::default()
        .component::<v1::Hull>()
        .load_into(&mut w, &file[..])
        .unwrap_err();
    assert!(
        matches!(&err, LoadError::UnknownType { kind: "component", name } if name == "Ship"),
        "{err:?}"
    );
    assert_eq!(w.state_hash(), before, "nothing written");
}

#[test]
fn what_is_not_a_save_or_of_another_format_is_named() {
    let schema = schema();
    let mut w = World::new();
    for bytes in [&b""[..], b"hello", b"{}", b"[1, 2]", b"\xff\x00\x13"] {
        let err = schema.load_into(&mut w, bytes).unwrap_err();
        assert!(
            matches!(err, LoadError::NotASave { .. }),
            "{bytes:?}: {err:?}"
        );
    }
    let mut text = Vec::new();
    schema.save_text(&mut populated(), &mut text).unwrap();
    let format = lanegraph::hooks::SAVE_FORMAT;
    let newer = String::from_utf8(text).unwrap().replacen(
        &format!("\"format\": {format}"),
        &format!("\"format\": {}", format + 1),
        1,
    );
    // Resealed as a hand edit would be: the checksums pass, the format is named.
    let newer = SaveSchema::reseal(newer.as_bytes());
    let err = schema.load_into(&mut w, &newer[..]).unwrap_err();
    assert!(
        matches!(
            err,
            LoadError::Format { found, supported }
                if found == u64::from(format) + 1 && supported == format
        ),
        "{err:?}"
    );
    // A header of a newer frame is named the same way, before its document is read.
    let mut framed = newer.clone();
    framed[15] = b'7';
    let err = schema.load_into(&mut w, &framed[..]).unwrap_err();
    assert!(matches!(err, LoadError::Format { found: 7, .. }), "{err:?}");
    // A zero generation in the entity table: corrupt, and where.
    let mut text = Vec::new();
    schema.save_text(&mut populated(), &mut text).unwrap();
    // The JSON document after the save's header line, edited, then resealed as a hand edit
    // would be.
    let doc = &text[text.iter().position(|&b| b == b'\n').unwrap() + 1..];
    let sealed = |v: &serde_json::Value| SaveSchema::reseal(&serde_json::to_vec(v).unwrap());
    let v: serde_json::Value = serde_json::from_slice(doc).unwrap();
    let mut v = v;
    v["entities"]["generations"][0] = 0.into();
    let err = schema.load_into(&mut w, sealed(&v).as_slice()).unwrap_err();
    assert!(
        matches!(&err, LoadError::Corrupt { at, .. } if at == "entity table"),
        "{err:?}"
    );
    // A row of an entity that is not live.
    let mut v2 = serde_json::from_slice::<serde_json::Value>(doc).unwrap();
    let cols = v2["components"].as_array_mut().unwrap();
    let pos = cols.iter_mut().find(|c| c["name"] == "Pos").unwrap();
    pos["entities"][0] = (u64::from(u32::MAX) << 32 | 5).into();
    let err = schema
        .load_into(&mut w, sealed(&v2).as_slice())
        .unwrap_err();
    assert!(
        matches!(&err, LoadError::Corrupt { at, .. } if at == "Pos"),
        "{err:?}"
    );
}

/// xorshift64*: the fuzzer's own deterministic source.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn ten_thousand_damaged_saves_are_typed_errors_never_panics() {
    let schema = schema();
    let mut small = World::new();
    small.use_field_soa::<Vel>().unwrap();
    let es = small
        .spawn_batch((0..12).map(|i| {
            (
                Pos {
                    x: i as f32,
                    y: 0.0,
                },
                Vel { x: 1.0, y: 2.0 },
            )
        }))
        .unwrap()
        .to_vec();
    small.insert(es[3], Name("a".into())).unwrap();
    small.despawn(es[5]).unwrap();
    small.insert_resource(Score(3)).unwrap();
    let mut file = Vec::new();
    schema.save(&mut small, &mut file).unwrap();
    let mut text = Vec::new();
    schema.save_text(&mut small, &mut text).unwrap();

    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut errors, mut loaded) = (0, 0);
    let mut target = populated();
    let before = target.state_hash();
    for case in 0..10_000 {
        let base = if case % 4 == 3 { &text } else { &file };
        let mut bytes = base.clone();
        match case % 3 {
            // Truncated anywhere.
            0 => bytes.truncate(rng.below(bytes.len())),
            // One to four bytes changed.
            1 => {
                for _ in 0..1 + rng.below(4) {
                    let i = rng.below(bytes.len());
                    bytes[i] = rng.next() as u8;
                }
            }
            // A run of bytes inserted.
            _ => {
                let i = rng.below(bytes.len());
                let run: Vec<u8> = (0..1 + rng.below(8)).map(|_| rng.next() as u8).collect();
                bytes.splice(i..i, run);
            }
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            schema.load_into(&mut target, &bytes[..]).map(|_| ())
        }));
        match outcome {
            Err(_) => panic!("case {case} panicked ({} bytes)", bytes.len()),
            Ok(Err(e)) => {
                errors += 1;
                if !matches!(e, LoadError::HashMismatch { .. }) {
                    assert_eq!(target.state_hash(), before, "case {case}: {e} wrote");
                }
                // A mismatch leaves the loaded state: start the next case from a known one.
                if matches!(e, LoadError::HashMismatch { .. }) {
                    target = populated();
                }
            }
            Ok(Ok(())) => {
                // A change serde cannot see (a float's low bits): a consistent world anyway.
                loaded += 1;
                let _ = target.state_hash();
                target = populated();
            }
        }
    }
    assert_eq!(errors + loaded, 10_000);
    assert!(
        errors > 9_000,
        "most damage is caught: {errors} errors, {loaded} loads"
    );
}

/// A component that references another entity (a target) saves and loads it as the same
/// handle: a save keeps every slot and generation, so the reference still resolves, and a
/// reference that was stale stays stale. Bits that are no handle are a typed load error.
#[test]
fn an_entity_reference_survives_a_save_and_a_load() {
    #[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, Serialize, Deserialize)]
    struct Target(Entity);

    let schema = SaveSchema::default()
        .component::<Pos>()
        .component::<Target>();
    let mut w = World::new();
    let prey = w.spawn();
    w.insert(prey, Pos { x: 3.0, y: 4.0 }).unwrap();
    let gone = w.spawn();
    w.despawn(gone).unwrap();
    let hunter = w.spawn(); // reuses `gone`'s slot under a new generation
    w.insert(hunter, Target(prey)).unwrap();
    let ghost = w.spawn();
    w.insert(ghost, Target(gone)).unwrap();

    for text in [false, true] {
        let mut bytes = Vec::new();
        if text {
            schema.save_text(&mut w, &mut bytes).unwrap();
        } else {
            schema.save(&mut w, &mut bytes).unwrap();
        }
        let mut loaded = World::new();
        schema.load_into(&mut loaded, &bytes[..]).unwrap();
        assert_eq!(loaded.state_hash(), w.state_hash());
        let target = loaded.get::<Target>(hunter).unwrap().0;
        assert_eq!(target, prey);
        assert_eq!(loaded.get::<Pos>(target).unwrap(), &Pos { x: 3.0, y: 4.0 });
        let stale = loaded.get::<Target>(ghost).unwrap().0;
        assert!(matches!(
            loaded.get::<Pos>(stale),
            Err(WorldError::StaleEntity { .. })
        ));
    }

    // A generation of 0 is no handle: the load names it and leaves the world as it was.
    let mut bytes = Vec::new();
    schema.save_text(&mut w, &mut bytes).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let prey_bits = prey.to_bits().to_string();
    assert!(text.contains(&prey_bits), "{text}");
    // The reference in Target's values (the first prey bits after its name; before it they
    // are the entity table's and Pos's rows).
    let at = text.find("\"Target\"").unwrap();
    let (head, tail) = text.split_at(at);
    assert!(tail.contains(&prey_bits), "{tail}");
    let no_generation = u64::from(prey.to_bits() as u32).to_string();
    let bad = format!("{head}{}", tail.replacen(&prey_bits, &no_generation, 1));
    let mut loaded = World::new();
    let bad = SaveSchema::reseal(bad.as_bytes());
    let e = schema.load_into(&mut loaded, &bad[..]).unwrap_err();
    assert!(e.to_string().contains("is no entity handle"), "{e}");
    assert!(loaded.is_empty());
}

/// A load refused after a field-SoA column decoded (a resource further on is unreadable)
/// leaves the world's columns in their layouts: the switch to field-SoA waits for the apply
/// phase, as every other write does.
#[test]
fn a_refused_load_leaves_every_column_in_its_layout() {
    let mut saved = populated(); // Vel stored field-SoA
    let mut file = Vec::new();
    schema().save_text(&mut saved, &mut file).unwrap();
    let text = String::from_utf8(file).unwrap();
    assert_eq!(text.matches("4242").count(), 1, "{text:.400}");
    let bad = text.replace("4242", "\"not a score\"");

    let mut w = World::new();
    let e = w.spawn();
    w.insert(e, Vel { x: 1.0, y: 2.0 }).unwrap(); // AoS here
    let before = w.state_hash();
    let bad = SaveSchema::reseal(bad.as_bytes());
    let err = schema().load_into(&mut w, &bad[..]).unwrap_err();
    assert!(err.to_string().contains("Score"), "{err}");
    assert_eq!(w.state_hash(), before, "nothing written");
    assert_eq!(
        w.get::<Vel>(e).unwrap(),
        &Vel { x: 1.0, y: 2.0 },
        "still AoS"
    );
}

/// A load refused late (a resource further on is unreadable) adds no column to a world that had
/// not met the saved components: the columns are created in the apply phase.
#[test]
fn a_refused_load_adds_no_column_for_types_the_world_had_not_met() {
    let mut saved = populated();
    let mut file = Vec::new();
    schema().save_text(&mut saved, &mut file).unwrap();
    let text = String::from_utf8(file).unwrap();
    let bad = SaveSchema::reseal(text.replace("4242", "\"not a score\"").as_bytes());
    let mut w = World::new();
    assert!(w.component_access().is_empty());
    schema().load_into(&mut w, &bad[..]).unwrap_err();
    let columns: Vec<&str> = w.component_access().iter().map(|c| c.name).collect();
    assert!(
        columns.is_empty(),
        "columns added by a refused load: {columns:?}"
    );
}

/// Values outside their range are refused as in the constructors, even under valid checksums
/// (a forged or hand-edited save): a fixed step outside 1 us to 10 s, a step counter past a
/// century of simulated time.
#[test]
fn a_step_or_a_tick_out_of_range_is_refused() {
    let mut text = Vec::new();
    schema().save_text(&mut populated(), &mut text).unwrap();
    let doc = &text[text.iter().position(|&b| b == b'\n').unwrap() + 1..];
    let v: serde_json::Value = serde_json::from_slice(doc).unwrap();
    let cases: [(&str, serde_json::Value); 4] = [
        (
            "fixed_step",
            serde_json::json!([18_000_000_000_000_000_000u64, 1]),
        ),
        ("fixed_step", serde_json::json!([999, 1])),
        ("tick", serde_json::json!(1u64 << 40)),
        ("frame", serde_json::json!(u64::MAX)),
    ];
    for (key, value) in cases {
        let mut bad = v.clone();
        bad[key] = value.clone();
        let sealed = SaveSchema::reseal(&serde_json::to_vec(&bad).unwrap());
        let mut w = World::new();
        let err = schema().load_into(&mut w, &sealed[..]).unwrap_err();
        assert!(
            matches!(&err, LoadError::Corrupt { at, .. } if at == "header"),
            "{key} = {value}: {err:?}"
        );
        assert!(w.is_empty(), "nothing written");
    }
}
