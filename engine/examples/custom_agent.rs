//! A custom budget agent: the game's "think" system offers three strategies, and the budget
//! controller picks the best one that holds the frame target, on this machine, as it runs.
//!
//! `cargo run -p lanegraph --example custom_agent [FRAMES]` (default 120). The best strategy's
//! work (it sleeps, standing in for AI work) is twice the frame budget, so the controller must
//! step down; prints every decision and exits 1 if it never did.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use lanegraph::prelude::*;

/// How many AI agents think each step, and what each costs.
struct Thinkers;

impl Agent for Thinkers {
    fn name(&self) -> &str {
        "think"
    }
    fn strategies(&self) -> Vec<Strategy> {
        // Best first: a quality rank (higher is better) and a quote, in ms per unit of the
        // workload the system reports; the controller fits the coefficient from what it measures.
        vec![
            Strategy::new("all", 3, Quote::new(CostLaw::Linear, 0.5)),
            Strategy::new("half", 2, Quote::new(CostLaw::Linear, 0.25)),
            Strategy::new("few", 1, Quote::new(CostLaw::Linear, 0.05)),
        ]
    }
    fn initial_workload(&self) -> u64 {
        64
    }
}

/// Milliseconds of "thinking" per strategy (index 0 is the best).
const THINK_MS: [u64; 3] = [32, 16, 3];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let frames: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(120);
    let mut engine = Engine::builder().lockstep(true).target_fps(60.0).build()?;

    // The agent's id exists once it is added, after the system it is costed by.
    let agent: Arc<OnceLock<AgentId>> = Arc::default();
    let mine = agent.clone();
    let think = engine.world_mut().register_system(SystemDef::new(
        "think",
        10.0,
        move |w: &mut World, ctx| {
            // The strategy in force this step, applied by the engine at the frame boundary.
            let s = mine
                .get()
                .and_then(|&id| w.agent_strategy(id))
                .map_or(0, |s| usize::from(s.0));
            std::thread::sleep(Duration::from_millis(THINK_MS[s]));
            ctx.report_workload(64); // the agent's workload: 64 thinkers
        },
    ))?;
    let id = engine.add_agent(Box::new(Thinkers), AgentCost::System(think))?;
    agent.set(id).map_err(|_| "set once")?;

    for _ in 0..frames {
        engine.frame()?;
    }
    let summary = RunSummary::from_engine(&engine);
    for d in &summary.decisions {
        println!(
            "frame {:4}: {} {} -> {} ({})",
            d.frame, d.agent, d.from, d.to, d.reason
        );
    }
    let now = engine.strategy(id).map_or(0, |s| usize::from(s.0));
    println!(
        "{frames} frames: frame p50 {:.1} ms against a {:.1} ms budget; `think` runs `{}`",
        summary.frame_ms.p50,
        summary.frame_budget_ms,
        Thinkers.strategies()[now].name
    );
    if now == 0 || summary.decisions.is_empty() {
        eprintln!("the controller never stepped down from a strategy that cannot hold the target");
        std::process::exit(1);
    }
    Ok(())
}
