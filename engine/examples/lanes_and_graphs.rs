//! Lanes and job graphs, without an engine: a lane plan, a prebuilt graph whose nodes run on
//! named lanes in dependency order every frame, and a scope of borrowed jobs.
//!
//! `cargo run -p lanegraph --example lanes_and_graphs [FRAMES]` (default 100). Prints where each
//! node ran and how long the graph took; exits 1 if a node ran out of order or a sum is wrong.

use std::sync::atomic::{AtomicU64, Ordering};

use lanegraph::jobs::{GraphBuilder, LanePlan, Lanes, SpawnError};

/// What the graph's nodes share each frame (the graph's context, by reference).
#[derive(Default)]
struct Frame {
    loaded: AtomicU64,
    uploaded: AtomicU64,
    stepped: AtomicU64,
    out_of_order: AtomicU64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let frames: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(100)
        .max(1); // at least the one frame whose timings are printed
                 // The machine's cores split into lanes (physics, render, asset); pinned where the OS allows.
    let lanes = Lanes::start(LanePlan::auto())?;
    for (name, workers) in lanes
        .plan()
        .lanes()
        .iter()
        .map(|l| (&l.name, l.worker_cores.len()))
    {
        println!("lane {name}: {workers} worker(s)");
    }

    // A graph is built (and validated) once, then run every frame without allocating.
    let mut b = GraphBuilder::<Frame>::new("frame");
    let load = b.node("load", "asset", |_, f| {
        f.loaded.fetch_add(1, Ordering::Relaxed);
    });
    let upload = b.node("upload", "render", |_, f| {
        if f.loaded.load(Ordering::Relaxed) <= f.uploaded.load(Ordering::Relaxed) {
            f.out_of_order.fetch_add(1, Ordering::Relaxed);
        }
        f.uploaded.fetch_add(1, Ordering::Relaxed);
    });
    let step = b.node("step", "physics", |ctx, f| {
        // Nested data-parallel work on the node's own lane.
        ctx.lanes()
            .parallel_for(ctx.lane(), 0..10_000, 1_000, |_, r| {
                f.stepped.fetch_add(r.len() as u64, Ordering::Relaxed);
            })
            .expect("no job panics");
    });
    b.edge(load, upload).edge(upload, step);
    let mut graph = b.build(&lanes)?;
    let shared = Frame::default();
    for _ in 1..frames {
        graph.run(&lanes, &shared)?;
    }
    // The last frame's per-node timings, read in place (a run allocates nothing).
    for t in graph.run(&lanes, &shared)? {
        let lane = lanes
            .plan()
            .lanes()
            .get(usize::from(t.lane))
            .map_or("?", |l| l.name.as_str());
        println!(
            "  node on lane {lane} worker {:?}: {} ns",
            t.worker,
            t.end.ns_since(t.start)
        );
    }

    // A scope: jobs that borrow the caller's data; it returns when every job has finished.
    let physics = lanes
        .lane("physics")
        .ok_or("the automatic plan has a physics lane")?;
    let mut data = vec![1u32; 4096];
    let (left, right) = data.split_at_mut(2048);
    lanes.scope(|s| {
        s.spawn(physics, || left.iter_mut().for_each(|x| *x *= 2))?;
        s.spawn(physics, || right.iter_mut().for_each(|x| *x *= 3))?;
        Ok::<_, SpawnError>(())
    })??;
    let sum: u32 = data.iter().sum();

    let stepped = shared.stepped.load(Ordering::Relaxed);
    println!("{frames} frames: {stepped} items stepped; scope sum {sum}");
    if shared.out_of_order.load(Ordering::Relaxed) != 0
        || stepped != frames * 10_000
        || sum != 2048 * 2 + 2048 * 3
    {
        eprintln!("a node ran out of order or a job was lost");
        std::process::exit(1);
    }
    Ok(())
}
