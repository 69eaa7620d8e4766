//! Hello, systems: a component, two ordered systems, an engine running frames on a fixed step.
//!
//! `cargo run -p lanegraph --example hello_systems [FRAMES]` (default 120). Prints where the ball
//! ended and each system's timing; exits 1 if the ball did not move as the systems say.

use lanegraph::prelude::*;

/// Where the ball is (metres).
#[derive(Clone, Copy, Debug, Component, StateHash)]
#[component(domains(TRANSFORM))]
struct Pos(f32);

/// How fast it goes (metres per second).
#[derive(Clone, Copy, Debug, Component, StateHash)]
#[component(domains(PHYSICS))]
struct Vel(f32);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let frames: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(120);
    // Lockstep: one fixed step per frame, whatever the clock (the run is reproducible).
    let mut engine = Engine::builder().lockstep(true).fixed_step_hz(60).build()?;
    let w = engine.world_mut();
    let ball = w.spawn();
    w.insert(ball, Pos(0.0))?;
    w.insert(ball, Vel(1.0))?;

    // A system is a name, a budget in ms, and a closure over the World and its context.
    w.register_system(SystemDef::new("gravity", 0.1, |w: &mut World, ctx| {
        let dt = ctx.dt();
        if let Ok(mut q) = w.query::<&mut Vel>() {
            q.for_each(|v| v.0 -= 9.81 * dt);
        }
    }))?;
    w.register_system(
        SystemDef::new("integrate", 0.1, |w: &mut World, ctx| {
            let dt = ctx.dt();
            let n = w
                .query::<(&mut Pos, &Vel)>()
                .map(|mut q| q.for_each(|(p, v)| p.0 += v.0 * dt))
                .unwrap_or(0);
            ctx.report_workload(n as u64); // the workload the system's cost model sees
        })
        .after("gravity"), // runs after `gravity` in every step
    )?;

    for _ in 0..frames {
        engine.frame()?;
    }

    let pos = engine.world().get::<Pos>(ball)?.0;
    let t = frames as f32 / 60.0;
    // Semi-implicit Euler of x = t - g t^2 / 2 overshoots by g t dt / 2.
    let expected = t - 9.81 * t * t / 2.0;
    let bound = 9.81 * t / 60.0 / 2.0 + 1e-3;
    println!("after {frames} frames ({t:.2} s): ball at {pos:.3} m (closed form {expected:.3} m)");
    for name in ["gravity", "integrate"] {
        let id = engine.world().system_id(name).ok_or("registered above")?;
        let s = engine.world().system_timing_stats(id)?;
        println!("  {name:10} runs {:4}  last {:.4} ms", s.runs, s.last_ms);
    }
    if (pos - expected).abs() > bound {
        eprintln!("the ball is not where the systems put it");
        std::process::exit(1);
    }
    Ok(())
}
