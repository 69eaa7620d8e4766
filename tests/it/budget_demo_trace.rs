//! The demo's real ladder over the cost traces a real demo run recorded (`lanegraph demo
//! --no-gpu --frames 1200 --record-costs FILE`, on 2 cores and on one): the controller learns
//! the demo's mispriced ladder and holds the frame without hitches, as `bench budget`'s
//! `demo_trace_*` rows measure (the same function reads both).

use lanegraph_tools::bench::budget::{demo_trace, DEMO_TRACES, DEMO_TRACE_MINUTES};

#[test]
fn the_demos_mispriced_ladder_over_its_recorded_costs_holds_the_frame_without_hitches() {
    for (tag, text) in DEMO_TRACES {
        let f = demo_trace(text, DEMO_TRACE_MINUTES).expect("the checked-in trace replays");
        let log = lanegraph_tests::decision_lines(&f.decisions);
        eprintln!(
            "demo_trace {tag}: {:.2} probes/min, {:.2} flips/min, p99/budget {:.3}, p50/target {:.3}",
            f.probes_per_min, f.flips_per_min, f.p99_over_budget, f.p50_over_target
        );
        assert!(
            f.p99_over_budget <= 1.0,
            "{tag}: p99 at {:.2} of the budget\n{log}",
            f.p99_over_budget
        );
        assert!(
            f.probes_per_min <= 1.0,
            "{tag}: {:.2} overrun probes per minute\n{log}",
            f.probes_per_min
        );
        assert!(
            f.p50_over_target >= 0.4,
            "{tag}: p50 at {:.2} of the target\n{log}",
            f.p50_over_target
        );
    }
}

#[test]
fn a_damaged_trace_fails_naming_its_line() {
    let (_, text) = DEMO_TRACES[0];
    let damaged = text.replacen("\nframe 3 ", "\nframe 1 ", 1);
    let e = demo_trace(&damaged, 1)
        .expect_err("a damaged trace is refused")
        .to_string();
    assert!(e.contains("cost trace line"), "{e}");
    let renamed = text.replacen(" detail_7_8 ", " detail_seven_eighths ", 1);
    let e = demo_trace(&renamed, 1)
        .expect_err("another ladder is refused")
        .to_string();
    assert!(e.contains("record the trace again"), "{e}");
}

#[test]
fn a_recording_run_measures_every_rung_and_its_trace_reads_back() {
    use lanegraph::hooks::budget::cost_trace::CostTrace;
    use lanegraph_demo::DemoOptions;
    let path = std::env::temp_dir().join(format!("lanegraph-costs-{}.trace", std::process::id()));
    let opts = DemoOptions {
        frames: Some(60),
        entities: 2_000,
        no_gpu: true,
        out: None,
        progress: false,
        pace: false,
        record_costs: Some(path.clone()),
        ..DemoOptions::default()
    };
    lanegraph_demo::run(&opts).expect("a recording run");
    let text = std::fs::read_to_string(&path).expect("the trace was written");
    let _ = std::fs::remove_file(&path);
    let trace = CostTrace::parse(&text).expect("the trace reads back");
    assert_eq!(trace.frames.len(), 60);
    let physics = trace
        .agents
        .iter()
        .position(|a| a.name == "physics")
        .expect("physics is traced");
    assert_eq!(trace.agents[physics].rungs.len(), 10);
    // The sweep holds each rung 2 frames: 60 frames visit all ten three times.
    assert!(
        trace.unmeasured(physics).is_empty(),
        "{:?}",
        trace.unmeasured(physics)
    );
    // A recording sweeps the rungs itself: with a pin or a real-clock run it is refused.
    for bad in [
        DemoOptions {
            seconds: Some(1.0),
            ..opts.clone()
        },
        DemoOptions {
            pins: vec!["physics=full".parse().unwrap()],
            ..opts.clone()
        },
    ] {
        let e = bad.validate().expect_err("refused").to_string();
        assert!(e.contains("--record-costs"), "{e}");
    }
}
