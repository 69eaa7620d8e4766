//! The demo's world: field-SoA particles, the score, and the gameplay systems on the owner
//! thread (spawn waves, the player's bursts, despawns in the sink, scoring).
//!
//! Owns: the demo's components, its score resource and its seeded setup. Must never: read a clock or anything
//! else that differs between runs (same seed, same world, whatever the lanes).

use lanegraph::simd::SoaComponent;

use lanegraph::input::{InputEvent, Key};
use lanegraph::systems::{RegisterError as RegisterSystemError, SystemDef};
use lanegraph::world::{Component, Domain, Entity, Resource, StateHash, World};

/// Half the side of the square arena, world units.
pub const ARENA: f32 = 500.0;
/// Radius of the neighbour pass, world units (about six neighbours each at the default
/// density of 100,000 particles in the arena: n * pi * r^2 / (2 * ARENA)^2 = 6).
pub const NEIGHBOUR_RADIUS: f32 = 4.4;
/// Fixed steps between spawn waves (half a second at 60 Hz).
pub const WAVE_EVERY_TICKS: u64 = 30;
/// Radius of the sink at the arena's centre that despawns particles, world units.
pub const SINK_RADIUS: f32 = 12.0;
/// Most particles the sink swallows per step (a wave's worth over a wave's steps).
pub const SINK_PER_STEP: usize = 64;
/// Particles one press of Space spawns at the arena's centre, flying outwards.
pub const BURST: usize = 256;
/// The key that fires a burst (a physical key name, `lanegraph::input::Key`).
pub const BURST_KEY: lanegraph::input::KeyCode = lanegraph::input::KeyCode::Space;

/// A particle's position.
#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, SoaComponent)]
#[component(domains(TRANSFORM))]
pub struct Position {
    /// X, world units.
    pub x: f32,
    /// Y, world units.
    pub y: f32,
}

/// A particle's velocity.
#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash, SoaComponent)]
#[component(domains(PHYSICS))]
pub struct Velocity {
    /// X, world units per second.
    pub x: f32,
    /// Y, world units per second.
    pub y: f32,
}

/// The game's score: a world resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, Resource, StateHash)]
#[resource(domains(GAMEPLAY))]
pub struct Score {
    /// Particles spawned by waves.
    pub spawned: u64,
    /// Particles swallowed by the sink.
    pub swallowed: u64,
    /// Waves spawned.
    pub waves: u64,
    /// Bursts the player fired (Space in `--window`; each spawns [`BURST`] particles).
    pub bursts: u64,
}

/// A small deterministic generator (xorshift64*, Vigna 2016): the demo's only randomness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, StateHash)]
pub struct Rng(u64);

/// The generators the demo's systems draw from after setup. A resource, not closure state:
/// a snapshot, a rollback and a SyncTest re-simulation restore it with the rest of the World
/// (in a closure, a re-simulated step drew different numbers: `bench snapshot`'s SyncTest
/// named `spawn_waves` at its first step).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Resource, StateHash)]
pub struct DemoRngs {
    /// Where each wave's particles appear and how they move.
    pub waves: Rng,
    /// The directions and speeds of a player's burst.
    pub bursts: Rng,
}

impl Rng {
    /// Seeded (a zero seed is mapped to a fixed non-zero one).
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15 | 1)
    }

    /// Next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        let u = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * u
    }
}

/// Spawns one particle with both SoA components (both columns append: rows stay aligned).
pub fn spawn_particle(world: &mut World, p: Position, v: Velocity) -> Entity {
    let e = world.spawn();
    world.insert(e, p).expect("fresh entity");
    world.insert(e, v).expect("fresh entity");
    e
}

/// Sets up the world: `entities` particles from `seed`, the [`Score`] resource, and the
/// gameplay systems.
pub fn setup(world: &mut World, entities: usize, seed: u64) -> Result<(), RegisterSystemError> {
    world
        .use_field_soa::<Position>()
        .expect("Position is a valid SoA component");
    world
        .use_field_soa::<Velocity>()
        .expect("Velocity is a valid SoA component");
    let mut rng = Rng::new(seed);
    for _ in 0..entities {
        let p = Position {
            x: rng.range(-ARENA, ARENA),
            y: rng.range(-ARENA, ARENA),
        };
        let v = Velocity {
            x: rng.range(-20.0, 20.0),
            y: rng.range(-20.0, 20.0),
        };
        spawn_particle(world, p, v);
    }
    world
        .insert_resource(Score::default())
        .expect("the demo's only resource");

    let wave = (entities / 100).max(1);
    let cap = entities + entities / 5 + 1;
    world
        .insert_resource(DemoRngs {
            waves: Rng::new(seed.wrapping_add(1)),
            bursts: Rng::new(seed.wrapping_add(2)),
        })
        .expect("a name of the demo's own");
    world.register_system(
        SystemDef::new("spawn_waves", 1.0, move |w: &mut World, ctx| {
            if ctx.tick() % WAVE_EVERY_TICKS != 0 || w.len() >= cap {
                return;
            }
            // The emitter circles the arena once every 64 waves.
            let angle = (ctx.tick() / WAVE_EVERY_TICKS) as f32 * std::f32::consts::TAU / 64.0;
            let (cx, cy) = (angle.cos() * ARENA * 0.7, angle.sin() * ARENA * 0.7);
            let Ok(&DemoRngs {
                waves: mut wave_rng,
                ..
            }) = w.resource::<DemoRngs>()
            else {
                return;
            };
            for _ in 0..wave {
                let p = Position {
                    x: cx + wave_rng.range(-10.0, 10.0),
                    y: cy + wave_rng.range(-10.0, 10.0),
                };
                let v = Velocity {
                    x: -cx * 0.05 + wave_rng.range(-5.0, 5.0),
                    y: -cy * 0.05 + wave_rng.range(-5.0, 5.0),
                };
                spawn_particle(w, p, v);
            }
            if let Ok(r) = w.resource_mut::<DemoRngs>() {
                r.waves = wave_rng;
            }
            if let Ok(s) = w.resource_mut::<Score>() {
                s.spawned += wave as u64;
                s.waves += 1;
            }
            ctx.report_workload(wave as u64);
        })
        .domain(Domain::GAMEPLAY),
    )?;

    // The player's input, read like any system reads the world: each press of Space this step
    // (auto-repeats not counted) fires a burst from the centre. Deterministic: its own seeded
    // generator, and a replay hands the same presses to the same steps.
    world.register_system(
        SystemDef::new("player_bursts", 0.5, move |w: &mut World, ctx| {
            let presses = w
                .input()
                .events()
                .iter()
                .filter(|e| {
                    matches!(e, InputEvent::Key { key, pressed: true, repeat: false }
                        if *key == Key::from(BURST_KEY))
                })
                .count();
            if presses == 0 || w.len() >= cap {
                return;
            }
            let Ok(&DemoRngs {
                bursts: mut burst_rng,
                ..
            }) = w.resource::<DemoRngs>()
            else {
                return;
            };
            for _ in 0..presses * BURST {
                let angle = burst_rng.range(0.0, std::f32::consts::TAU);
                let speed = burst_rng.range(20.0, 60.0);
                let p = Position {
                    x: angle.cos() * (SINK_RADIUS + 4.0),
                    y: angle.sin() * (SINK_RADIUS + 4.0),
                };
                let v = Velocity {
                    x: angle.cos() * speed,
                    y: angle.sin() * speed,
                };
                spawn_particle(w, p, v);
            }
            if let Ok(r) = w.resource_mut::<DemoRngs>() {
                r.bursts = burst_rng;
            }
            if let Ok(s) = w.resource_mut::<Score>() {
                s.spawned += (presses * BURST) as u64;
                s.bursts += presses as u64;
            }
            ctx.report_workload((presses * BURST) as u64);
        })
        .domain(Domain::GAMEPLAY),
    )?;

    let mut doomed: Vec<Entity> = Vec::with_capacity(SINK_PER_STEP);
    world.register_system(
        SystemDef::new("sink_despawn", 1.0, move |w: &mut World, ctx| {
            doomed.clear();
            if let Ok(Some(cols)) = w.soa_columns::<Position>() {
                let xs = cols.table().field("x").expect("Position has x");
                let ys = cols.table().field("y").expect("Position has y");
                let r2 = SINK_RADIUS * SINK_RADIUS;
                for ((&e, &x), &y) in cols.entities().iter().zip(xs).zip(ys) {
                    if x * x + y * y < r2 {
                        doomed.push(e);
                        if doomed.len() == SINK_PER_STEP {
                            break;
                        }
                    }
                }
                ctx.report_workload(cols.entities().len() as u64);
            }
            // Slot order, not row order: the same entities go the same way on every run.
            doomed.sort_unstable();
            for &e in &doomed {
                let _ = w.despawn(e);
            }
            let n = doomed.len() as u64;
            if n > 0 {
                if let Ok(s) = w.resource_mut::<Score>() {
                    s.swallowed += n;
                }
            }
        })
        .domain(Domain::GAMEPLAY),
    )?;

    world.register_system(
        SystemDef::new("scoring", 0.2, move |w: &mut World, ctx| {
            // Reads the score every step (a HUD would format it here); writes nothing.
            if let Ok(s) = w.resource::<Score>() {
                ctx.report_workload(s.spawned.saturating_sub(s.swallowed).max(1));
            }
        })
        .domain(Domain::GAMEPLAY),
    )?;
    Ok(())
}
