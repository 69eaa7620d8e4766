//! System registration: every bad definition is a typed error; the schedule runs in order.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanegraph::hooks::SystemIdHooks;
use lanegraph::hooks::{WorldHooks, MAX_SYSTEMS};
use lanegraph::systems::{BudgetError, RegisterError, SystemDef, SystemId};
use lanegraph::world::{Domain, World, WorldError};

fn noop(name: &str, budget_ms: f64) -> SystemDef {
    SystemDef::new(name.to_string(), budget_ms, |_, _| {})
}

#[test]
fn bad_definitions_are_typed_errors_with_a_fix() {
    let mut w = World::new();
    assert_eq!(
        w.register_system(noop("", 1.0)),
        Err(RegisterError::EmptyName)
    );
    assert_eq!(
        w.register_system(noop("   ", 1.0)),
        Err(RegisterError::EmptyName)
    );
    let first = w.register_system(noop("ai", 1.0)).unwrap();
    match w.register_system(noop("ai", 2.0)) {
        Err(RegisterError::DuplicateName { name, existing }) => {
            assert_eq!(name, "ai");
            assert_eq!(existing, first);
        }
        other => panic!("expected DuplicateName, got {other:?}"),
    }
    let mut budget = |ms: f64| match w.register_system(noop("b", ms)) {
        Err(RegisterError::Budget { source, .. }) => source,
        other => panic!("expected a budget error for {ms}, got {other:?}"),
    };
    assert_eq!(budget(0.0), BudgetError::Zero);
    assert!(matches!(budget(-0.5), BudgetError::Negative { .. }));
    assert!(matches!(budget(f64::NAN), BudgetError::NonFinite { .. }));
    assert!(matches!(
        budget(f64::INFINITY),
        BudgetError::NonFinite { .. }
    ));
    assert!(matches!(
        budget(f64::NEG_INFINITY),
        BudgetError::NonFinite { .. }
    ));
    let zero_duration = SystemDef::new("d", Duration::ZERO, |_, _| {});
    assert!(matches!(
        w.register_system(zero_duration),
        Err(RegisterError::Budget {
            source: BudgetError::Zero,
            ..
        })
    ));
    for e in [
        RegisterError::EmptyName,
        w.register_system(noop("x", -1.0)).unwrap_err(),
    ] {
        assert!(e.to_string().contains("fix"), "{e}");
    }
    // Nothing bad was registered.
    assert_eq!(w.system_count(), 1);
}

#[test]
fn at_most_256_systems() {
    let mut w = World::new();
    for i in 0..MAX_SYSTEMS {
        w.register_system(noop(&format!("s{i}"), 1.0)).unwrap();
    }
    assert_eq!(
        w.register_system(noop("one-too-many", 1.0)),
        Err(RegisterError::TooMany {
            name: "one-too-many".into(),
            max: 256
        })
    );
    assert_eq!(w.system_count(), 256);
}

#[test]
fn systems_run_in_schedule_order_with_their_metadata() {
    let mut w = World::new();
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut ids = Vec::new();
    for name in ["input", "ai", "physics", "animation"] {
        let l = log.clone();
        let def = SystemDef::new(name, 0.25, move |_, ctx| {
            l.lock().unwrap().push((name, ctx.tick()));
        })
        .domain(Domain::GAMEPLAY)
        .workload(10);
        ids.push(w.register_system(def).unwrap());
    }
    w.run_systems();
    w.run_systems();
    assert_eq!(
        *log.lock().unwrap(),
        vec![
            ("input", 0),
            ("ai", 0),
            ("physics", 0),
            ("animation", 0),
            ("input", 1),
            ("ai", 1),
            ("physics", 1),
            ("animation", 1)
        ]
    );
    assert_eq!(w.system_name(ids[2]).unwrap(), "physics");
    assert_eq!(w.system_budget(ids[2]).unwrap().as_nanos(), 250_000);
    assert_eq!(w.system_domain(ids[2]).unwrap(), Some(Domain::GAMEPLAY));
    assert_eq!(w.system_id("animation"), Some(ids[3]));
    assert_eq!(w.system_id("nope"), None);
    let s = w.system_timing_stats(ids[0]).unwrap();
    assert_eq!(s.runs, 2);
    assert_eq!(s.workload, Some(10));
    assert_eq!(w.system_ids().collect::<Vec<_>>(), ids);
}

#[test]
fn registering_from_inside_a_running_system_is_refused() {
    let mut w = World::new();
    let result = Arc::new(Mutex::new(None));
    let r = result.clone();
    w.register_system(SystemDef::new("spawner", 1.0, move |world, _| {
        *r.lock().unwrap() = Some(world.register_system(noop("late", 1.0)));
    }))
    .unwrap();
    w.run_systems();
    assert!(matches!(
        result.lock().unwrap().take(),
        Some(Err(RegisterError::WhileRunning { .. }))
    ));
    assert_eq!(w.system_count(), 1);
}

#[test]
fn ids_from_elsewhere_are_rejected() {
    let mut a = World::new();
    let b = World::new();
    let id = a.register_system(noop("only", 1.0)).unwrap();
    let err = b.system_timing_stats(id).unwrap_err();
    assert!(
        matches!(err, WorldError::NoSuchSystem { count: 0, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("fix:"), "{err}");
    assert!(a
        .system_timing_stats(SystemId::from_parts(a.id(), 1))
        .is_err());
    assert!(a
        .system_timing_stats(SystemId::from_parts(a.id(), u32::MAX))
        .is_err());
    assert!(a.system_name(SystemId::from_parts(b.id(), 0)).is_err());
}

#[test]
fn reported_workload_replaces_the_declared_one() {
    let mut w = World::new();
    let id = w
        .register_system(
            SystemDef::new("cull", 1.0, |_, ctx| ctx.report_workload(ctx.tick() * 100)).workload(7),
        )
        .unwrap();
    assert_eq!(w.system_timing_stats(id).unwrap().workload, Some(7));
    w.run_systems();
    w.run_systems();
    assert_eq!(w.system_timing_stats(id).unwrap().workload, Some(100));
}
