//! Criterion: the cost of per-system timing. 256 trivial systems, `run_systems` (timed) against
//! `lanegraph::hooks::run_systems_untimed` (same loop, no timing) in one run, and one shared-clock read against
//! one `Instant::now()`. The quick form is `lanegraph bench timing`; figures and their reading
//! are in `docs/bench-notes/timing.md`.
//!
//! Run: `cargo bench -p lanegraph-benches --bench timing`.

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_main, Criterion, Throughput};
use lanegraph::hooks::MAX_SYSTEMS;
use lanegraph::jobs::clock;
use lanegraph::systems::SystemDef;
use lanegraph::world::World;

fn trivial_world() -> World {
    let mut w = World::new();
    for i in 0..MAX_SYSTEMS {
        let mut acc = i as u64;
        w.register_system(SystemDef::new(
            format!("trivial{i:03}"),
            1_000.0,
            move |_, _| {
                acc = black_box(acc.wrapping_add(1));
            },
        ))
        .expect("valid system");
    }
    w
}

fn system_overhead(c: &mut Criterion) {
    clock::init();
    let mut g = c.benchmark_group("system_overhead");
    g.throughput(Throughput::Elements(MAX_SYSTEMS as u64));
    let mut w = trivial_world();
    g.bench_function("untimed_loop", |b| {
        b.iter(|| lanegraph::hooks::run_systems_untimed(&mut w))
    });
    let mut w = trivial_world();
    g.bench_function("timed_loop", |b| b.iter(|| w.run_systems()));
    g.finish();
}

fn clock_read(c: &mut Criterion) {
    clock::init();
    let mut g = c.benchmark_group("clock_read");
    g.bench_function("instant_now", |b| b.iter(|| black_box(Instant::now())));
    g.bench_function("lanegraph_clock_now", |b| {
        b.iter(|| black_box(clock::now()))
    });
    g.finish();
}

/// The group, written out (what `criterion_group!` expands to, minus its undocumented `pub fn`).
fn benches() {
    let mut c = Criterion::default().configure_from_args();
    system_overhead(&mut c);
    clock_read(&mut c);
}

criterion_main!(benches);
