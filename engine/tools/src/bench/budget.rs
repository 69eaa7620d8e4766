//! The `budget` bench suite: the adaptive controller's settling figures, from the deterministic
//! simulator (`crate::budget_sim`), so every figure is reproducible bit for bit on any machine.
//!
//! Owns: the scenarios behind the figures and their names. Must never: assert on the figures
//! (the tests in `tests/tests/budget_*.rs` hold the bars) or read a real clock for a figure
//! other than `tick_us`.
//!
//! Cases (all on the standard scene: physics, ai, asset on the CPU, render on the GPU, 60 Hz):
//! - `step_settle_frames`: load x3 at frame 1,000: frames until the frame time is under the
//!   target and stays there for 60 frames.
//! - `step_missed_frames`: frames over the 16.7 ms budget in the 100 frames after the step,
//!   against the same run with no controller (every agent at its best).
//! - `step_flips`: most strategy changes by one agent between the step and frame 2,000.
//! - `step_multiplier_overshoot`: largest dip of the multiplier below its settled value, %.
//! - `release_over_target_frames`: load back to x1 at frame 2,000: frames over the target while
//!   quality climbs back (0 = no overshoot); `release_climb_frames`: frames until the full
//!   quality is back.
//! - `steady_flips`: strategy changes in 10,000 steady frames after settling (frame 300 on).
//! - `noisy_flips_per_min`: most changes by one agent per simulated minute, over 10 minutes of
//!   a load at the edge between two choices with 10 % noise and 1 % hitches.
//! - `mispriced_overrun_probes_per_30s`, `mispriced_flips_per_min`: `sim::mispriced_ladder`
//!   (a rung quoted 6.7x its cheapest sibling that truly costs 56x, 28 ms in a 16.7 ms budget)
//!   over 10 simulated minutes: upgrades undone within 120 frames (probes that overran) per
//!   30 s, and changes after settling per minute (goals: <= 1 each).
//! - `tick_us`: median wall time of one controller tick replaying the step scenario's recorded
//!   inputs (shared clock), against the same replay in manual mode (no arbitration).
//!
//! - `demo_trace_overrun_probes_per_min`, `demo_trace_flips_per_min`,
//!   `demo_trace_p99_over_budget`, `demo_trace_p50_over_target`, each for `2c` and `1c`: the
//!   demo's own ladder (its quotes, mispriced as the demo wrote them) over the cost trace a
//!   real demo run recorded on 2 cores and on one (`engine/tools/fixtures/demo_costs_*.trace`,
//!   `lanegraph demo --no-gpu --frames 1200 --record-costs FILE`), replayed back and forth for
//!   10 simulated minutes; the probes and flips are the run summary's `adaptation` figures
//!   (worst agent, per minute), the frame figures the simulated frame's p99 / budget and
//!   p50 / target.
//!
//! And on the real demo (these read the wall clock: they are this machine's figures):
//! - `demo_frame`: the demo with default flags but no GPU (1,200 frames: 20 s at 60 fps),
//!   `p50_over_target` = frame p50 / the controller's target and `p99_over_budget` = frame p99
//!   / the frame budget (goal: both <= 1).
//! - `replay_hash_equal`: an adaptive lockstep run of the demo, with pins at frame 0 and
//!   mid-run (`--pin`), replayed from its decision log on the default plan, on `physics=1,render=1,asset=1`, and (when run from the `lanegraph`
//!   binary with `taskset` present) on one core: 1 when the world hash is equal, else 0.

use super::{BenchError, BenchOptions, Figure};
use crate::budget_sim::{self as sim, Driver, Scenario, Trace};
use lanegraph::hooks::budget::{AdaptationMode, Pool, Strategy};
use lanegraph::hooks::ControllerDriver;
use lanegraph::runtime::DecisionEntry;
use lanegraph_jobs::clock;

const SUITE: &str = "budget";

/// The step scenario: x3 at 1,000, back to x1 at 2,000 (3 % noise).
pub fn step_scenario() -> Scenario {
    sim::standard(3000, vec![(1000, 3.0), (2000, 1.0)], 0.03, 1)
}

/// The steady scenario: 10,000 frames at x2 load (2 % noise).
pub fn steady_scenario() -> Scenario {
    sim::standard(10_000, vec![(1, 2.0)], 0.02, 2)
}

/// The noisy scenario: `minutes` simulated minutes at the edge between two choices, 10 % noise,
/// 1 % chance per frame of a 4 ms hitch.
pub fn noisy_scenario(minutes: u64) -> Scenario {
    let mut s = sim::standard(minutes * 3600 + 300, vec![(1, 2.2)], 0.10, 3);
    s.hitch_chance = 0.01;
    s.hitch_ms = 4.0;
    s
}

/// Changes by the busiest agent in `[from, to)`.
pub fn max_changes(t: &Trace, agents: usize, from: u64, to: u64) -> usize {
    t.changes_per_agent(agents, from, to)
        .into_iter()
        .max()
        .unwrap_or(0)
}

/// Frames from `from` until the quality sum is back to `full` and stays for 60 frames.
pub fn climb_frames(t: &Trace, from: u64, full: u32) -> Option<u64> {
    let mut run = 0;
    for f in t.frames.iter().filter(|f| f.frame >= from) {
        if f.quality == full {
            run += 1;
            if run == 60 {
                return Some(f.frame + 1 - 60 - from);
            }
        } else {
            run = 0;
        }
    }
    None
}

/// Runs the suite.
pub fn run(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    let fig =
        |case: &str, metric: &str, unit: &str, v: f64| Figure::new(SUITE, case, 1, metric, unit, v);
    let mut out = Vec::new();

    let sc = step_scenario();
    let agents = sc.agents.len();
    let (t, recording) = sim::run_recorded(&sc);
    let fixed = sim::run(&sc, Driver::Fixed);
    let settle = t
        .settle_frames(1000, 60)
        .ok_or_else(|| BenchError::Failed {
            suite: SUITE,
            why: "the step scenario never settled under the target".into(),
        })?;
    out.push(fig("step_settle_frames", "frames", "count", settle as f64));
    out.push(
        fig(
            "step_missed_frames",
            "frames",
            "count",
            t.missed_frames(1000, 1100) as f64,
        )
        .with_baseline("no controller", fixed.missed_frames(1000, 1100) as f64),
    );
    out.push(fig(
        "step_flips",
        "changes_per_agent",
        "count",
        max_changes(&t, agents, 1000, 2000) as f64,
    ));
    out.push(fig(
        "step_multiplier_overshoot",
        "overshoot",
        "%",
        100.0 * t.multiplier_overshoot(1000, 2000),
    ));
    out.push(fig(
        "release_over_target_frames",
        "frames",
        "count",
        t.over_target_frames(2001, 3001) as f64,
    ));
    let full: u32 = sc
        .agents
        .iter()
        .map(|a| {
            a.strategies
                .iter()
                .map(|s| s.quality as u32)
                .max()
                .unwrap_or(0)
        })
        .sum();
    if let Some(c) = climb_frames(&t, 2000, full) {
        out.push(fig("release_climb_frames", "frames", "count", c as f64));
    }

    // The controller's own cost: the step run's recorded inputs replayed into a fresh
    // controller (3,000 ticks, 8 arbitrations), against the same replay in manual mode
    // (heuristics, PID and calibration, no arbitration). Median of 5 replays each.
    let time_replay = |manual: bool| -> Result<f64, BenchError> {
        let mut runs = Vec::new();
        for _ in 0..5 {
            let mut c = sim::controller_for(&sc);
            if manual {
                c.set_mode(AdaptationMode::Manual);
            }
            let t0 = clock::now();
            c.replay(&recording).map_err(|e| BenchError::Failed {
                suite: SUITE,
                why: e.to_string(),
            })?;
            runs.push(clock::now().ns_since(t0) as f64 / recording.frames.len() as f64 / 1000.0);
        }
        runs.sort_by(f64::total_cmp);
        Ok(runs[runs.len() / 2])
    };
    let adaptive_us = time_replay(false)?;
    let manual_us = time_replay(true)?;
    out.push(
        fig("tick_us", "us_per_tick", "us", adaptive_us)
            .with_baseline("manual mode (no arbitration)", manual_us),
    );

    let sc = steady_scenario();
    let t = sim::run(&sc, Driver::Adaptive);
    out.push(fig(
        "steady_flips",
        "changes_after_settling",
        "count",
        t.decisions.iter().filter(|d| d.frame >= 300).count() as f64,
    ));

    let minutes = if opts.quick { 10 } else { 60 };
    let sc = noisy_scenario(minutes);
    let t = sim::run(&sc, Driver::Adaptive);
    let worst = max_changes(&t, agents, 300, sc.frames + 1);
    out.push(fig(
        "noisy_flips_per_min",
        "changes_per_agent_per_min",
        "count",
        worst as f64 / minutes as f64,
    ));
    // A ladder whose quote is 8x off (the demo's physics on a slow 2-vCPU machine): probes of
    // the rung that does not fit, and flips after settling, over 10 simulated minutes at steady
    // load.
    let minutes = 10u64;
    let sc = sim::mispriced_ladder(minutes * 3600, 7);
    let t = sim::run(&sc, Driver::Adaptive);
    let mine: Vec<&lanegraph::hooks::budget::Decision> = t.decisions.iter().collect();
    let probes = mine
        .windows(2)
        .filter(|w| {
            w[0].frame >= 300 && w[0].to.get() < w[0].from.get() && w[1].frame <= w[0].frame + 120
        })
        .count();
    out.push(fig(
        "mispriced_overrun_probes_per_30s",
        "probes",
        "count",
        probes as f64 / (minutes as f64 * 2.0),
    ));
    out.push(fig(
        "mispriced_flips_per_min",
        "changes_after_settling",
        "count",
        t.decisions.iter().filter(|d| d.frame >= 300).count() as f64 / minutes as f64,
    ));
    demo_trace_figures(&mut out)?;
    demo_figures(&mut out)?;
    Ok(out)
}

/// The cost traces the `demo_trace_*` cases replay: a real `lanegraph demo --no-gpu --frames
/// 1200 --record-costs FILE` run on 2 cores and one under `taskset -c 0` (a missing file fails
/// the build, naming it; a damaged one fails the bench, naming its line).
pub const DEMO_TRACES: [(&str, &str); 2] = [
    ("2c", include_str!("../../fixtures/demo_costs_2c.trace")),
    ("1c", include_str!("../../fixtures/demo_costs_1c.trace")),
];

/// Simulated minutes each trace is replayed for (back and forth: `CostTrace::index_of`).
pub const DEMO_TRACE_MINUTES: u64 = 10;

/// The demo's agents as its controller declares them (names, pools, strategies with the
/// demo's own quotes), from an engine built as the demo builds it without a GPU.
fn demo_ladders() -> Result<Vec<(String, Pool, Vec<Strategy>)>, BenchError> {
    let failed = |why: String| BenchError::Failed { suite: SUITE, why };
    let config = lanegraph::runtime::EngineConfig {
        vulkan: false,
        ..Default::default()
    };
    let engine = lanegraph::runtime::Engine::builder()
        .config(config)
        .builtin_agents(lanegraph_demo::agents::all())
        .lockstep(true)
        .build()
        .map_err(|e| failed(e.to_string()))?;
    let c = engine.controller();
    Ok(c.agent_ids()
        .filter_map(|id| {
            Some((
                c.agent_name(id)?.to_string(),
                c.pool(id)?,
                c.strategies(id)?.to_vec(),
            ))
        })
        .collect())
}

/// What a traced run of the demo's ladder shows (module docs, `demo_trace_*`).
#[derive(Debug, Clone)]
pub struct DemoTraceFigures {
    /// The worst agent's overrun probes per simulated minute.
    pub probes_per_min: f64,
    /// The worst agent's changes after its first settle per simulated minute.
    pub flips_per_min: f64,
    /// Simulated frame p99 / the frame budget.
    pub p99_over_budget: f64,
    /// Simulated frame p50 / the controller's median target.
    pub p50_over_target: f64,
    /// Every decision of the run, for a reader of a missed figure.
    pub decisions: Vec<lanegraph::hooks::budget::Decision>,
}

/// The demo's real ladder, its quotes as mispriced as the demo wrote them, over a recorded
/// trace's text for `minutes` simulated minutes, read with the run summary's own
/// `adaptation` figures.
///
/// # Errors
/// The trace cannot be read, or does not match the demo's agents (record it again).
pub fn demo_trace(text: &str, minutes: u64) -> Result<DemoTraceFigures, BenchError> {
    use lanegraph::hooks::budget::cost_trace::CostTrace;
    let failed = |why: String| BenchError::Failed { suite: SUITE, why };
    let trace = CostTrace::parse(text).map_err(|e| failed(e.to_string()))?;
    let frames = minutes * 3600;
    let (sc, left_out) =
        sim::traced(&trace, &demo_ladders()?, frames).map_err(|e| failed(e.to_string()))?;
    for why in left_out {
        eprintln!("# budget: demo_trace: left out {why}");
    }
    let t = sim::run(&sc, Driver::Adaptive);
    let entries: Vec<DecisionEntry> = t
        .decisions
        .iter()
        .map(|d| DecisionEntry {
            frame: d.frame,
            agent: d.agent_name.clone(),
            from: d.from_name.clone(),
            to: d.to_name.clone(),
            reason: d.reason.clone(),
        })
        .collect();
    let settle_frames = (2000.0 / trace.budget_ms).round() as u64;
    let a = lanegraph::hooks::adaptation_of(
        sc.agents.iter().map(|a| a.name.as_str()),
        &entries,
        frames,
        settle_frames,
        0,
        true,
    );
    let worst = |f: fn(&lanegraph::hooks::AgentAdaptation) -> u64| {
        a.agents.values().map(f).max().unwrap_or(0) as f64 / minutes as f64
    };
    let sorted = |f: fn(&sim::FrameRecord) -> f64| {
        let mut v: Vec<f64> = t.frames.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let (ms, targets) = (sorted(|f| f.frame_ms), sorted(|f| f.target_ms));
    let pct = |v: &[f64], p: usize| v[(v.len() * p / 100).min(v.len() - 1)];
    Ok(DemoTraceFigures {
        probes_per_min: worst(|a| a.overrun_probes),
        flips_per_min: worst(|a| a.flips_after_settling),
        p99_over_budget: pct(&ms, 99) / trace.budget_ms,
        p50_over_target: pct(&ms, 50) / pct(&targets, 50).max(1e-9),
        decisions: t.decisions,
    })
}

/// The `demo_trace_*` rows, for each trace (module docs).
fn demo_trace_figures(out: &mut Vec<Figure>) -> Result<(), BenchError> {
    for (tag, text) in DEMO_TRACES {
        let f = demo_trace(text, DEMO_TRACE_MINUTES).map_err(|e| BenchError::Failed {
            suite: SUITE,
            why: format!("demo_costs_{tag}.trace: {e}"),
        })?;
        let row = |case: &str, metric: &str, unit: &str, v: f64| {
            Figure::new(SUITE, format!("{case} {tag}"), 1, metric, unit, v)
        };
        out.push(row(
            "demo_trace_overrun_probes_per_min",
            "probes_per_agent_per_min",
            "count",
            f.probes_per_min,
        ));
        out.push(row(
            "demo_trace_flips_per_min",
            "flips_after_settling_per_agent_per_min",
            "count",
            f.flips_per_min,
        ));
        out.push(row(
            "demo_trace_p99_over_budget",
            "ratio",
            "ratio",
            f.p99_over_budget,
        ));
        out.push(row(
            "demo_trace_p50_over_target",
            "ratio",
            "ratio",
            f.p50_over_target,
        ));
    }
    Ok(())
}

/// The `demo_frame` and `replay_hash_equal` cases (see the module docs).
fn demo_figures(out: &mut Vec<Figure>) -> Result<(), BenchError> {
    use lanegraph_demo::{self as demo, DemoOptions};
    let failed = |why: String| BenchError::Failed { suite: SUITE, why };
    let quiet = |o: DemoOptions| DemoOptions {
        out: None,
        no_gpu: true,
        progress: false,
        ..o
    };
    let run = demo::run(&quiet(DemoOptions {
        frames: Some(1200),
        ..DemoOptions::default()
    }))
    .map_err(|e| failed(e.to_string()))?;
    let s = &run.summary.run;
    let fig = |metric: &str, v: f64| Figure::new(SUITE, "demo_frame", 1, metric, "ratio", v);
    out.push(fig(
        "p50_over_target",
        s.frame_ms.p50 / s.target_ms.max(1e-9),
    ));
    out.push(fig(
        "p99_over_budget",
        s.frame_ms.p99 / s.frame_budget_ms.max(1e-9),
    ));

    // A recording with decisions of every source in it: a 1 ms budget makes the controller
    // act on render, and two manual pins (physics before the first frame, asset mid-run) are
    // logged beside its decisions.
    let pin = |s: &str| s.parse::<demo::Pin>().map_err(failed);
    let recorded = demo::run(&quiet(DemoOptions {
        frames: Some(120),
        entities: 20_000,
        target_fps: Some(1000.0),
        pace: false,
        pins: vec![pin("physics=detail_4_8@0")?, pin("asset=2_per_frame@60")?],
        ..DemoOptions::default()
    }))
    .map_err(|e| failed(e.to_string()))?;
    let pinned = recorded
        .summary
        .run
        .decisions
        .iter()
        .filter(|d| d.reason.starts_with("manual: pinned"))
        .count();
    if pinned < 2 {
        return Err(failed(format!(
            "the recorded run logged {pinned} pins, not the 2 asked for"
        )));
    }
    let json = serde_json::to_string(&recorded.summary).expect("a summary serialises");
    let want = recorded.summary.run.world_hash.clone();
    for (plan, lanes) in [
        ("default", None),
        (
            "physics=1,render=1,asset=1",
            Some("physics=1,render=1,asset=1"),
        ),
    ] {
        let replay = demo::replay_of(&json).map_err(|e| failed(e.to_string()))?;
        let again = demo::run(&quiet(DemoOptions {
            lanes: lanes.map(str::to_string),
            pace: false,
            ..replay.options
        }))
        .map_err(|e| failed(e.to_string()))?;
        let equal = again.summary.run.world_hash == want;
        out.push(Figure::new(
            SUITE,
            format!("replay_hash_equal {plan}"),
            1,
            "equal",
            "bool",
            f64::from(u8::from(equal)),
        ));
    }
    // One core: the `lanegraph` binary itself under `taskset -c 0`.
    let exe = std::env::current_exe().ok();
    let is_cli = exe
        .as_ref()
        .and_then(|p| p.file_stem())
        .is_some_and(|n| n == "lanegraph");
    let taskset = std::process::Command::new("taskset")
        .arg("--version")
        .output();
    match (exe, is_cli, taskset) {
        (Some(exe), true, Ok(_)) => {
            let dir = std::env::temp_dir().join(format!("lanegraph-bench-replay-{}", std::process::id()));
            std::fs::create_dir_all(&dir).map_err(|e| failed(e.to_string()))?;
            let path = dir.join("summary.json");
            std::fs::write(&path, &json).map_err(|e| failed(e.to_string()))?;
            let status = std::process::Command::new("taskset")
                .args(["-c", "0"])
                .arg(&exe)
                .args(["replay", "--no-gpu", "--out"])
                .arg(dir.join("out"))
                .arg(&path)
                .output()
                .map_err(|e| failed(e.to_string()))?;
            let _ = std::fs::remove_dir_all(&dir);
            out.push(Figure::new(
                SUITE,
                "replay_hash_equal one_core",
                1,
                "equal",
                "bool",
                f64::from(u8::from(status.status.success())),
            ));
        }
        _ => eprintln!(
            "# budget: replay_hash_equal one_core not measured: needs the lanegraph binary and taskset"
        ),
    }
    Ok(())
}
