//! The simulation is frame-rate independent: the same systems driven at different display rates
//! (and with either component layout) pass through exactly the same states, tick by tick.

use lanegraph::hooks::{GameLoop, LoopOptions, ManualClock, WorldHooks};
use lanegraph::simd::SoaComponent;
use lanegraph::systems::SystemDef;
use lanegraph::world::{Component, Entity, StateHash, World};

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, SoaComponent)]
#[component(domains(TRANSFORM))]
struct Pos {
    x: f32,
    y: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
#[component(domains(PHYSICS))]
struct Vel {
    x: f32,
    y: f32,
}

/// A world whose systems spawn, move and despawn entities every tick.
fn sim_world(soa: bool) -> World {
    let mut w = World::new();
    if soa {
        w.use_field_soa::<Pos>().unwrap();
    }
    w.register_system(SystemDef::new("spawn", 1.0, |world, ctx| {
        if ctx.tick() % 3 == 0 {
            let e = world.spawn();
            let k = ctx.tick() as f32;
            world.insert(e, Pos { x: k, y: -k }).unwrap();
            world
                .insert(
                    e,
                    Vel {
                        x: 1.0 + k * 0.01,
                        y: 0.5,
                    },
                )
                .unwrap();
        }
    }))
    .unwrap();
    w.register_system(SystemDef::new("integrate", 1.0, |world, ctx| {
        let dt = ctx.dt();
        let mut moves = Vec::new();
        world
            .query::<(Entity, &Vel)>()
            .unwrap()
            .for_each(|(e, v)| moves.push((e, *v)));
        for (e, v) in moves {
            let p = match world.get::<Pos>(e) {
                Ok(p) => *p,
                Err(_) => world.get_fields::<Pos>(e).unwrap(),
            };
            let p = Pos {
                x: p.x + v.x * dt,
                y: p.y + v.y * dt,
            };
            world.insert(e, p).unwrap();
        }
    }))
    .unwrap();
    w.register_system(SystemDef::new("cull", 1.0, |world, _| {
        let far: Vec<_> = world
            .entities()
            .iter()
            .copied()
            .filter(|&e| match world.get::<Pos>(e) {
                Ok(p) => p.x > 50.0,
                Err(_) => world.get_fields::<Pos>(e).is_ok_and(|p| p.x > 50.0),
            })
            .collect();
        for e in far {
            world.despawn(e).unwrap();
        }
    }))
    .unwrap();
    w
}

/// State hashes after each of the first `ticks` ticks, at display rate `hz`.
fn hashes(hz: u64, soa: bool, ticks: usize) -> Vec<u64> {
    let clock = ManualClock::new();
    let mut lp =
        GameLoop::with_clock(sim_world(soa), clock.clone(), LoopOptions::default()).unwrap();
    let mut out = Vec::new();
    let mut frame = 0u64;
    while out.len() < ticks {
        frame += 1;
        clock.set_ns(frame * 1_000_000_000 / hz);
        lp.frame_with(|world, _| out.push(world.state_hash()));
    }
    out.truncate(ticks);
    out
}

#[test]
fn every_display_rate_and_layout_passes_through_the_same_states() {
    let reference = hashes(60, false, 600);
    // The states really change tick to tick.
    assert!(reference.windows(2).all(|w| w[0] != w[1]));
    for hz in [30, 144, 50] {
        assert_eq!(hashes(hz, false, 600), reference, "{hz} Hz, AoS");
    }
    assert_eq!(hashes(60, true, 600), reference, "60 Hz, field-SoA");
    assert_eq!(hashes(144, true, 600), reference, "144 Hz, field-SoA");
}
