//! Criterion: job dispatch on lanes against rayon, same workloads as `lanegraph bench dispatch`
//! (layered DAG 10 x 100 fan-in 4, 1,000-node chain, owner -> lane -> owner round trip).
//!
//! Run: `cargo bench -p lanegraph-benches --bench dispatch`.

// criterion_group!/criterion_main! generate undocumented items.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lanegraph_benches::quick::dispatch::{
    physics_lanes, physics_lanes_unpinned, rayon_pool, Dag, RayonDag,
};
use lanegraph_jobs::GraphBuilder;

fn layered_dag(c: &mut Criterion) {
    let dag = Dag::layered(10, 100, 4);
    let mut group = c.benchmark_group("layered_dag");
    group.throughput(Throughput::Elements(dag.len() as u64));
    for threads in [1usize, 2] {
        let lanes = physics_lanes_unpinned(threads);
        let mut g = dag.to_graph(&lanes, "physics", false);
        group.bench_function(BenchmarkId::new("lanegraph", threads), |b| {
            b.iter(|| {
                g.run(&lanes, &()).expect("runs");
            })
        });
        let pool = rayon_pool(threads);
        let r = RayonDag::new(dag.clone());
        group.bench_function(BenchmarkId::new("rayon", threads), |b| {
            b.iter(|| r.run(&pool))
        });
    }
    group.finish();
}

fn chain(c: &mut Criterion) {
    let dag = Dag::chain(1000);
    let mut group = c.benchmark_group("chain");
    group.throughput(Throughput::Elements(dag.len() as u64));
    let lanes = physics_lanes_unpinned(1);
    let mut g = dag.to_graph(&lanes, "physics", false);
    group.bench_function("lanegraph", |b| {
        b.iter(|| {
            g.run(&lanes, &()).expect("runs");
        })
    });
    let pool = rayon_pool(1);
    let r = RayonDag::new(dag.clone());
    group.bench_function("rayon", |b| b.iter(|| r.run(&pool)));
    group.finish();
}

fn round_trip(c: &mut Criterion) {
    let mut group = c.benchmark_group("round_trip");
    let lanes = physics_lanes(1);
    let mut b = GraphBuilder::<()>::new("rt").record_timing(false);
    b.node("one", "physics", |_, _| {
        std::hint::black_box(());
    });
    let mut g = b.build(&lanes).expect("valid");
    group.bench_function("lanegraph", |b| {
        b.iter(|| {
            g.run(&lanes, &()).expect("runs");
        })
    });
    let pool = rayon_pool(1);
    group.bench_function("rayon_install", |b| {
        b.iter(|| pool.install(|| std::hint::black_box(())))
    });
    group.finish();
}

criterion_group!(benches, layered_dag, chain, round_trip);
criterion_main!(benches);
