//! The demo's promise: the same `--seed` and `--frames` give the same `world_hash`, whatever
//! `--lanes` says (one physics worker or two, lanes sharing cores or not).

use lanegraph_demo::{self as demo, DemoOptions};

fn hash(seed: u64, lanes: Option<&str>) -> String {
    let opts = DemoOptions {
        frames: Some(40),
        entities: 3_000,
        seed,
        lanes: lanes.map(str::to_string),
        out: None,
        no_gpu: true,
        progress: false,
        pace: false,
        ..DemoOptions::default()
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
    let one = hash(42, Some("physics=1"));
    let many = hash(42, Some("physics=2,render=1,asset=1"));
    let auto = hash(42, None);
    assert_eq!(one, many, "physics=1 vs physics=2,render=1,asset=1");
    assert_eq!(one, auto, "physics=1 vs the automatic plan");
    assert!(one.starts_with("0x") && one.len() == 18, "{one}");
    // The hash is not a constant: another seed is another world.
    assert_ne!(one, hash(43, Some("physics=1")));
}
