//! Swarm: the second game in the repo, written from the docs as a new user would, and unlike
//! the particle demo in every way the runtime cares about: many bodies, five ordered systems
//! with budgets, scripted input, an agent of its own with a four-rung ladder it quoted wrong
//! (exact contacts, or a cell census every step, every other step, every fourth), no physics
//! hook, no render pass, no asset loads and no built-in agent. Its systems
//! use the World the way a Bevy user would: five-wide queries, several resources and the input
//! held at once (`World::split`), commands from inside a query, an event, and typed keys.
//!
//! Owns: the game (components, resources, systems, its agent, its input script). Must never:
//! reach into the runtime past its public API (it is the test that a game can be written from
//! the README and docs alone). `main.rs` runs it; `tests/it/second_game.rs` includes this
//! file and checks determinism and adaptation on it.

use lanegraph::budget::{Agent, AgentId, CostLaw, Quote, Strategy, StrategyIndex};
use lanegraph::input::{InputEvent, KeyCode};
use lanegraph::jobs::LanePlan;
use lanegraph::runtime::{AgentCost, Engine, EngineConfig};
use lanegraph::systems::SystemDef;
use lanegraph::world::{Component, Entity, Event, EventCursor, Events, Resource, StateHash, World};
// Savegames: the game's state types derive serde (`SaveSchema` in `tests/it/second_game.rs`).
use serde::{Deserialize, Serialize};

/// Side of the square the bodies live in.
pub const ARENA: f32 = 1000.0;
/// Side of one collision cell.
pub const CELL: f32 = 10.0;
const CELLS: usize = (ARENA / CELL) as usize;

/// Where a body is.
#[derive(Clone, Copy, Debug, Component, StateHash, Serialize, Deserialize)]
#[component(domains(TRANSFORM))]
pub struct Pos {
    /// x.
    pub x: f32,
    /// y.
    pub y: f32,
}

/// How it moves.
#[derive(Clone, Copy, Debug, Component, StateHash, Serialize, Deserialize)]
#[component(domains(PHYSICS))]
pub struct Vel {
    /// x.
    pub x: f32,
    /// y.
    pub y: f32,
}

/// How heavy a body is (heavier bodies feel the wind less).
#[derive(Clone, Copy, Debug, Component, StateHash, Serialize, Deserialize)]
#[component(domains(PHYSICS))]
pub struct Mass(pub f32);

/// Air drag on some bodies (every fourth): their speed decays.
#[derive(Clone, Copy, Debug, Component, StateHash, Serialize, Deserialize)]
#[component(domains(PHYSICS))]
pub struct Drag(pub f32);

/// Times a body bounced off the arena's walls.
#[derive(Clone, Copy, Debug, Default, Component, StateHash, Serialize, Deserialize)]
#[component(domains(GAMEPLAY))]
pub struct Bounces(pub u32);

/// The wind the player steers with the arrow keys.
#[derive(Debug, Clone, Resource, StateHash, Serialize, Deserialize)]
#[resource(domains(PHYSICS))]
pub struct Wind(pub f32);

/// What happened so far.
#[derive(Debug, Clone, Default, Resource, StateHash, Serialize, Deserialize)]
#[resource(domains(GAMEPLAY))]
pub struct Score {
    /// Pairs of bodies found sharing a cell, summed over the collision passes.
    pub bumps: u64,
    /// Collision passes run.
    pub passes: u64,
    /// Steps simulated.
    pub steps: u64,
    /// Crowds seen (read from the `Crowded` events).
    pub crowds: u64,
    /// Pairs of bodies found in contact (closer than [`CONTACT`]), summed over the passes
    /// that ran `exact_contacts`.
    pub contacts: u64,
}

/// A crowded cell: more than three times the mean bodies per cell (at least [`CROWD_MIN`]) in
/// one collision cell this pass.
#[derive(Debug, Clone, StateHash, Serialize, Deserialize)]
pub struct Crowded {
    /// The cell's index.
    pub cell: u32,
    /// Bodies in it.
    pub bodies: u32,
}
impl Event for Crowded {
    const NAME: &'static str = "Crowded";
}

/// Where `score` is in the `Crowded` queue: the state a system keeps between runs lives in the
/// World (hashed, snapshotted, saved), not in its closure.
#[derive(Debug, Clone, Default, Resource, StateHash, Serialize, Deserialize)]
#[resource(domains(GAMEPLAY))]
pub struct CrowdReader(pub EventCursor);

/// The fewest bodies over which a cell counts as crowded.
pub const CROWD_MIN: u32 = 4;

/// A spark left where a crowd was seen (spawned through commands, faded through commands).
#[derive(Clone, Copy, Debug, Component, StateHash, Serialize, Deserialize)]
#[component(domains(GAMEPLAY))]
pub struct Spark {
    /// The cell it marks.
    pub cell: u32,
    /// Steps left before it fades.
    pub ttl: u32,
}

/// The game's own budget agent, a ladder of four: exact contacts (every pair of bodies closer
/// than [`CONTACT`] in neighbouring cells, counted every step), then the cell census every
/// step, every other step, every fourth step.
pub struct Collide;

/// Two bodies closer than this are in contact (the `exact_contacts` rung counts them).
pub const CONTACT: f32 = 2.0;

impl Agent for Collide {
    fn name(&self) -> &str {
        "collide"
    }
    fn strategies(&self) -> Vec<Strategy> {
        // Quoted per body per frame, by a guess, as a game's first quotes are: the contact
        // pass was guessed at 1.5x the census when it reads nine cells for every body (its
        // true cost is several times that). The periodic rungs do the census's work on one
        // frame in 2 or 4: declared periodic, each is priced by that peak frame.
        vec![
            Strategy::new("every_step", 3, Quote::new(CostLaw::Linear, 20e-6)),
            Strategy::new("every_other", 2, Quote::new(CostLaw::Linear, 20e-6)).every(2),
            Strategy::new("every_fourth", 1, Quote::new(CostLaw::Linear, 20e-6)).every(4),
            Strategy::new("exact_contacts", 4, Quote::new(CostLaw::Linear, 30e-6)),
        ]
    }
    fn initial_workload(&self) -> u64 {
        50_000
    }
}

/// How to run the game.
#[derive(Debug, Clone)]
pub struct SwarmOptions {
    /// Bodies spawned.
    pub bodies: usize,
    /// Seed of the spawn positions.
    pub seed: u64,
    /// A lane plan spec (`physics=1,render=1,asset=1`); `None`: the engine's own.
    pub lanes: Option<String>,
    /// Frame rate the controller holds.
    pub target_fps: f64,
    /// One step per frame, whatever the clock (replayable).
    pub lockstep: bool,
    /// Re-simulate the last N steps every step and compare (`EngineConfig::sync_test`, a
    /// debugging mode); `None`: off.
    pub sync_test: Option<usize>,
}

impl Default for SwarmOptions {
    fn default() -> Self {
        SwarmOptions {
            bodies: 50_000,
            seed: 1,
            lanes: None,
            target_fps: 60.0,
            lockstep: true,
            sync_test: None,
        }
    }
}

/// The running game: its engine and its agent.
pub struct Swarm {
    /// The engine.
    pub engine: Engine,
    /// The collision agent.
    pub collide: AgentId,
}

/// Builds the game.
pub fn build(opts: &SwarmOptions) -> Result<Swarm, Box<dyn std::error::Error>> {
    let mut builder = Engine::builder()
        .config(EngineConfig {
            sync_test: opts.sync_test,
            ..EngineConfig::default()
        })
        .lockstep(opts.lockstep)
        .target_fps(opts.target_fps);
    if let Some(spec) = &opts.lanes {
        builder = builder.lane_plan(LanePlan::from_spec(
            spec,
            &lanegraph::jobs::plan::machine_cores(),
        )?);
    }
    let mut engine = builder.build()?;
    let w = engine.world_mut();
    w.insert_resource(Wind(0.0))?;
    w.insert_resource(Score::default())?;
    w.add_event::<Crowded>()?;
    w.insert_resource(CrowdReader::default())?;
    let mut rng = opts.seed.max(1);
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng >> 40) as f32 / (1u64 << 24) as f32
    };
    // One batch: every component written straight into its column.
    let bodies: Vec<_> = (0..opts.bodies)
        .map(|i| {
            let pos = Pos {
                x: next() * ARENA,
                y: next() * ARENA,
            };
            let vel = Vel {
                x: next() * 20.0 - 10.0,
                y: next() * 20.0 - 10.0,
            };
            (pos, vel, Mass(1.0 + (i % 3) as f32), Bounces::default())
        })
        .collect();
    let firsts: Vec<Entity> = w.spawn_batch(bodies)?.to_vec();
    for e in firsts.into_iter().step_by(4) {
        w.insert(e, Drag(0.05))?;
    }
    w.register_system(SystemDef::new("steer", 0.1, |w: &mut World, _| {
        // The wind and the keys at once: the split hands out resources beside the input.
        if let Ok((_, (wind,), input)) = w.split::<(&mut Wind,)>() {
            let (left, right) = (
                input.is_down(KeyCode::ArrowLeft),
                input.is_down(KeyCode::ArrowRight),
            );
            wind.0 += (right as i32 - left as i32) as f32 * 0.5;
        }
    }))?;
    w.register_system(
        SystemDef::new("integrate", 2.0, |w: &mut World, ctx| {
            let dt = ctx.dt();
            let wind = w.resource::<Wind>().map_or(0.0, |w| w.0);
            // Five terms in one query; `Option<&Drag>` is `None` on bodies without drag.
            let n = w
                .query::<(&mut Pos, &mut Vel, &Mass, Option<&Drag>, &mut Bounces)>()
                .map(|mut q| {
                    q.for_each(|(p, v, m, drag, bounces)| {
                        v.x += wind * dt / m.0;
                        if let Some(d) = drag {
                            v.x -= d.0 * v.x * dt;
                            v.y -= d.0 * v.y * dt;
                        }
                        p.x += v.x * dt;
                        p.y += v.y * dt;
                        if !(0.0..ARENA).contains(&p.x) {
                            v.x = -v.x;
                            p.x = p.x.clamp(0.0, ARENA - 0.001);
                            bounces.0 += 1;
                        }
                        if !(0.0..ARENA).contains(&p.y) {
                            v.y = -v.y;
                            p.y = p.y.clamp(0.0, ARENA - 0.001);
                            bounces.0 += 1;
                        }
                    })
                })
                .unwrap_or(0);
            ctx.report_workload(n as u64);
        })
        .after("steer"),
    )?;
    // The agent's id is known once it is added, after the system that it is costed by.
    let agent = std::sync::Arc::new(std::sync::OnceLock::<AgentId>::new());
    let mine = agent.clone();
    let mut cells = vec![0u32; CELLS * CELLS];
    // Scratch for the contact pass (reused: no allocation once warm; not game state).
    let mut at: Vec<(u32, f32, f32)> = Vec::new();
    let mut sorted: Vec<(f32, f32)> = Vec::new();
    let mut starts = vec![0u32; CELLS * CELLS + 1];
    let mut fill = vec![0u32; CELLS * CELLS + 1];
    let collide = w.register_system(
        SystemDef::new("collide", 4.0, move |w: &mut World, ctx| {
            // The strategy in force this step, as the engine applied it at the frame boundary.
            let strategy = mine.get().and_then(|&id| w.agent_strategy(id));
            let period = match strategy {
                Some(StrategyIndex(1)) => 2,
                Some(StrategyIndex(2)) => 4,
                _ => 1,
            };
            if ctx.tick() % period != 0 {
                return;
            }
            let exact = strategy == Some(StrategyIndex(3));
            cells.fill(0);
            at.clear();
            let n = w
                .query::<&Pos>()
                .map(|mut q| {
                    q.for_each(|p| {
                        let (cx, cy) = ((p.x / CELL) as usize, (p.y / CELL) as usize);
                        let cell = cy.min(CELLS - 1) * CELLS + cx.min(CELLS - 1);
                        cells[cell] += 1;
                        if exact {
                            at.push((cell as u32, p.x, p.y));
                        }
                    })
                })
                .unwrap_or(0) as u64;
            if exact {
                let contacts = contacts(&cells, &at, &mut starts, &mut fill, &mut sorted);
                if let Ok(s) = w.resource_mut::<Score>() {
                    s.contacts += contacts;
                }
            }
            let bumps: u64 = cells
                .iter()
                .map(|&c| u64::from(c) * u64::from(c.saturating_sub(1)) / 2)
                .sum();
            // Crowded cells become events (deferred: applied right after this system).
            let c = ctx.commands();
            let crowd = ((3 * n) / cells.len() as u64).max(u64::from(CROWD_MIN)) as u32;
            for (i, &n) in cells.iter().enumerate() {
                if n > crowd {
                    c.send(Crowded {
                        cell: i as u32,
                        bodies: n,
                    });
                }
            }
            if let Ok(s) = w.resource_mut::<Score>() {
                s.bumps += bumps;
                s.passes += 1;
            }
            ctx.report_workload(n);
        })
        .after("integrate"),
    )?;
    // Reads each crowd once; the newest of the step gets a spark, and sparks fade: spawned and
    // despawned through commands from inside the loop over the sparks.
    w.register_system(
        SystemDef::new("score", 0.5, |w: &mut World, ctx| {
            let (crowds, newest) = match w.split::<(&Events<Crowded>, &mut CrowdReader)>() {
                Ok((_, (q, reader), _)) => {
                    let mut n = 0u64;
                    let mut newest = None;
                    for ev in q.read(&mut reader.0) {
                        n += 1;
                        newest = Some(ev.cell);
                    }
                    (n, newest)
                }
                Err(_) => (0, None),
            };
            let c = ctx.commands();
            if let Some(cell) = newest {
                c.spawn((Spark { cell, ttl: 30 },));
            }
            // Sparks fade; the faded ones are despawned through commands from inside the query.
            if let Ok(mut sparks) = w.query::<(Entity, &mut Spark)>() {
                sparks.for_each(|(e, s)| {
                    s.ttl = s.ttl.saturating_sub(1);
                    if s.ttl == 0 {
                        c.despawn(e);
                    }
                });
            }
            if let Ok(s) = w.resource_mut::<Score>() {
                s.steps += 1;
                s.crowds += crowds;
            }
        })
        .after("collide"),
    )?;
    let id = engine.add_agent(Box::new(Collide), AgentCost::System(collide))?;
    agent.set(id).map_err(|_| "the agent id is set once")?;
    Ok(Swarm {
        engine,
        collide: id,
    })
}

/// Pairs of bodies closer than [`CONTACT`], each body against the bodies of its own cell and
/// the eight around it (each pair counted once): the bodies sorted by cell (a counting sort
/// over `cells`, into `sorted` via `starts`), then the neighbourhoods scanned.
fn contacts(
    cells: &[u32],
    at: &[(u32, f32, f32)],
    starts: &mut [u32],
    fill: &mut [u32],
    sorted: &mut Vec<(f32, f32)>,
) -> u64 {
    let mut sum = 0u32;
    for (s, &c) in starts.iter_mut().zip(cells) {
        *s = sum;
        sum += c;
    }
    starts[cells.len()] = sum;
    sorted.clear();
    sorted.resize(at.len(), (0.0, 0.0));
    fill.copy_from_slice(starts);
    for &(cell, x, y) in at {
        let k = &mut fill[cell as usize];
        sorted[*k as usize] = (x, y);
        *k += 1;
    }
    let r2 = CONTACT * CONTACT;
    let mut found = 0u64;
    for cy in 0..CELLS {
        for cx in 0..CELLS {
            let here = cy * CELLS + cx;
            let mine = &sorted[starts[here] as usize..starts[here + 1] as usize];
            // Own cell: each pair once; then the four neighbours after it in scan order.
            for (i, a) in mine.iter().enumerate() {
                for b in &mine[i + 1..] {
                    found += u64::from((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2) < r2);
                }
            }
            for (dx, dy) in [(1isize, 0isize), (-1, 1), (0, 1), (1, 1)] {
                let (nx, ny) = (cx as isize + dx, cy as isize + dy);
                if nx < 0 || ny < 0 || nx >= CELLS as isize || ny >= CELLS as isize {
                    continue;
                }
                let there = ny as usize * CELLS + nx as usize;
                let theirs = &sorted[starts[there] as usize..starts[there + 1] as usize];
                for a in mine {
                    for b in theirs {
                        found += u64::from((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2) < r2);
                    }
                }
            }
        }
    }
    found
}

/// The scripted player: wind left for frames 30-59, right for 90-149.
pub fn input_for(frame: u64) -> Vec<InputEvent> {
    let key = |code: KeyCode, pressed: bool| InputEvent::Key {
        key: code.into(),
        pressed,
        repeat: false,
    };
    match frame {
        30 => vec![key(KeyCode::ArrowLeft, true)],
        60 => vec![key(KeyCode::ArrowLeft, false)],
        90 => vec![key(KeyCode::ArrowRight, true)],
        150 => vec![key(KeyCode::ArrowRight, false)],
        _ => Vec::new(),
    }
}

impl Swarm {
    /// Runs `frames` frames, feeding the scripted input (ignored while a replay runs).
    pub fn run(&mut self, frames: u64) -> Result<(), lanegraph::runtime::FrameError> {
        for _ in 0..frames {
            let next = self.engine.frames() + 1;
            for e in input_for(next) {
                self.engine.push_input(e);
            }
            self.engine.frame()?;
        }
        Ok(())
    }
}
