//! Queries and field-SoA kernels: a wide query with an optional term, a filtered query, a query
//! fanned out over the physics lane, and `f32x8` kernels over field-SoA columns.
//!
//! `cargo run -p lanegraph --example queries_and_kernels [BODIES]` (default 100000). Exits 1 if
//! the kernel's result differs from the same maths done one entity at a time.

use lanegraph::prelude::*;
use lanegraph::simd::kernels::integrate;
use lanegraph::simd::SoaComponent;

/// A body's position, stored field-SoA: one aligned `f32` column per field.
#[derive(Clone, Copy, Debug, Component, StateHash, SoaComponent)]
#[component(domains(TRANSFORM))]
struct Pos {
    x: f32,
    y: f32,
}

/// Its velocity, field-SoA too, row-aligned with `Pos`.
#[derive(Clone, Copy, Debug, Component, StateHash, SoaComponent)]
#[component(domains(PHYSICS))]
struct Vel {
    x: f32,
    y: f32,
}

/// Air drag, on some bodies only (array-of-structs, the default layout).
#[derive(Clone, Copy, Debug, Component, StateHash)]
#[component(domains(PHYSICS))]
struct Drag(f32);

/// A tag: bodies the player owns.
#[derive(Clone, Copy, Debug, Component, StateHash)]
#[component(domains(GAMEPLAY))]
struct Owned;

const DT: f32 = 1.0 / 60.0;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let bodies: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(100_000);
    // The engine's world runs `par_*` work on the physics lane.
    let mut engine = Engine::builder().lockstep(true).build()?;
    let w = engine.world_mut();
    w.use_field_soa::<Pos>()?;
    w.use_field_soa::<Vel>()?;
    for i in 0..bodies {
        let e = w.spawn();
        w.insert(
            e,
            Pos {
                x: i as f32,
                y: 0.0,
            },
        )?;
        w.insert(
            e,
            Vel {
                x: 1.0,
                y: (i % 7) as f32,
            },
        )?;
        if i % 3 == 0 {
            w.insert(e, Drag(0.1))?;
        }
        if i % 100 == 0 {
            w.insert(e, Owned)?;
        }
    }

    // 1. A wide query: `Option<&Drag>` is `None` where the body has none.
    let slowed = w
        .query::<(&mut Vel, Option<&Drag>)>()?
        .for_each(|(v, drag)| {
            let k = 1.0 - drag.map_or(0.0, |d| d.0);
            v.x *= k;
            v.y *= k;
        });
    // 2. A filtered query: only the player's bodies, and only those without drag.
    let mut owned_free = 0;
    w.query_filtered::<&Vel, (With<Owned>, Without<Drag>)>()?
        .for_each(|_| owned_free += 1);
    // 3. The same shape of loop, in chunks on the physics lane's workers.
    let run = w
        .query::<&mut Vel>()?
        .par_for_each(|v| v.y = v.y.min(5.0))?;
    // Expected positions, one entity at a time, before the kernel moves them.
    let expected: Vec<(f32, f32)> = {
        let mut q = w.query::<(&Pos, &Vel)>()?;
        let mut out = Vec::with_capacity(bodies);
        q.for_each(|(p, v)| out.push((p.x + v.x * DT, p.y + v.y * DT)));
        out
    };
    // 4. The f32x8 kernel over whole columns, in disjoint chunks on the physics lane.
    let rows = w.par_soa_chunks2::<Pos, Vel, _, _>(|p, v| {
        let ([px, py], [vx, vy]) = (p.fields, v.fields);
        integrate::integrate(px, vx, DT).expect("columns of one chunk have one length");
        integrate::integrate(py, vy, DT).expect("columns of one chunk have one length");
    })?;
    let mut got = Vec::with_capacity(bodies);
    w.query::<&Pos>()?.for_each(|p| got.push((p.x, p.y)));

    println!(
        "{bodies} bodies: {slowed} slowed by a 2-term query, {owned_free} owned without drag, \
         {} in {} parallel chunks, {rows} moved by the f32x8 kernel",
        run.visited, run.chunks
    );
    // Equal up to rounding (a build with FMA fuses the kernel's multiply-add).
    let close = |a: f32, b: f32| (a - b).abs() <= 1e-5 * a.abs().max(1.0);
    let agree = got.len() == expected.len()
        && got
            .iter()
            .zip(&expected)
            .all(|(g, e)| close(g.0, e.0) && close(g.1, e.1));
    if !agree {
        eprintln!("the kernel disagrees with the scalar loop");
        std::process::exit(1);
    }
    Ok(())
}
