//! Unit tests of the budget check and its events, with a capturing `tracing` subscriber.

use std::sync::{Arc, Mutex};

use super::*;
use crate::engine_events::{RATE_LIMITED_MSG, RATE_LIMIT_WINDOW_NS};
use crate::systems::test_capture::capturing;
use crate::systems::{SystemDef, BUDGET_CRITICAL_MULTIPLIER};

/// A world with one system of budget 1000 ns, and its record index.
fn one_system() -> (World, SystemId) {
    let mut w = World::new();
    let id = w
        .register_system(SystemDef::new("physics", 0.001, |_, _| {}))
        .unwrap();
    (w, id)
}

/// Feeds a measured sample through the same path `run_systems` takes, at time `now`.
fn feed(w: &mut World, id: SystemId, ns: u64, now: u64) {
    let rec = &mut w.systems.records[id.index() as usize];
    if record_sample(rec, ns, None) {
        breach_at(rec, &mut w.events, id, ns, now);
    }
}

#[test]
fn thresholds_are_exact_strictly_above_1x_and_at_3x() {
    let (mut w, id) = one_system();
    let budget = w.system_budget(id).unwrap().as_nanos();
    assert_eq!(budget, 1_000);
    let critical = budget * BUDGET_CRITICAL_MULTIPLIER;
    let t = RATE_LIMIT_WINDOW_NS;
    // Equal to the budget is legal; a zero reading is a legitimate sample.
    feed(&mut w, id, budget, t);
    feed(&mut w, id, 0, 2 * t);
    let s = w.system_timing_stats(id).unwrap();
    assert_eq!((s.runs, s.warns, s.errors, s.last_ns), (2, 0, 0, 0));
    feed(&mut w, id, budget + 1, 3 * t);
    feed(&mut w, id, critical - 1, 4 * t);
    let s = w.system_timing_stats(id).unwrap();
    assert_eq!((s.warns, s.errors), (2, 0));
    feed(&mut w, id, critical, 5 * t);
    let s = w.system_timing_stats(id).unwrap();
    assert_eq!((s.runs, s.warns, s.errors), (5, 3, 1));
    assert_eq!(w.system_timing_window(id).unwrap().len(), 5);
}

#[test]
fn a_3x_run_emits_warn_then_error_with_every_field() {
    let (mut w, id) = one_system();
    let ((), events) = capturing(|| feed(&mut w, id, 3_000, RATE_LIMIT_WINDOW_NS));
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0].level, tracing::Level::WARN);
    assert_eq!(events[1].level, tracing::Level::ERROR);
    assert_eq!(events[0].field("code"), Some("LG-SYS-001"));
    assert_eq!(events[1].field("code"), Some("LG-SYS-002"));
    for e in &events {
        for f in [
            "system",
            "id",
            "measured_ms",
            "budget_ms",
            "p99_ms",
            "window_samples",
        ] {
            assert!(e.field(f).is_some(), "field {f} missing in {e:?}");
        }
        assert_eq!(e.field("system"), Some("physics"));
        assert_eq!(e.field("measured_ms"), Some("0.003"));
        assert_eq!(e.field("budget_ms"), Some("0.001"));
        assert_eq!(e.field("window_samples"), Some("1"));
        let msg = e.field("message").unwrap();
        assert_eq!(msg.split(" | ").count(), 5, "{msg}");
    }
}

#[test]
fn sustained_breach_logs_once_per_window_with_a_summary_and_counts_all() {
    let (mut w, id) = one_system();
    let t0 = RATE_LIMIT_WINDOW_NS;
    let ((), events) = capturing(|| {
        for k in 0..100u64 {
            // 100 breaches 5 ms apart: 0.5 s, all inside one window.
            feed(&mut w, id, 2_000, t0 + k * 5_000_000);
        }
        // The next window opens: a summary of the 99 suppressed, then the event.
        feed(&mut w, id, 2_000, t0 + RATE_LIMIT_WINDOW_NS);
    });
    let warns: Vec<_> = events
        .iter()
        .filter(|e| e.field("code") == Some("LG-SYS-001"))
        .collect();
    let summaries: Vec<_> = events
        .iter()
        .filter(|e| e.field("code") == Some("LG-LOG-001"))
        .collect();
    assert_eq!(warns.len(), 2);
    assert_eq!(summaries.len(), 1);
    assert_eq!(summaries[0].field("suppressed"), Some("99"));
    assert_eq!(summaries[0].field("event"), Some("budget_overrun"));
    assert_eq!(summaries[0].field("message"), Some(RATE_LIMITED_MSG));
    assert_eq!(w.system_timing_stats(id).unwrap().warns, 101);
    let c = w.event_counts(EngineEvent::BudgetOverrun);
    assert_eq!((c.emitted, c.suppressed, c.summaries), (2, 99, 1));
}

#[test]
fn over_budget_systems_still_run_and_success_logs_nothing() {
    let mut w = World::new();
    let runs = Arc::new(Mutex::new(0u32));
    let r = runs.clone();
    let slow = w
        .register_system(SystemDef::new("slow", 0.000_001, move |_, _| {
            // 1 ns budget: any real run breaches it.
            let t = lanegraph_jobs::clock::now();
            while lanegraph_jobs::clock::now().ns_since(t) < 2_000 {
                std::hint::spin_loop();
            }
            *r.lock().unwrap() += 1;
        }))
        .unwrap();
    let fast = w
        .register_system(SystemDef::new("fast", 1_000.0, |_, _| {}))
        .unwrap();
    let ((), events) = capturing(|| {
        for _ in 0..10 {
            w.run_systems();
        }
    });
    assert_eq!(*runs.lock().unwrap(), 10);
    let s = w.system_timing_stats(slow).unwrap();
    assert_eq!((s.runs, s.warns, s.errors), (10, 10, 10));
    assert!(s.last_ns >= 2_000);
    let f = w.system_timing_stats(fast).unwrap();
    assert_eq!((f.runs, f.warns, f.errors), (10, 0, 0));
    // Only the slow system's first warn and error got out (rate limited); nothing for `fast`.
    assert!(events.iter().all(|e| e.field("system") != Some("fast")));
    assert_eq!(events.len(), 2, "{events:?}");
}

#[test]
fn invalid_ids_are_errors_and_log_nothing() {
    let (w, id) = one_system();
    let (other, _) = one_system();
    let foreign = SystemId::from_parts(other.id(), 0);
    let past_end = SystemId::from_parts(w.id(), 1);
    let ((), events) = capturing(|| {
        assert!(w.system_timing_stats(foreign).is_err());
        assert!(w.system_timing_window(past_end).is_err());
        let err = w.system_timing_stats(past_end).unwrap_err();
        assert!(
            matches!(err, crate::world::WorldError::NoSuchSystem { count: 1, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("fix:"));
        assert!(w.system_timing_stats(id).is_ok());
    });
    assert!(events.is_empty());
}

#[test]
fn begin_frame_does_not_reset_the_window() {
    let (mut w, id) = one_system();
    w.run_systems();
    w.run_systems();
    w.begin_frame();
    assert_eq!(w.system_timing_window(id).unwrap().len(), 2);
    assert_eq!(w.system_timing_window(id).unwrap().total_recorded(), 2);
}

#[test]
fn a_panicking_system_leaves_the_schedule_intact() {
    let mut w = World::new();
    w.register_system(SystemDef::new("boom", 1.0, |_, ctx| {
        if ctx.tick() == 0 {
            panic!("first tick fails");
        }
    }))
    .unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.run_systems()));
    assert!(r.is_err());
    assert_eq!(w.system_count(), 1);
    w.run_systems();
    let id = w.system_id("boom").unwrap();
    assert_eq!(w.system_timing_stats(id).unwrap().runs, 1);
}
