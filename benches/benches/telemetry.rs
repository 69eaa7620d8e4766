//! Criterion: telemetry hot paths against the obvious alternative, in one run.
//!
//! - `span/*`: our span against an empty loop body and `puffin`'s `profile_scope!`, and with
//!   recording switched off.
//! - `counter_add/*`: our sharded counter against one shared relaxed `fetch_add`.
//! - `histogram_observe/*`: our sharded histogram against one shared array of atomics.
//! - `alloc_free/*`: a 64-byte alloc+free through `TrackingAllocator` against `System`.
//!
//! Run: `cargo bench -p lanegraph-benches --bench telemetry`.

// `criterion_group!` expands to an undocumented `pub fn`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{criterion_group, criterion_main, Criterion};
use lanegraph::hooks::telemetry::{self, spans, Buckets, Counter, Histogram, TrackingAllocator};
use lanegraph::hooks::BucketsHooks;
use lanegraph::hooks::{AllocatorHooks, HandleHooks, HistogramHooks};

fn span(c: &mut Criterion) {
    let mut g = c.benchmark_group("span");
    g.bench_function("empty_loop", |b| b.iter(|| black_box(1u64)));
    spans::set_enabled(true);
    g.bench_function("lanegraph", |b| {
        b.iter(|| {
            let _s = telemetry::spans::span("bench.span");
            black_box(1u64)
        })
    });
    let _ = spans::collect();
    puffin::set_scopes_on(true);
    g.bench_function("puffin", |b| {
        b.iter(|| {
            puffin::profile_scope!("bench.span");
            black_box(1u64)
        });
        puffin::GlobalProfiler::lock().new_frame();
    });
    puffin::set_scopes_on(false);
    spans::set_enabled(false);
    g.bench_function("lanegraph_disabled", |b| {
        b.iter(|| {
            let _s = telemetry::spans::span("bench.span");
            black_box(1u64)
        })
    });
    spans::set_enabled(true);
    g.finish();
}

fn counter_add(c: &mut Criterion) {
    let mut g = c.benchmark_group("counter_add");
    let counter = Counter::new_detached();
    let shared = AtomicU64::new(0);
    g.bench_function("lanegraph", |b| b.iter(|| black_box(&counter).add(1)));
    g.bench_function("shared_fetch_add", |b| {
        b.iter(|| black_box(&shared).fetch_add(1, Ordering::Relaxed))
    });
    g.finish();
}

fn histogram_observe(c: &mut Criterion) {
    let mut g = c.benchmark_group("histogram_observe");
    let buckets = Buckets::frame_time_ms();
    let h = Histogram::new_detached(buckets.clone());
    let bounds = buckets.bounds().to_vec();
    let counts: Vec<AtomicU64> = (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect();
    let sum = AtomicU64::new(0);
    let mut v = 0.3f64;
    g.bench_function("lanegraph", |b| {
        b.iter(|| {
            v = if v > 40.0 { 0.3 } else { v + 0.71 };
            h.observe(black_box(v))
        })
    });
    g.bench_function("shared_atomics", |b| {
        b.iter(|| {
            v = if v > 40.0 { 0.3 } else { v + 0.71 };
            let x = black_box(v);
            counts[bounds.partition_point(|b| *b < x)].fetch_add(1, Ordering::Relaxed);
            let _ = sum.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |s| {
                Some((f64::from_bits(s) + x).to_bits())
            });
        })
    });
    g.finish();
}

fn alloc_free(c: &mut Criterion) {
    let mut g = c.benchmark_group("alloc_free");
    let t = TrackingAllocator::new();
    g.bench_function("tracking", |b| {
        b.iter(|| t.alloc_free_roundtrip(black_box(64)))
    });
    g.bench_function("system", |b| {
        b.iter(|| telemetry::alloc::system_alloc_free_roundtrip(black_box(64)))
    });
    g.finish();
}

criterion_group!(benches, span, counter_add, histogram_observe, alloc_free);
criterion_main!(benches);
