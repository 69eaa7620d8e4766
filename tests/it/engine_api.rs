//! The Engine API through its public surface: configuration errors, a small game with systems,
//! a custom agent and a custom lane, the game's own render view and pass (the epoch cache, an
//! owner that never waits on a blocked pass), and the asset lane's bad files.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use lanegraph::hooks::budget::{Agent, Quote, Strategy, StrategyIndex};
use lanegraph::hooks::{EngineHooks, RunRecorderHooks, RunSummaryHooks};
use lanegraph::jobs::LanePlan;
use lanegraph::runtime::encode_png;
use lanegraph::runtime::{
    AgentCost, Asset, AssetError, AssetLimits, AssetLoader, DrawOutput, Engine, EngineConfig,
    RenderPass, RenderSettings,
};
use lanegraph::systems::SystemDef;
use lanegraph::world::{Domain, DomainSet};

struct Ai;
impl Agent for Ai {
    fn name(&self) -> &str {
        "ai"
    }
    fn strategies(&self) -> Vec<Strategy> {
        vec![
            Strategy::new("all", 2, Quote::constant(0.5)),
            Strategy::new("half", 1, Quote::constant(0.25)),
        ]
    }
}

#[test]
fn a_bad_config_file_names_the_key_and_the_line() {
    let path = std::env::temp_dir().join(format!("lanegraph-cfg-{}.toml", std::process::id()));
    std::fs::write(&path, "[engine]\nvulkan = false\nfixed_step_hz = 0\n").unwrap();
    let e = EngineConfig::from_file(&path).unwrap_err();
    let msg = e.to_string();
    assert_eq!(
        (e.key.as_str(), e.line),
        ("engine.fixed_step_hz", Some(3)),
        "{msg}"
    );
    assert!(
        msg.contains(&path.display().to_string()) && msg.contains("fix:"),
        "{msg}"
    );
    std::fs::write(
        &path,
        "[engine]\ntarget_fps = 60.0\n[telemetry]\nspans = \"yes\"\n",
    )
    .unwrap();
    let e = EngineConfig::from_file(&path).unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("telemetry.spans", Some(4)));
    let _ = std::fs::remove_file(&path);
    // The builder validates too.
    let err = Engine::builder().target_fps(0.0).build().unwrap_err();
    assert!(err.to_string().contains("engine.target_fps"), "{err}");
    let err = Engine::builder()
        .lanes_spec("physics=x")
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("physics=x"), "{err}");
}

#[test]
fn a_small_game_with_a_custom_agent_and_lane() {
    let plan = LanePlan::from_spec("physics=1,render=1,asset=1,ai=1", &[0]).unwrap();
    let mut engine = Engine::builder()
        .lane_plan(plan)
        .lockstep(true)
        // The controller's capacity comes from wall-clock frame times: one stalled early frame
        // on a loaded machine would move every agent to its cheapest strategy. This test checks
        // wiring, not adaptation (the controller's own tests and sims cover that).
        .adaptive(false)
        .build()
        .unwrap();
    let runs = Arc::new(AtomicU64::new(0));
    let seen = runs.clone();
    let think = engine
        .world_mut()
        .register_system(SystemDef::new("think", 2.0, move |_, ctx| {
            seen.fetch_add(1, Ordering::Relaxed);
            ctx.report_workload(32);
        }))
        .unwrap();
    let by_system = engine
        .add_agent(Box::new(Ai), AgentCost::System(think))
        .unwrap();
    struct Ai2;
    impl Agent for Ai2 {
        fn name(&self) -> &str {
            "ai2"
        }
        fn strategies(&self) -> Vec<Strategy> {
            vec![Strategy::new("only", 1, Quote::constant(0.1))]
        }
    }
    let reported = engine
        .add_agent(Box::new(Ai2), AgentCost::Reported)
        .unwrap();
    let ai = engine.lanes().lane("ai").expect("the custom lane");
    let on_ai = Arc::new(AtomicU64::new(0));
    let count = on_ai.clone();
    engine.set_physics(move |_, step| {
        let count = &count;
        step.lanes
            .parallel_for(ai, 0..100, 10, |_, r| {
                count.fetch_add(r.len() as u64, Ordering::Relaxed);
            })
            .unwrap();
    });
    for _ in 0..5 {
        engine.report_cost(reported, 10, 0.05);
        let out = engine.frame().unwrap();
        assert_eq!(out.steps, 1, "lockstep: one step per frame");
    }
    assert_eq!(runs.load(Ordering::Relaxed), 5);
    assert_eq!(
        on_ai.load(Ordering::Relaxed),
        500,
        "the physics hook ran on the ai lane"
    );
    assert_eq!(engine.strategy(by_system), Some(StrategyIndex(0)));
    assert!(engine.strategy(reported).is_some());
    let rec = engine.run_record();
    assert_eq!(rec.recent().len(), 5);
    assert_eq!(rec.frames(), 5);
    let think = rec.systems().iter().find(|s| s.name == "think").unwrap();
    assert_eq!((think.runs, think.time_ns.count()), (5, 5));
}

/// Every engine keeps the run record (3,600 frames whole by default), and the summary reads
/// its figures from it; only the timing bench stops it (`EngineHooks::set_recording`), and
/// frames run then are missing from the record.
#[test]
fn every_engine_keeps_the_run_record_and_the_summary_reads_it() {
    assert_eq!(EngineConfig::default().record_frames, 3600);
    let mut engine = Engine::builder()
        .lanes_spec("physics=1,render=1,asset=1")
        .lockstep(true)
        .build()
        .unwrap();
    engine
        .world_mut()
        .register_system(SystemDef::new("tick", 1.0, |_, _| {}))
        .unwrap();
    for _ in 0..4 {
        engine.frame().unwrap();
    }
    assert_eq!(engine.run_record().frames(), 4, "every frame recorded");
    let summary = lanegraph::runtime::RunSummary::from_engine(&engine);
    assert!(summary.frame_ms.p50 > 0.0, "{:?}", summary.frame_ms);
    assert!(summary.target_ms > 0.0, "{}", summary.target_ms);
    assert!(
        summary.target_verdict.contains("of 4 frames"),
        "{}",
        summary.target_verdict
    );
    engine.set_recording(false);
    engine.frame().unwrap();
    assert_eq!((engine.run_record().frames(), engine.frames()), (4, 5));
}

#[test]
fn the_render_view_is_derived_again_only_when_its_domains_move() {
    // A 10 Hz step and frames far shorter than it: most frames run no step, so nothing the
    // view reads moves and the cached view is published again.
    let derived = Arc::new(AtomicU64::new(0));
    let d = derived.clone();
    let drawn = Arc::new(AtomicU64::new(0));
    let mut engine = Engine::builder()
        .fixed_step_hz(10)
        .render(
            DomainSet::of(Domain::STRUCTURE),
            move |w, v: &mut Vec<f32>| {
                d.fetch_add(1, Ordering::Relaxed);
                v.clear();
                v.resize(w.len(), 0.0);
            },
            CountingPass(drawn.clone()),
        )
        .build()
        .unwrap();
    engine
        .world_mut()
        .register_system(SystemDef::new("spawner", 1.0, |w, _| {
            w.spawn();
        }))
        .unwrap();
    for _ in 0..20 {
        engine.frame().unwrap();
    }
    let s = engine.view_cache_stats();
    assert_eq!(s.hits + s.misses, 20);
    assert_eq!(s.misses, derived.load(Ordering::Relaxed));
    assert!(s.hits > 0, "no cache hit in 20 sub-step frames: {s:?}");
    assert!(s.misses >= 1);
    engine.finish_render();
    let stats = engine.render_stats();
    assert!(stats.drawn >= 1, "the render lane drew");
    assert_eq!(
        stats.drawn,
        drawn.load(Ordering::Relaxed),
        "every draw reached the pass"
    );
    assert_eq!(stats.last_instances, engine.world().len() as u64);
    assert_eq!(s.extra_buffers, 0, "the view buffers were reused");
}

/// A pass that counts its draws and reports the view's length as its instances.
struct CountingPass(Arc<AtomicU64>);

impl RenderPass<Vec<f32>> for CountingPass {
    fn draw(
        &mut self,
        view: &Vec<f32>,
        _: &RenderSettings,
        out: &mut DrawOutput,
    ) -> Result<(), String> {
        self.0.fetch_add(1, Ordering::Relaxed);
        out.instances = view.len() as u64;
        Ok(())
    }
}

/// A pass whose first draw blocks until the test releases it (a GPU stuck on a frame slot).
struct BlockingPass {
    entered: std::sync::mpsc::Sender<()>,
    release: std::sync::mpsc::Receiver<()>,
    draws: Arc<AtomicU64>,
    released_by_test: Arc<std::sync::atomic::AtomicBool>,
}

impl RenderPass<u64> for BlockingPass {
    fn draw(&mut self, _: &u64, _: &RenderSettings, _: &mut DrawOutput) -> Result<(), String> {
        if self.draws.fetch_add(1, Ordering::SeqCst) == 0 {
            let _ = self.entered.send(());
            // Bounded: an owner that waits on the pass makes the test fail, not hang.
            let released = self
                .release
                .recv_timeout(std::time::Duration::from_secs(10))
                .is_ok();
            self.released_by_test.store(released, Ordering::SeqCst);
        }
        Ok(())
    }
}

#[test]
fn the_owner_runs_a_hundred_frames_while_the_render_pass_is_blocked() {
    let (entered_tx, entered) = std::sync::mpsc::channel();
    let (release, release_rx) = std::sync::mpsc::channel();
    let draws = Arc::new(AtomicU64::new(0));
    let released_by_test = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut engine = Engine::builder()
        .lanes_spec("physics=1,render=1,asset=1")
        .lockstep(true)
        .render(
            DomainSet::of(Domain::STRUCTURE),
            |w, v: &mut u64| *v = w.len() as u64,
            BlockingPass {
                entered: entered_tx,
                release: release_rx,
                draws: draws.clone(),
                released_by_test: released_by_test.clone(),
            },
        )
        .build()
        .unwrap();
    // One entity a step: the view changes every frame, so every frame publishes a new one.
    engine
        .world_mut()
        .register_system(SystemDef::new("spawner", 1.0, |w, _| {
            w.spawn();
        }))
        .unwrap();
    engine.frame().unwrap();
    entered
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the render pass started its first draw");
    for _ in 0..100 {
        engine.frame().unwrap();
    }
    // The owner published, read the render figures and handed over settings 100 times while
    // the pass was still inside its first draw.
    assert_eq!(
        draws.load(Ordering::SeqCst),
        1,
        "the pass was released early"
    );
    assert_eq!(engine.frames(), 101);
    release.send(()).unwrap();
    engine.finish_render();
    assert!(
        released_by_test.load(Ordering::SeqCst),
        "the pass timed out: the owner waited for it instead of running its frames"
    );
    let stats = engine.render_stats();
    assert!(
        stats.drawn >= 2,
        "the lane drew again once released: {stats:?}"
    );
    assert!(
        stats.skipped >= 98,
        "views published while the pass was blocked replaced each other: {stats:?}"
    );
}

#[test]
fn bad_assets_are_reported_and_skipped_while_the_game_goes_on() {
    let dir = std::env::temp_dir().join(format!("lanegraph-assets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = encode_png(2, 2, &[255u8; 16]).unwrap();
    std::fs::write(dir.join("good.png"), &good).unwrap();
    std::fs::write(dir.join("bad.png"), &good[..20]).unwrap();
    let mut engine = Engine::builder().lockstep(true).build().unwrap();
    for f in ["good.png", "bad.png", "absent.png"] {
        engine.request_asset(dir.join(f));
    }
    let t0 = std::time::Instant::now();
    while engine.asset_report().0.loaded + engine.asset_report().0.failed < 3 {
        engine.frame().unwrap();
        assert!(t0.elapsed().as_secs() < 30, "assets never completed");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let (totals, failures) = engine.asset_report();
    assert_eq!((totals.loaded, totals.failed), (1, 2));
    assert!(
        failures.iter().any(|f| f.contains("corrupt")),
        "{failures:?}"
    );
    assert!(
        failures.iter().any(|f| f.contains("missing")),
        "{failures:?}"
    );
    // The game goes on.
    engine.frame().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A game's own loader: a `.level` file decoded on the asset lane into the game's own type,
/// taken back on the owner; a file over the limit fails with a typed error, the game goes on.
#[test]
fn a_game_registers_its_own_loader_and_takes_what_it_loaded() {
    #[derive(Debug, PartialEq)]
    struct Level {
        rows: usize,
    }
    struct LevelLoader;
    impl AssetLoader for LevelLoader {
        fn decode(
            &self,
            _: &std::path::Path,
            bytes: &[u8],
            _: &AssetLimits,
        ) -> Result<Asset, AssetError> {
            Ok(Asset::Data(Arc::new(Level {
                rows: bytes.split(|&b| b == b'\n').count(),
            })))
        }
    }
    let dir = std::env::temp_dir().join(format!("lanegraph-levels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("one.level"), "#..#\n#..#\n####").unwrap();
    std::fs::write(dir.join("huge.level"), vec![b'#'; 4096]).unwrap();
    let mut engine = Engine::builder()
        .config(EngineConfig {
            asset_limits: AssetLimits {
                max_file_bytes: 1024,
                ..AssetLimits::default()
            },
            ..EngineConfig::default()
        })
        .lockstep(true)
        .asset_loader("level", LevelLoader)
        .build()
        .unwrap();
    engine.request_asset(dir.join("one.level"));
    engine.request_asset(dir.join("huge.level"));
    let t0 = std::time::Instant::now();
    while engine.asset_report().0.loaded + engine.asset_report().0.failed < 2 {
        engine.frame().unwrap();
        assert!(t0.elapsed().as_secs() < 30, "assets never completed");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let loaded: Vec<_> = engine.take_loaded().collect();
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].0, dir.join("one.level"));
    assert_eq!(
        loaded[0].1.downcast_ref::<Level>(),
        Some(&Level { rows: 3 })
    );
    assert_eq!(engine.take_loaded().count(), 0, "taken once");
    let (_, failures) = engine.asset_report();
    assert!(
        failures.iter().any(|f| f.contains("over the limit")),
        "{failures:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A pass slower than the frame: the render job must still hand the lane back between draws,
/// so the asset pipeline's upload nodes (which run on the render lane) get their turn.
#[test]
fn a_slow_render_pass_does_not_starve_the_uploads_on_its_lane() {
    struct Slow(Arc<AtomicU64>);
    impl RenderPass<u64> for Slow {
        fn draw(&mut self, _: &u64, _: &RenderSettings, _: &mut DrawOutput) -> Result<(), String> {
            std::thread::sleep(std::time::Duration::from_millis(2));
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
        fn upload(&mut self, _: &lanegraph::runtime::DecodedImage) -> Result<bool, String> {
            Ok(true)
        }
    }
    let dir = std::env::temp_dir().join(format!("lanegraph-slowpass-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let png = encode_png(2, 2, &[9u8; 16]).unwrap();
    let draws = Arc::new(AtomicU64::new(0));
    let mut engine = Engine::builder()
        .lanes_spec("physics=1,render=1,asset=1")
        .lockstep(true)
        .adaptive(false)
        .render(
            DomainSet::of(Domain::STRUCTURE),
            |w, v: &mut u64| *v = w.tick(),
            Slow(draws.clone()),
        )
        .build()
        .unwrap();
    engine
        .world_mut()
        .register_system(SystemDef::new("churn", 1.0, |w, _| {
            let e = w.spawn();
            w.despawn(e).unwrap();
        }))
        .unwrap();
    for i in 0..8 {
        let p = dir.join(format!("t{i}.png"));
        std::fs::write(&p, &png).unwrap();
        engine.request_asset(p);
    }
    let t0 = std::time::Instant::now();
    // Frames as fast as the owner can go: a new view is waiting after every draw.
    while engine.asset_report().0.loaded < 8 {
        engine.frame().unwrap();
        assert!(
            t0.elapsed().as_secs() < 20,
            "uploads starved behind the render job: {:?}, {} draws",
            engine.asset_report().0,
            draws.load(Ordering::Relaxed)
        );
    }
    engine.finish_render();
    assert_eq!(engine.render_stats().gpu_textures, 8);
    assert!(draws.load(Ordering::Relaxed) > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The budget gate on the library API: a system 4x over its budget is named, with its count
/// of error-level runs against the allowance.
#[test]
fn the_budget_gate_names_a_system_four_times_over_its_budget() {
    use lanegraph::runtime::RunSummary;
    let mut engine = Engine::builder()
        .lanes_spec("physics=1,render=1,asset=1")
        .lockstep(true)
        .adaptive(false)
        .target_fps(4.0)
        .build()
        .unwrap();
    // Budget 0.5 ms, runs at least 2 ms: 4x over, every run.
    engine
        .world_mut()
        .register_system(SystemDef::new("slow_ai", 0.5, |_, _| {
            let t0 = std::time::Instant::now();
            while t0.elapsed() < std::time::Duration::from_millis(2) {
                std::hint::spin_loop();
            }
        }))
        .unwrap();
    engine
        .world_mut()
        .register_system(SystemDef::new("quick", 100.0, |_, _| {}))
        .unwrap();
    for _ in 0..10 {
        engine.frame().unwrap();
    }
    let summary = RunSummary::from_engine(&engine);
    let slow = summary
        .detail()
        .systems
        .iter()
        .find(|s| s.name == "slow_ai")
        .unwrap();
    assert_eq!((slow.runs, slow.errors), (10, 10));
    assert!(slow.max_ms >= 2.0 && slow.p50_ms >= 1.9, "{slow:?}");
    let breaches = summary.budget_breaches(3);
    assert_eq!(breaches.len(), 1, "{breaches:?}");
    assert_eq!(breaches[0].what, "slow_ai");
    assert!(
        breaches[0].message.contains("10 times (allowed 3"),
        "{}",
        breaches[0].message
    );
    assert!(
        summary.budget_breaches(10).is_empty(),
        "10 allowed: within budget"
    );
}

/// The summary says in one sentence whether the run held its target, and when it did not,
/// whether cheaper strategies were left or every built-in agent already ran its cheapest.
#[test]
fn the_target_verdict_tells_held_from_missed_from_nothing_left() {
    use lanegraph::runtime::RunSummary;
    fn run(fps: f64, spin_ms: u64, cheapest: bool) -> String {
        let mut engine = Engine::builder()
            .lanes_spec("physics=1,render=1,asset=1")
            .builtin_agents(lanegraph_demo::agents::all())
            .lockstep(true)
            .adaptive(false)
            .target_fps(fps)
            .build()
            .unwrap();
        engine
            .world_mut()
            .register_system(SystemDef::new("work", 1000.0, move |_, _| {
                let t0 = std::time::Instant::now();
                while t0.elapsed() < std::time::Duration::from_millis(spin_ms) {
                    std::hint::spin_loop();
                }
            }))
            .unwrap();
        if cheapest {
            for id in engine.builtin_agents() {
                let last = engine.controller().strategies(id).unwrap().last().unwrap();
                let last = last.name.clone();
                engine.pin(id, &last).unwrap();
            }
        }
        for _ in 0..5 {
            engine.frame().unwrap();
        }
        RunSummary::from_engine(&engine).target_verdict
    }
    // 4 fps: a 250 ms budget, a frame of about nothing.
    let held = run(4.0, 0, false);
    assert!(held.starts_with("held:"), "{held}");
    // 1000 fps: a 1 ms budget, a frame of at least 5 ms.
    let missed = run(1000.0, 5, false);
    assert!(missed.starts_with("missed: frame p50 "), "{missed}");
    assert!(
        missed.contains("on the CPU, with cheaper strategies"),
        "{missed}"
    );
    let nothing_left = run(1000.0, 5, true);
    assert!(
        nothing_left.contains("no strategy can hold the target on this machine"),
        "{nothing_left}"
    );
}

/// Regression test: a panic in the game's render pass was caught and counted, but the render
/// lane's in-flight flag stayed set: nothing was drawn after it and `finish_render` waited its
/// 30 s. Now it costs that one frame's draw.
#[test]
fn a_render_pass_that_panics_once_costs_one_draw_not_the_run() {
    use lanegraph::runtime::{DrawOutput, RenderPass, RenderSettings};
    struct Flaky(u64);
    impl RenderPass<Vec<f32>> for Flaky {
        fn draw(
            &mut self,
            v: &Vec<f32>,
            _: &RenderSettings,
            out: &mut DrawOutput,
        ) -> Result<(), String> {
            self.0 += 1;
            if self.0 == 3 {
                panic!("driver hiccup");
            }
            out.instances = v.len() as u64;
            Ok(())
        }
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut engine = lanegraph_tests::engine_with_pass(Flaky(0), 16);
        for _ in 0..20 {
            engine.world_mut().spawn();
            engine.frame().unwrap();
            engine.finish_render();
        }
        let _ = tx.send(engine.render_stats());
    });
    let stats = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the render lane stopped after the pass panicked");
    assert_eq!(stats.panics, 1);
    assert_eq!(
        stats.drawn, 19,
        "every frame but the one that panicked was drawn"
    );
    assert!(
        stats
            .errors
            .iter()
            .any(|e| e.contains("panicked") && e.contains("driver hiccup")),
        "{:?}",
        stats.errors
    );
}

#[test]
fn set_adaptation_switches_the_controller_between_adapting_and_manual() {
    use lanegraph::budget::AdaptationMode;
    let mut e = Engine::builder().lockstep(true).build().unwrap();
    assert_eq!(e.controller().mode(), AdaptationMode::Adaptive);
    e.set_adaptation(AdaptationMode::Manual);
    e.frame().unwrap();
    assert_eq!(e.controller().mode(), AdaptationMode::Manual);
    e.set_adaptation(AdaptationMode::Adaptive);
    assert_eq!(e.controller().mode(), AdaptationMode::Adaptive);
}
