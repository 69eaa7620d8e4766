//! A two-player rollback game through `lanegraph-netcode` (ggrs underneath), written as a game
//! on lanegraph would: two ships steered by scripted inputs among drifting rocks, each peer a
//! World. The game is only its World and how one frame's inputs enter it ([`apply`]): the
//! session saves, loads, advances and checksums (the World's state hash) by itself.
//!
//! [`run_pair`] runs both peers in one process over loopback UDP with a simulated one-way
//! delay and packet loss, prediction 8, input delay 2.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use lanegraph::systems::SystemDef;
use lanegraph::world::{Component, Resource, StateHash, World};
use lanegraph_netcode::ggrs::NonBlockingSocket;
use lanegraph_netcode::{LinkConditions, NetConfig, NetEvent, Session, Stepped, UdpLink};

/// A ship: where it is and how it moves.
#[derive(Clone, Copy, Debug, Component, StateHash)]
pub struct Ship {
    /// Which player steers it.
    pub player: u8,
    /// Position.
    pub x: f32,
    /// Position.
    pub y: f32,
    /// Velocity.
    pub vx: f32,
    /// Velocity.
    pub vy: f32,
}

/// A rock drifting across the arena.
#[derive(Clone, Copy, Debug, Component, StateHash)]
pub struct Rock {
    /// Position.
    pub x: f32,
    /// Position.
    pub y: f32,
    /// Velocity.
    pub vx: f32,
    /// Velocity.
    pub vy: f32,
}

/// This step's inputs, one byte per player (bit 0 left, 1 right, 2 up, 3 down), set from what
/// the session hands each advance (confirmed or predicted).
#[derive(Clone, Copy, Debug, Default, Resource, StateHash)]
pub struct Inputs(pub [u8; 2]);

/// Rocks each ship touched, summed over the steps.
#[derive(Clone, Copy, Debug, Default, Resource, StateHash)]
pub struct Hits(pub [u32; 2]);

/// Side of the square arena.
pub const ARENA: f32 = 200.0;

/// A deterministic generator for the rocks (xorshift64*).
fn next(seed: &mut u64) -> f32 {
    *seed ^= *seed >> 12;
    *seed ^= *seed << 25;
    *seed ^= *seed >> 27;
    (seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 24) as f32
}

/// A fresh peer's World: two ships, `rocks` rocks from `seed`, the systems.
pub fn peer(rocks: usize, seed: u64) -> World {
    let mut w = World::new();
    for player in 0..2u8 {
        let e = w.spawn();
        w.insert(
            e,
            Ship {
                player,
                x: if player == 0 { -50.0 } else { 50.0 },
                y: 0.0,
                vx: 0.0,
                vy: 0.0,
            },
        )
        .expect("a fresh entity");
    }
    let mut s = seed | 1;
    w.spawn_batch((0..rocks).map(|_| {
        (Rock {
            x: (next(&mut s) - 0.5) * ARENA,
            y: (next(&mut s) - 0.5) * ARENA,
            vx: next(&mut s) - 0.5,
            vy: next(&mut s) - 0.5,
        },)
    }))
    .expect("one component type");
    w.insert_resource(Inputs::default()).expect("unique name");
    w.insert_resource(Hits::default()).expect("unique name");
    w.register_system(SystemDef::new("steer", 1.0, |w: &mut World, _| {
        let inputs = w.resource::<Inputs>().map(|i| i.0).unwrap_or_default();
        w.query::<&mut Ship>().expect("one term").for_each(|s| {
            let i = inputs[usize::from(s.player)];
            let ax = f32::from(i >> 1 & 1) - f32::from(i & 1);
            let ay = f32::from(i >> 2 & 1) - f32::from(i >> 3 & 1);
            s.vx = (s.vx + 0.2 * ax) * 0.98;
            s.vy = (s.vy + 0.2 * ay) * 0.98;
            s.x = (s.x + s.vx).clamp(-ARENA / 2.0, ARENA / 2.0);
            s.y = (s.y + s.vy).clamp(-ARENA / 2.0, ARENA / 2.0);
        });
    }))
    .expect("a fresh world");
    w.register_system(
        SystemDef::new("drift", 1.0, |w: &mut World, _| {
            w.query::<&mut Rock>().expect("one term").for_each(|r| {
                r.x += r.vx;
                r.y += r.vy;
                if r.x.abs() > ARENA / 2.0 {
                    r.vx = -r.vx;
                }
                if r.y.abs() > ARENA / 2.0 {
                    r.vy = -r.vy;
                }
            });
        })
        .after("steer"),
    )
    .expect("a fresh world");
    w.register_system(
        SystemDef::new("collide", 1.0, |w: &mut World, _| {
            let mut ships = [(0.0f32, 0.0f32); 2];
            w.query::<&Ship>()
                .expect("one term")
                .for_each(|s| ships[usize::from(s.player)] = (s.x, s.y));
            let mut hits = [0u32; 2];
            w.query::<&Rock>().expect("one term").for_each(|r| {
                for (p, (x, y)) in ships.iter().enumerate() {
                    if (r.x - x).abs() < 4.0 && (r.y - y).abs() < 4.0 {
                        hits[p] += 1;
                    }
                }
            });
            if let Ok(h) = w.resource_mut::<Hits>() {
                h.0[0] += hits[0];
                h.0[1] += hits[1];
            }
        })
        .after("drift"),
    )
    .expect("a fresh world");
    w
}

/// One frame's inputs into the World: the only glue between the session and the game.
pub fn apply(world: &mut World, inputs: &[u8]) {
    let mut bytes = [0u8; 2];
    for (b, i) in bytes.iter_mut().zip(inputs) {
        *b = *i;
    }
    if let Ok(r) = world.resource_mut::<Inputs>() {
        r.0 = bytes;
    }
}

/// The scripted input of `player` at `frame`: a different weave for each, changing every few
/// frames, so predictions (ggrs repeats the last input) are often wrong and rollbacks happen.
pub fn script(player: usize, frame: i32) -> u8 {
    let f = frame.max(0) as u32;
    let period = if player == 0 { 7 } else { 11 };
    let phase = (f / period + player as u32 * 3) % 8;
    [
        0b0001, 0b0101, 0b0100, 0b0110, 0b0010, 0b1010, 0b1000, 0b1001,
    ][phase as usize]
}

/// What [`run_pair`] saw.
#[derive(Debug)]
pub struct PairReport {
    /// The frame both peers confirmed.
    pub confirmed: i32,
    /// Confirmed frames whose checksums both peers saved.
    pub compared: usize,
    /// Of those, the ones that agree.
    pub agreed: usize,
    /// Every event each peer's session reported.
    pub events: [Vec<NetEvent>; 2],
    /// Rollbacks each peer ran.
    pub rollbacks: [u64; 2],
    /// Frames each peer advanced, re-simulations included.
    pub advances: [u64; 2],
}

impl PairReport {
    /// Desyncs the sessions reported.
    pub fn desyncs(&self) -> usize {
        self.events
            .iter()
            .flatten()
            .filter(|e| matches!(e, NetEvent::Desync { .. }))
            .count()
    }
}

/// Runs two peers until both confirmed `frames` frames (or `timeout` passes, or a session
/// ends): `one_way` delay and `loss` on both links.
pub fn run_pair(
    frames: i32,
    one_way: Duration,
    loss: f64,
    timeout: Duration,
) -> Result<PairReport, String> {
    let (links, addrs) = links(one_way, loss).map_err(|e| e.to_string())?;
    run_sessions(links, addrs, frames, timeout, &mut |_| {})
}

/// [`run_pair`] over any two links (`addrs`: where each is bound), calling `each_round` once
/// a round (a test forges datagrams from there).
pub fn run_sessions<S: NonBlockingSocket<SocketAddr> + 'static>(
    links: [S; 2],
    addrs: [SocketAddr; 2],
    frames: i32,
    timeout: Duration,
    each_round: &mut dyn FnMut(u64),
) -> Result<PairReport, String> {
    let mut sessions = Vec::new();
    for (me, link) in links.into_iter().enumerate() {
        let cfg = NetConfig::two_players(me, addrs[1 - me]);
        sessions.push(Session::p2p(&cfg, link, apply).map_err(|e| e.to_string())?);
    }
    let mut worlds = [peer(256, 9), peer(256, 9)];
    let mut events: [Vec<NetEvent>; 2] = [Vec::new(), Vec::new()];
    let start = Instant::now();
    let mut round = 0u64;
    loop {
        each_round(round);
        round += 1;
        let mut progressed = false;
        for (me, session) in sessions.iter_mut().enumerate() {
            events[me].extend(session.poll());
            let frame = session.current_frame().unwrap_or(i32::MAX);
            if frame >= frames + 20 || !session.is_live() {
                continue;
            }
            match session.step(&mut worlds[me], script(me, frame)) {
                Ok(Stepped::Advanced) => progressed = true,
                Ok(Stepped::Waiting | Stepped::Synchronizing) => {}
                Err(lanegraph_netcode::NetError::LibraryFailed { during, message }) => {
                    events[me].push(NetEvent::LibraryFailed { during, message });
                }
                Err(e) => return Err(e.to_string()),
            }
        }
        let confirmed = sessions
            .iter()
            .map(|s| s.confirmed_frame().unwrap_or(-1))
            .min()
            .unwrap_or(-1);
        if confirmed >= frames || sessions.iter().any(|s| !s.is_live()) {
            break;
        }
        if start.elapsed() > timeout {
            return Err(format!(
                "timed out at confirmed frame {confirmed} of {frames}"
            ));
        }
        if !progressed {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let confirmed = sessions
        .iter()
        .map(|s| s.confirmed_frame().unwrap_or(-1))
        .min()
        .unwrap_or(-1);
    let (mut compared, mut agreed) = (0, 0);
    for f in 0..=confirmed {
        if let (Some(a), Some(b)) = (sessions[0].checksum(f), sessions[1].checksum(f)) {
            compared += 1;
            if a == b {
                agreed += 1;
            }
        }
    }
    Ok(PairReport {
        confirmed,
        compared,
        agreed,
        events,
        rollbacks: [sessions[0].rollbacks(), sessions[1].rollbacks()],
        advances: [sessions[0].advances(), sessions[1].advances()],
    })
}

/// Two loopback links with the same conditions, and their addresses.
pub fn links(one_way: Duration, loss: f64) -> std::io::Result<([UdpLink; 2], [SocketAddr; 2])> {
    let at = |seed| {
        UdpLink::bind(
            "127.0.0.1:0".parse().expect("a literal address"),
            LinkConditions {
                one_way_delay: one_way,
                loss,
                seed,
            },
        )
    };
    let links = [at(0x51)?, at(0xa7)?];
    let addrs = [links[0].local_addr()?, links[1].local_addr()?];
    Ok((links, addrs))
}
