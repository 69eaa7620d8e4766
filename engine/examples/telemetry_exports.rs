//! Telemetry exports and the live view: a game's own metrics and spans beside the engine's,
//! scraped live over HTTP while the game runs, then written as a Chrome trace (Perfetto), an
//! OpenMetrics file and the run summary's JSON.
//!
//! `cargo run -p lanegraph --features full --example telemetry_exports [OUT_DIR] [--puffin ADDR]`
//! (default OUT_DIR: a fresh folder under the system temp dir). `--puffin 127.0.0.1:8585` also
//! streams every frame to `puffin_viewer --url 127.0.0.1:8585`. Exits 1 if an export lacks
//! the game's own metric or span.

use std::io::{Read, Write};
use std::net::TcpStream;

use lanegraph::prelude::*;
use lanegraph::telemetry::{Buckets, EndpointOptions, MetricsEndpoint, Unit};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let puffin = args
        .iter()
        .position(|a| a == "--puffin")
        .and_then(|i| args.get(i + 1));
    let out = match args.first().filter(|a| !a.starts_with("--")) {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::env::temp_dir().join(format!("lanegraph-telemetry-{}", std::process::id())),
    };
    std::fs::create_dir_all(&out)?;

    // Spans on, the last 60 frames kept for the trace.
    let mut engine = Engine::builder()
        .lockstep(true)
        .telemetry(true, 60)
        .build()?;
    if let Some(addr) = puffin {
        engine.serve_puffin(addr)?;
        println!("puffin: `puffin_viewer --url {addr}` shows the frames live");
    }
    // The game's metrics live in the engine's registry: one export holds both.
    let reg = engine.metrics().clone();
    let shots = reg.register_counter(
        "game.shots_fired",
        &[],
        Unit::None,
        "Shots the player fired.",
    )?;
    let aim = reg.register_histogram(
        "game.aim_time",
        &[],
        Unit::Milliseconds,
        "Time the aiming system took.",
        Buckets::exponential(0.001, 2.0, 12)?,
    )?;
    engine
        .world_mut()
        .register_system(SystemDef::new("aim", 0.5, move |_, ctx| {
            // A span of the game's own, with its workload, nested in the engine's system span.
            let _s = lanegraph::span!("game.aim", 8);
            let t = std::time::Instant::now();
            if ctx.tick() % 10 == 0 {
                shots.inc();
            }
            aim.observe(t.elapsed().as_secs_f64() * 1e3);
        }))?;

    // The live view: GET /metrics on a loopback port while the game runs.
    let endpoint = MetricsEndpoint::start(
        "127.0.0.1:0".parse()?,
        reg.clone(),
        EndpointOptions::default(),
    )?;
    for _ in 0..100 {
        engine.frame()?;
    }
    let mut conn = TcpStream::connect(endpoint.local_addr())?;
    conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
    let mut scrape = String::new();
    conn.read_to_string(&mut scrape)?;
    let live_shots = scrape
        .lines()
        .find(|l| l.starts_with("lanegraph_game_shots_fired_total"));
    println!(
        "live scrape of http://{}/metrics: {}",
        endpoint.local_addr(),
        live_shots.unwrap_or("(missing)")
    );

    // The exports: Perfetto / chrome://tracing, Prometheus tooling, jq.
    let trace = engine.chrome_trace();
    let metrics = reg.to_openmetrics();
    let summary = RunSummary::from_engine(&engine);
    std::fs::write(out.join("trace.json"), &trace)?;
    std::fs::write(out.join("metrics.prom"), &metrics)?;
    std::fs::write(
        out.join("summary.json"),
        serde_json::to_string_pretty(&summary)?,
    )?;
    println!(
        "wrote {} (trace.json {} KiB, metrics.prom {} KiB, summary.json: {} frames, p50 {:.3} ms)",
        out.display(),
        trace.len() / 1024,
        metrics.len() / 1024,
        summary.frames,
        summary.frame_ms.p50
    );
    let ok = live_shots.is_some()
        && trace.contains("\"game.aim\"")
        && metrics.contains("lanegraph_game_aim_time_milliseconds_bucket");
    if !ok {
        eprintln!("an export lacks the game's own metric or span");
        std::process::exit(1);
    }
    Ok(())
}
