//! Criterion: the GPU timestamp profiler's CPU cost per frame for 8 passes, reading results
//! through a copy into mapped memory (ours) against `vkGetQueryPoolResults` (the obvious
//! alternative), in the same run, without validation layers. Also prints the profiler's heap
//! allocations per frame, counted by this binary's global allocator.
//!
//! Needs a Vulkan driver (lavapipe will do: `apt-get install mesa-vulkan-drivers`); without one
//! it prints why and measures nothing.
#![allow(unsafe_code)]
// Reason: the counting `GlobalAlloc` below is an unsafe trait impl.
// `criterion_group!` expands to an undocumented `pub fn`.
#![allow(missing_docs)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use lanegraph::vk::{Gpu, GpuConfig, ReadPath};
use lanegraph_benches::quick::gpu_rig::ProfilerRig;
use lanegraph_jobs::clock;

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call unchanged to the system allocator; the counter is an atomic.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Passes per frame (the goal, under 5 µs per frame, is stated for 8).
const PASSES: usize = 8;

fn profiler(c: &mut Criterion) {
    clock::init();
    let gpu = match Gpu::new(&GpuConfig::default()) {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!("gpu bench skipped: {e}");
            return;
        }
    };
    let now = || clock::now().0;
    let mut group = c.benchmark_group("profiler_cpu_8_passes");
    for (name, path) in [
        ("copy_to_mapped", ReadPath::CopyToMappedBuffer),
        ("get_query_pool_results", ReadPath::GetQueryPoolResults),
    ] {
        let mut rig = match ProfilerRig::new(&gpu, PASSES, path) {
            Ok(rig) => rig,
            Err(e) => {
                eprintln!("gpu bench {name} skipped: {e}");
                continue;
            }
        };
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut ticks = 0u64;
                for _ in 0..iters {
                    match rig.frame(now) {
                        Ok(t) => ticks += t,
                        Err(e) => panic!("profiler frame failed: {e}"),
                    }
                }
                Duration::from_nanos(clock::ticks_to_ns(ticks))
            })
        });
        if path == ReadPath::CopyToMappedBuffer {
            let frames = 1_000u64;
            let before = ALLOCS.load(Ordering::Relaxed);
            for _ in 0..frames {
                if let Err(e) = rig.frame(now) {
                    panic!("profiler frame failed: {e}");
                }
            }
            let allocs = ALLOCS.load(Ordering::Relaxed) - before;
            println!(
                "profiler_allocs: {} allocations in {frames} frames ({:.4} per frame)",
                allocs,
                allocs as f64 / frames as f64
            );
        }
        if let Err(e) = rig.finish() {
            eprintln!("finishing {name}: {e}");
        }
    }
    group.finish();
}

criterion_group!(benches, profiler);
criterion_main!(benches);
