//! The settling figures are not one lucky seed: the step and steady scenarios hold their bars
//! across seeds (noise draws), and the noisy scenario across a few simulated minutes each.

use lanegraph_benches::quick::budget::{
    max_changes, noisy_scenario, steady_scenario, step_scenario,
};
use lanegraph_tools::budget_sim::{self as sim, Driver};

#[test]
fn step_figures_hold_across_seeds() {
    let mut report = Vec::new();
    for seed in 1..=12 {
        let mut sc = step_scenario();
        sc.seed = seed;
        let t = sim::run(&sc, Driver::Adaptive);
        let settle = t.settle_frames(1000, 60).unwrap_or(u64::MAX);
        let missed = t.missed_frames(1000, 1100);
        let changes = max_changes(&t, sc.agents.len(), 1000, 2000);
        let overshoot = t.multiplier_overshoot(1000, 2000);
        let over_after_release = t.over_target_frames(2001, 3001);
        report.push(format!(
            "seed {seed}: settle {settle}, missed {missed}, changes {changes}, overshoot {:.1} %, over target after release {over_after_release}",
            overshoot * 100.0
        ));
        assert!(
            settle <= 30
                && missed <= 6
                && changes <= 2
                && overshoot < 0.10
                && over_after_release == 0,
            "{report:#?}"
        );
    }
}

#[test]
fn steady_and_noisy_figures_hold_across_seeds() {
    for seed in 1..=4 {
        let mut sc = steady_scenario();
        sc.seed = seed;
        sc.frames = 4000;
        let t = sim::run(&sc, Driver::Adaptive);
        let late = t.decisions.iter().filter(|d| d.frame >= 300).count();
        assert_eq!(late, 0, "seed {seed}: {:#?}", t.decisions);
        let minutes = 3;
        let mut sc = noisy_scenario(minutes);
        sc.seed = seed;
        let t = sim::run(&sc, Driver::Adaptive);
        let worst = max_changes(&t, sc.agents.len(), 300, sc.frames + 1);
        assert!(
            worst as f64 / minutes as f64 <= 2.0,
            "seed {seed}: {worst} changes in {minutes} min: {:#?}",
            t.decisions
        );
    }
}
