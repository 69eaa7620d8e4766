//! Times a prebuilt graph run by run and prints the deciles, in microseconds per run: the probe
//! behind the step-by-step figures of dispatch v2 in `docs/benchmarks.md` (the bench suite
//! reports medians of interleaved blocks; this shows the whole distribution, and its modes).
//!
//! ```sh
//! T=2 cargo run --release -p lanegraph-jobs --example graph_run_deciles           # layered 10 x 100
//! L=5 T=1 cargo run --release -p lanegraph-jobs --example graph_run_deciles       # 5 x 100
//! CHAIN=1 T=1 cargo run --release -p lanegraph-jobs --example graph_run_deciles   # 1,000-node chain
//! ```
//! `T`: workers of the one unpinned frame-critical lane (default 1); `L`: layers of 100 nodes,
//! fan-in 4 (default 10); `CHAIN`: a chain of 1,000 nodes instead; `RUNS` (default 5,000).

use lanegraph_jobs::{GraphBuilder, LaneKind, LanePlan, Lanes};
use std::time::Instant;

fn env(key: &str, default: usize) -> usize {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let threads = env("T", 1).max(1);
    let runs = env("RUNS", 5000).max(10);
    let chain = std::env::var("CHAIN").is_ok();
    let cores = lanegraph_jobs::plan::machine_cores();
    let plan = LanePlan::empty(&cores)
        .with_lane("physics", LaneKind::FrameCritical, vec![None; threads])
        .expect("unpinned lanes need no cores");
    let lanes = Lanes::start(plan).expect("lanes start");
    let mut g = GraphBuilder::<()>::new("probe").record_timing(false);
    let nodes = if chain {
        let mut prev = None;
        for i in 0..1000 {
            let id = g.node(&format!("c{i}"), "physics", |_, _| std::hint::black_box(()));
            if let Some(p) = prev {
                g.edge(p, id);
            }
            prev = Some(id);
        }
        1000
    } else {
        let (layers, width, fan_in) = (env("L", 10).max(1), 100usize, 4usize);
        let ids: Vec<_> = (0..layers * width)
            .map(|i| g.node(&format!("n{i}"), "physics", |_, _| std::hint::black_box(())))
            .collect();
        let stride = width / fan_in;
        for l in 1..layers {
            for i in 0..width {
                for k in 0..fan_in {
                    let p = (l - 1) * width + (i + k * stride) % width;
                    g.edge(ids[p], ids[l * width + i]);
                }
            }
        }
        layers * width
    };
    let mut g = g.build(&lanes).expect("the graph builds");
    let mut us: Vec<f64> = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        g.run(&lanes, &()).expect("the graph runs");
        us.push(t.elapsed().as_secs_f64() * 1e6);
    }
    us.sort_by(f64::total_cmp);
    let deciles: Vec<String> = (1..10)
        .map(|k| format!("{:.1}", us[us.len() * k / 10]))
        .collect();
    println!(
        "threads={threads} nodes={nodes} chain={chain} us/run deciles: {}",
        deciles.join(" ")
    );
}
