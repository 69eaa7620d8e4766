//! Every documented way of writing a game, under every mode that replays, rewinds or checks
//! it: a pattern x mode matrix. Each pattern is a small world of its own; each mode runs it
//! and must end at the state hash of the plain run (and a save must load to the hash it
//! saved). The patterns are the ones `docs/systems.md` lists in "Patterns and modes": a test
//! below reads that table, so a pattern added to the docs without joining the matrix fails.
//!
//! Modes: plain; SyncTest(8); save, load into a freshly built world, continue; snapshot and
//! restore; rollback with a misprediction (three steps run on the wrong input from a restored
//! snapshot, restored again, re-simulated on the right one), all at World level; then under an
//! engine on three lane plans; and between two ggrs peers (`lanegraph-netcode`) whose inputs
//! change at their own rhythms, so each rolls back, agreeing on every confirmed frame.

use lanegraph::prelude::*;
use lanegraph::runtime::Engine;
use lanegraph::world::{Events, SaveSchema, Snapshot, SyncTest};
use serde::{Deserialize, Serialize};

const STEPS: u64 = 24;

#[derive(Debug, Clone, Copy, Component, StateHash, Serialize, Deserialize)]
struct Pos(f32);
#[derive(Debug, Clone, Copy, Component, StateHash, Serialize, Deserialize)]
struct Vel(f32);
/// First inserted at step 5, by a command.
#[derive(Debug, Clone, Copy, Component, StateHash, Serialize, Deserialize)]
struct Late(u32);
/// A reference to another entity.
#[derive(Debug, Clone, Copy, Component, StateHash, Serialize, Deserialize)]
struct Follows(Entity);
/// Field-SoA: one column per field.
#[derive(
    Debug, Clone, Copy, Component, StateHash, Serialize, Deserialize, lanegraph::simd::SoaComponent,
)]
struct Body {
    x: f32,
    v: f32,
}

/// The pad's state this step: the game's input, written before each step (a rollback's
/// prediction is a wrong value here).
#[derive(Debug, Clone, Default, Resource, StateHash, Serialize, Deserialize)]
struct Pad(u8);
#[derive(Debug, Clone, Default, Resource, StateHash, Serialize, Deserialize)]
struct Tally {
    hits: u64,
    changed: u64,
    conditioned: u64,
    followed: f32,
    pad: u64,
}
/// A reader's cursor, kept in the World (`docs/systems.md#state-a-system-keeps`).
#[derive(Debug, Clone, Default, Resource, StateHash, Serialize, Deserialize)]
struct HitReader(EventCursor);
#[derive(Debug, Clone, StateHash, Serialize, Deserialize)]
struct Hit(u32);
impl Event for Hit {
    const NAME: &'static str = "Hit";
}

/// The patterns, as `docs/systems.md` names them in its "Patterns and modes" table.
const PATTERNS: [&str; 8] = [
    "events, cursor in the world",
    "commands: spawn and despawn",
    "a component first inserted mid-run",
    "Changed<T>",
    "field-SoA columns",
    "resources",
    "run conditions",
    "entity references in components",
];

/// The world of pattern `p`, built as a game builds it (the same code builds the world a save
/// loads into).
fn build(p: &str) -> World {
    let mut w = World::new();
    install(&mut w, p);
    w
}

/// Pattern `p`'s state and systems, into `w` (a fresh World, or an engine's).
fn install(w: &mut World, p: &str) {
    w.insert_resource(Tally::default()).unwrap();
    w.insert_resource(Pad(0)).unwrap();
    w.spawn_batch((0..32).map(|i| (Pos(i as f32), Vel(1.0 + (i % 3) as f32))))
        .unwrap();
    // Every pattern reads the pad, so a misprediction changes the state.
    w.register_system(SystemDef::new("pad", 1.0, |w: &mut World, _| {
        let p = u64::from(w.resource::<Pad>().unwrap().0);
        w.resource_mut::<Tally>().unwrap().pad += p;
        w.query::<&mut Vel>()
            .unwrap()
            .for_each(|v| v.0 += p as f32 * 0.25);
    }))
    .unwrap();
    match p {
        "events, cursor in the world" => {
            w.add_event::<Hit>().unwrap();
            w.insert_resource(HitReader::default()).unwrap();
            w.register_system(
                SystemDef::new("send", 1.0, |w: &mut World, ctx| {
                    let mut n = 0u32;
                    w.query::<&Pos>().unwrap().for_each(|p| n += p.0 as u32);
                    if ctx.tick() % 2 == 0 {
                        ctx.commands().send(Hit(n % 97));
                    }
                })
                .after("pad"),
            )
            .unwrap();
            // The reader runs before the sender too (it reads last step's events then).
            w.register_system(
                SystemDef::new("read", 1.0, |w: &mut World, _| {
                    let Ok((_, (hits, reader, tally), _)) =
                        w.split::<(&Events<Hit>, &mut HitReader, &mut Tally)>()
                    else {
                        return;
                    };
                    for h in hits.read(&mut reader.0) {
                        tally.hits += u64::from(h.0) + 1;
                    }
                })
                .before("send"),
            )
            .unwrap();
        }
        "commands: spawn and despawn" => {
            w.register_system(
                SystemDef::new("churn", 1.0, |w: &mut World, ctx| {
                    let c = ctx.commands();
                    w.query::<(Entity, &mut Pos, &Vel)>()
                        .unwrap()
                        .for_each(|(e, p, v)| {
                            p.0 += v.0;
                            if p.0 > 40.0 {
                                c.despawn(e);
                                c.spawn((Pos(0.0), Vel(v.0 * 0.5 + 0.25)));
                            }
                        });
                })
                .after("pad"),
            )
            .unwrap();
        }
        "a component first inserted mid-run" => {
            w.register_system(
                SystemDef::new("late", 1.0, |w: &mut World, ctx| {
                    let tick = ctx.tick();
                    let c = ctx.commands();
                    w.query::<(Entity, &Pos)>().unwrap().for_each(|(e, p)| {
                        if tick >= 5 && (p.0 as u64 + tick) % 7 == 0 {
                            c.insert(e, Late(tick as u32));
                        }
                    });
                })
                .after("pad"),
            )
            .unwrap();
            // A system that never touches `Late` runs after the one that inserts it.
            w.register_system(
                SystemDef::new("drift", 1.0, |w: &mut World, _| {
                    w.query::<(&mut Pos, &Vel)>()
                        .unwrap()
                        .for_each(|(p, v)| p.0 += v.0 * 0.5);
                })
                .after("late"),
            )
            .unwrap();
        }
        "Changed<T>" => {
            w.register_system(
                SystemDef::new("touch", 1.0, |w: &mut World, ctx| {
                    let t = ctx.tick();
                    w.query::<(&mut Pos, &Vel)>().unwrap().for_each(|(p, v)| {
                        if (p.0 as u64 + t) % 3 == 0 {
                            p.0 += v.0;
                        }
                    });
                })
                .after("pad"),
            )
            .unwrap();
            w.register_system(
                SystemDef::new("watch", 1.0, |w: &mut World, _| {
                    let n = w.query_filtered::<Entity, Changed<Pos>>().unwrap().count();
                    w.resource_mut::<Tally>().unwrap().changed += n as u64;
                })
                .after("touch"),
            )
            .unwrap();
        }
        "field-SoA columns" => {
            w.use_field_soa::<Body>().unwrap();
            let mut es: Vec<Entity> = Vec::new();
            w.query::<Entity>().unwrap().for_each(|e| es.push(e));
            for (i, e) in es.into_iter().enumerate() {
                w.insert(
                    e,
                    Body {
                        x: i as f32,
                        v: 0.5,
                    },
                )
                .unwrap();
            }
            w.register_system(
                SystemDef::new("soa", 1.0, |w: &mut World, _| {
                    let pad = f32::from(w.resource::<Pad>().unwrap().0);
                    w.query::<&mut Body>().unwrap().for_each(|b| {
                        b.v += pad * 0.125;
                        b.x += b.v;
                    });
                })
                .after("pad"),
            )
            .unwrap();
        }
        "resources" => {
            w.register_system(
                SystemDef::new("bank", 1.0, |w: &mut World, ctx| {
                    let mut sum = 0.0f32;
                    w.query::<&Vel>().unwrap().for_each(|v| sum += v.0);
                    let t = w.resource_mut::<Tally>().unwrap();
                    t.followed += sum * 0.001 + ctx.tick() as f32;
                })
                .after("pad"),
            )
            .unwrap();
        }
        "run conditions" => {
            w.register_system(
                SystemDef::new("sometimes", 1.0, |w: &mut World, _| {
                    w.resource_mut::<Tally>().unwrap().conditioned += 1;
                    w.query::<&mut Pos>().unwrap().for_each(|p| p.0 += 2.0);
                })
                .after("pad")
                .run_if(every(3)),
            )
            .unwrap();
            w.register_system(
                SystemDef::new("on_pad", 1.0, |w: &mut World, _| {
                    w.resource_mut::<Tally>().unwrap().conditioned += 100;
                })
                .after("pad")
                .run_if(|w: &World, _| w.resource::<Pad>().is_ok_and(|p| p.0 % 2 == 1)),
            )
            .unwrap();
        }
        "entity references in components" => {
            let mut es: Vec<Entity> = Vec::new();
            w.query::<Entity>().unwrap().for_each(|e| es.push(e));
            for (i, &e) in es.iter().enumerate() {
                w.insert(e, Follows(es[(i + 1) % es.len()])).unwrap();
            }
            w.register_system(
                SystemDef::new("follow", 1.0, |w: &mut World, ctx| {
                    let tick = ctx.tick();
                    let mut pairs: Vec<(Entity, Entity)> = Vec::new();
                    w.query::<(Entity, &Follows)>()
                        .unwrap()
                        .for_each(|(e, f)| pairs.push((e, f.0)));
                    let c = ctx.commands();
                    let mut seen = 0.0;
                    for (e, target) in pairs {
                        match w.get::<Pos>(target) {
                            Ok(p) => seen += p.0,
                            // The target is gone: follow the follower's own next one.
                            Err(_) => c.remove::<Follows>(e),
                        }
                    }
                    w.resource_mut::<Tally>().unwrap().followed += seen;
                    // Despawn one entity now and then: references to it go stale.
                    if tick % 5 == 4 {
                        let mut first = None;
                        w.query::<Entity>().unwrap().for_each(|e| {
                            first.get_or_insert(e);
                        });
                        if let Some(e) = first {
                            c.despawn(e);
                        }
                    }
                })
                .after("pad"),
            )
            .unwrap();
        }
        other => panic!("no such pattern: {other}"),
    }
}

fn schema() -> SaveSchema {
    SaveSchema::default()
        .component::<Pos>()
        .component::<Vel>()
        .component::<Late>()
        .component::<Follows>()
        .component::<Body>()
        .resource::<Pad>()
        .resource::<Tally>()
        .resource::<HitReader>()
        .resource::<Events<Hit>>()
}

/// The right pad value at `tick`, and a wrong prediction of it.
fn pad(tick: u64) -> u8 {
    ((tick * 7 + 3) % 5) as u8
}
fn mispredicted(tick: u64) -> u8 {
    pad(tick) ^ 1
}

/// One step on the pad value `p`.
fn step(w: &mut World, p: u8) {
    w.resource_mut::<Pad>().unwrap().0 = p;
    w.run_systems();
}

fn plain(p: &str) -> u64 {
    let mut w = build(p);
    for t in 0..STEPS {
        step(&mut w, pad(t));
    }
    w.state_hash()
}

#[test]
fn every_pattern_ends_at_the_plain_runs_hash_under_every_mode() {
    let mut failures = Vec::new();
    for p in PATTERNS {
        let want = plain(p);
        let check = |failures: &mut Vec<String>, mode: &str, got: u64| {
            if got != want {
                failures.push(format!("`{p}` under {mode}: {got:#x} != plain {want:#x}"));
            }
        };

        // SyncTest(8): never a desync, and the check does not change the result.
        let mut w = build(p);
        let mut sync = SyncTest::new(8);
        for t in 0..STEPS {
            w.resource_mut::<Pad>().unwrap().0 = pad(t);
            if let Err(e) = sync.step(&mut w) {
                failures.push(format!("`{p}` under SyncTest(8): {e}"));
                break;
            }
        }
        check(&mut failures, "SyncTest(8)", w.state_hash());

        // Save at the middle, load into a freshly built world, continue.
        let mut w = build(p);
        for t in 0..STEPS / 2 {
            step(&mut w, pad(t));
        }
        let saved = w.state_hash();
        let mut bytes = Vec::new();
        schema().save(&mut w, &mut bytes).unwrap();
        let mut fresh = build(p);
        schema().load_into(&mut fresh, bytes.as_slice()).unwrap();
        if fresh.state_hash() != saved {
            failures.push(format!("`{p}`: the save loads to another hash"));
        }
        for t in STEPS / 2..STEPS {
            step(&mut fresh, pad(t));
        }
        check(&mut failures, "save, load, continue", fresh.state_hash());

        // Snapshot at the middle, run on, restore, run the second half again.
        let mut w = build(p);
        for t in 0..STEPS / 2 {
            step(&mut w, pad(t));
        }
        let mut snap = Snapshot::default();
        w.snapshot_into(&mut snap).unwrap();
        for t in STEPS / 2..STEPS {
            step(&mut w, pad(t));
        }
        check(&mut failures, "snapshot (first pass)", w.state_hash());
        w.restore(&snap).unwrap();
        for t in STEPS / 2..STEPS {
            step(&mut w, pad(t));
        }
        check(&mut failures, "snapshot and restore", w.state_hash());

        // Rollback: every 4 steps, 3 steps run on a misprediction, then the capture is put
        // back and the steps re-simulated on the confirmed input.
        let mut w = build(p);
        let mut capture = Snapshot::default();
        let mut t = 0;
        while t < STEPS {
            w.snapshot_into(&mut capture).unwrap();
            let span = 3.min(STEPS - t);
            for k in 0..span {
                step(&mut w, mispredicted(t + k));
            }
            w.restore(&capture).unwrap();
            for k in 0..span {
                step(&mut w, pad(t + k));
            }
            t += span;
        }
        check(
            &mut failures,
            "rollback with mispredictions",
            w.state_hash(),
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The plan specs the engine cells run on: the machine's own, one worker a lane, two physics
/// workers.
const PLANS: [Option<&str>; 3] = [
    None,
    Some("physics=1,render=1,asset=1"),
    Some("physics=2,render=1,asset=1"),
];

#[test]
fn every_pattern_runs_alike_on_three_lane_plans_under_an_engine() {
    use lanegraph::jobs::{plan::machine_cores, LanePlan};
    let mut failures = Vec::new();
    for p in PATTERNS {
        let mut hashes = Vec::new();
        for plan in PLANS {
            let mut b = Engine::builder().lockstep(true);
            if let Some(spec) = plan {
                b = b.lane_plan(LanePlan::from_spec(spec, &machine_cores()).unwrap());
            }
            let mut engine = b.build().unwrap();
            install(engine.world_mut(), p);
            for t in 0..STEPS {
                engine.world_mut().resource_mut::<Pad>().unwrap().0 = pad(t);
                engine.frame().unwrap();
            }
            hashes.push(engine.world().state_hash());
        }
        // An engine's world ends where the plain World run does, on every plan.
        hashes.push(plain(p));
        if hashes.iter().any(|&h| h != hashes[0]) {
            failures.push(format!(
                "`{p}`: the plans, then the plain run, end at {hashes:x?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Two ggrs peers over loopback (10 ms one way), each stepping `worlds[me]` (reached through
/// `world`) through `lanegraph-netcode`. Both players' bytes land on the one pad, and each player
/// changes its input at its own rhythm, so each change is a misprediction for the other peer:
/// both must roll back, and they must agree on every confirmed frame's checksum up to `frames`.
fn two_peers_roll_back_and_agree<W>(
    label: &str,
    frames: i32,
    seeds: [u64; 2],
    worlds: &mut [W; 2],
    world: fn(&mut W) -> &mut World,
) {
    use lanegraph_netcode::{LinkConditions, NetConfig, Session, UdpLink};
    use std::time::{Duration, Instant};
    let link = |seed| {
        UdpLink::bind(
            "127.0.0.1:0".parse().unwrap(),
            LinkConditions {
                one_way_delay: Duration::from_millis(10),
                loss: 0.0,
                seed,
            },
        )
        .unwrap()
    };
    let links = [link(seeds[0]), link(seeds[1])];
    let addrs = [
        links[0].local_addr().unwrap(),
        links[1].local_addr().unwrap(),
    ];
    let mut sessions = Vec::new();
    for (me, l) in links.into_iter().enumerate() {
        let cfg = NetConfig::two_players(me, addrs[1 - me]);
        let apply = |w: &mut World, inputs: &[u8]| {
            let v = inputs
                .iter()
                .fold(0u8, |a, &b| a.wrapping_mul(5).wrapping_add(b));
            w.resource_mut::<Pad>().unwrap().0 = v % 5;
        };
        sessions.push(Session::p2p(&cfg, l, apply).unwrap());
    }
    let start = Instant::now();
    loop {
        for (me, s) in sessions.iter_mut().enumerate() {
            for e in s.poll() {
                assert!(
                    !matches!(e, lanegraph_netcode::NetEvent::Desync { .. }),
                    "`{label}`: {e:?}"
                );
            }
            let frame = s.current_frame().unwrap();
            if frame >= frames + 10 {
                continue;
            }
            let input = ((frame.max(0) as u32 / (3 + me as u32 * 2)) % 4) as u8;
            s.step(world(&mut worlds[me]), input).unwrap();
        }
        let confirmed = sessions
            .iter()
            .map(|s| s.confirmed_frame().unwrap())
            .min()
            .unwrap();
        if confirmed >= frames {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "`{label}`: stuck at {confirmed}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut compared = 0;
    for f in 0..=frames {
        if let (Some(a), Some(b)) = (sessions[0].checksum(f), sessions[1].checksum(f)) {
            assert_eq!(a, b, "`{label}`: the peers differ at confirmed frame {f}");
            compared += 1;
        }
    }
    assert!(
        compared >= frames as usize,
        "`{label}`: only {compared} frames compared"
    );
    assert!(
        sessions.iter().any(|s| s.rollbacks() > 0),
        "`{label}`: no peer rolled back: the cell tested no misprediction"
    );
}

#[test]
fn every_pattern_agrees_between_two_ggrs_peers_that_roll_back() {
    for p in PATTERNS {
        two_peers_roll_back_and_agree(p, 90, [3, 5], &mut [build(p), build(p)], |w| w);
    }
}

#[test]
fn a_cursor_kept_in_a_closure_is_named_by_the_sync_test_which_changes_nothing() {
    // The pattern the docs warn against: the cursor lives in the closure, outside the World.
    let build = || {
        let mut w = World::new();
        w.insert_resource(Tally::default()).unwrap();
        w.add_event::<Hit>().unwrap();
        w.register_system(SystemDef::new("send", 1.0, |w: &mut World, ctx| {
            w.send_event(Hit(ctx.tick() as u32)).unwrap();
        }))
        .unwrap();
        let mut cursor = EventCursor::default();
        w.register_system(
            SystemDef::new("closure_reader", 1.0, move |w: &mut World, _| {
                let n: u64 = w
                    .events::<Hit>()
                    .unwrap()
                    .read(&mut cursor)
                    .map(|h| u64::from(h.0) + 1)
                    .sum();
                w.resource_mut::<Tally>().unwrap().hits += n;
            })
            .after("send"),
        )
        .unwrap();
        w
    };
    let mut plain = build();
    let mut checked = build();
    let mut sync = SyncTest::new(8);
    let mut said = None;
    for _ in 0..STEPS {
        plain.run_systems();
        if let Err(e) = sync.step(&mut checked) {
            said.get_or_insert(e.to_string());
        }
    }
    let said = said.expect("the SyncTest sees the state outside the World");
    assert!(
        said.contains("closure_reader") && said.contains("captured in a closure"),
        "{said}"
    );
    // The check reported it, and changed nothing: the checked run ends where the plain one does.
    assert_eq!(checked.state_hash(), plain.state_hash());
}

#[test]
fn the_docs_list_exactly_the_patterns_the_matrix_runs() {
    let doc = include_str!("../../docs/systems.md");
    let start = doc
        .find("### Patterns and modes")
        .expect("docs/systems.md has a Patterns and modes section");
    let table: Vec<&str> = doc[start..]
        .lines()
        .skip_while(|l| !l.starts_with("| pattern"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.split('|').nth(1).unwrap_or("").trim().trim_matches('`'))
        .collect();
    let outside: Vec<&str> = table
        .iter()
        .copied()
        .filter(|p| p.contains("outside every mode"))
        .collect();
    let inside: Vec<&str> = table
        .iter()
        .copied()
        .filter(|p| !p.contains("outside every mode"))
        .collect();
    assert_eq!(
        inside, PATTERNS,
        "the docs' patterns and the matrix's differ"
    );
    assert_eq!(outside.len(), 1, "{table:?}");
}

/// The pattern that needs an engine: a system reads its budget agent's strategy
/// (`World::agent_strategy`), and the strategy changes what it simulates.
mod agent_strategy {
    use super::*;
    use lanegraph::runtime::Engine;
    use std::sync::{Arc, OnceLock};

    struct Detail;
    impl Agent for Detail {
        fn name(&self) -> &str {
            "detail"
        }
        fn strategies(&self) -> Vec<Strategy> {
            vec![
                Strategy::new("fine", 2, Quote::new(CostLaw::Linear, 0.01)),
                Strategy::new("coarse", 1, Quote::new(CostLaw::Linear, 0.005)),
            ]
        }
    }

    /// The pin in force before frame `t`: the game's schedule, an input like the pad.
    pub(super) fn pin_at(t: u64) -> &'static str {
        if t < STEPS / 2 + 2 {
            "fine"
        } else {
            "coarse"
        }
    }

    /// An engine running the pattern, its agent pinned to `pin_at(0)` and in force.
    pub(super) fn engine() -> (Engine, AgentId) {
        let mut engine = Engine::builder()
            .lockstep(true)
            .adaptive(false)
            .build()
            .unwrap();
        let w = engine.world_mut();
        install(w, "resources");
        let agent: Arc<OnceLock<AgentId>> = Arc::default();
        let mine = agent.clone();
        let sys = w
            .register_system(
                SystemDef::new("detail", 1.0, move |w: &mut World, _| {
                    // Fine moves every body by its velocity, coarse by half of it.
                    let s = mine.get().and_then(|&id| w.agent_strategy(id));
                    let scale = match s.map(|s| s.0) {
                        Some(0) => 1.0,
                        Some(_) => 0.5,
                        None => panic!("no strategy in force for a pinned agent"),
                    };
                    w.query::<(&mut Pos, &Vel)>()
                        .unwrap()
                        .for_each(|(p, v)| p.0 += v.0 * scale);
                })
                .after("pad"),
            )
            .unwrap();
        let id = engine
            .add_agent(Box::new(Detail), AgentCost::System(sys))
            .unwrap();
        agent.set(id).unwrap();
        engine.pin(id, pin_at(0)).unwrap();
        (engine, id)
    }

    /// One engine frame on pad value `p` under the pin the schedule gives for frame `t`.
    pub(super) fn frame(engine: &mut Engine, agent: AgentId, t: u64, p: u8) {
        engine.pin(agent, pin_at(t)).unwrap();
        engine.world_mut().resource_mut::<Pad>().unwrap().0 = p;
        engine.frame().unwrap();
    }
}

/// A system reading its agent's strategy, under an engine whose agent is pinned on a schedule
/// (the pin changes mid-run): a snapshot restored and run again, and a rollback with
/// mispredictions, end where the straight run does. The pin schedule is an input, re-applied
/// on re-simulation like the pad.
#[test]
fn a_system_reading_its_agents_strategy_rewinds_under_an_engine() {
    use agent_strategy::{engine, frame};
    let straight = {
        let (mut e, id) = engine();
        for t in 0..STEPS {
            frame(&mut e, id, t, pad(t));
        }
        assert_eq!(
            e.world().agent_strategy(id).map(|s| s.0),
            Some(1),
            "the schedule's second pin is in force"
        );
        e.world().state_hash()
    };
    // The pin schedule changes what is simulated: a run that stays on `fine` ends elsewhere.
    let (mut e, id) = engine();
    for t in 0..STEPS {
        e.pin(id, "fine").unwrap();
        e.world_mut().resource_mut::<Pad>().unwrap().0 = pad(t);
        e.frame().unwrap();
    }
    assert_ne!(e.world().state_hash(), straight, "the strategy is read");

    // Snapshot before the pin changes, run past it, restore, run again.
    let (mut e, id) = engine();
    for t in 0..STEPS / 2 {
        frame(&mut e, id, t, pad(t));
    }
    let mut snap = Snapshot::default();
    e.snapshot_into(&mut snap).unwrap();
    for t in STEPS / 2..STEPS {
        frame(&mut e, id, t, pad(t));
    }
    assert_eq!(e.world().state_hash(), straight, "snapshot (first pass)");
    e.restore(&snap).unwrap();
    for t in STEPS / 2..STEPS {
        frame(&mut e, id, t, pad(t));
    }
    assert_eq!(e.world().state_hash(), straight, "snapshot and restore");

    // Rollback: 3 frames on a misprediction, restored, re-simulated on the right pad.
    let (mut e, id) = engine();
    let mut capture = Snapshot::default();
    let mut t = 0;
    while t < STEPS {
        e.snapshot_into(&mut capture).unwrap();
        let span = 3.min(STEPS - t);
        for k in 0..span {
            frame(&mut e, id, t + k, mispredicted(t + k));
        }
        e.restore(&capture).unwrap();
        for k in 0..span {
            frame(&mut e, id, t + k, pad(t + k));
        }
        t += span;
    }
    assert_eq!(
        e.world().state_hash(),
        straight,
        "rollback with mispredictions"
    );
}

/// The same pattern between two ggrs peers: each peer's engine pins the agent alike (the
/// documented rule for a strategy that changes the simulation), and `lanegraph-netcode` steps
/// the engine's World. Inputs change at each player's rhythm, so both roll back; every
/// confirmed frame's checksum agrees.
#[test]
fn a_pinned_agents_strategy_agrees_between_two_ggrs_peers_that_roll_back() {
    let mut engines = [0, 1].map(|_| {
        let (mut engine, id) = agent_strategy::engine();
        // Pinned alike on both peers, and put in force by one frame before the match.
        engine.pin(id, "coarse").unwrap();
        engine.frame().unwrap();
        assert_eq!(engine.world().agent_strategy(id).map(|s| s.0), Some(1));
        engine
    });
    two_peers_roll_back_and_agree("agent strategy", 60, [7, 9], &mut engines, |e| {
        e.world_mut()
    });
}
