//! A warm frame allocates nothing on the Rust heap: not the renderer, not the profiler.
//! Counted by the runtime's tracking allocator, installed the way a game installs it (driver
//! and layer memory is C `malloc`, outside it: this checks our code, which is what we can
//! change).

#[path = "../../../vk-backend/tests/common.rs"]
mod common;

use common::{assert_no_messages, validated_gpu};
use lanegraph::vk::{FrameRing, GpuProfiler};
use lanegraph_demo::gpu::{ParticleView, Renderer, RendererConfig};

#[global_allocator]
static ALLOC: lanegraph::telemetry::TrackingAllocator =
    lanegraph::telemetry::TrackingAllocator::new();

/// Allocation calls in this process so far.
fn allocations() -> u64 {
    lanegraph::telemetry::memory_stats().allocations
}

/// One test function: the counter is process-wide, so nothing may run beside it.
#[test]
fn warm_frames_allocate_nothing() {
    let Some(gpu) = validated_gpu("warm_frames_allocate_nothing", true) else {
        return;
    };
    // The counter is live: a real allocation is seen (so a 0 below means something).
    let before = allocations();
    drop(std::hint::black_box(vec![0u8; 64]));
    assert!(
        allocations() > before,
        "the tracking allocator saw no allocation"
    );
    // The whole renderer frame (upload, cull, draw, profiler, submit, collect).
    {
        let mut r = Renderer::new(&gpu, RendererConfig::default()).expect("renderer");
        let xs: Vec<f32> = (0..1000).map(|i| (i % 100) as f32 - 50.0).collect();
        let ys: Vec<f32> = (0..1000).map(|i| (i / 10) as f32 - 50.0).collect();
        let view = ParticleView {
            xs: &xs,
            ys: &ys,
            center: [0.0, 0.0],
            half_extent: [60.0, 60.0],
            radius: 1.0,
            color: [1.0, 1.0, 1.0, 1.0],
        };
        for _ in 0..10 {
            r.render(&view).expect("warm-up frame");
        }
        let before = allocations();
        for _ in 0..100 {
            r.render(&view).expect("frame");
        }
        let allocs = allocations() - before;
        assert!(r.profiler().unwrap().stats().frames_read >= 100);
        assert_eq!(
            allocs, 0,
            "renderer: {allocs} allocations in 100 warm frames"
        );
        r.finish().expect("finish");
    }
    // The profiler alone around 8 empty passes (the bench's case).
    {
        let mut ring = FrameRing::new(&gpu, 2).expect("ring");
        let mut prof = GpuProfiler::new(&gpu, 2).expect("profiler");
        let passes: Vec<_> = (0..8)
            .map(|i| prof.register_pass(&format!("pass{i}")).expect("pass"))
            .collect();
        let mut frame = |count: &mut bool| {
            let before = allocations();
            let rec = ring.begin().expect("begin");
            let read = prof
                .collect(rec.frame(), |s| ring.is_complete(s))
                .expect("collect")
                .is_some();
            prof.begin_frame(&rec);
            for &p in &passes {
                let t = prof.begin_pass(&rec, p);
                prof.end_pass(&rec, t);
            }
            prof.end_frame(&rec);
            ring.submit(rec).expect("submit");
            if *count {
                assert!(read);
                assert_eq!(allocations() - before, 0, "profiler frame allocated");
            }
        };
        let mut count = false;
        for _ in 0..10 {
            frame(&mut count);
        }
        count = true;
        for _ in 0..100 {
            frame(&mut count);
        }
        ring.finish().expect("finish");
    }
    assert_no_messages(&gpu);
}
