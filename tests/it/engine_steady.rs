//! The frame path in steady state: `Engine::frame` allocates nothing after warm-up, and the
//! heap stays flat over a long run, with the provided run record installed as an observer.

use lanegraph::runtime::{Engine, RunRecorder};
use lanegraph::systems::SystemDef;

/// A small game: 32 trivial systems, lockstep, every lane, no GPU, spans on (a short trace
/// history), adaptive, with a bounded run record of 64 frames.
fn small_game() -> (Engine, lanegraph::runtime::ObserverId<RunRecorder>) {
    let mut engine = Engine::builder()
        .lanes_spec("physics=1,render=1,asset=1")
        .lockstep(true)
        .telemetry(true, 16)
        .build()
        .expect("the engine builds");
    for i in 0..32u64 {
        let mut acc = i;
        engine
            .world_mut()
            .register_system(SystemDef::new(
                format!("s{i:02}"),
                1_000.0,
                move |_, ctx| {
                    acc = acc
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(ctx.tick());
                    std::hint::black_box(acc);
                },
            ))
            .expect("the system registers");
    }
    let record = engine.observe(RunRecorder::new(64));
    (engine, record)
}

/// Alone in its own process: span collection is process-wide, so another test's spans would
/// land in this engine's trace history and grow its buffers mid-count.
#[test]
fn ten_thousand_frames_allocate_nothing_after_warm_up() {
    lanegraph_tests::isolated(
        "engine_steady::ten_thousand_frames_allocate_nothing_after_warm_up",
        steady_frames_allocate_nothing,
    );
}

fn steady_frames_allocate_nothing() {
    lanegraph::jobs::clock::init();
    let (mut engine, record) = small_game();
    // The counter is live: a real allocation is seen (so the 0 below means something).
    let ((), control) = lanegraph_tests::count_allocs(|| drop(std::hint::black_box(vec![0u8; 16])));
    assert!(control >= 1, "the tracking allocator saw no allocation");
    // Warm-up: fills the run record's ring and the trace history, sizes every buffer.
    for _ in 0..200 {
        engine.frame().expect("a warm-up frame");
    }
    let (frames, allocs) = lanegraph_tests::count_allocs(|| {
        let mut last = 0;
        for _ in 0..10_000 {
            last = engine.frame().expect("a frame").frame;
        }
        last
    });
    assert_eq!(frames, 10_200);
    assert_eq!(
        allocs, 0,
        "10,000 steady frames allocated {allocs} times on the owner thread"
    );
    // The record saw every frame, kept only its ring, and every system.
    let rec = engine.observer(record);
    assert_eq!(rec.frames(), 10_200);
    assert_eq!(rec.recent().len(), 64);
    assert_eq!(rec.recent().last().unwrap().frame, 10_200);
    assert_eq!(rec.systems().len(), 32);
    assert!(rec.systems().iter().all(|s| s.runs == 10_200));
}

#[test]
fn the_heap_stays_flat_over_a_hundred_thousand_frames() {
    lanegraph_tests::isolated(
        "engine_steady::the_heap_stays_flat_over_a_hundred_thousand_frames",
        || {
            lanegraph::jobs::clock::init();
            let (mut engine, record) = small_game();
            for _ in 0..1_000 {
                engine.frame().expect("a warm-up frame");
            }
            let before = lanegraph::telemetry::memory_stats().current_bytes;
            for _ in 0..100_000 {
                engine.frame().expect("a frame");
            }
            let after = lanegraph::telemetry::memory_stats().current_bytes;
            let growth = after - before;
            assert!(
                growth < 1 << 20,
                "the live heap grew by {growth} bytes over 100,000 frames"
            );
            assert_eq!(engine.observer(record).frames(), 101_000);
        },
    );
}
