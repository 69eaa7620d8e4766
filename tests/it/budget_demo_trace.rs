//! The demo's real ladder over the cost traces a real demo run recorded (`lanegraph demo
//! --no-gpu --frames 1200 --record-costs FILE`, on 2 cores and on one): the controller learns
//! the demo's mispriced ladder and holds the frame without hitches, as `bench budget`'s
//! `demo_trace_*` rows measure (the same function reads both).

use lanegraph_tools::bench::budget::{demo_trace, DEMO_TRACES, DEMO_TRACE_MINUTES};

#[test]
fn the_demos_mispriced_ladder_over_its_recorded_costs_holds_the_frame_without_hitches() {
    for (tag, text) in DEMO_TRACES {
        let f = demo_trace(text, DEMO_TRACE_MINUTES).expect("the checked-in trace replays");
        let log: String = f.decisions.iter().map(|d| format!("{d}\n")).collect();
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
