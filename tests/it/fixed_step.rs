//! One fixed step: a strategy declares a divisor of the configured step rate, and the engine
//! turns the finest one in force into the step, for the built-in physics ladder and for a
//! game's own agent alike.

use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};

use lanegraph::game_loop::FixedStep;
use lanegraph::prelude::*;
use lanegraph::runtime::{BuiltinAgents, Engine, PhysicsSettings, Rung};

fn rung(name: &'static str, quality: u16, divisor: u32) -> Rung<PhysicsSettings> {
    Rung {
        name,
        quality,
        relative_cost: 1.0 / f64::from(divisor),
        settings: PhysicsSettings {
            step_divisor: NonZeroU32::new(divisor).unwrap(),
            ..PhysicsSettings::FULL
        },
    }
}

/// A physics rung with divisor 2 at the default 60 Hz: the hook steps 1/30 s, and the world's
/// fixed step is 1/30 s (a game that wrote "30" as a rate got an error here before).
#[test]
fn a_physics_rungs_divisor_halves_the_configured_rate() {
    let mut engine = Engine::builder()
        .lockstep(true)
        .adaptive(false)
        .builtin_agents(BuiltinAgents {
            physics: Some(vec![rung("full_rate", 2, 1), rung("half_rate", 1, 2)]),
            ..BuiltinAgents::default()
        })
        .build()
        .unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    engine.set_physics(move |_, step| {
        log.lock()
            .unwrap()
            .push((step.dt, step.settings.step_divisor.get()));
    });
    engine.frame().unwrap();
    assert_eq!(engine.world().fixed_step(), FixedStep::from_hz(60).unwrap());
    let physics = engine.controller().agent_id("physics").unwrap();
    engine.pin(physics, "half_rate").unwrap();
    engine.frame().unwrap();
    assert_eq!(engine.world().fixed_step(), FixedStep::from_hz(30).unwrap());
    let seen = seen.lock().unwrap();
    let (dt, divisor) = *seen.last().unwrap();
    assert_eq!(divisor, 2);
    assert!((dt - 1.0 / 30.0).abs() < 1e-6, "dt {dt}");
}

struct Stepper;
impl Agent for Stepper {
    fn name(&self) -> &str {
        "stepper"
    }
    fn strategies(&self) -> Vec<Strategy> {
        vec![
            Strategy::new("fine", 2, Quote::constant(0.1))
                .with_step_divisor(NonZeroU32::new(1).unwrap()),
            Strategy::new("coarse", 1, Quote::constant(0.05))
                .with_step_divisor(NonZeroU32::new(4).unwrap()),
        ]
    }
}

/// A game's own agent declares the step the same way the built-in physics agent does.
#[test]
fn a_games_own_agent_declares_the_step_too() {
    let mut engine = Engine::builder()
        .lockstep(true)
        .adaptive(false)
        .fixed_step_hz(120)
        .build()
        .unwrap();
    let id = engine
        .add_agent(Box::new(Stepper), AgentCost::Reported)
        .unwrap();
    engine.frame().unwrap();
    assert_eq!(
        engine.world().fixed_step(),
        FixedStep::from_hz(120).unwrap()
    );
    engine.pin(id, "coarse").unwrap();
    engine.frame().unwrap();
    assert_eq!(engine.world().fixed_step(), FixedStep::from_hz(30).unwrap());
}

/// A divisor that would make a step longer than the game loop takes (10 s) is refused when the
/// agent is added, naming the largest divisor that fits.
#[test]
fn a_divisor_past_the_longest_step_is_refused_with_the_largest_that_fits() {
    struct TooSlow;
    impl Agent for TooSlow {
        fn name(&self) -> &str {
            "too_slow"
        }
        fn strategies(&self) -> Vec<Strategy> {
            vec![Strategy::new("glacial", 1, Quote::constant(0.1))
                .with_step_divisor(NonZeroU32::new(20).unwrap())]
        }
    }
    let mut engine = Engine::builder()
        .lockstep(true)
        .fixed_step_hz(1)
        .build()
        .unwrap();
    let err = engine
        .add_agent(Box::new(TooSlow), AgentCost::Reported)
        .unwrap_err();
    assert!(
        matches!(
            err,
            lanegraph::budget::RegisterError::BadStepDivisor {
                divisor: 20,
                max: 10,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("fix:"), "{err}");
}
