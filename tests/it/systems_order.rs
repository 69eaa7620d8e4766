//! System order and run conditions: before/after on systems and named sets, a
//! deterministic topological order, a cycle or an unknown name refused with the systems named,
//! and conditions (every N steps, an agent's strategy, a resource changed).

use std::sync::{Arc, Mutex};

use lanegraph::hooks::WorldHooks;
use lanegraph::systems::{every, when_changed, RegisterError, SystemDef};
use lanegraph::world::{Resource, StateHash, World};

fn log_system(name: &'static str, log: &Arc<Mutex<Vec<&'static str>>>) -> SystemDef {
    let log = Arc::clone(log);
    SystemDef::new(name, 1.0, move |_: &mut World, _| {
        log.lock().unwrap().push(name)
    })
}

#[test]
fn systems_run_in_the_order_their_constraints_give() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut w = World::new();
    // Registered in an order a plugin-style game might use: render prep first.
    w.register_system(log_system("render_prep", &log).after("physics"))
        .unwrap_err(); // `physics` names nothing yet
    w.register_system(log_system("integrate", &log).in_set("physics"))
        .unwrap();
    w.register_system(
        log_system("collide", &log)
            .in_set("physics")
            .after("integrate"),
    )
    .unwrap();
    w.register_system(log_system("render_prep", &log).after("physics"))
        .unwrap();
    w.register_system(log_system("input", &log).before("physics"))
        .unwrap();
    w.register_system(log_system("score", &log)).unwrap();
    w.run_systems();
    assert_eq!(
        *log.lock().unwrap(),
        ["input", "integrate", "collide", "render_prep", "score"]
    );
}

#[test]
fn a_cycle_is_refused_naming_the_systems_and_the_schedule_is_unchanged() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut w = World::new();
    w.register_system(log_system("a", &log)).unwrap();
    w.register_system(log_system("b", &log).after("a")).unwrap();
    let err = w
        .register_system(log_system("c", &log).after("b").before("a"))
        .unwrap_err();
    match &err {
        RegisterError::OrderCycle { name, cycle } => {
            assert_eq!(name, "c");
            assert!(cycle.contains(&"a".to_string()) && cycle.contains(&"c".to_string()));
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains(" -> "), "{err}");
    assert_eq!(w.system_count(), 2);
    w.run_systems();
    assert_eq!(*log.lock().unwrap(), ["a", "b"]);
}

/// A constraint naming no system and no set is refused with both names and the fix.
#[test]
fn an_unknown_order_target_is_refused_naming_it() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut w = World::new();
    w.register_system(log_system("a", &log)).unwrap();
    let err = w
        .register_system(log_system("b", &log).after("nobody"))
        .unwrap_err();
    assert_eq!(
        err,
        RegisterError::UnknownOrderTarget {
            name: "b".into(),
            target: "nobody".into()
        }
    );
    assert!(
        err.to_string().contains("fix: register `nobody` first"),
        "{err}"
    );
    assert_eq!(w.system_count(), 1);
}

#[derive(Debug, Resource, StateHash)]
#[resource(domains(GAMEPLAY))]
struct Wind(u32);

#[test]
fn run_conditions_skip_runs_deterministically() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut w = World::new();
    w.insert_resource(Wind(0)).unwrap();
    w.register_system(log_system("every_third", &log).run_if(every(3)))
        .unwrap();
    w.register_system(SystemDef::new("gust", 1.0, |w: &mut World, ctx| {
        if ctx.tick() == 4 {
            w.resource_mut::<Wind>().unwrap().0 += 1;
        }
    }))
    .unwrap();
    w.register_system(log_system("on_wind", &log).run_if(when_changed::<Wind>()))
        .unwrap();
    for _ in 0..7 {
        w.run_systems();
    }
    // every_third: ticks 0, 3, 6. on_wind: the first ask (tick 0) and tick 4's change.
    assert_eq!(
        *log.lock().unwrap(),
        [
            "every_third",
            "on_wind",
            "every_third",
            "on_wind",
            "every_third"
        ]
    );
    // A skipped run is not a run.
    let id = w.system_id("every_third").unwrap();
    assert_eq!(w.system_timing_stats(id).unwrap().runs, 3);
}
