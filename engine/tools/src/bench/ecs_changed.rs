//! The `ecs` suite's change-detection rows: a system's `Changed<T>` query against a full pass
//! over the same column, in the same system run.
//!
//! Owns: the cases below. Must never: assert on timing, or report a `Changed` pass that saw
//! other rows than the ones written (the suite fails instead).
//!
//! # Cases (metric `us_per_query`, lower is better; baseline: `query::<&Pos>()` over every row)
//! 1,000,000 entities with `Pos { x, y }` (AoS). Before each step, the bench writes (through
//! `World::insert`, as a game's code outside systems would) or, for 100 %, through a `&mut Pos`
//! query; then a system runs the `Changed<Pos>` pass (summing what it sees) and the full pass,
//! in an order that alternates by step (the second finds the column warm).
//! - `changed_1pct_1m`: 10,000 rows written, one run of consecutive entities (the rows one
//!   region of the world moved);
//! - `changed_1pct_scattered_1m`: 10,000 rows written, every 100th entity;
//! - `changed_100pct_1m`: every row written.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use lanegraph::prelude::*;
use lanegraph::world::World;
use lanegraph_jobs::clock;

use super::stats::median;
use super::{BenchError, Figure};

const SUITE: &str = "ecs";
const ROWS: usize = 1_000_000;

#[derive(Debug, Clone, Copy, Component, StateHash)]
struct Pos {
    x: f32,
    y: f32,
}

fn fail(why: impl std::fmt::Display) -> BenchError {
    BenchError::failed(SUITE, why.to_string())
}

/// What the reader system measured in its latest run.
#[derive(Default)]
struct Reading {
    changed_ns: AtomicU64,
    full_ns: AtomicU64,
    changed_rows: AtomicU64,
}

/// Which rows a case writes before each step.
#[derive(Clone, Copy)]
enum Written {
    Run,
    Scattered,
    All,
}

/// The three rows.
pub(super) fn rows(samples: usize) -> Result<Vec<Figure>, BenchError> {
    let cases = [
        ("changed_1pct_1m", Written::Run),
        ("changed_1pct_scattered_1m", Written::Scattered),
        ("changed_100pct_1m", Written::All),
    ];
    cases
        .into_iter()
        .map(|(case, written)| row(case, written, samples))
        .collect()
}

fn row(case: &str, written: Written, samples: usize) -> Result<Figure, BenchError> {
    let mut w = World::new();
    let es = w
        .spawn_batch((0..ROWS).map(|i| {
            (Pos {
                x: i as f32,
                y: 0.0,
            },)
        }))
        .map_err(fail)?
        .to_vec();
    let reading = Arc::new(Reading::default());
    let out = reading.clone();
    w.register_system(SystemDef::new("reader", 1.0, move |w: &mut World, ctx| {
        let (mut sum, mut n) = (0.0f32, 0u64);
        let mut changed_pass = |w: &mut World| {
            let t0 = clock::now();
            if let Ok(mut q) = w.query_filtered::<&Pos, Changed<Pos>>() {
                q.for_each(|p| {
                    sum += p.x;
                    n += 1;
                });
            }
            clock::now().ns_since(t0)
        };
        let full_pass = |w: &mut World| {
            let (t0, mut s) = (clock::now(), 0.0f32);
            if let Ok(mut q) = w.query::<&Pos>() {
                q.for_each(|p| s += p.y);
            }
            std::hint::black_box(s);
            clock::now().ns_since(t0)
        };
        // The pass that runs second finds the column warm: the order alternates by step.
        let (changed_ns, full_ns) = if ctx.tick() % 2 == 0 {
            (changed_pass(w), full_pass(w))
        } else {
            let full = full_pass(w);
            (changed_pass(w), full)
        };
        std::hint::black_box(sum);
        out.changed_ns.store(changed_ns, Ordering::Relaxed);
        out.full_ns.store(full_ns, Ordering::Relaxed);
        out.changed_rows.store(n, Ordering::Relaxed);
    }))
    .map_err(fail)?;
    // The reader's first look sees every row.
    w.run_systems();
    let (mut changed, mut full) = (Vec::new(), Vec::new());
    for s in 0..samples {
        let expect = match written {
            Written::Run => {
                let start = (s * 37_813) % (ROWS - ROWS / 100);
                for &e in &es[start..start + ROWS / 100] {
                    w.insert(
                        e,
                        Pos {
                            x: s as f32,
                            y: 1.0,
                        },
                    )
                    .map_err(fail)?;
                }
                ROWS / 100
            }
            Written::Scattered => {
                for &e in es.iter().skip(s % 100).step_by(100) {
                    w.insert(
                        e,
                        Pos {
                            x: s as f32,
                            y: 1.0,
                        },
                    )
                    .map_err(fail)?;
                }
                es.iter().skip(s % 100).step_by(100).count()
            }
            Written::All => {
                w.query::<&mut Pos>()
                    .map_err(fail)?
                    .for_each(|p| p.y += 1.0);
                ROWS
            }
        };
        w.run_systems();
        let seen = reading.changed_rows.load(Ordering::Relaxed) as usize;
        if seen != expect {
            return Err(fail(format!(
                "{case}: the Changed pass saw {seen} rows, {expect} were written"
            )));
        }
        changed.push(reading.changed_ns.load(Ordering::Relaxed) as f64 / 1e3);
        full.push(reading.full_ns.load(Ordering::Relaxed) as f64 / 1e3);
    }
    Ok(
        Figure::new(SUITE, case, 1, "us_per_query", "us", median(&mut changed))
            .with_baseline("a full pass over the same column", median(&mut full)),
    )
}
