//! Resources, commands and events: a spawner that spawns through commands, a reaper that
//! despawns from inside its query and sends an event, a scorer that reads each event once.
//!
//! `cargo run -p lanegraph --example resources_commands_events [FRAMES]` (default 300). Exits 1
//! if the books do not balance (spawned = alive + reaped, one event per reaped entity).

use lanegraph::prelude::*;
use lanegraph::world::Events;

/// How long an entity has left, in steps.
#[derive(Clone, Copy, Debug, Component, StateHash)]
#[component(domains(GAMEPLAY))]
struct Ttl(u32);

/// The game's books: a resource every system can reach (hashed and replayed like components).
#[derive(Debug, Default, Resource, StateHash)]
#[resource(domains(GAMEPLAY))]
struct Books {
    spawned: u64,
    reaped: u64,
    scored: u64,
    last_expiry_tick: u64,
}

/// Sent when an entity's time is up.
#[derive(Debug, Clone, StateHash)]
struct Expired {
    tick: u64,
}
impl Event for Expired {
    const NAME: &'static str = "Expired";
}

/// The scorer's place in the `Expired` queue: state a system keeps between runs lives in the
/// World, not in its closure.
#[derive(Debug, Default, Clone, Resource, StateHash)]
#[resource(domains(GAMEPLAY))]
struct ScorerCursor(EventCursor);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let frames: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(300);
    let mut engine = Engine::builder().lockstep(true).build()?;
    let w = engine.world_mut();
    w.insert_resource(Books::default())?;
    w.add_event::<Expired>()?;

    // Commands are deferred: applied right after the system that queued them.
    w.register_system(SystemDef::new("spawner", 0.2, |w: &mut World, ctx| {
        let ttl = 10 + (ctx.tick() % 50) as u32;
        let c = ctx.commands();
        c.spawn((Ttl(ttl),));
        if let Ok(b) = w.resource_mut::<Books>() {
            b.spawned += 1;
        }
    }))?;
    w.register_system(
        SystemDef::new("reaper", 0.5, |w: &mut World, ctx| {
            let tick = ctx.tick();
            let c = ctx.commands();
            let mut reaped = 0;
            if let Ok(mut q) = w.query::<(Entity, &mut Ttl)>() {
                q.for_each(|(e, ttl)| {
                    ttl.0 -= 1;
                    if ttl.0 == 0 {
                        c.despawn(e); // despawning from inside the loop over the entities
                        c.send(Expired { tick });
                        reaped += 1;
                    }
                });
            }
            if let Ok(b) = w.resource_mut::<Books>() {
                b.reaped += reaped;
            }
        })
        .after("spawner"),
    )?;
    // Each reader keeps its own cursor, in the World (a resource of its own, so snapshots,
    // saves and the SyncTest see it): it sees every event once, in order.
    w.insert_resource(ScorerCursor::default())?;
    w.register_system(
        SystemDef::new("scorer", 0.2, |w: &mut World, _| {
            let Ok((_, (expired, cursor, books), _)) =
                w.split::<(&Events<Expired>, &mut ScorerCursor, &mut Books)>()
            else {
                return;
            };
            for e in expired.read(&mut cursor.0) {
                books.scored += 1;
                books.last_expiry_tick = e.tick;
            }
        })
        .after("reaper"),
    )?;

    for _ in 0..frames {
        engine.frame()?;
    }
    let alive = engine.world_mut().query::<&Ttl>()?.count() as u64;
    let b = engine.world().resource::<Books>()?;
    println!(
        "{frames} frames: spawned {}, alive {alive}, reaped {}, events scored {} (last at step {})",
        b.spawned, b.reaped, b.scored, b.last_expiry_tick
    );
    if b.spawned != alive + b.reaped || b.scored != b.reaped {
        eprintln!("the books do not balance");
        std::process::exit(1);
    }
    Ok(())
}
