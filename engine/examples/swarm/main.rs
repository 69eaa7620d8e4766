//! `cargo run --release -p lanegraph --features savegame --example swarm [BODIES] [FRAMES]`: the second game
//! (see `game.rs`), headless, printing its run summary's key figures and its run log's size.

mod game;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let bodies = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(50_000);
    let frames = args.next().map(|a| a.parse()).transpose()?.unwrap_or(600);
    let mut swarm = game::build(&game::SwarmOptions {
        bodies,
        ..Default::default()
    })?;
    let rec = swarm
        .engine
        .observe(lanegraph::runtime::RunRecorder::default());
    swarm.run(frames)?;
    let summary =
        lanegraph::runtime::RunSummary::from_engine(&swarm.engine, swarm.engine.observer(rec));
    let step = swarm.engine.fixed_step().as_secs_f64();
    let score = swarm.engine.world().resource::<game::Score>()?;
    println!(
        "swarm: {} bodies, {} frames, {} steps of {:.4} s ({:.2} s simulated), {} collision passes, {} bumps, {} crowds",
        bodies, summary.frames, summary.steps, step, summary.steps as f64 * step, score.passes, score.bumps, score.crowds
    );
    println!("world hash {}", summary.world_hash);
    let c = swarm.engine.controller();
    if let (Some(cur), Some(list)) = (c.current(swarm.collide), c.strategies(swarm.collide)) {
        println!("collide runs `{}` at the end", list[cur.get()].name);
    }
    println!("{}", summary.target_verdict);
    for d in &summary.decisions {
        println!(
            "decision: frame {}: {} {} -> {}: {}",
            d.frame, d.agent, d.from, d.to, d.reason
        );
    }
    Ok(())
}
