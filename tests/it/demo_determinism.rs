//! The demo's promise: a lockstep run's `world_hash` is a function of the seed, the frames and
//! the decision log. With adaptation off, the same `--seed` and `--frames` give the same hash
//! whatever `--lanes` says; with adaptation on (the default), `replay` feeds the recorded
//! decisions back instead of the live controller and reproduces the hash bit for bit, on any
//! plan.

use lanegraph::runtime::EngineConfig;
use lanegraph_demo::{self as demo, DemoOptions};

fn options(seed: u64, lanes: Option<&str>) -> DemoOptions {
    DemoOptions {
        frames: Some(40),
        entities: 3_000,
        seed,
        lanes: lanes.map(str::to_string),
        out: None,
        no_gpu: true,
        progress: false,
        pace: false,
        ..DemoOptions::default()
    }
}

fn hash_without_adaptation(seed: u64, lanes: Option<&str>) -> String {
    let opts = DemoOptions {
        config: EngineConfig {
            adaptive: false,
            ..EngineConfig::default()
        },
        ..options(seed, lanes)
    };
    let run = demo::run(&opts).expect("the demo runs");
    assert_eq!(run.summary.run.frames, 40);
    assert!(run.summary.deterministic);
    // Forty lockstep frames: forty fixed steps, nothing dropped.
    assert_eq!(
        (run.summary.run.steps, run.summary.run.dropped_steps),
        (40, 0)
    );
    run.summary.run.world_hash
}

#[test]
fn same_seed_same_hash_whatever_the_lanes() {
    let one = hash_without_adaptation(42, Some("physics=1"));
    let many = hash_without_adaptation(42, Some("physics=2,render=1,asset=1"));
    let auto = hash_without_adaptation(42, None);
    assert_eq!(one, many, "physics=1 vs physics=2,render=1,asset=1");
    assert_eq!(one, auto, "physics=1 vs the automatic plan");
    assert!(one.starts_with("0x") && one.len() == 18, "{one}");
    // The hash is not a constant: another seed is another world.
    assert_ne!(one, hash_without_adaptation(43, Some("physics=1")));
}

#[test]
fn an_adaptive_run_is_reproduced_by_its_decision_log_on_any_plan() {
    // A 1 ms frame budget for 20,000 particles: the controller degrades agents, physics among
    // them (its step halves: a change to the simulation itself).
    let recorded = demo::run(&DemoOptions {
        frames: Some(120),
        entities: 20_000,
        target_fps: Some(1000.0),
        ..options(7, Some("physics=1,render=1,asset=1"))
    })
    .expect("the demo runs");
    let s = &recorded.summary;
    assert!(
        !s.run.decisions.is_empty(),
        "no decision under a 1 ms budget: the test exercises nothing"
    );
    assert!(s.run.decisions_complete);
    // One step per frame also across a change of the step.
    assert_eq!((s.run.steps, s.run.dropped_steps), (120, 0));
    let json = serde_json::to_string(s).unwrap();
    for lanes in [None, Some("physics=2,render=1,asset=1")] {
        let replay = demo::replay_of(&json).expect("a lockstep run replays");
        assert_eq!(replay.world_hash, s.run.world_hash);
        let opts = DemoOptions {
            lanes: lanes.map(str::to_string),
            out: None,
            no_gpu: true,
            progress: false,
            pace: false,
            ..replay.options
        };
        let again = demo::run(&opts).expect("the replay runs");
        assert_eq!(
            again.summary.run.world_hash, s.run.world_hash,
            "replay on {lanes:?} differs"
        );
        // The replay made the same switches at the same frames.
        let key = |d: &lanegraph::runtime::DecisionEntry| (d.frame, d.agent.clone(), d.to.clone());
        let want: Vec<_> = s.run.decisions.iter().map(key).collect();
        let got: Vec<_> = again.summary.run.decisions.iter().map(key).collect();
        assert_eq!(got, want, "on {lanes:?}");
    }
}

#[test]
fn replay_refuses_what_it_cannot_reproduce() {
    let real_clock = demo::run(&DemoOptions {
        frames: None,
        seconds: Some(0.2),
        ..options(1, None)
    })
    .expect("the demo runs");
    let json = serde_json::to_string(&real_clock.summary).unwrap();
    let e = demo::replay_of(&json).unwrap_err().to_string();
    assert!(e.contains("real clock") && e.contains("fix:"), "{e}");
    let e = demo::replay_of("{}").unwrap_err().to_string();
    assert!(e.contains("fix:"), "{e}");
    // A decision naming an agent this game does not have is a typed error, not a silent skip.
    let mut v: serde_json::Value = serde_json::from_str(
        &serde_json::to_string(&demo::run(&options(1, None)).expect("the demo runs").summary)
            .unwrap(),
    )
    .unwrap();
    v["decisions"] = serde_json::json!([{"frame": 3, "agent": "weather", "to": "calm"}]);
    let replay = demo::replay_of(&v.to_string()).expect("the log parses");
    let e = demo::run(&DemoOptions {
        out: None,
        progress: false,
        pace: false,
        no_gpu: true,
        ..replay.options
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("weather"), "{e}");

    // A windowed run's input log is replayed with it; a malformed one, or one cut short, is
    // refused with the fix.
    v["decisions"] = serde_json::json!([]);
    v["inputs"] = serde_json::json!([
        {"frame": 2, "event": {"kind": "key", "key": "Space", "pressed": true, "repeat": false}},
        {"frame": 5, "event": {"kind": "close_requested"}}
    ]);
    let replay = demo::replay_of(&v.to_string()).expect("the input log parses");
    let inputs = replay.options.replay.expect("a log to replay").inputs;
    assert_eq!(inputs.len(), 2);
    assert_eq!(inputs[1].frame, 5);
    v["inputs"] = serde_json::json!([{"frame": 2, "event": {"kind": "key", "key": "no key!"}}]);
    let e = demo::replay_of(&v.to_string()).unwrap_err().to_string();
    assert!(
        e.contains("`inputs` is not an input log") && e.contains("fix:"),
        "{e}"
    );
    v["inputs"] = serde_json::json!([]);
    v["inputs_complete"] = serde_json::json!(false);
    let e = demo::replay_of(&v.to_string()).unwrap_err().to_string();
    assert!(e.contains("input log was cut") && e.contains("fix:"), "{e}");
}

/// The demo reads input like a game: a press of Space fires a burst. Input handed to a lockstep
/// run (here through a replayed log holding the still run's decisions and four presses, as
/// `lanegraph replay` does with a windowed run's log)
/// changes the world, lands in `summary.json` `inputs`, and replaying that summary gives the
/// same hash again.
#[test]
fn input_drives_the_demo_and_a_replay_of_its_summary_reproduces_the_hash() {
    use lanegraph::input::{InputEvent, RecordedInput};
    let space = |frame, pressed| RecordedInput {
        frame,
        event: InputEvent::Key {
            key: demo::world::BURST_KEY.into(),
            pressed,
            repeat: false,
        },
    };
    let presses = vec![
        space(10, true),
        space(11, false),
        space(25, true),
        space(26, false),
    ];
    let still = demo::run(&options(3, None)).expect("the demo runs");
    let played = demo::run(&DemoOptions {
        replay: Some(lanegraph::runtime::RunLog {
            decisions: still.summary.run.decisions.clone(),
            inputs: presses.clone(),
        }),
        ..options(3, None)
    })
    .expect("the demo runs with input");
    assert_eq!(still.summary.score.bursts, 0);
    assert_eq!(played.summary.score.bursts, 2);
    assert_eq!(
        played.summary.score.spawned,
        still.summary.score.spawned + 2 * demo::world::BURST as u64
    );
    assert_ne!(played.summary.run.world_hash, still.summary.run.world_hash);
    assert_eq!(played.summary.run.inputs, presses);

    let json = serde_json::to_string(&played.summary).unwrap();
    let replay = demo::replay_of(&json).expect("the run replays");
    assert_eq!(
        replay.options.replay.as_ref().map(|log| &log.inputs[..]),
        Some(&presses[..])
    );
    let again = demo::run(&DemoOptions {
        out: None,
        progress: false,
        pace: false,
        no_gpu: true,
        ..replay.options
    })
    .expect("the replay runs");
    assert_eq!(again.summary.run.world_hash, replay.world_hash);
    assert_eq!(again.summary.score.bursts, 2);
}
