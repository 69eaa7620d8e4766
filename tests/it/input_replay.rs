//! Input is a deterministic input of a lockstep run: systems read the per-frame queue, the
//! engine logs it with frame numbers, and replaying the log on a fresh engine (live input
//! ignored) ends in the same world hash.

use lanegraph::hooks::EngineHooks;
use lanegraph::input::{InputEvent, Key, KeyCode, MouseButton, RecordedInput};
use lanegraph::runtime::{ReplayError, RunLog};
use lanegraph::systems::SystemDef;
use lanegraph::world::{Resource, StateHash};
use lanegraph::Engine;

/// What the player did to the game, as systems saw it.
#[derive(Debug, Clone, Copy, PartialEq, Default, Resource, StateHash)]
#[resource(domains(GAMEPLAY))]
struct Player {
    x: f32,
    y: f32,
    jumps: u64,
    clicks: u64,
    /// Every event a system saw, counted once per event (a frame with two steps must not
    /// see its events twice).
    events_seen: u64,
}

fn game() -> Engine {
    let mut e = lanegraph_tests::engine_with_pass(lanegraph_tests::NullPass, 8);
    e.world_mut().insert_resource(Player::default()).unwrap();
    e.world_mut()
        .register_system(SystemDef::new("control", 1.0, |w, ctx| {
            let dt = ctx.dt();
            let input = w.input();
            let (right, jump) = (
                input.is_down(KeyCode::KeyD),
                input.just_pressed(KeyCode::Space),
            );
            let clicks = input
                .events()
                .iter()
                .filter(|e| matches!(e, InputEvent::MouseButton { pressed: true, .. }))
                .count() as u64;
            let seen = input.events().len() as u64;
            let cursor = input.cursor();
            let p = w.resource_mut::<Player>().unwrap();
            if right {
                p.x += 3.0 * dt;
            }
            if let Some((_, cy)) = cursor {
                p.y = cy * 0.5;
            }
            p.jumps += u64::from(jump);
            p.clicks += clicks;
            p.events_seen += seen;
        }))
        .unwrap();
    e
}

fn key(name: &str, pressed: bool) -> InputEvent {
    InputEvent::Key {
        key: Key::from(name.parse::<KeyCode>().unwrap()),
        pressed,
        repeat: false,
    }
}

/// The player's script: (frame before which to push, event).
fn script() -> Vec<(u64, InputEvent)> {
    vec![
        (3, key("KeyD", true)),
        (3, InputEvent::CursorMoved { x: 10.0, y: 40.0 }),
        (9, key("Space", true)),
        (10, key("Space", false)),
        (
            12,
            InputEvent::MouseButton {
                button: MouseButton::Left,
                pressed: true,
            },
        ),
        (20, key("KeyD", false)),
        (25, InputEvent::CursorMoved { x: 11.0, y: 90.0 }),
        (25, key("Space", true)),
    ]
}

fn live_run(frames: u64) -> (u64, Player, Vec<RecordedInput>) {
    let mut e = game();
    let s = script();
    for f in 1..=frames {
        for (_, ev) in s.iter().filter(|(at, _)| *at == f) {
            e.push_input(*ev);
        }
        e.frame().unwrap();
    }
    e.finish_render();
    let p = *e.world().resource::<Player>().unwrap();
    (e.world().state_hash(), p, e.input_log().to_vec())
}

#[test]
fn systems_read_input_and_a_replay_of_the_log_ends_in_the_same_hash() {
    let (hash, player, log) = live_run(40);
    // Systems saw the input: moved right for 17 frames, jumped twice, clicked once.
    assert_eq!(player.jumps, 2, "{player:?}");
    assert_eq!(player.clicks, 1);
    assert_eq!(player.y, 45.0);
    assert!(player.x > 0.0);
    assert_eq!(
        player.events_seen,
        script().len() as u64,
        "each event seen exactly once"
    );
    // The log holds every event at the frame it was handed over, in order.
    assert_eq!(log.len(), script().len());
    for (r, (at, ev)) in log.iter().zip(script()) {
        assert_eq!((r.frame, r.event), (at, ev));
    }
    // Round trip through JSON, as a summary.json carries it.
    let json = serde_json::to_string(&log).unwrap();
    let back: Vec<RecordedInput> = serde_json::from_str(&json).unwrap();

    let mut replay = game();
    replay
        .replay(&RunLog {
            inputs: back,
            ..RunLog::default()
        })
        .unwrap();
    for _ in 0..40 {
        // Live input during a replay is ignored (and counted).
        replay.push_input(key("KeyD", true));
        replay.frame().unwrap();
    }
    replay.finish_render();
    assert_eq!(replay.live_input_ignored(), 40);
    assert_eq!(*replay.world().resource::<Player>().unwrap(), player);
    assert_eq!(
        replay.world().state_hash(),
        hash,
        "the replay ends in the same hash"
    );
    assert_eq!(replay.input_log(), &log[..]);

    // Without the input the hash differs: the check above can fail.
    let mut idle = game();
    for _ in 0..40 {
        idle.frame().unwrap();
    }
    assert_ne!(idle.world().state_hash(), hash);
}

#[test]
fn a_bad_input_log_is_refused_with_the_fix() {
    let mut e = game();
    let ev = key("KeyA", true);
    let out_of_order = vec![
        RecordedInput {
            frame: 5,
            event: ev,
        },
        RecordedInput {
            frame: 2,
            event: ev,
        },
    ];
    let err = e
        .replay(&RunLog {
            inputs: out_of_order,
            ..RunLog::default()
        })
        .unwrap_err();
    assert_eq!(
        err,
        ReplayError::OutOfOrder {
            what: "input",
            frame: 2,
            after: 5
        }
    );
    assert!(err.to_string().contains("fix:"), "{err}");
    e.frame().unwrap();
    e.frame().unwrap();
    let err = e
        .replay(&RunLog {
            inputs: vec![RecordedInput {
                frame: 1,
                event: ev,
            }],
            ..RunLog::default()
        })
        .unwrap_err();
    assert!(matches!(
        err,
        ReplayError::AlreadyRun {
            what: "input",
            frame: 1,
            now: 2,
            ..
        }
    ));
    // Frame 0 is no frame: said so, not "already run".
    let mut fresh = lanegraph::runtime::Engine::builder()
        .lockstep(true)
        .build()
        .unwrap();
    let err = fresh
        .replay(&RunLog {
            inputs: vec![RecordedInput {
                frame: 0,
                event: ev,
            }],
            ..RunLog::default()
        })
        .unwrap_err();
    assert_eq!(err, ReplayError::FrameZeroInput);
}
