//! Pools that answer for their own time, and a dead band that ignores small swings: a GPU-bound
//! frame lowers what costs GPU time and leaves a CPU agent where its own pool puts it; a load
//! swinging by +-1.5 % changes nothing, one swinging by +-20 % is followed.

use lanegraph::hooks::budget::{CostLaw, Pool, Quote, Strategy};
use lanegraph_tools::budget_sim::{self as sim, Driver, Scenario, SimAgentSpec, Trace};

/// The strategy index each agent ends on (its best when it never moved).
fn final_rungs(sc: &Scenario, t: &Trace) -> Vec<u8> {
    (0..sc.agents.len())
        .map(|k| {
            t.decisions
                .iter()
                .rev()
                .find(|d| d.agent == sim::agent_id(k))
                .map_or(0, |d| d.to.get() as u8)
        })
        .collect()
}

fn log(t: &Trace) -> String {
    lanegraph_tests::decision_lines(&t.decisions)
}

/// A ladder of `rungs` strategies, best first, quoted right: rung `k` costs `top_ms * (1 - k *
/// step)` at `n` units of work.
fn ladder(name: &str, pool: Pool, top_ms: f64, rungs: usize, step: f64, n: u64) -> SimAgentSpec {
    let mut strategies = Vec::new();
    let mut truth = Vec::new();
    for k in 0..rungs {
        let ms = top_ms * (1.0 - k as f64 * step);
        strategies.push(Strategy::new(
            format!("{name}_{k}"),
            (rungs - k) as u16,
            Quote::new(CostLaw::Linear, ms / n as f64),
        ));
        truth.push(ms / n as f64);
    }
    SimAgentSpec {
        name: name.into(),
        pool,
        weight: 1,
        strategies,
        law: CostLaw::Linear,
        truth,
        n,
        per_step: false,
    }
}

#[test]
fn a_gpu_bound_frame_leaves_a_cpu_agent_at_the_rung_its_own_pool_affords() {
    // The CPU agent's best rung costs 8 ms of a 16.7 ms budget: it fits with room to spare.
    // The GPU agent's cheapest rung costs 30 ms: nothing the controller does makes the GPU fit.
    let cpu = ladder("physics", Pool::Cpu, 8.0, 4, 0.2, 10_000);
    let gpu = ladder("render", Pool::Gpu, 60.0, 3, 0.25, 10_000);
    let mut sc = Scenario::one_agent(cpu, 3_600, 7);
    sc.agents.push(gpu);
    sc.gpu_overhead_ms = 1.0;
    let t = sim::run(&sc, Driver::Adaptive);
    let rungs = final_rungs(&sc, &t);
    assert_eq!(
        rungs[1],
        2,
        "the GPU agent should sit at its cheapest rung\n{}",
        log(&t)
    );
    assert_eq!(
        rungs[0],
        0,
        "GPU pressure moved a CPU agent whose own pool has room\n{}",
        log(&t)
    );
    assert!(
        t.decisions.iter().all(|d| d.agent != sim::agent_id(0)),
        "the CPU agent changed under GPU pressure\n{}",
        log(&t)
    );
}

#[test]
fn a_cpu_bound_frame_leaves_a_gpu_agent_at_the_rung_its_own_pool_affords() {
    let cpu = ladder("physics", Pool::Cpu, 60.0, 3, 0.25, 10_000);
    let gpu = ladder("render", Pool::Gpu, 8.0, 4, 0.2, 10_000);
    let mut sc = Scenario::one_agent(cpu, 3_600, 11);
    sc.agents.push(gpu);
    let t = sim::run(&sc, Driver::Adaptive);
    let rungs = final_rungs(&sc, &t);
    assert_eq!(rungs[0], 2, "{}", log(&t));
    assert_eq!(
        rungs[1],
        0,
        "CPU pressure moved a GPU agent whose own pool has room\n{}",
        log(&t)
    );
}

/// A continuous-like strategy (a resolution scale in 16 steps of 3 % of its cost) under a
/// load that swings as a sine of `amplitude` with a period of `period` frames.
fn swinging(amplitude: f64, period: u64, seed: u64) -> Scenario {
    let agent = ladder("scale", Pool::Cpu, 20.0, 16, 0.03, 10_000);
    let mut sc = Scenario::one_agent(agent, 7_200, seed);
    sc.noise = 0.01;
    sc.load = (0..sc.frames)
        .step_by(4)
        .map(|f| {
            let phase = f as f64 / period as f64 * std::f64::consts::TAU;
            (f, 1.0 + amplitude * phase.sin())
        })
        .collect();
    sc
}

#[test]
fn a_load_swinging_by_one_and_a_half_percent_changes_nothing_once_settled() {
    for seed in [1, 2, 3] {
        let sc = swinging(0.015, 240, seed);
        let t = sim::run(&sc, Driver::Adaptive);
        // Settled: the first 20 s find the rung; after them, nothing moves.
        let late: Vec<_> = t.decisions.iter().filter(|d| d.frame >= 1_200).collect();
        assert!(
            late.is_empty(),
            "seed {seed}: {} changes under a +-1.5 % swing\n{}",
            late.len(),
            log(&t)
        );
    }
}

#[test]
fn a_load_swinging_by_twenty_percent_is_followed_down_and_up() {
    for seed in [1, 2, 3] {
        let sc = swinging(0.20, 1_200, seed);
        let t = sim::run(&sc, Driver::Adaptive);
        let late: Vec<_> = t.decisions.iter().filter(|d| d.frame >= 1_200).collect();
        let downs = late.iter().filter(|d| d.to.get() > d.from.get()).count();
        let ups = late.iter().filter(|d| d.to.get() < d.from.get()).count();
        assert!(
            downs >= 3 && ups >= 3,
            "seed {seed}: a +-20 % swing over 20 s gave {downs} steps down and {ups} up\n{}",
            log(&t)
        );
        // Followed, not chased: the frame holds its budget.
        let mut ms: Vec<f64> = t.frames[1_200..].iter().map(|f| f.frame_ms).collect();
        ms.sort_by(f64::total_cmp);
        let p99 = ms[ms.len() * 99 / 100];
        assert!(
            p99 <= t.budget_ms,
            "seed {seed}: p99 {p99:.1} ms over the {:.1} ms budget\n{}",
            t.budget_ms,
            log(&t)
        );
    }
}
