//! The frame path in steady state: `Engine::frame` allocates nothing after warm-up, and the
//! heap stays flat over a long run, with the run record on (a ring of 64 frames) and a
//! view published to a render pass every frame.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use lanegraph::hooks::{EngineHooks, RunRecorderHooks};
use lanegraph::runtime::{DrawOutput, Engine, EngineConfig, RenderPass, RenderSettings};
use lanegraph::systems::SystemDef;
use lanegraph::world::{Domain, DomainSet};

/// A pass that counts its draws.
struct Counting(Arc<AtomicU64>);

impl RenderPass<Vec<f32>> for Counting {
    fn draw(
        &mut self,
        v: &Vec<f32>,
        _: &RenderSettings,
        out: &mut DrawOutput,
    ) -> Result<(), String> {
        self.0.fetch_add(1, Ordering::Relaxed);
        out.instances = v.len() as u64;
        Ok(())
    }
}

/// A small game: 32 trivial systems, one that spawns and despawns an entity each step (so the
/// view's domain moves and a new view is derived and published every frame), lockstep, every
/// lane, no GPU, spans on (a short trace history), adaptive, a bounded run record of 64
/// frames.
fn small_game() -> (Engine, Arc<AtomicU64>) {
    let draws = Arc::new(AtomicU64::new(0));
    let mut engine = Engine::builder()
        .config(EngineConfig {
            record_frames: 64,
            ..EngineConfig::default()
        })
        .lanes_spec("physics=1,render=1,asset=1")
        .lockstep(true)
        .telemetry(true, 16)
        .render(
            DomainSet::of(Domain::STRUCTURE),
            |w, v: &mut Vec<f32>| {
                v.clear();
                v.extend((0..64).map(|i| (w.tick() + i) as f32));
            },
            Counting(draws.clone()),
        )
        .build()
        .expect("the engine builds");
    engine
        .world_mut()
        .register_system(SystemDef::new("churn", 1_000.0, |w, _| {
            let e = w.spawn();
            w.despawn(e).expect("just spawned");
        }))
        .expect("the system registers");
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
    (engine, draws)
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
    let (mut engine, draws) = small_game();
    // The counter is live: a real allocation is seen (so the 0 below means something).
    let ((), control) = lanegraph_tests::count_allocs(|| drop(std::hint::black_box(vec![0u8; 16])));
    assert!(control >= 1, "the tracking allocator saw no allocation");
    // Warm-up: fills the run record's ring and the trace history, sizes every buffer (the trace
    // history's to twice the most spans a frame has had).
    for _ in 0..1_000 {
        engine.frame().expect("a warm-up frame");
    }
    // Frames in which the controller switched a strategy log the decision with its reason (a
    // bounded log, by design an allocation); every other frame must allocate nothing.
    let (mut frames, mut allocs, mut decision_frames) = (0, 0, 0);
    for _ in 0..10_000 {
        let (out, n) = lanegraph_tests::count_allocs(|| engine.frame().expect("a frame"));
        frames = out.frame;
        if out.decisions > 0 {
            decision_frames += 1;
        } else {
            allocs += n;
        }
    }
    assert!(
        decision_frames < 100,
        "{decision_frames} frames switched strategies: the controller is not settling"
    );
    assert_eq!(frames, 11_000);
    assert_eq!(
        allocs,
        0,
        "10,000 steady frames allocated {allocs} times on the owner thread ({:?})",
        engine.view_cache_stats()
    );
    // The record saw every frame, kept only its ring, and every system.
    let rec = engine.run_record();
    assert_eq!(rec.frames(), 11_000);
    assert_eq!(rec.recent().len(), 64);
    assert_eq!(rec.recent().last().unwrap().frame, 11_000);
    assert_eq!(rec.systems().len(), 33);
    assert!(rec.systems().iter().all(|s| s.runs == 11_000));
    // A view was derived every frame and the pass drew.
    let views = engine.view_cache_stats();
    assert_eq!(views.misses, 11_000, "{views:?}");
    engine.finish_render();
    assert!(draws.load(Ordering::Relaxed) > 0);
}

#[test]
fn the_heap_stays_flat_over_a_hundred_thousand_frames() {
    lanegraph_tests::isolated(
        "engine_steady::the_heap_stays_flat_over_a_hundred_thousand_frames",
        || {
            lanegraph::jobs::clock::init();
            let (mut engine, _) = small_game();
            for _ in 0..1_000 {
                engine.frame().expect("a warm-up frame");
            }
            let before = lanegraph::hooks::telemetry::memory_stats().current_bytes;
            for _ in 0..100_000 {
                engine.frame().expect("a frame");
            }
            let after = lanegraph::hooks::telemetry::memory_stats().current_bytes;
            let growth = after - before;
            assert!(
                growth < 1 << 20,
                "the live heap grew by {growth} bytes over 100,000 frames"
            );
            assert_eq!(engine.run_record().frames(), 101_000);
        },
    );
}
