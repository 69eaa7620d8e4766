//! `cargo run --release -p lanegraph --features savegame --example swarm [BODIES] [FRAMES] [OUT_DIR] [--target-fps FPS]`:
//! the second game (see `game.rs`), headless, printing its run summary's key figures; with
//! `OUT_DIR`, it also writes its `summary.json` (what `Engine::replay` replays) and its
//! `report.html` (`lanegraph-report`, as the demo's) there. `--target-fps` sets the frame
//! rate its controller holds (60 by default).

mod game;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut all: Vec<String> = std::env::args().skip(1).collect();
    let mut target_fps = 60.0;
    if let Some(i) = all.iter().position(|a| a == "--target-fps") {
        let v = all
            .get(i + 1)
            .ok_or("--target-fps needs a frame rate, e.g. --target-fps 120")?;
        target_fps = v.parse()?;
        all.drain(i..i + 2);
    }
    let mut args = all.into_iter();
    let bodies = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(50_000);
    let frames = args.next().map(|a| a.parse()).transpose()?.unwrap_or(600);
    let mut swarm = game::build(&game::SwarmOptions {
        bodies,
        target_fps,
        ..Default::default()
    })?;
    swarm.run(frames)?;
    let summary = lanegraph::runtime::RunSummary::from_engine(&swarm.engine);
    let step = swarm.engine.world().fixed_step().as_secs_f64();
    let score = swarm.engine.world().resource::<game::Score>()?;
    println!(
        "swarm: {} bodies, {} frames, {} steps of {:.4} s ({:.2} s simulated), {} collision passes, {} bumps, {} contacts, {} crowds",
        bodies, summary.frames, summary.steps, step, summary.steps as f64 * step, score.passes, score.bumps, score.contacts, score.crowds
    );
    println!(
        "frame p50 {:.2} ms, p99 {:.2} ms against a {:.2} ms budget",
        summary.frame_ms.p50, summary.frame_ms.p99, summary.frame_budget_ms
    );
    println!("world hash {}", summary.world_hash);
    let c = swarm.engine.controller();
    let now = swarm.engine.strategy(swarm.collide);
    if let (Some(cur), Some(list)) = (now, c.strategies(swarm.collide)) {
        println!("collide runs `{}` at the end", list[cur.get()].name);
    }
    println!("{}", summary.target_verdict);
    if let Some(out) = args.next() {
        let out = std::path::PathBuf::from(out);
        std::fs::create_dir_all(&out)?;
        std::fs::write(
            out.join("summary.json"),
            serde_json::to_string_pretty(&summary)?,
        )?;
        let data = lanegraph_report::ReportData::from_engine(
            &swarm.engine,
            "swarm",
            &format!(
                "{} bodies, {} frames\n{}",
                bodies, summary.frames, summary.target_verdict
            ),
        );
        std::fs::write(
            out.join("report.html"),
            lanegraph_report::render_html(&data),
        )?;
        println!("wrote {}/summary.json and report.html", out.display());
    }
    for d in &summary.decisions {
        println!(
            "decision: frame {}: {} {} -> {}: {}",
            d.frame, d.agent, d.from, d.to, d.reason
        );
    }
    Ok(())
}
