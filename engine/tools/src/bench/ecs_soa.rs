//! The `ecs` suite's field-SoA rows: a typed query over field-SoA components against the same
//! query over the AoS layout of the same data, in the same run.
//!
//! Owns: the cases below. Must never: assert on timing.
//!
//! # Cases (metric `ns_per_row`, lower is better; baseline: the same query over AoS)
//! - `typed_query_soa_read_{2,4}f_{10k,1Mi}`: `(&A, &B)` summed into a checksum, `A` and `B`
//!   both 2-field (or both 4-field) components;
//! - `typed_query_soa_write_{2,4}f_{10k,1Mi}`: `(&mut A, &B)`, `a += b * dt` per field.
//!
//! Both worlds hold the same values, inserted together (rows aligned); each world is made
//! through the public API only, as a game makes it (`World::use_field_soa`, `World::query`).

use std::hint::black_box;

use lanegraph::simd::SoaComponent;
use lanegraph::world::{Component, StateHash, World};
use lanegraph_jobs::clock;

use super::stats::median;
use super::{BenchError, Figure};

const SUITE: &str = "ecs";

#[derive(Debug, Clone, Copy, Component, StateHash, SoaComponent)]
struct P2 {
    x: f32,
    y: f32,
}
#[derive(Debug, Clone, Copy, Component, StateHash, SoaComponent)]
struct V2 {
    x: f32,
    y: f32,
}
#[derive(Debug, Clone, Copy, Component, StateHash, SoaComponent)]
struct P4 {
    x: f32,
    y: f32,
    z: f32,
    w: f32,
}
#[derive(Debug, Clone, Copy, Component, StateHash, SoaComponent)]
struct V4 {
    x: f32,
    y: f32,
    z: f32,
    w: f32,
}

/// A world of `n` entities with `make(i)`'s two components, both field-SoA when `soa`.
fn world<A, B>(n: usize, soa: bool, make: impl Fn(f32) -> (A, B)) -> Result<World, BenchError>
where
    A: Component + SoaComponent,
    B: Component + SoaComponent,
{
    let mut w = World::new();
    let fail = |e: lanegraph::world::WorldError| BenchError::failed(SUITE, e.to_string());
    if soa {
        w.use_field_soa::<A>().map_err(fail)?;
        w.use_field_soa::<B>().map_err(fail)?;
    }
    w.spawn_batch((0..n).map(|i| make(i as f32)))
        .map_err(fail)?;
    Ok(w)
}

fn world2(n: usize, soa: bool) -> Result<World, BenchError> {
    world(n, soa, |f| (P2 { x: f, y: -f }, V2 { x: 1.0, y: 0.5 }))
}

fn world4(n: usize, soa: bool) -> Result<World, BenchError> {
    world(n, soa, |f| {
        (
            P4 {
                x: f,
                y: -f,
                z: 0.5 * f,
                w: 1.0,
            },
            V4 {
                x: 1.0,
                y: 0.5,
                z: -0.25,
                w: 0.0,
            },
        )
    })
}

const DT: f32 = 1.0 / 64.0;

fn read2(w: &mut World) -> f32 {
    let mut sum = 0.0f32;
    if let Ok(mut q) = w.query::<(&P2, &V2)>() {
        q.for_each(|(p, v)| sum += p.x * v.x + p.y * v.y);
    }
    sum
}

fn write2(w: &mut World) {
    if let Ok(mut q) = w.query::<(&mut P2, &V2)>() {
        q.for_each(|(p, v)| {
            p.x += v.x * DT;
            p.y += v.y * DT;
        });
    }
}

fn read4(w: &mut World) -> f32 {
    let mut sum = 0.0f32;
    if let Ok(mut q) = w.query::<(&P4, &V4)>() {
        q.for_each(|(p, v)| sum += p.x * v.x + p.y * v.y + p.z * v.z + p.w * v.w);
    }
    sum
}

fn write4(w: &mut World) {
    if let Ok(mut q) = w.query::<(&mut P4, &V4)>() {
        q.for_each(|(p, v)| {
            p.x += v.x * DT;
            p.y += v.y * DT;
            p.z += v.z * DT;
            p.w += v.w * DT;
        });
    }
}

/// One case: its name, the field-SoA world, the AoS world, and the step timed on both.
type Case = (&'static str, World, World, fn(&mut World));

/// ns per row of `step` on the SoA world and on the AoS one, interleaved, medians.
fn per_row(
    samples: usize,
    rows: usize,
    mut soa: World,
    mut aos: World,
    step: impl Fn(&mut World),
) -> (f64, f64) {
    let passes = ((4 << 20) / rows).max(1);
    let (mut s, mut a) = (Vec::new(), Vec::new());
    for _ in 0..samples {
        for (w, out) in [(&mut soa, &mut s), (&mut aos, &mut a)] {
            let t0 = clock::now();
            for _ in 0..passes {
                step(black_box(&mut *w));
            }
            out.push(clock::now().ns_since(t0) as f64 / (passes * rows) as f64);
        }
    }
    (median(&mut s), median(&mut a))
}

/// The field-SoA rows.
pub fn run(quick: bool) -> Result<Vec<Figure>, BenchError> {
    let samples = if quick { 9 } else { 31 };
    let mut figures = Vec::new();
    for (label, rows) in [("10k", 10_000), ("1Mi", 1 << 20)] {
        let cases: [Case; 4] = [
            ("read_2f", world2(rows, true)?, world2(rows, false)?, |w| {
                black_box(read2(w));
            }),
            (
                "write_2f",
                world2(rows, true)?,
                world2(rows, false)?,
                write2,
            ),
            ("read_4f", world4(rows, true)?, world4(rows, false)?, |w| {
                black_box(read4(w));
            }),
            (
                "write_4f",
                world4(rows, true)?,
                world4(rows, false)?,
                write4,
            ),
        ];
        for (name, soa, aos, step) in cases {
            let (s, a) = per_row(samples, rows, soa, aos, step);
            figures.push(
                Figure::new(
                    SUITE,
                    format!("typed_query_soa_{name}_{label}"),
                    1,
                    "ns_per_row",
                    "ns",
                    s,
                )
                .with_baseline("the same query over AoS", a),
            );
        }
    }
    Ok(figures)
}
