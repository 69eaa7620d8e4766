//! The `timing` bench suite: what per-system timing costs (see `docs/bench-notes/timing.md`).
//!
//! Owns: the quick form of the timing benchmarks. Must never: assert on timing, or compare
//! against a baseline measured in another run.
//!
//! # Cases
//! - `system_overhead`: 256 systems with trivial bodies; `World::run_systems` (timed, windowed,
//!   budget-checked) against `lanegraph::hooks::run_systems_untimed` (the same loop, same dispatch, no
//!   timing), interleaved round by round in one run. Metrics: `ns_per_system` (timed, baseline
//!   untimed) and `overhead_ns_per_system` (median of the per-round differences).
//! - `clock_read`: one `lanegraph_jobs::clock::now()` against one `std::time::Instant::now()`.
//! - `clock_error`: how far the shared clock's nanoseconds differ from `Instant`'s over the same
//!   20 ms windows, signed (positive: ours reads longer), median, in ppm. The bracketing reads
//!   add ~50 ns (~2.5 ppm) of noise; a consistent offset is the TSC calibration's error.
//! - `breach_cold_path`: extra ns per tick when one of the 256 systems breaches its budget every
//!   tick (the bounded cold path: counters, the limiter, no event formatting while suppressed),
//!   baseline the all-in-budget tick.
//! - `engine_frame`: the same 256 systems run through `Engine::frame` (lockstep, one step a
//!   frame, no GPU, the run record off (`EngineHooks::set_recording(false)`), no span per system run: the
//!   runtime's own cost), per system,
//!   against `World::run_systems` alone, interleaved round by round. Goal: at most 1.2x.
//! - `engine_frame_system_spans`: the same with every system run recorded as a trace span (the
//!   engine's default): what the per-system trace costs on top, ring write, per-frame drain and
//!   trace history included.
//! - `engine_frame_recorded`: the same with the run record on (the engine's default, as the
//!   demo and every game run), against the same baseline.
//! - `engine_frame_memory`: live-heap growth (bytes) and allocations per `Engine::frame` over
//!   10,000 frames after warm-up, with the run record on (reported only with the
//!   tracking allocator installed).
//! - `tick_allocs`: allocations per tick of 256 systems, read from the tracking allocator the
//!   `lanegraph` binary installs (reported only when it is installed).

use std::hint::black_box;
use std::time::Instant;

use lanegraph::hooks::{EngineHooks, WorldHooks, MAX_SYSTEMS};
use lanegraph_jobs::clock;

use super::stats::median;
use super::{BenchError, BenchOptions, Figure};
use lanegraph::runtime::Engine;
use lanegraph::systems::SystemDef;
use lanegraph::world::World;

const SUITE: &str = "timing";

/// A world with `MAX_SYSTEMS` systems whose bodies are one wrapping add (kept by `black_box`).
/// When `breaching` is set, the last system has a 1 ns budget it always exceeds.
fn trivial_world(breaching: bool) -> Result<World, BenchError> {
    let mut w = World::new();
    for i in 0..MAX_SYSTEMS {
        let mut acc = i as u64;
        let budget_ms = if breaching && i == MAX_SYSTEMS - 1 {
            0.000_001
        } else {
            1_000.0
        };
        w.register_system(SystemDef::new(
            format!("trivial{i:03}"),
            budget_ms,
            move |_, _| {
                acc = black_box(acc.wrapping_add(1));
            },
        ))
        .map_err(|e| BenchError::Failed {
            suite: SUITE,
            why: e.to_string(),
        })?;
    }
    Ok(w)
}

/// A lockstep engine (one fixed step a frame, no GPU) whose world holds the trivial systems;
/// `recorded`: with the run record on (the default), as a game runs; off, the runtime's own
/// cost.
fn trivial_engine(recorded: bool, system_spans: bool) -> Result<Engine, BenchError> {
    let failed = |why: String| BenchError::Failed { suite: SUITE, why };
    let mut engine = Engine::builder()
        .world(trivial_world(false)?)
        .lanes_spec("physics=1,render=1,asset=1")
        .lockstep(true)
        .build()
        .map_err(|e| failed(e.to_string()))?;
    // The runtime's own cost is measured without a span per system run (a game's choice,
    // measured on its own by `engine_frame_system_spans`).
    engine.world_mut().set_system_spans(system_spans);
    engine.set_recording(recorded);
    Ok(engine)
}

/// Nanoseconds `f` takes for `ticks` ticks, by the shared clock.
fn time_ticks(w: &mut World, ticks: u32, f: fn(&mut World)) -> f64 {
    let t0 = clock::now();
    for _ in 0..ticks {
        f(w);
    }
    clock::now().ns_since(t0) as f64
}

/// Runs the suite.
pub fn run(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    clock::init();
    // Many short rounds (4 ticks of 256 systems: ~30 us) rather than a few long ones: on a
    // shared, loaded machine a long round almost always contains a preemption, a short one
    // rarely does, so the median of short rounds is the uncontended cost.
    let (rounds, ticks) = if opts.quick { (1_001, 4) } else { (10_001, 4) };
    let calls = f64::from(ticks) * MAX_SYSTEMS as f64;
    let mut figures = Vec::new();

    // system_overhead: interleave untimed and timed rounds (alternating which goes first) so
    // drift in clock speed or cache state hits both alike.
    let mut w = trivial_world(false)?;
    for _ in 0..ticks {
        w.run_systems();
        lanegraph::hooks::run_systems_untimed(&mut w);
    }
    let (mut timed, mut untimed, mut diff) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..rounds {
        let (t, u) = if r % 2 == 0 {
            let u = time_ticks(&mut w, ticks, lanegraph::hooks::run_systems_untimed);
            (time_ticks(&mut w, ticks, World::run_systems), u)
        } else {
            let t = time_ticks(&mut w, ticks, World::run_systems);
            (
                t,
                time_ticks(&mut w, ticks, lanegraph::hooks::run_systems_untimed),
            )
        };
        timed.push(t / calls);
        untimed.push(u / calls);
        diff.push((t - u) / calls);
    }
    let (t, u, d) = (median(&mut timed), median(&mut untimed), median(&mut diff));
    figures.push(
        Figure::new(SUITE, "system_overhead", 1, "ns_per_system", "ns", t)
            .with_baseline("untimed loop", u),
    );
    figures.push(Figure::new(
        SUITE,
        "system_overhead",
        1,
        "overhead_ns_per_system",
        "ns",
        d,
    ));

    // clock_read: per read, median of short rounds of 1,000 reads each (same reasoning).
    let reads = 1_000u32;
    let (mut ours, mut std_reads) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t0 = clock::now();
        for _ in 0..reads {
            black_box(clock::now());
        }
        ours.push(clock::now().ns_since(t0) as f64 / f64::from(reads));
        let t0 = clock::now();
        for _ in 0..reads {
            black_box(Instant::now());
        }
        std_reads.push(clock::now().ns_since(t0) as f64 / f64::from(reads));
    }
    figures.push(
        Figure::new(
            SUITE,
            "clock_read",
            1,
            "ns_per_read",
            "ns",
            median(&mut ours),
        )
        .with_baseline("Instant::now", median(&mut std_reads)),
    );
    eprintln!("# timing: clock source {:?}", clock::source());

    // clock_error: the shared clock against `Instant` over the same 20 ms windows, in ppm.
    let mut ppm = Vec::new();
    for _ in 0..if opts.quick { 5 } else { 25 } {
        let (i0, s0) = (Instant::now(), clock::now());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (s1, i1) = (clock::now(), Instant::now());
        let theirs = i1.duration_since(i0).as_nanos() as f64;
        ppm.push((s1.ns_since(s0) as f64 - theirs) / theirs * 1e6);
    }
    figures.push(Figure::new(
        SUITE,
        "clock_error",
        1,
        "error_ppm_vs_instant",
        "ppm",
        median(&mut ppm),
    ));

    // breach_cold_path: one system over budget every tick, against none.
    let mut ok = trivial_world(false)?;
    let mut broken = trivial_world(true)?;
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for r in 0..rounds {
        let (a, b) = if r % 2 == 0 {
            let a = time_ticks(&mut ok, ticks, World::run_systems);
            (a, time_ticks(&mut broken, ticks, World::run_systems))
        } else {
            let b = time_ticks(&mut broken, ticks, World::run_systems);
            (time_ticks(&mut ok, ticks, World::run_systems), b)
        };
        without.push(a / f64::from(ticks));
        with.push(b / f64::from(ticks));
    }
    figures.push(
        Figure::new(
            SUITE,
            "breach_cold_path",
            1,
            "ns_per_tick",
            "ns",
            median(&mut with),
        )
        .with_baseline("no breach", median(&mut without)),
    );

    // engine_frame: the same 256 systems through `Engine::frame` (lockstep: one step a frame,
    // no GPU), with the run record off and on, each against
    // `World::run_systems` on its own, interleaved round by round.
    let frame = |e: &mut Engine| -> Result<(), BenchError> {
        e.frame().map(drop).map_err(|err| BenchError::Failed {
            suite: SUITE,
            why: err.to_string(),
        })
    };
    let mut engine = trivial_engine(false, false)?;
    for (case, recorded, system_spans) in [
        ("engine_frame", false, false),
        ("engine_frame_recorded", true, false),
        ("engine_frame_system_spans", false, true),
    ] {
        let mut e = trivial_engine(recorded, system_spans)?;
        let mut bare = trivial_world(false)?;
        for _ in 0..64 {
            frame(&mut e)?;
            bare.run_systems();
        }
        let (mut through_engine, mut alone) = (Vec::new(), Vec::new());
        for r in 0..rounds {
            let time_engine = |e: &mut Engine| -> Result<f64, BenchError> {
                let t0 = clock::now();
                for _ in 0..ticks {
                    frame(e)?;
                }
                Ok(clock::now().ns_since(t0) as f64)
            };
            let (a, b) = if r % 2 == 0 {
                let b = time_ticks(&mut bare, ticks, World::run_systems);
                (time_engine(&mut e)?, b)
            } else {
                let a = time_engine(&mut e)?;
                (a, time_ticks(&mut bare, ticks, World::run_systems))
            };
            through_engine.push(a / calls);
            alone.push(b / calls);
        }
        figures.push(
            Figure::new(
                SUITE,
                case,
                1,
                "ns_per_system",
                "ns",
                median(&mut through_engine),
            )
            .with_baseline("World::run_systems", median(&mut alone)),
        );
        if recorded && !system_spans {
            engine = e;
        }
    }

    // engine_frame_memory: live heap and allocations per frame over 10,000 frames after the
    // warm-up above (needs the tracking allocator of the `lanegraph` binary).
    if lanegraph::hooks::telemetry::alloc::is_installed() {
        let n = 10_000u64;
        let before = lanegraph::hooks::telemetry::memory_stats();
        for _ in 0..n {
            frame(&mut engine)?;
        }
        let after = lanegraph::hooks::telemetry::memory_stats();
        figures.push(Figure::new(
            SUITE,
            "engine_frame_memory",
            1,
            "heap_growth_bytes_per_frame",
            "bytes",
            (after.current_bytes - before.current_bytes) as f64 / n as f64,
        ));
        figures.push(Figure::new(
            SUITE,
            "engine_frame_memory",
            1,
            "allocs_per_frame",
            "count",
            (after.allocations - before.allocations) as f64 / n as f64,
        ));
    } else {
        eprintln!("# timing: engine_frame_memory skipped: no tracking allocator installed");
    }

    // tick_allocs: needs the tracking allocator of the `lanegraph` binary.
    if lanegraph::hooks::telemetry::alloc::is_installed() {
        let n = 10_000u64;
        let before = lanegraph::hooks::telemetry::memory_stats().allocations;
        for _ in 0..n {
            w.begin_frame();
            w.run_systems();
        }
        let allocs = lanegraph::hooks::telemetry::memory_stats().allocations - before;
        figures.push(Figure::new(
            SUITE,
            "tick_allocs",
            1,
            "allocs_per_tick",
            "count",
            allocs as f64 / n as f64,
        ));
    } else {
        eprintln!("# timing: tick_allocs skipped: no tracking allocator installed in this binary");
    }
    Ok(figures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_suite_reports_every_case_with_its_baseline() {
        let figs = run(BenchOptions { quick: true }).unwrap();
        let case = |c: &str, m: &str| {
            figs.iter()
                .find(|f| f.case == c && f.metric == m)
                .unwrap_or_else(|| panic!("missing {c}/{m}"))
        };
        assert_eq!(
            case("system_overhead", "ns_per_system").baseline.as_deref(),
            Some("untimed loop")
        );
        assert!(case("system_overhead", "ns_per_system").ours > 0.0);
        assert!(case("clock_read", "ns_per_read").baseline_value.is_some());
        assert!(case("breach_cold_path", "ns_per_tick").ratio().is_some());
        assert_eq!(
            case("engine_frame", "ns_per_system").baseline.as_deref(),
            Some("World::run_systems")
        );
    }
}
