//! The `telemetry` bench suite (see `docs/benchmarks.md` and `docs/bench-notes/telemetry.md`).
//!
//! Owns: the quick form of this suite's benchmarks. Must never: assert on timing.
//!
//! # Cases (stable names)
//! - `empty_loop`: the bare loop every other case runs inside (ns per iteration), for subtraction.
//! - `clock_now`: one `lanegraph_jobs::clock::now()` (a span takes two).
//! - `span`: one recorded span (`telemetry::span`, guard dropped at once), baseline `puffin`'s
//!   `profile_scope!` with scopes on, same loop, same run.
//! - `span_disabled`: one span with recording switched off, baseline the empty loop.
//! - `tracing_layer`: one `tracing` span entered and exited with `telemetry::SpanLayer` on a
//!   bare `tracing_subscriber` registry (a game's own span landing in the trace), baseline the
//!   native span.
//! - `metrics_facade`: one `metrics` counter increment through `telemetry::MetricsRecorder`,
//!   with a held handle (`ns_per_add_held`) and with the `counter!` macro looked up on every call
//!   (`ns_per_add_macro`), baseline the native counter.
//! - `counter_add`: `Counter::add(1)`, baseline a relaxed `fetch_add` on one shared atomic (the
//!   obvious unsharded counter); at 1 thread and at every core at once (contended).
//! - `histogram_observe`: `Histogram::observe` over 20 frame-time buckets, baseline the same
//!   update on one shared (unsharded) array of atomics; 1 thread and all cores.
//! - `alloc_tracking`: one 64-byte alloc+free through `TrackingAllocator`, baseline the same
//!   through `System` directly: the difference is what tracking adds. Where the tracker is the
//!   process's `#[global_allocator]` (the `lanegraph` binary), also a `Vec::<u64>::with_capacity(8)` made and
//!   dropped through it (`ns_per_alloc_free_installed`), against the same `System` baseline.
//!
//! Every figure is the median over samples of (batch time / batch length), timed with the
//! engine clock; multi-thread figures take the slowest thread of each sample.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;

use lanegraph::hooks::{AllocatorHooks, HandleHooks, HistogramHooks};
use lanegraph_jobs::clock;

use super::stats::median;
use super::{BenchError, BenchOptions, Figure};
use lanegraph::hooks::telemetry::{self, spans, Buckets, Counter, Histogram, TrackingAllocator};
use lanegraph::hooks::BucketsHooks;

const SUITE: &str = "telemetry";

struct Plan {
    samples: usize,
    iters: u64,
}

impl Plan {
    fn new(opts: BenchOptions) -> Self {
        if opts.quick {
            Plan {
                samples: 31,
                iters: 50_000,
            }
        } else {
            Plan {
                samples: 101,
                iters: 500_000,
            }
        }
    }
}

/// Median ns per iteration of `batch(iters)` over `samples` runs on this thread. `between` runs
/// untimed after each sample (draining span rings, ending puffin frames).
fn per_iter(plan: &Plan, mut batch: impl FnMut(u64), mut between: impl FnMut()) -> f64 {
    batch(plan.iters.min(1000)); // warm: binds rings, slots, caches
    between();
    let mut v: Vec<f64> = (0..plan.samples)
        .map(|_| {
            let t0 = clock::now();
            batch(plan.iters);
            let ns = clock::now().ns_since(t0) as f64;
            between();
            ns / plan.iters as f64
        })
        .collect();
    median(&mut v)
}

/// Median over samples of the slowest thread's ns per iteration, `threads` running at once.
fn per_iter_threads(plan: &Plan, threads: usize, batch: impl Fn(u64) + Sync) -> f64 {
    let mut v = Vec::with_capacity(plan.samples);
    for _ in 0..plan.samples {
        let barrier = Barrier::new(threads);
        let worst = std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        batch(1000);
                        barrier.wait();
                        let t0 = clock::now();
                        batch(plan.iters);
                        clock::now().ns_since(t0)
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().unwrap_or(0))
                .max()
                .unwrap_or(0)
        });
        v.push(worst as f64 / plan.iters as f64);
    }
    median(&mut v)
}

fn empty(iters: u64) {
    for i in 0..iters {
        black_box(i);
    }
}

/// Drains every span ring (what the engine does once per frame).
fn drain_spans() {
    black_box(spans::collect().spans.len());
}

/// Runs the suite.
pub fn run(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    let plan = Plan::new(opts);
    let cores = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .max(2);
    clock::init();
    let mut out = Vec::new();

    let empty_ns = per_iter(&plan, empty, || {});
    out.push(Figure::new(
        SUITE,
        "empty_loop",
        1,
        "ns_per_iter",
        "ns",
        empty_ns,
    ));

    let clock_ns = per_iter(
        &plan,
        |n| {
            (0..n).for_each(|_| {
                black_box(clock::now());
            })
        },
        || {},
    );
    out.push(Figure::new(
        SUITE,
        "clock_now",
        1,
        "ns_per_call",
        "ns",
        clock_ns,
    ));

    // span: ours against puffin's scope, same loop shape.
    let was_on = spans::is_enabled();
    spans::set_enabled(true);
    let ours = per_iter(
        &plan,
        |n| {
            for i in 0..n {
                let _s = telemetry::spans::span("bench.span");
                black_box(i);
            }
        },
        drain_spans,
    );
    puffin::set_scopes_on(true);
    let theirs = per_iter(
        &plan,
        |n| {
            for i in 0..n {
                puffin::profile_scope!("bench.span");
                black_box(i);
            }
        },
        || puffin::GlobalProfiler::lock().new_frame(),
    );
    puffin::set_scopes_on(false);
    out.push(
        Figure::new(SUITE, "span", 1, "ns_per_span", "ns", ours)
            .with_baseline("puffin profile_scope", theirs),
    );
    out.push(
        Figure::new(SUITE, "span", 1, "ns_per_span", "ns", ours)
            .with_baseline("empty loop", empty_ns),
    );

    // tracing_layer: a game's own `tracing` span (entered and exited) recorded into the trace
    // by `SpanLayer` on a bare registry, against the native span.
    let tracing_spans = |n: u64| {
        for i in 0..n {
            let _s = tracing::info_span!(target: "bench", "bench.span").entered();
            black_box(i);
        }
    };
    let layered = {
        use tracing_subscriber::prelude::*;
        let subscriber = tracing_subscriber::registry().with(telemetry::SpanLayer);
        tracing::subscriber::with_default(subscriber, || {
            per_iter(&plan, tracing_spans, drain_spans)
        })
    };
    // The same span on the registry alone: what `tracing` itself costs, so the difference is
    // the layer's.
    let bare_registry = tracing::subscriber::with_default(tracing_subscriber::registry(), || {
        per_iter(&plan, tracing_spans, drain_spans)
    });
    out.push(
        Figure::new(SUITE, "tracing_layer", 1, "ns_per_span", "ns", layered)
            .with_baseline("native span", ours),
    );
    out.push(
        Figure::new(SUITE, "tracing_layer", 1, "ns_per_span", "ns", layered)
            .with_baseline("tracing registry without the layer", bare_registry),
    );

    spans::set_enabled(false);
    let off = per_iter(
        &plan,
        |n| {
            for i in 0..n {
                let _s = telemetry::spans::span("bench.span");
                black_box(i);
            }
        },
        || {},
    );
    spans::set_enabled(was_on);
    out.push(
        Figure::new(SUITE, "span_disabled", 1, "ns_per_span", "ns", off)
            .with_baseline("empty loop", empty_ns),
    );
    drain_spans();

    // metrics_facade: `metrics::counter!` through `MetricsRecorder` (a held handle, and the
    // macro looked up on every call), against the native counter.
    let (held, looked_up) = {
        let recorder = telemetry::MetricsRecorder::new(telemetry::Registry::default());
        metrics::with_local_recorder(&recorder, || {
            let c = metrics::counter!("bench.facade");
            let held = per_iter(
                &plan,
                |n| (0..n).for_each(|_| black_box(&c).increment(1)),
                || {},
            );
            let looked_up = per_iter(
                &plan,
                |n| (0..n).for_each(|_| metrics::counter!("bench.facade").increment(1)),
                || {},
            );
            (held, looked_up)
        })
    };
    let native = {
        let c = Counter::new_detached();
        per_iter(&plan, |n| (0..n).for_each(|_| black_box(&c).add(1)), || {})
    };
    out.push(
        Figure::new(SUITE, "metrics_facade", 1, "ns_per_add_held", "ns", held)
            .with_baseline("native counter", native),
    );
    out.push(
        Figure::new(
            SUITE,
            "metrics_facade",
            1,
            "ns_per_add_macro",
            "ns",
            looked_up,
        )
        .with_baseline("native counter", native),
    );

    // counter_add: sharded counter against one shared atomic.
    let counter = Counter::new_detached();
    let shared = AtomicU64::new(0);
    let add_ours = |n: u64| (0..n).for_each(|_| black_box(&counter).add(1));
    let add_theirs = |n: u64| {
        (0..n).for_each(|_| {
            black_box(&shared).fetch_add(1, Ordering::Relaxed);
        })
    };
    let (o, t) = (
        per_iter(&plan, add_ours, || {}),
        per_iter(&plan, add_theirs, || {}),
    );
    out.push(
        Figure::new(SUITE, "counter_add", 1, "ns_per_add", "ns", o)
            .with_baseline("shared atomic fetch_add", t),
    );
    let (o, t) = (
        per_iter_threads(&plan, cores, add_ours),
        per_iter_threads(&plan, cores, add_theirs),
    );
    out.push(
        Figure::new(SUITE, "counter_add", cores, "ns_per_add", "ns", o)
            .with_baseline("shared atomic fetch_add", t),
    );
    black_box((counter.get(), shared.load(Ordering::Relaxed)));

    // histogram_observe: sharded histogram against one shared bucket array.
    let buckets = Buckets::frame_time_ms();
    let hist = Histogram::new_detached(buckets.clone());
    let naive = NaiveHistogram::new(buckets.bounds());
    let values: Vec<f64> = (0..64).map(|i| 0.3 + i as f64 * 0.71).collect();
    let obs_ours =
        |n: u64| (0..n).for_each(|i| black_box(&hist).observe(values[(i & 63) as usize]));
    let obs_theirs =
        |n: u64| (0..n).for_each(|i| black_box(&naive).observe(values[(i & 63) as usize]));
    let (o, t) = (
        per_iter(&plan, obs_ours, || {}),
        per_iter(&plan, obs_theirs, || {}),
    );
    out.push(
        Figure::new(SUITE, "histogram_observe", 1, "ns_per_observe", "ns", o)
            .with_baseline("shared atomic buckets", t),
    );
    let (o, t) = (
        per_iter_threads(&plan, cores, obs_ours),
        per_iter_threads(&plan, cores, obs_theirs),
    );
    out.push(
        Figure::new(SUITE, "histogram_observe", cores, "ns_per_observe", "ns", o)
            .with_baseline("shared atomic buckets", t),
    );

    // alloc_tracking: the tracker's added cost per alloc+free.
    let tracker = TrackingAllocator::new();
    let ours = per_iter(
        &plan,
        |n| {
            (0..n).for_each(|_| {
                black_box(tracker.alloc_free_roundtrip(64));
            })
        },
        || {},
    );
    let sys = per_iter(
        &plan,
        |n| {
            (0..n).for_each(|_| {
                black_box(telemetry::alloc::system_alloc_free_roundtrip(64));
            })
        },
        || {},
    );
    out.push(
        Figure::new(SUITE, "alloc_tracking", 1, "ns_per_alloc_free", "ns", ours)
            .with_baseline("System alloc+free", sys),
    );
    out.push(Figure::new(
        SUITE,
        "alloc_tracking",
        1,
        "ns_added_per_alloc_free",
        "ns",
        ours - sys,
    ));

    // The installed path: a `Vec` through `#[global_allocator]`, as a game's code allocates. Only
    // when this process really routes the global allocator through the tracker (the `lanegraph`
    // binary does; a test harness does not): detected by a `Box` moving this thread's counters.
    if global_allocator_is_tracking() {
        let boxed = per_iter(
            &plan,
            |n| {
                // 64 bytes, 8-aligned, uninitialised: the layout of the roundtrips above (a
                // zeroed `Box` would go to `calloc` and time the zeroing too).
                (0..n).for_each(|_| {
                    drop(black_box(Vec::<u64>::with_capacity(8)));
                })
            },
            || {},
        );
        out.push(
            Figure::new(
                SUITE,
                "alloc_tracking",
                1,
                "ns_per_alloc_free_installed",
                "ns",
                boxed,
            )
            .with_baseline("System alloc+free", sys),
        );
    }
    Ok(out)
}

/// Whether a `Box` made here goes through a [`TrackingAllocator`] installed as the global
/// allocator (this thread's allocation count moves by one).
fn global_allocator_is_tracking() -> bool {
    let count = || telemetry::thread_memory_stats().map(|s| s.allocations);
    let before = count();
    drop(black_box(Box::new([0u8; 64])));
    matches!((before, count()), (Some(a), Some(b)) if b > a)
}

/// The obvious unsharded histogram: one array of atomics every thread `fetch_add`s into.
struct NaiveHistogram {
    bounds: Vec<f64>,
    counts: Vec<AtomicU64>,
    sum_bits: AtomicU64,
}

impl NaiveHistogram {
    fn new(bounds: &[f64]) -> Self {
        NaiveHistogram {
            bounds: bounds.to_vec(),
            counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum_bits: AtomicU64::new(0),
        }
    }

    fn observe(&self, v: f64) {
        let i = self.bounds.partition_point(|b| *b < v);
        self.counts[i].fetch_add(1, Ordering::Relaxed);
        let _ = self
            .sum_bits
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                Some((f64::from_bits(b) + v).to_bits())
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_suite_reports_every_case() {
        // The suite flips the global span switch and drains rings; no other test in this crate
        // records spans (the runtime's span tests run in their own process).
        let plan_iters = Plan::new(BenchOptions { quick: true }).iters;
        assert!(plan_iters > 0);
        let figs = run(BenchOptions { quick: true }).unwrap();
        for case in [
            "span",
            "span_disabled",
            "tracing_layer",
            "metrics_facade",
            "counter_add",
            "histogram_observe",
            "alloc_tracking",
        ] {
            assert!(figs.iter().any(|f| f.case == case), "missing case {case}");
        }
        let span = figs.iter().find(|f| f.case == "span").unwrap();
        assert_eq!(span.baseline.as_deref(), Some("puffin profile_scope"));
        assert!(figs.iter().all(|f| f.ours.is_finite()));
    }
}
