//! A short `stress` run as a library call: floods, injected panics and bad assets, and the
//! verdict that nothing hung, leaked or was lost. The suite's tracking allocator lets the leak
//! check run; the passing run goes alone in its own process, where no other test moves the heap.

use lanegraph_tests::stress::{self, StressOptions};

/// The heap check reads process-wide totals: one run at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_short_stress_run_passes_and_checks_what_it_claims() {
    lanegraph_tests::isolated(
        "engine_stress::a_short_stress_run_passes_and_checks_what_it_claims",
        short_stress_run_passes,
    );
}

fn short_stress_run_passes() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let report = stress::run(&StressOptions {
        seconds: 2.0,
        entities: 2_000,
        exit_on_hang: false,
        ..StressOptions::default()
    })
    .expect("the stress run runs");
    eprintln!("{report}");
    assert!(report.passed(), "{report}");
    // It did inject what it claims to have checked.
    assert!(report.frames > 0);
    assert!(report.physics_panics_injected > 0, "{report}");
    assert!(
        report.render.panicked > 0 && report.asset.panicked > 0,
        "{report}"
    );
    assert!(report.assets_expected_failures > 0, "{report}");
    assert!(report.heap_growth_bytes.is_some());
    // The verdict can fail: a lost job is reported.
    let mut lost = report.clone();
    lost.render.ran -= 1;
    assert!(!lost.passed());
}

#[test]
fn a_leak_fails_the_verdict() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let report = stress::run(&StressOptions {
        seconds: 0.5,
        entities: 500,
        exit_on_hang: false,
        inject_leak_bytes: 4 << 20,
        ..StressOptions::default()
    })
    .expect("the stress run runs");
    assert!(!report.passed(), "{report}");
    assert!(
        report.failures().iter().any(|f| f.starts_with("leak")),
        "{report}"
    );
}
