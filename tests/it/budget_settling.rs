//! The budget controller's settling figures, held as tests: load step
//! x3, steady load, load removed, noisy steady load, CPU- and GPU-bound overruns. Every run is
//! the deterministic simulator, so these are exact, reproducible figures, not timings; the
//! same scenarios feed `lanegraph bench budget`.

use lanegraph_benches::quick::budget::{
    climb_frames, max_changes, noisy_scenario, steady_scenario, step_scenario,
};
use lanegraph_tools::budget_sim::{self as sim, Driver};

const STEP: u64 = 1000;
const RELEASE: u64 = 2000;

#[test]
fn load_step_x3_settles_within_30_frames_with_at_most_6_missed() {
    let sc = step_scenario();
    let t = sim::run(&sc, Driver::Adaptive);
    let settle = t.settle_frames(STEP, 60).expect("settles");
    assert!(settle <= 30, "settled after {settle} frames");
    let missed = t.missed_frames(STEP, STEP + 100);
    assert!(missed <= 6, "{missed} missed frames");
    // Without a controller the same step misses every frame: the figure above is the
    // controller's doing, not the scenario's.
    let fixed = sim::run(&sc, Driver::Fixed);
    assert_eq!(fixed.missed_frames(STEP, STEP + 100), 100);
    // Before the step, nothing was missed and the scene ran at full quality.
    assert_eq!(t.missed_frames(100, STEP), 0);
}

#[test]
fn load_step_multiplier_overshoot_is_under_10_percent() {
    let t = sim::run(&step_scenario(), Driver::Adaptive);
    let overshoot = t.multiplier_overshoot(STEP, RELEASE);
    assert!(overshoot < 0.10, "overshoot {:.1} %", overshoot * 100.0);
    // It did move: the PID saw the step.
    let low = t
        .frames
        .iter()
        .filter(|f| f.frame >= STEP && f.frame < RELEASE)
        .map(|f| f.multiplier)
        .fold(f64::INFINITY, f64::min);
    assert!(low < 0.99, "multiplier never moved ({low})");
}

#[test]
fn load_step_changes_each_agent_at_most_twice() {
    let sc = step_scenario();
    let t = sim::run(&sc, Driver::Adaptive);
    let changes = t.changes_per_agent(sc.agents.len(), STEP, RELEASE);
    assert!(changes.iter().all(|&c| c <= 2), "{changes:?}");
    assert!(
        changes.iter().sum::<usize>() >= 1,
        "the step must cause a change"
    );
    // The GPU-bound agent was downgraded for GPU pressure, the CPU ones for CPU pressure.
    let render = t
        .decisions
        .iter()
        .find(|d| d.agent_name == "render")
        .unwrap();
    assert!(
        render.reason.starts_with("GPU pressure: gpu "),
        "{}",
        render.reason
    );
    let physics = t
        .decisions
        .iter()
        .find(|d| d.agent_name == "physics")
        .unwrap();
    assert!(
        physics.reason.starts_with("CPU pressure: cpu "),
        "{}",
        physics.reason
    );
}

#[test]
fn load_removed_climbs_back_without_overshooting_the_target() {
    let sc = step_scenario();
    let t = sim::run(&sc, Driver::Adaptive);
    let full: u32 = sc
        .agents
        .iter()
        .map(|a| a.strategies.iter().map(|s| s.quality as u32).max().unwrap())
        .sum();
    let climb = climb_frames(&t, RELEASE, full).expect("full quality comes back");
    assert!(climb < 300, "took {climb} frames");
    let over = t.over_target_frames(RELEASE + 1, sc.frames + 1);
    assert_eq!(over, 0, "frames over the target while climbing back");
    // Upgrades say why.
    let up = t.decisions.iter().find(|d| d.frame >= RELEASE).unwrap();
    assert!(up.reason.starts_with("headroom: "), "{}", up.reason);
}

#[test]
fn steady_load_for_10000_frames_has_zero_flips_after_settling() {
    let sc = steady_scenario();
    let t = sim::run(&sc, Driver::Adaptive);
    assert!(
        !t.decisions.is_empty(),
        "x2 load must cause the initial settling"
    );
    let late: Vec<String> = t
        .decisions
        .iter()
        .filter(|d| d.frame >= 300)
        .map(|d| d.to_string())
        .collect();
    assert!(late.is_empty(), "flips after settling: {late:#?}");
    assert_eq!(t.missed_frames(300, sc.frames + 1), 0);
}

#[test]
fn noisy_steady_load_flips_at_most_twice_per_agent_per_minute() {
    let minutes = 10;
    let sc = noisy_scenario(minutes);
    let t = sim::run(&sc, Driver::Adaptive);
    let worst = max_changes(&t, sc.agents.len(), 300, sc.frames + 1);
    assert!(
        worst as f64 / minutes as f64 <= 2.0,
        "{worst} changes by one agent in {minutes} minutes"
    );
}

#[test]
fn a_cpu_bound_overrun_and_a_gpu_bound_overrun_are_both_seen() {
    // CPU only x3: the CPU agents degrade and render stays at full.
    let mut sc = sim::standard(1500, Vec::new(), 0.02, 7);
    sc.cpu_load = vec![(500, 3.0)];
    let t = sim::run(&sc, Driver::Adaptive);
    assert!(
        t.decisions.iter().all(|d| d.agent_name != "render"),
        "{:#?}",
        t.decisions
    );
    assert!(t.decisions.iter().any(|d| d.agent_name == "physics"));
    assert!(t.missed_frames(600, 1500) == 0);
    // GPU only x3: render degrades (two frames late, as its readings arrive), the CPU agents stay.
    let mut sc = sim::standard(1500, Vec::new(), 0.02, 8);
    sc.gpu_load = vec![(500, 3.0)];
    let t = sim::run(&sc, Driver::Adaptive);
    assert_eq!(t.decisions.len(), 1, "{:#?}", t.decisions);
    let d = &t.decisions[0];
    assert_eq!(d.agent_name, "render");
    assert!(
        d.frame >= 500 + 2,
        "acted before the GPU reading could arrive: frame {}",
        d.frame
    );
    assert!(d.reason.starts_with("GPU pressure: gpu "), "{}", d.reason);
    assert!(t.missed_frames(600, 1500) == 0);
}
