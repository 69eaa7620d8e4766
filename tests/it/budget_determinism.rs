//! Same inputs, same decisions, bit for bit: the controller iterates no hash map and reads no
//! clock, so a rerun, a replay of its recorded inputs, and a replay of its decision log all
//! reproduce the run exactly.

use lanegraph::hooks::ControllerDriver;
use lanegraph_benches::quick::budget::{noisy_scenario, step_scenario};
use lanegraph_tools::budget_sim::{self as sim, Driver, FrameRecord};

fn bits(frames: &[FrameRecord]) -> Vec<[u64; 5]> {
    frames
        .iter()
        .map(|f| {
            [
                f.cpu_ms.to_bits(),
                f.gpu_ms.to_bits(),
                f.frame_ms.to_bits(),
                f.target_ms.to_bits(),
                f.multiplier.to_bits(),
            ]
        })
        .collect()
}

#[test]
fn the_same_scenario_gives_the_same_decisions_bit_for_bit() {
    for sc in [step_scenario(), noisy_scenario(1)] {
        let a = sim::run(&sc, Driver::Adaptive);
        let b = sim::run(&sc, Driver::Adaptive);
        assert!(!a.decisions.is_empty());
        assert_eq!(a.decisions, b.decisions);
        for (x, y) in a.decisions.iter().zip(&b.decisions) {
            assert_eq!(x.multiplier.to_bits(), y.multiplier.to_bits());
            assert_eq!(x.target_ms.to_bits(), y.target_ms.to_bits());
        }
        assert_eq!(bits(&a.frames), bits(&b.frames));
    }
}

#[test]
fn a_replayed_decision_log_reproduces_the_run_bit_for_bit() {
    let sc = step_scenario();
    let adaptive = sim::run(&sc, Driver::Adaptive);
    let replayed = sim::run(&sc, Driver::Replay(&adaptive.decisions));
    assert_eq!(adaptive.decisions, replayed.decisions);
    // The frames the game ran are identical (the controller's own figures are not compared:
    // in the replay it only observes).
    let run = |t: &sim::Trace| -> Vec<(u64, u64, u32, u32)> {
        t.frames
            .iter()
            .map(|f| (f.cpu_ms.to_bits(), f.gpu_ms.to_bits(), f.steps, f.quality))
            .collect()
    };
    assert_eq!(run(&adaptive), run(&replayed));
    // And a different log gives a different run: the comparison can fail.
    let mut edited = adaptive.decisions.clone();
    edited.pop();
    let other = sim::run(&sc, Driver::Replay(&edited));
    assert_ne!(run(&adaptive), run(&other));
}

#[test]
fn recorded_inputs_replayed_into_a_fresh_controller_give_the_same_log() {
    for sc in [step_scenario(), noisy_scenario(1)] {
        let (trace, recording) = sim::run_recorded(&sc);
        assert_eq!(recording.frames.len(), trace.frames.len());
        assert!(recording.frames.iter().any(|f| !f.samples.is_empty()));
        let mut fresh = sim::controller_for(&sc);
        let reports = fresh.replay(&recording).unwrap();
        let log: Vec<_> = fresh.log().iter().cloned().collect();
        assert!(!log.is_empty());
        assert_eq!(log, trace.decisions);
        for (r, f) in reports.iter().zip(&trace.frames) {
            assert_eq!(
                r.multiplier.to_bits(),
                f.multiplier.to_bits(),
                "frame {}",
                f.frame
            );
            assert_eq!(
                r.target_ms.to_bits(),
                f.target_ms.to_bits(),
                "frame {}",
                f.frame
            );
        }
    }
}
