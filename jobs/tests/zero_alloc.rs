//! After warm-up, running a prebuilt graph (with a parallel-for node) or a scope of the same
//! shape, or spawning a repeatable detached job, performs zero heap allocations. Its own test binary: the counting allocator is global.

// A counting global allocator needs `unsafe impl GlobalAlloc`; it only forwards to `System`.
#![allow(unsafe_code)]

#[path = "common.rs"]
mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use lanegraph_jobs::GraphBuilder;

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; the counter is a side effect.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn steady_state_frames_do_not_allocate() {
    let lanes = common::lanes(2, 1, 1);
    let physics = lanes.lane("physics").unwrap();
    let render = lanes.lane("render").unwrap();
    // The layered DAG of the benches (5 layers x 20, fan-in 4) plus one parallel-for node.
    let mut b = GraphBuilder::<AtomicUsize>::new("frame");
    let mut prev: Vec<lanegraph_jobs::NodeId> = Vec::new();
    for layer in 0..5 {
        let mut cur = Vec::new();
        for i in 0..20 {
            let lane = if i % 3 == 0 { "render" } else { "physics" };
            let n = b.node(&format!("l{layer}n{i}"), lane, |_, c| {
                c.fetch_add(1, Ordering::Relaxed);
            });
            for k in 0..4.min(prev.len()) {
                b.edge(prev[(i + k * 5) % prev.len()], n);
            }
            cur.push(n);
        }
        prev = cur;
    }
    let par = b.node("par", "physics", |ctx, c| {
        ctx.lanes()
            .parallel_for(ctx.lane(), 0..4096, 64, |_, r| {
                c.fetch_add(r.len(), Ordering::Relaxed);
            })
            .unwrap();
    });
    for p in &prev {
        b.edge(*p, par);
    }
    let mut g = b.build(&lanes).unwrap();
    let counter = AtomicUsize::new(0);
    let mut data = vec![1u32; 4096];
    let frame = |g: &mut lanegraph_jobs::Graph<AtomicUsize>, data: &mut Vec<u32>| {
        g.run(&lanes, &counter).unwrap();
        lanes
            .scope(|s| {
                let (l, r) = data.split_at_mut(2048);
                let a = s
                    .spawn(physics, || l.iter_mut().for_each(|x| *x += 1))
                    .unwrap();
                let bb = s
                    .spawn(physics, || r.iter_mut().for_each(|x| *x += 1))
                    .unwrap();
                s.spawn_after(render, &[a, bb], || {}).unwrap();
            })
            .unwrap();
        lanes
            .parallel_chunks_mut(physics, data, 256, |_, c| {
                c.iter_mut().for_each(|x| *x ^= 1)
            })
            .unwrap();
    };
    // A repeatable detached job, spawned every frame (the render lane's drain job).
    let ran = std::sync::Arc::new(AtomicUsize::new(0));
    let seen = ran.clone();
    let repeat = lanes
        .repeatable(render, move || {
            seen.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    for _ in 0..200 {
        frame(&mut g, &mut data);
        lanes.spawn_repeatable(&repeat).unwrap();
    }
    let before = ALLOCS.load(Ordering::Relaxed);
    for _ in 0..1000 {
        frame(&mut g, &mut data);
        lanes.spawn_repeatable(&repeat).unwrap();
    }
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    assert_eq!(allocs, 0, "{allocs} allocations in 1000 warm frames");
    assert_eq!(counter.load(Ordering::Relaxed), 1200 * (100 + 4096));
    // Every spawn ran once: drop drains the queues and joins the workers.
    drop(g);
    drop(lanes);
    assert_eq!(ran.load(Ordering::Relaxed), 1200);
}
