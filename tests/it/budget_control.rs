//! Control behaviour through the public API: the death spiral, critical caps, manual mode,
//! the fixed step, what agents are told, and refusals of bad input.

use std::sync::{Arc, Mutex};

use lanegraph::hooks::budget::providers::{FixedReadings, MemoryState, Readings, ThermalState};
use lanegraph::hooks::budget::{
    AdaptationMode, Agent, AgentSample, Controller, ControllerConfig, FrameInput, InputError,
    PinError, Pool, Quote, RegisterError, Strategy, StrategyIndex,
};
use lanegraph::hooks::ControllerDriver;
use lanegraph_tools::budget_sim::{self as sim, divisor, Driver};

#[test]
fn death_spiral_degrades_to_cheapest_does_not_freeze_and_says_so() {
    let mut sc = sim::standard(3000, vec![(500, 12.0), (1500, 1.0)], 0.02, 11);
    sc.frames = 3000;
    let mut spiral_frames = 0;
    let mut cheapest_during = true;
    let t = sim::run_with(&sc, Driver::Adaptive, |ctl, f| {
        if ctl.in_death_spiral() {
            spiral_frames += 1;
            for k in 0..4 {
                let id = sim::agent_id(k);
                let costs = ctl.calibrated_costs(id).unwrap();
                let cur = ctl.current(id).unwrap().get();
                let cheapest = costs.iter().cloned().fold(f64::INFINITY, f64::min);
                // The arbiter's tie-break keeps the first of equal costs.
                if costs[cur] > cheapest && f.frame > 520 {
                    cheapest_during = false;
                }
            }
        }
    });
    assert!(
        spiral_frames > 100,
        "the overload must be detected as a death spiral ({spiral_frames})"
    );
    assert!(
        cheapest_during,
        "an agent ran above its cheapest strategy during the spiral"
    );
    // The loop never froze: every frame ran, steps were capped at 5, real dt at 0.25 s.
    assert_eq!(t.frames.len(), 3000);
    assert!(t.frames.iter().all(|f| f.steps <= sim::MAX_STEPS));
    assert!(t.frames.iter().any(|f| f.clamped));
    // It said so: the downgrades name the cheapest fallback.
    assert!(
        t.decisions
            .iter()
            .any(|d| d.frame >= 500 && d.reason.contains("degrading to cheapest")),
        "{:#?}",
        t.decisions
    );
    // And it recovers once the overload is gone: full quality again before the end.
    let last = t.frames.last().unwrap();
    assert_eq!(last.quality, 11, "quality at the end: {}", last.quality);
    assert_eq!(t.missed_frames(2500, 3001), 0);
}

#[test]
fn a_critical_thermal_signal_caps_the_multiplier_at_once() {
    let mut sc = sim::standard(800, Vec::new(), 0.02, 5);
    let hot = Readings {
        thermal: ThermalState::Critical,
        ..Readings::default()
    };
    sc.readings = vec![(400, hot), (600, Readings::default())];
    let t = sim::run(&sc, Driver::Adaptive);
    let at = |frame: u64| t.frames[(frame - 1) as usize];
    assert!(at(399).multiplier > 0.99);
    assert!(
        at(400).multiplier <= 0.5,
        "cap applies the same tick: {}",
        at(400).multiplier
    );
    let d = t
        .decisions
        .iter()
        .find(|d| d.frame == 400)
        .expect("a downgrade at once");
    assert!(
        d.reason
            .starts_with("thermal: Critical caps multiplier at 0.50"),
        "{}",
        d.reason
    );
    // The cap lifts when the signal does, and quality climbs back.
    assert_eq!(t.frames.last().unwrap().quality, 11);
}

struct Recorder {
    name: &'static str,
    told: Arc<Mutex<Vec<String>>>,
}

impl Agent for Recorder {
    fn name(&self) -> &str {
        self.name
    }
    fn pool(&self) -> Pool {
        Pool::Cpu
    }
    fn strategies(&self) -> Vec<Strategy> {
        vec![
            // Divisors of a 120 Hz configured rate.
            Strategy::new("step_120", 3, Quote::constant(6.0)).with_step_divisor(divisor(1)),
            Strategy::new("step_60", 2, Quote::constant(3.0)).with_step_divisor(divisor(2)),
            Strategy::new("step_30", 1, Quote::constant(1.5)).with_step_divisor(divisor(4)),
        ]
    }
    fn apply(&mut self, _: StrategyIndex, s: &Strategy) {
        self.told.lock().unwrap().push(s.name.clone());
    }
}

fn run_frames(c: &mut Controller, from: u64, to: u64, ms: f64) {
    let id = c.agent_id("physics").unwrap();
    for frame in from..to {
        let s = [AgentSample {
            agent: id,
            frame,
            n: 1,
            ms,
        }];
        c.tick(&FrameInput {
            frame,
            cpu_ms: ms + 1.0,
            gpu: None,
            samples: &s,
            step: None,
        })
        .unwrap();
    }
}

/// The step divisor in force: the one rule (`finest_step_divisor`) over every agent's
/// current strategy, as the engine and the simulator apply it.
fn divisor_in_force(c: &Controller) -> Option<u32> {
    lanegraph::hooks::budget::finest_step_divisor(
        c.agent_ids()
            .filter_map(|id| c.strategies(id)?.get(c.current(id)?.get())),
    )
    .map(|d| d.get())
}

#[test]
fn agents_are_told_and_the_step_divisor_follows_physics() {
    let told = Arc::new(Mutex::new(Vec::new()));
    let mut c = Controller::new(ControllerConfig::default()).unwrap();
    assert_eq!(divisor_in_force(&c), None);
    let id = c
        .register(Box::new(Recorder {
            name: "physics",
            told: told.clone(),
        }))
        .unwrap();
    assert_eq!(*told.lock().unwrap(), vec!["step_120"]);
    assert_eq!(divisor_in_force(&c), Some(1));
    // Physics measures 4x its quote: 24 ms at step_120, 12 ms at step_60 (fits the 15 ms
    // target with 1 ms overhead).
    for frame in 1..20 {
        let ms = 4.0 * [6.0, 3.0, 1.5][c.current(id).unwrap().get()];
        run_frames(&mut c, frame, frame + 1, ms);
    }
    assert_eq!(c.current(id), Some(StrategyIndex(1)));
    assert_eq!(*told.lock().unwrap(), vec!["step_120", "step_60"]);
    assert_eq!(divisor_in_force(&c), Some(2));
}

#[test]
fn manual_mode_pins_strategies() {
    let told = Arc::new(Mutex::new(Vec::new()));
    let mut c = Controller::new(ControllerConfig::default()).unwrap();
    let id = c
        .register(Box::new(Recorder {
            name: "physics",
            told: told.clone(),
        }))
        .unwrap();
    c.set_mode(AdaptationMode::Manual);
    // Overload: in manual mode nothing moves.
    run_frames(&mut c, 1, 100, 24.0);
    assert_eq!(c.current(id), Some(StrategyIndex(0)));
    assert_eq!(c.log().total(), 0);
    // A pin applies at once and is logged as manual.
    c.pin(id, "step_30").unwrap();
    assert_eq!(c.current(id), Some(StrategyIndex(2)));
    let d = c.log().iter().last().unwrap();
    assert_eq!(d.reason, "manual: pinned");
    assert_eq!(
        d.to_string(),
        "frame 99: physics: step_120 -> step_30 — manual: pinned"
    );
    // Back to adaptive, the pin still holds, even with headroom to upgrade. The overload
    // first goes on (step_30 measures 4x its 1.5 ms quote, as step_120 did: the controller
    // learns the rungs' relative costs under the same load), then the load falls 4x.
    c.set_mode(AdaptationMode::Adaptive);
    run_frames(&mut c, 100, 110, 6.0);
    run_frames(&mut c, 110, 400, 1.5);
    assert_eq!(c.current(id), Some(StrategyIndex(2)));
    // Unpinned, it upgrades.
    c.unpin(id);
    run_frames(&mut c, 400, 420, 1.5);
    assert_eq!(c.current(id), Some(StrategyIndex(0)));
    assert!(matches!(
        c.pin(id, "step_15"),
        Err(PinError::UnknownStrategy { .. })
    ));
}

/// A controller with one physics agent and `install` applied to it, running at 8 ms a frame:
/// within the 15 ms target at full quality. Then `pressured` reports 99 % use of the memory
/// `field` picks (host or GPU): the critical cap halves the multiplier the same tick, and the
/// downgrade's reason must start with `reason`.
fn memory_pressure_downgrades(
    install: impl FnOnce(&mut Controller),
    pressured: &FixedReadings,
    field: fn(&mut Readings) -> &mut Option<MemoryState>,
    reason: &str,
) {
    let mut c = Controller::new(ControllerConfig::default()).unwrap();
    let id = c
        .register(Box::new(Recorder {
            name: "physics",
            told: Default::default(),
        }))
        .unwrap();
    install(&mut c);
    run_frames(&mut c, 1, 10, 8.0);
    assert_eq!(c.current(id), Some(StrategyIndex(0)));
    let mut r = Readings::default();
    *field(&mut r) = Some(MemoryState {
        used_bytes: 99,
        budget_bytes: 100,
    });
    pressured.set(r);
    run_frames(&mut c, 10, 11, 8.0);
    assert!(c.multiplier() <= 0.5);
    let d = c
        .log()
        .iter()
        .last()
        .expect("memory pressure must downgrade");
    assert!(d.reason.starts_with(reason), "{}", d.reason);
}

#[test]
fn providers_are_polled_each_tick() {
    let fixed = FixedReadings::default();
    let installed = fixed.clone();
    memory_pressure_downgrades(
        |c| c.set_providers(Box::new(installed)),
        &fixed,
        |r| &mut r.memory,
        "memory: 99 % of budget",
    );
}

/// GPU memory is its own signal: near its budget it caps the multiplier like host memory, and
/// the downgrade names GPU memory. It comes from the engine's GPU memory provider or from the
/// game's readings alike.
#[test]
fn gpu_memory_pressure_downgrades_and_names_the_gpu() {
    let gpu = FixedReadings::default();
    let installed = gpu.clone();
    memory_pressure_downgrades(
        |c| c.set_gpu_memory_provider(Box::new(installed)),
        &gpu,
        |r| &mut r.gpu_memory,
        "GPU memory: 99 % of budget",
    );
    let device = FixedReadings::default();
    let installed = device.clone();
    memory_pressure_downgrades(
        |c| c.set_providers(Box::new(installed)),
        &device,
        |r| &mut r.gpu_memory,
        "GPU memory: 99 % of budget",
    );
}

/// A game's readings that report no GPU memory keep the engine's GPU memory signal (an engine
/// installs its own at build).
#[test]
fn set_providers_keeps_the_installed_gpu_memory_provider() {
    let gpu = FixedReadings::default();
    let mut c = Controller::new(ControllerConfig::default()).unwrap();
    c.register(Box::new(Recorder {
        name: "physics",
        told: Default::default(),
    }))
    .unwrap();
    c.set_gpu_memory_provider(Box::new(gpu.clone()));
    c.set_providers(Box::new(FixedReadings::default()));
    gpu.set(Readings {
        gpu_memory: Some(MemoryState {
            used_bytes: 99,
            budget_bytes: 100,
        }),
        ..Readings::default()
    });
    run_frames(&mut c, 1, 2, 8.0);
    assert!(c.multiplier() <= 0.5, "the GPU memory provider was dropped");
}

#[test]
fn bad_input_is_refused_with_a_typed_error() {
    let mut c = Controller::new(ControllerConfig::default()).unwrap();
    let id = c
        .register(Box::new(Recorder {
            name: "physics",
            told: Default::default(),
        }))
        .unwrap();
    let ok = FrameInput {
        frame: 1,
        cpu_ms: 5.0,
        gpu: None,
        samples: &[],
        step: None,
    };
    c.tick(&ok).unwrap();
    assert!(matches!(c.tick(&ok), Err(InputError::FrameOrder { .. })));
    let nan = FrameInput {
        frame: 2,
        cpu_ms: f64::NAN,
        ..ok
    };
    let e = c.tick(&nan).unwrap_err();
    assert!(e.to_string().contains("fix:"), "{e}");
    let bad = [AgentSample {
        agent: id,
        frame: 9,
        n: 1,
        ms: 1.0,
    }];
    let future = FrameInput {
        frame: 2,
        samples: &bad,
        ..ok
    };
    assert!(matches!(
        c.tick(&future),
        Err(InputError::FutureFrame { .. })
    ));
    // A refused input changes nothing: frame 2 is still next.
    c.tick(&FrameInput { frame: 2, ..ok }).unwrap();
    // Registration refusals.
    let dup = c.register(Box::new(Recorder {
        name: "physics",
        told: Default::default(),
    }));
    assert!(matches!(dup, Err(RegisterError::DuplicateName { .. })));
    let cfg = ControllerConfig {
        upgrade_margin: -1.0,
        ..ControllerConfig::default()
    };
    assert!(Controller::new(cfg).is_err());
}

#[test]
fn the_decision_log_is_bounded() {
    let mut sc = sim::standard(
        2000,
        vec![
            (200, 3.0),
            (400, 1.0),
            (600, 3.0),
            (800, 1.0),
            (1000, 3.0),
            (1200, 1.0),
        ],
        0.02,
        3,
    );
    sc.config.log_capacity = 4;
    let t = sim::run(&sc, Driver::Adaptive);
    // The trace keeps all (it reads each tick's fresh entries); the controller's ring keeps 4.
    assert!(t.decisions.len() > 4, "{}", t.decisions.len());
    let mut seen = 0;
    sim::run_with(&sc, Driver::Adaptive, |ctl, _| {
        assert!(ctl.log().len() <= 4);
        seen = ctl.log().total();
    });
    assert_eq!(seen as usize, t.decisions.len());
}

/// The demo's situation: one agent costs 90 % of the frame and is over the target, two
/// cost almost nothing. The costly agent moves first, and the near-zero agents are not
/// degraded while the costly one still runs its best strategy: degrading them cannot cover
/// the overrun.
#[test]
fn the_costly_agent_moves_first_and_near_zero_agents_are_left_alone() {
    use lanegraph::hooks::budget::{CostLaw, Pool, Quote, Strategy};
    use lanegraph_tools::budget_sim::SimAgentSpec;
    let s = |name: &str, q: u16, law: CostLaw, c: f64| Strategy::new(name, q, Quote::new(law, c));
    let spec = |name: &str, strategies: Vec<Strategy>, truth: Vec<f64>, law: CostLaw, n: u64| {
        SimAgentSpec {
            name: name.into(),
            pool: Pool::Cpu,
            weight: 1,
            strategies,
            law,
            truth,
            n,
            per_step: false,
        }
    };
    use CostLaw::*;
    let mut sc = sim::standard(600, vec![(1, 1.0)], 0.03, 9);
    sc.agents = vec![
        // 10,000 entities at 1.6 us each: 16 ms on a 15 ms target (90 % of a 16.7 ms frame
        // and then some); the cheaper rungs cost 60 % and 15 %.
        spec(
            "physics",
            vec![
                s("full", 3, Linear, 0.0016),
                s("every_2", 2, Linear, 0.00096),
                s("half", 1, Linear, 0.00024),
            ],
            vec![0.0016, 0.00096, 0.00024],
            Linear,
            10_000,
        ),
        spec(
            "render",
            vec![s("full", 2, Constant, 0.1), s("half", 1, Constant, 0.04)],
            vec![0.1, 0.04],
            Constant,
            1,
        ),
        spec(
            "asset",
            vec![s("4", 2, Constant, 0.05), s("1", 1, Constant, 0.0125)],
            vec![0.05, 0.0125],
            Constant,
            1,
        ),
    ];
    let t = sim::run(&sc, Driver::Adaptive);
    let first = t
        .decisions
        .first()
        .expect("over target: the controller acts");
    assert_eq!(first.agent_name, "physics", "first decision: {first}");
    // No near-zero agent was degraded while physics still ran its best strategy.
    let physics_moved_at = first.frame;
    for d in &t.decisions {
        if d.agent_name != "physics" && d.to > d.from {
            assert!(
                d.frame >= physics_moved_at,
                "{} degraded at frame {} before physics moved (frame {physics_moved_at}): {d}",
                d.agent_name,
                d.frame
            );
        }
    }
    // And once physics moved, the frame holds its target without touching the others.
    let degraded_others = t
        .decisions
        .iter()
        .filter(|d| d.agent_name != "physics" && d.to > d.from)
        .count();
    assert_eq!(degraded_others, 0, "{:?}", t.decisions);
}

/// A game's platform layer tells the engine the device is hot (`Engine::set_readings`, what it
/// calls on the OS's thermal notification): the next tick caps the controller and the
/// downgrade names the signal; a nominal reading lifts the cap.
#[test]
fn readings_a_game_pushes_through_the_engine_reach_its_controller() {
    use lanegraph::budget::{Agent, CostLaw, Quote, Strategy};
    use lanegraph::runtime::{AgentCost, Engine, RunSummary};

    struct Think;
    impl Agent for Think {
        fn name(&self) -> &str {
            "think"
        }
        fn strategies(&self) -> Vec<Strategy> {
            vec![
                Strategy::new("all", 3, Quote::new(CostLaw::Constant, 10.0)),
                Strategy::new("half", 2, Quote::new(CostLaw::Constant, 5.0)),
                Strategy::new("few", 1, Quote::new(CostLaw::Constant, 1.0)),
            ]
        }
    }
    let mut engine = Engine::builder().lockstep(true).build().unwrap();
    let id = engine
        .add_agent(Box::new(Think), AgentCost::Reported)
        .unwrap();
    let run = |engine: &mut Engine, frames: u32| {
        for _ in 0..frames {
            let s = engine.strategy(id).map_or(0, |s| s.get());
            engine.report_cost(id, 1, [10.0, 5.0, 1.0][s]);
            engine.frame().unwrap();
        }
    };
    run(&mut engine, 60);
    assert_eq!(
        engine.strategy(id).map(|s| s.get()),
        Some(0),
        "no reason to step down yet"
    );
    engine.set_readings(Readings {
        thermal: ThermalState::Critical,
        ..Readings::default()
    });
    run(&mut engine, 5);
    let summary = RunSummary::from_engine(&engine);
    let hot = summary
        .decisions
        .iter()
        .find(|d| d.reason.starts_with("thermal: Critical"))
        .unwrap_or_else(|| panic!("no thermal downgrade: {:#?}", summary.decisions));
    assert!(hot.frame > 60, "{hot:?}");
    assert!(engine.strategy(id).map_or(0, |s| s.get()) > 0);
    engine.set_readings(Readings::default());
    run(&mut engine, 600);
    assert_eq!(
        engine.strategy(id).map(|s| s.get()),
        Some(0),
        "back to the best strategy once the device cooled: {:#?}",
        RunSummary::from_engine(&engine).decisions
    );
}
