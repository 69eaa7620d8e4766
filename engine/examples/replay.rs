//! Replay and determinism: a lockstep run with player input, a manual pin and a live budget
//! controller is written as a run log (the JSON a `summary.json` holds), then replayed on a
//! fresh engine with a different lane plan: the world hash must come out bit for bit the same.
//!
//! `cargo run -p lanegraph --example replay [FRAMES]` (default 240). Exits 1 on a mismatch.

use lanegraph::prelude::*;

/// A walker the player pushes with the arrow keys.
#[derive(Clone, Copy, Debug, Component, StateHash)]
#[component(domains(TRANSFORM))]
struct Walker {
    x: f32,
    v: f32,
}

/// Two ways to walk: precise (substeps) or coarse.
struct Gait;
impl Agent for Gait {
    fn name(&self) -> &str {
        "gait"
    }
    fn strategies(&self) -> Vec<Strategy> {
        vec![
            Strategy::new("precise", 2, Quote::new(CostLaw::Linear, 0.002)),
            Strategy::new("coarse", 1, Quote::new(CostLaw::Linear, 0.001)),
        ]
    }
}

/// The same game, built twice: once live, once to replay. The lane plan may differ.
fn build(lanes: &str) -> Result<(Engine, AgentId), Box<dyn std::error::Error>> {
    let mut engine = Engine::builder().lockstep(true).lanes_spec(lanes).build()?;
    let w = engine.world_mut();
    for i in 0..1000 {
        let e = w.spawn();
        w.insert(
            e,
            Walker {
                x: i as f32,
                v: 0.0,
            },
        )?;
    }
    let gait = std::sync::Arc::new(std::sync::OnceLock::<AgentId>::new());
    let mine = gait.clone();
    let walk = w.register_system(SystemDef::new("walk", 1.0, move |w: &mut World, ctx| {
        let push = w.input().is_down(KeyCode::ArrowRight) as i32
            - w.input().is_down(KeyCode::ArrowLeft) as i32;
        let substeps = match mine.get().and_then(|&g| w.agent_strategy(g)) {
            Some(StrategyIndex(1)) => 1,
            _ => 4,
        };
        let dt = ctx.dt() / substeps as f32;
        let n = w
            .query::<&mut Walker>()
            .map(|mut q| {
                q.for_each(|wk| {
                    for _ in 0..substeps {
                        wk.v += (push as f32 * 2.0 - wk.v * 0.1) * dt;
                        wk.x += wk.v * dt;
                    }
                })
            })
            .unwrap_or(0);
        ctx.report_workload(n as u64);
    }))?;
    let id = engine.add_agent(Box::new(Gait), AgentCost::System(walk))?;
    gait.set(id).map_err(|_| "set once")?;
    Ok((engine, id))
}

fn key(code: KeyCode, pressed: bool) -> InputEvent {
    InputEvent::Key {
        key: code.into(),
        pressed,
        repeat: false,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let frames: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(240);
    let (mut live, gait) = build("physics=1,render=1,asset=1")?;
    for f in 1..=frames {
        match f {
            20 => live.push_input(key(KeyCode::ArrowRight, true)),
            80 => live.push_input(key(KeyCode::ArrowRight, false)),
            120 => live.pin(gait, "coarse")?, // logged as a decision like the controller's own
            _ => {}
        }
        live.frame()?;
    }
    let summary = RunSummary::from_engine(&live);
    // What a game writes at the end of a run and reads back to replay it.
    let json = serde_json::to_string(&summary)?;
    let log: RunLog = serde_json::from_str(&json)?;
    println!(
        "live: {frames} frames, {} decisions, {} inputs, world hash {}",
        log.decisions.len(),
        log.inputs.len(),
        summary.world_hash
    );

    // A fresh engine on another lane plan; live input is ignored while the log replays.
    let (mut replay, _) = build("physics=2,render=1,asset=1")?;
    replay.replay(&log)?;
    for _ in 0..frames {
        replay.frame()?;
    }
    let hash = format!("{:#018x}", replay.world().state_hash());
    println!("replay: world hash {hash}");
    if hash != summary.world_hash {
        eprintln!("the replay diverged");
        std::process::exit(1);
    }
    Ok(())
}
