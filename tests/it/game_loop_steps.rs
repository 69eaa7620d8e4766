//! The fixed-step loop driven by an injected clock: step counts, drops and alphas are exact.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use lanegraph::game_loop::FixedStep;
use lanegraph::hooks::LoopOptionsError;
use lanegraph::hooks::{
    EngineEvent, GameLoop, LoopOptions, ManualClock, WorldHooks, MAX_STEPS_PER_FRAME,
};
use lanegraph::systems::SystemDef;
use lanegraph::world::World;

const NS: u64 = 1_000_000_000;

/// A loop on a manual clock whose one system counts its runs.
fn counting_loop() -> (GameLoop<ManualClock>, ManualClock, Arc<AtomicU64>) {
    let mut w = World::new();
    let runs = Arc::new(AtomicU64::new(0));
    let r = runs.clone();
    w.register_system(SystemDef::new("count", 1_000.0, move |_, _| {
        r.fetch_add(1, Ordering::Relaxed);
    }))
    .unwrap();
    let clock = ManualClock::new();
    let lp = GameLoop::with_clock(w, clock.clone(), LoopOptions::default()).unwrap();
    (lp, clock, runs)
}

/// Runs `frames` frames at `hz` (frame i ends at exactly floor(i * 1e9 / hz) ns) and returns
/// (steps run, last alpha).
fn run_at_rate(hz: u64, frames: u64) -> (u64, f64, GameLoop<ManualClock>, Arc<AtomicU64>) {
    let (mut lp, clock, runs) = counting_loop();
    let mut steps = 0u64;
    let mut alpha = 0.0;
    for i in 1..=frames {
        clock.set_ns(i * NS / hz);
        let r = lp.frame();
        assert!(r.steps <= MAX_STEPS_PER_FRAME);
        assert!(
            (0.0..1.0).contains(&r.alpha),
            "alpha {} out of [0,1)",
            r.alpha
        );
        steps += u64::from(r.steps);
        alpha = r.alpha;
    }
    (steps, alpha, lp, runs)
}

/// Expected steps and alpha after `t_ns` of simulated time at 60 Hz (no drops): exact rationals.
fn expected_60hz(t_ns: u64) -> (u64, f64) {
    // step = 1e9/60 ns; steps = floor(t * 60 / 1e9); leftover = (t*60 mod 1e9) / 1e9.
    let scaled = u128::from(t_ns) * 60;
    (
        (scaled / u128::from(NS)) as u64,
        (scaled % u128::from(NS)) as f64 / NS as f64,
    )
}

#[test]
fn ten_seconds_of_60hz_frames_is_exactly_600_steps() {
    let (steps, alpha, lp, runs) = run_at_rate(60, 600);
    assert_eq!(steps, 600);
    assert_eq!(alpha, 0.0);
    assert_eq!(runs.load(Ordering::Relaxed), 600);
    assert_eq!(lp.world().tick(), 600);
    assert_eq!(lp.totals().dropped_steps, 0);
}

#[test]
fn display_rates_give_exact_step_counts_and_alphas_over_10000_frames() {
    for hz in [30u64, 60, 144, 240, 50, 75] {
        let (steps, alpha, lp, _) = run_at_rate(hz, 10_000);
        let t = 10_000 * NS / hz;
        let (want_steps, want_alpha) = expected_60hz(t);
        assert_eq!(steps, want_steps, "{hz} Hz");
        assert!(
            (alpha - want_alpha).abs() < 1e-9,
            "{hz} Hz: alpha {alpha} vs {want_alpha}"
        );
        assert_eq!(lp.totals().dropped_steps, 0, "{hz} Hz dropped steps");
        assert_eq!(lp.totals().frames, 10_000);
    }
    // 30 Hz frame by frame: the clock is whole nanoseconds, so frame i ends at
    // floor(i * 1e9 / 30) ns; the running step count is exact at every frame (2i, or 2i - 1
    // while the clock sits a fraction of a nanosecond short of the boundary), never drifting.
    let (mut lp, clock, _) = counting_loop();
    let mut steps = 0u64;
    for i in 1..=10_000u64 {
        let t = i * NS / 30;
        clock.set_ns(t);
        let r = lp.frame();
        steps += u64::from(r.steps);
        let (want, want_alpha) = expected_60hz(t);
        assert_eq!(steps, want, "frame {i}");
        assert!(steps == 2 * i || steps == 2 * i - 1, "frame {i}: {steps}");
        assert!((r.alpha - want_alpha).abs() < 1e-9);
    }
}

#[test]
fn one_second_hitch_runs_five_steps_and_reports_the_rest_dropped() {
    let (mut lp, clock, runs) = counting_loop();
    clock.advance(Duration::from_secs(1));
    let r = lp.frame();
    assert_eq!(r.steps, 5);
    assert_eq!(r.dropped_steps, 10, "0.25 s clamp = 15 steps due, 5 run");
    assert_eq!(r.clamped_ns, 750_000_000);
    assert_eq!(r.alpha, 0.0);
    assert_eq!(runs.load(Ordering::Relaxed), 5);
    let t = lp.totals();
    assert_eq!(
        (t.dropped_steps, t.clamped_ns, t.frames_with_drops),
        (10, 750_000_000, 1)
    );
    assert_eq!(
        lp.world().event_counts(EngineEvent::StepsDropped).emitted,
        1
    );
    // The loop recovers: the next 60 Hz frame runs one step.
    clock.advance_ns(NS / 60 + 1);
    assert_eq!(lp.frame().steps, 1);
}

#[test]
fn sustained_overload_is_slow_motion_not_a_freeze_and_every_drop_is_counted() {
    let (mut lp, clock, _) = counting_loop();
    for _ in 0..100 {
        clock.advance(Duration::from_millis(200)); // 12 steps due per frame, cap 5
        let r = lp.frame();
        assert_eq!(r.steps, 5);
    }
    let t = lp.totals();
    assert_eq!(t.steps, 500);
    assert_eq!(t.dropped_steps, 700);
    assert_eq!(t.frames_with_drops, 100);
    // Rate-limited: 100 drops within far less than 1 s of real time give one event, the rest
    // counted as suppressed, none lost.
    let c = lp.world().event_counts(EngineEvent::StepsDropped);
    assert_eq!(c.emitted + c.suppressed, 100);
    assert!(c.emitted >= 1);
}

#[test]
fn jittery_frames_accumulate_exactly() {
    // Deterministic jitter: 4..=29 ms frames from an LCG, 10,000 frames.
    let (mut lp, clock, _) = counting_loop();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut t = 0u64;
    let mut steps = 0u64;
    for _ in 0..10_000 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let dt = 4_000_000 + (seed >> 33) % 25_000_000;
        t += dt;
        clock.set_ns(t);
        let r = lp.frame();
        assert_eq!(r.dropped_steps, 0); // 29 ms < 5 steps
        steps += u64::from(r.steps);
        let (want_steps, want_alpha) = expected_60hz(t);
        assert_eq!(steps, want_steps);
        assert!((r.alpha - want_alpha).abs() < 1e-9);
    }
}

#[test]
fn the_step_is_the_smallest_declared_or_the_default() {
    let (mut lp, clock, runs) = counting_loop();
    assert_eq!(lp.fixed_step(), FixedStep::default());
    assert_eq!(lp.fixed_step_declarer(), None);
    lp.declare_fixed_step("physics", FixedStep::from_hz(120).unwrap());
    lp.declare_fixed_step("ai", FixedStep::from_hz(30).unwrap());
    assert_eq!(lp.fixed_step(), FixedStep::from_hz(120).unwrap());
    assert_eq!(lp.fixed_step_declarer(), Some("physics"));
    assert_eq!(lp.world().fixed_step(), FixedStep::from_hz(120).unwrap());
    clock.advance_ns(NS / 60 + 1); // 16_666_667 ns: just over two 120 Hz steps
    assert_eq!(lp.frame().steps, 2);
    assert!(lp.withdraw_fixed_step("physics"));
    assert!(!lp.withdraw_fixed_step("physics"));
    assert_eq!(lp.fixed_step(), FixedStep::from_hz(30).unwrap());
    lp.withdraw_fixed_step("ai");
    lp.set_fixed_step(FixedStep::from_hz(50).unwrap());
    assert_eq!(lp.fixed_step(), FixedStep::from_hz(50).unwrap());
    assert_eq!(runs.load(Ordering::Relaxed), 2);
}

#[test]
fn systems_see_the_step_and_the_per_step_hook_runs_after_them() {
    let mut w = World::new();
    let seen = Arc::new(AtomicU64::new(0));
    let s = seen.clone();
    w.register_system(SystemDef::new("dt", 1_000.0, move |_, ctx| {
        s.store(
            (ctx.step().as_secs_f64() * 1e9).round() as u64,
            Ordering::Relaxed,
        );
    }))
    .unwrap();
    let clock = ManualClock::new();
    let mut lp = GameLoop::with_clock(w, clock.clone(), LoopOptions::default()).unwrap();
    clock.advance_ns(NS / 20); // three 60 Hz steps
    let mut hook_ticks = Vec::new();
    let r = lp.frame_with(|world, info| hook_ticks.push((world.tick(), info.index_in_frame)));
    assert_eq!(r.steps, 3);
    assert_eq!(hook_ticks, vec![(1, 0), (2, 1), (3, 2)]);
    assert_eq!(seen.load(Ordering::Relaxed), 16_666_667);
}

#[test]
fn invalid_options_are_typed_errors() {
    let opts = LoopOptions {
        max_steps_per_frame: 0,
        ..LoopOptions::default()
    };
    let e = GameLoop::with_clock(World::new(), ManualClock::new(), opts).unwrap_err();
    assert_eq!(e, LoopOptionsError::ZeroStepCap);
    let opts = LoopOptions {
        max_frame_delta: Duration::ZERO,
        ..LoopOptions::default()
    };
    let e = GameLoop::with_clock(World::new(), ManualClock::new(), opts).unwrap_err();
    assert_eq!(e, LoopOptionsError::ZeroFrameDelta);
    assert!(e.to_string().contains("fix:"));
}

#[test]
fn a_clock_that_goes_backwards_is_a_zero_delta() {
    struct Backwards(u64);
    impl lanegraph::hooks::FrameClock for Backwards {
        fn now_ns(&mut self) -> u64 {
            self.0 = self.0.saturating_sub(NS / 60);
            self.0
        }
    }
    let mut lp = GameLoop::with_clock(World::new(), Backwards(NS), LoopOptions::default()).unwrap();
    for _ in 0..10 {
        let r = lp.frame();
        assert_eq!((r.dt_ns, r.steps), (0, 0));
    }
}

#[test]
fn resync_forgets_a_pause_without_simulating_or_dropping_it() {
    let (mut lp, clock, runs) = counting_loop();
    clock.advance_ns(NS / 120); // half a step: alpha 0.5
    assert_eq!(lp.frame().steps, 0);
    clock.advance(Duration::from_secs(30)); // a loading screen
    lp.resync();
    clock.advance_ns(NS / 120 + 1); // the other half (8_333_333 ns twice is 1 ns short)
    let r = lp.frame();
    assert_eq!((r.steps, r.dropped_steps, r.clamped_ns), (1, 0, 0));
    assert_eq!(r.dt_ns, NS / 120 + 1);
    assert_eq!(runs.load(Ordering::Relaxed), 1);
    assert_eq!(lp.totals().frames_with_drops, 0);
}
