//! Savegames a player can trust: every byte under a mandatory checksum, reads bounded before
//! they allocate, paths that are not regular files refused, and a save to a path that survives
//! the game being killed at any moment.

use std::time::Duration;

use lanegraph::prelude::*;
use lanegraph::world::{LoadError, SaveSchema};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, Serialize, Deserialize)]
struct Pos {
    x: f32,
    y: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Resource, StateHash, Serialize, Deserialize)]
struct Score(u64);

fn schema() -> SaveSchema {
    SaveSchema::default().component::<Pos>().resource::<Score>()
}

fn world(n: u32, score: u64) -> World {
    let mut w = World::new();
    w.spawn_batch((0..n).map(|i| {
        (Pos {
            x: i as f32,
            y: score as f32,
        },)
    }))
    .unwrap();
    w.insert_resource(Score(score)).unwrap();
    w
}

/// SplitMix64: the test's own deterministic source.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[test]
fn a_hundred_thousand_bit_flips_never_load_a_different_state() {
    let schema = schema();
    let mut original = world(24, 7);
    let hash = original.state_hash();
    let (mut file, mut text) = (Vec::new(), Vec::new());
    schema.save(&mut original, &mut file).unwrap();
    schema.save_text(&mut original, &mut text).unwrap();
    let mut rng = Rng(42);
    let (mut refused, mut same) = (0u32, 0u32);
    for case in 0..100_000u32 {
        let mut bytes = if case % 4 == 3 {
            text.clone()
        } else {
            file.clone()
        };
        let bits = 1 + (rng.next() % 4) as usize;
        for _ in 0..bits {
            let bit = (rng.next() % (bytes.len() as u64 * 8)) as usize;
            bytes[bit / 8] ^= 1 << (bit % 8);
        }
        let mut target = World::new();
        match schema.load_into(&mut target, &bytes[..]) {
            Err(_) => refused += 1,
            Ok(_) => {
                // Only a flip that cancels out (or a hex digit's case in the header) loads,
                // and then it loads the very state saved.
                assert_eq!(
                    target.state_hash(),
                    hash,
                    "case {case}: a damaged save loaded a different state silently"
                );
                same += 1;
            }
        }
    }
    assert!(
        refused > 99_000,
        "{refused} refused, {same} loaded the same state"
    );
}

#[test]
fn a_save_under_the_read_limit_loads_and_one_over_it_is_refused_before_reading() {
    let mut w = world(1000, 1);
    let mut file = Vec::new();
    schema().save(&mut w, &mut file).unwrap();
    let doc = file.len() as u64 - file.iter().position(|&b| b == b'\n').unwrap() as u64 - 1;
    let mut fresh = World::new();
    schema()
        .read_limit(doc)
        .load_into(&mut fresh, &file[..])
        .unwrap();
    assert_eq!(fresh.state_hash(), w.state_hash());
    let err = schema()
        .read_limit(doc - 1)
        .load_into(&mut World::new(), &file[..])
        .unwrap_err();
    assert!(
        matches!(err, LoadError::TooLarge { size: Some(s), .. } if s == doc),
        "{err:?}"
    );
    // A header that claims a huge document is refused without allocating it: an endless
    // reader behind it is never read.
    let forged = b"lanegraph-save 2 999999999999 00000000 0000000000000000 cbor\n";
    let endless = std::io::Read::chain(&forged[..], std::io::repeat(0));
    let err = schema().load_into(&mut World::new(), endless).unwrap_err();
    assert!(matches!(err, LoadError::TooLarge { .. }), "{err:?}");
    // An unframed input (the first format) is bounded the same way.
    let err = schema()
        .read_limit(1 << 20)
        .load_into(&mut World::new(), std::io::repeat(b'{'))
        .unwrap_err();
    assert!(
        matches!(err, LoadError::TooLarge { size: None, .. }),
        "{err:?}"
    );
}

#[test]
fn trailing_bytes_after_a_save_are_refused() {
    let mut w = world(10, 1);
    for text in [false, true] {
        let mut file = Vec::new();
        if text {
            schema().save_text(&mut w, &mut file).unwrap();
        } else {
            schema().save(&mut w, &mut file).unwrap();
        }
        file.extend_from_slice(b"junk");
        let err = schema()
            .load_into(&mut World::new(), &file[..])
            .unwrap_err();
        assert!(err.to_string().contains("bytes follow"), "{err}");
    }
}

#[test]
fn a_path_that_is_not_a_regular_file_is_refused_without_blocking() {
    let dir = std::env::temp_dir().join(format!("lanegraph-save-paths-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let err = schema()
        .load_from_path(&mut World::new(), &dir)
        .unwrap_err();
    assert!(matches!(err, LoadError::NotAFile { .. }), "{err:?}");
    let fifo = dir.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    if made {
        let err = schema()
            .load_from_path(&mut World::new(), &fifo)
            .unwrap_err();
        assert!(matches!(err, LoadError::NotAFile { .. }), "{err:?}");
    }
    let err = schema()
        .load_from_path(&mut World::new(), "/dev/zero")
        .unwrap_err();
    assert!(matches!(err, LoadError::NotAFile { .. }), "{err:?}");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(made, "mkfifo failed");
}

/// The child of the kill test: saves two worlds in turn to the path it is given, forever.
#[test]
#[ignore = "run by saving_to_a_path_survives_a_kill_at_any_moment as its child"]
fn save_loop_child() {
    let Ok(path) = std::env::var("LANEGRAPH_SAVE_LOOP") else {
        return;
    };
    let mut worlds = [world(20_000, 1), world(20_000, 2)];
    println!("saving");
    for i in 0.. {
        schema().save_to_path(&mut worlds[i % 2], &path).unwrap();
    }
}

#[test]
fn saving_to_a_path_survives_a_kill_at_any_moment() {
    let dir = std::env::temp_dir().join(format!("lanegraph-save-kill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("slot1.save");
    let hashes = [world(20_000, 1).state_hash(), world(20_000, 2).state_hash()];
    schema().save_to_path(&mut world(20_000, 1), &path).unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng = Rng(7);
    for trial in 0..50 {
        let mut child = std::process::Command::new(&exe)
            .args([
                "world_savegame_integrity::save_loop_child",
                "--exact",
                "--ignored",
                "--nocapture",
            ])
            .env("LANEGRAPH_SAVE_LOOP", &path)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(50 + rng.next() % 400));
        child.kill().unwrap(); // SIGKILL: no handler runs
        child.wait().unwrap();
        let mut loaded = World::new();
        schema()
            .load_from_path(&mut loaded, &path)
            .unwrap_or_else(|e| panic!("trial {trial}: the previous save is lost: {e}"));
        assert!(hashes.contains(&loaded.state_hash()), "trial {trial}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[derive(Debug, Clone, PartialEq, StateHash, Serialize, Deserialize)]
struct Hit {
    damage: u32,
}
impl lanegraph::world::Event for Hit {
    const NAME: &'static str = "Hit";
}

/// A world whose game sends events every step (sequence counters far from 0, events in
/// flight at the save): the queue registered as a resource loads to the saved hash, and the
/// loaded world, stepped on, stays equal to the original stepped on.
#[test]
fn a_world_that_sent_events_loads_to_its_saved_hash_and_goes_on_alike() {
    use lanegraph::systems::SystemDef;
    use lanegraph::world::Events;
    let with_events = schema().resource::<Events<Hit>>();
    let game = |w: &mut World| {
        w.add_event::<Hit>().unwrap();
        w.register_system(SystemDef::new("hit", 1.0, |w: &mut World, _| {
            let damage = w.resource::<Score>().unwrap().0 as u32;
            w.send_event(Hit { damage }).unwrap();
            w.resource_mut::<Score>().unwrap().0 += 1;
        }))
        .unwrap();
    };
    let mut original = world(50, 1);
    game(&mut original);
    for _ in 0..7 {
        original.run_systems();
    }
    assert!(original.events::<Hit>().unwrap().iter().count() > 0);
    let mut file = Vec::new();
    with_events.save(&mut original, &mut file).unwrap();
    let mut loaded = World::new();
    game(&mut loaded);
    with_events.load_into(&mut loaded, &file[..]).unwrap();
    assert_eq!(loaded.state_hash(), original.state_hash(), "the saved hash");
    for step in 0..5 {
        original.run_systems();
        loaded.run_systems();
        assert_eq!(
            loaded.state_hash(),
            original.state_hash(),
            "step {step} after the load"
        );
    }
    // Without the queue registered, the hash cannot be vouched for and says so by not being
    // saved: the load still succeeds, and the world differs only in its queue.
    let mut bare = Vec::new();
    schema().save(&mut original, &mut bare).unwrap();
    let mut other = World::new();
    game(&mut other);
    schema().load_into(&mut other, &bare[..]).unwrap();
    assert_ne!(other.state_hash(), original.state_hash());
}

/// Two threads saving to one path at once (an autosave and a player's save): each save has a
/// temporary file of its own, so the path always holds one whole save and no temporary file
/// is left behind.
#[test]
fn two_threads_saving_to_one_path_never_tear_it() {
    let dir = std::env::temp_dir().join(format!("lanegraph-save-race-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("slot.save");
    let hashes = [world(2_000, 1).state_hash(), world(2_000, 2).state_hash()];
    std::thread::scope(|s| {
        for score in [1, 2] {
            let path = &path;
            s.spawn(move || {
                let mut w = world(2_000, score);
                for _ in 0..20 {
                    schema().save_to_path(&mut w, path).unwrap();
                }
            });
        }
    });
    let mut loaded = World::new();
    schema().load_from_path(&mut loaded, &path).unwrap();
    assert!(hashes.contains(&loaded.state_hash()));
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        [std::ffi::OsString::from("slot.save")],
        "temporary files left"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Saves 400,000 rows (`text`: the JSON form), loads them into a fresh world and checks the
/// load's peak memory on this thread against twice the file beside the world it built.
fn load_holds_at_most_twice_the_file(text: bool) {
    use lanegraph::hooks::telemetry::{reset_thread_peak, thread_memory_stats, thread_peak_bytes};
    let mut saved = world(400_000, 7);
    let mut bytes = Vec::new();
    if text {
        schema().save_text(&mut saved, &mut bytes).unwrap();
    } else {
        schema().save(&mut saved, &mut bytes).unwrap();
    }
    drop(saved);
    let file = bytes.len() as i64;
    let mut fresh = World::new();
    let before = thread_memory_stats()
        .expect("the suite installs the tracking allocator")
        .current_bytes;
    reset_thread_peak();
    schema().load_into(&mut fresh, bytes.as_slice()).unwrap();
    // Everything this thread allocated for the load and still holds is the loaded world.
    let world = thread_memory_stats().unwrap().current_bytes - before;
    let peak = thread_peak_bytes().unwrap() - before;
    assert_eq!(fresh.len(), 400_000);
    assert!(
        peak <= 2 * file + world + (1 << 20),
        "the load peaked at {peak} bytes for a {file}-byte file and a {world}-byte world \
         ({:.2}x the file beside the world)",
        (peak - world) as f64 / file as f64
    );
    eprintln!(
        "{} file {file} B, world {world} B, peak {peak} B: {:.2}x the file beside the world",
        if text { "text" } else { "binary" },
        (peak - world) as f64 / file as f64
    );
}

#[test]
fn a_binary_load_holds_at_most_twice_the_file_beside_the_world() {
    load_holds_at_most_twice_the_file(false);
}

#[test]
fn a_text_load_holds_at_most_twice_the_file_beside_the_world() {
    load_holds_at_most_twice_the_file(true);
}

#[test]
fn an_unset_read_limit_is_sized_from_the_world_loaded_into() {
    let forged = b"lanegraph-save 2 999999999999 00000000 0000000000000000 cbor\n";
    let limit_for = |w: &mut World| match schema().load_into(w, &forged[..]) {
        Err(LoadError::TooLarge { limit, .. }) => limit,
        other => panic!("{other:?}"),
    };
    // A fresh world: the floor.
    assert_eq!(limit_for(&mut World::new()), 256 << 20);
    // A world holding 2,000,000 rows: 8 times what its rows and entities take.
    let mut big = world(2_000_000, 1);
    let limit = limit_for(&mut big);
    assert!(limit > 256 << 20, "{limit}");
    let rows = 2_000_000 * std::mem::size_of::<Pos>() as u64;
    assert!(limit >= 8 * rows, "{limit} < 8 x {rows}");
}

#[test]
fn a_format_2_binary_save_whose_resources_are_value_trees_still_loads() {
    use ciborium::Value;
    let mut saved = world(100, 42);
    let mut bytes = Vec::new();
    schema().save(&mut saved, &mut bytes).unwrap();
    // The document after the header line, as format 2 wrote it: resource values as trees.
    let body = &bytes[bytes.iter().position(|&b| b == b'\n').unwrap() + 1..];
    let mut doc: Value = ciborium::from_reader(body).unwrap();
    let Value::Map(fields) = &mut doc else {
        panic!("a save is a map")
    };
    for (k, v) in fields.iter_mut() {
        match k.as_text() {
            Some("format") => *v = Value::Integer(2.into()),
            Some("resources") => {
                for r in v.as_array_mut().unwrap() {
                    for (rk, rv) in r.as_map_mut().unwrap().iter_mut() {
                        if rk.as_text() == Some("value") {
                            let inner: Value =
                                ciborium::from_reader(&rv.as_bytes().unwrap()[..]).unwrap();
                            *rv = inner;
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let mut v2 = Vec::new();
    ciborium::into_writer(&doc, &mut v2).unwrap();
    let v2 = SaveSchema::reseal(&v2);
    assert!(
        v2.starts_with(b"lanegraph-save 2 "),
        "resealed at the document's own format"
    );
    let mut fresh = World::new();
    schema().load_into(&mut fresh, &v2[..]).unwrap();
    assert_eq!(fresh.state_hash(), saved.state_hash());
    assert_eq!(fresh.resource::<Score>().unwrap().0, 42);
}
