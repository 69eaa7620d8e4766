//! Criterion: job dispatch against rayon (filled in with the lane runtime).
use criterion::{criterion_group, criterion_main, Criterion};

fn placeholder(c: &mut Criterion) {
    c.bench_function("noop", |b| b.iter(|| std::hint::black_box(1 + 1)));
}

criterion_group!(benches, placeholder);
criterion_main!(benches);
