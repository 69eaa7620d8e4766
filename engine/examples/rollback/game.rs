//! A two-player rollback game through `ggrs` (the Rust GGPO), written as a game on lanegraph
//! would: two ships steered by scripted inputs among drifting rocks, each peer a World; ggrs
//! asks for saves, loads and advances, which go through a [`SnapshotRing`] and the World's
//! systems; the World's state hash is the checksum ggrs compares between peers.
//!
//! [`run_pair`] runs both peers in one process over loopback UDP with a simulated one-way
//! delay and packet loss ([`LossyLink`]), prediction 8 frames, input delay 2.

use std::collections::{BTreeMap, VecDeque};
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use ggrs::{
    Config, DesyncDetection, GgrsError, GgrsEvent, GgrsRequest, Message, NonBlockingSocket,
    P2PSession, PlayerType, SessionBuilder, SessionState,
};
use lanegraph::systems::SystemDef;
use lanegraph::world::{Component, Resource, SnapshotRing, StateHash, World};

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
/// ggrs hands each advance (confirmed or predicted).
#[derive(Clone, Copy, Debug, Default, Resource, StateHash)]
pub struct Inputs(pub [u8; 2]);

/// Rocks each ship touched, summed over the steps.
#[derive(Clone, Copy, Debug, Default, Resource, StateHash)]
pub struct Hits(pub [u32; 2]);

/// Side of the square arena.
pub const ARENA: f32 = 200.0;

/// The game's ggrs types: one input byte per player, the state ggrs keeps is the step the
/// snapshot ring holds (the snapshot itself stays in the ring), peers are UDP addresses.
#[derive(Debug)]
pub struct Duel;

impl Config for Duel {
    type Input = u8;
    type State = u64;
    type Address = SocketAddr;
}

/// One peer's game: its World, the snapshots ggrs may roll back to, and the checksum it
/// reported for every frame (a re-simulated frame overwrites its earlier, predicted one).
#[derive(Debug)]
pub struct Peer {
    /// The simulation.
    pub world: World,
    ring: SnapshotRing,
    /// Frame -> the checksum saved for it last.
    pub checksums: BTreeMap<i32, u128>,
    /// Loads ggrs asked for (rollbacks).
    pub rollbacks: u64,
    /// Frames advanced, re-simulations included.
    pub advances: u64,
    /// The step of the latest capture, while the world has not moved since.
    saved_tick: Option<u64>,
}

/// A deterministic generator for the rocks (xorshift64*).
fn next(seed: &mut u64) -> f32 {
    *seed ^= *seed >> 12;
    *seed ^= *seed << 25;
    *seed ^= *seed >> 27;
    (seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 24) as f32
}

/// A fresh peer's World: two ships, `rocks` rocks from `seed`, the systems.
pub fn peer(rocks: usize, seed: u64) -> Peer {
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
    Peer {
        world: w,
        // A frame ggrs loads is at most the prediction window (8) back, but every rollback
        // saves each re-simulated frame again: 128 captures cover 8 rollbacks of 8 frames
        // and more between a frame's last save and its load.
        ring: SnapshotRing::new(128),
        checksums: BTreeMap::new(),
        rollbacks: 0,
        advances: 0,
        saved_tick: None,
    }
}

impl Peer {
    /// Carries out what ggrs asked for, in order.
    pub fn handle(&mut self, requests: Vec<GgrsRequest<Duel>>) -> Result<(), String> {
        for r in requests {
            match r {
                GgrsRequest::SaveGameState { cell, frame } => {
                    // ggrs asks again for a frame it saved while it waits on the prediction
                    // window: the state has not moved, so the capture stands.
                    if self.saved_tick != Some(self.world.tick()) {
                        self.ring.save(&self.world).map_err(|e| e.to_string())?;
                        self.saved_tick = Some(self.world.tick());
                    }
                    let checksum = u128::from(self.world.state_hash());
                    self.checksums.insert(frame, checksum);
                    cell.save(frame, Some(self.world.tick()), Some(checksum));
                }
                GgrsRequest::LoadGameState { cell, frame } => {
                    let tick = cell
                        .load()
                        .ok_or_else(|| format!("ggrs asked to load frame {frame}, never saved"))?;
                    let snap = self
                        .ring
                        .at_tick(tick)
                        .ok_or_else(|| {
                            format!(
                                "the ring no longer holds step {tick} (frame {frame}; the world is at step {}, after {} advances and {} rollbacks)",
                                self.world.tick(),
                                self.advances,
                                self.rollbacks
                            )
                        })?;
                    self.world.restore(snap).map_err(|e| e.to_string())?;
                    self.saved_tick = None;
                    self.rollbacks += 1;
                }
                GgrsRequest::AdvanceFrame { inputs } => {
                    let mut bytes = [0u8; 2];
                    for (p, (input, _status)) in inputs.iter().enumerate().take(2) {
                        bytes[p] = *input;
                    }
                    self.world
                        .insert_resource(Inputs(bytes))
                        .map_err(|e| e.to_string())?;
                    self.world.run_systems();
                    self.saved_tick = None;
                    self.advances += 1;
                }
            }
        }
        Ok(())
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

/// Loopback UDP with a one-way delay and a loss rate (seeded: the same drops every run), the
/// network a rollback game must survive.
pub struct LossyLink {
    socket: UdpSocket,
    delay: Duration,
    loss: f64,
    seed: u64,
    queue: VecDeque<(Instant, SocketAddr, Vec<u8>)>,
    buffer: Vec<u8>,
}

impl LossyLink {
    /// Bound to a free loopback port.
    pub fn bind(delay: Duration, loss: f64, seed: u64) -> std::io::Result<LossyLink> {
        let socket = UdpSocket::bind("127.0.0.1:0")?;
        socket.set_nonblocking(true)?;
        Ok(LossyLink {
            socket,
            delay,
            loss,
            seed: seed | 1,
            queue: VecDeque::new(),
            buffer: vec![0; 4096],
        })
    }

    /// Its address.
    pub fn addr(&self) -> std::io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    fn flush(&mut self) {
        let now = Instant::now();
        while self.queue.front().is_some_and(|(due, _, _)| *due <= now) {
            if let Some((_, addr, bytes)) = self.queue.pop_front() {
                // A full socket buffer is one more lost packet: ggrs resends.
                let _ = self.socket.send_to(&bytes, addr);
            }
        }
    }
}

impl NonBlockingSocket<SocketAddr> for LossyLink {
    fn send_to(&mut self, msg: &Message, addr: &SocketAddr) {
        if f64::from(next(&mut self.seed)) < self.loss {
            // Lost.
        } else if let Ok(bytes) = bincode::serialize(msg) {
            self.queue
                .push_back((Instant::now() + self.delay, *addr, bytes));
        }
        self.flush();
    }

    fn receive_all_messages(&mut self) -> Vec<(SocketAddr, Message)> {
        self.flush();
        let mut out = Vec::new();
        while let Ok((n, from)) = self.socket.recv_from(&mut self.buffer) {
            if let Ok(msg) = bincode::deserialize(&self.buffer[..n]) {
                out.push((from, msg));
            }
        }
        out
    }
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
    /// `DesyncDetected` events (ggrs comparing the checksums itself).
    pub desyncs: u64,
    /// Rollbacks each peer ran.
    pub rollbacks: [u64; 2],
    /// The two peers as they ended.
    pub peers: [Peer; 2],
}

/// Runs two peers until both confirmed `frames` frames (or `timeout` passes): `one_way` delay
/// and `loss` on both links, prediction 8, input delay 2, ggrs desync detection every frame.
pub fn run_pair(
    frames: i32,
    one_way: Duration,
    loss: f64,
    timeout: Duration,
) -> Result<PairReport, String> {
    let io = |e: std::io::Error| e.to_string();
    let links = [
        LossyLink::bind(one_way, loss, 0x51).map_err(io)?,
        LossyLink::bind(one_way, loss, 0xa7).map_err(io)?,
    ];
    let addrs = [links[0].addr().map_err(io)?, links[1].addr().map_err(io)?];
    let gg = |e: GgrsError| e.to_string();
    let mut sessions: Vec<P2PSession<Duel>> = Vec::new();
    for (me, link) in links.into_iter().enumerate() {
        let other = 1 - me;
        let mut b = SessionBuilder::<Duel>::new()
            .with_num_players(2)
            .with_max_prediction_window(8)
            .with_input_delay(2)
            .with_desync_detection_mode(DesyncDetection::On { interval: 1 });
        b = b.add_player(PlayerType::Local, me).map_err(gg)?;
        b = b
            .add_player(PlayerType::Remote(addrs[other]), other)
            .map_err(gg)?;
        sessions.push(b.start_p2p_session(link).map_err(gg)?);
    }
    let mut peers = [peer(256, 9), peer(256, 9)];
    let mut desyncs = 0;
    let start = Instant::now();
    loop {
        let mut progressed = false;
        for (me, session) in sessions.iter_mut().enumerate() {
            session.poll_remote_clients();
            for event in session.events() {
                if let GgrsEvent::DesyncDetected { .. } = event {
                    desyncs += 1;
                }
            }
            if session.current_state() != SessionState::Running {
                continue;
            }
            let frame = session.current_frame();
            if frame >= frames + 20 {
                continue;
            }
            session.add_local_input(me, script(me, frame)).map_err(gg)?;
            match session.advance_frame() {
                Ok(requests) => {
                    peers[me].handle(requests)?;
                    progressed = true;
                }
                Err(GgrsError::PredictionThreshold) => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        let confirmed = sessions
            .iter()
            .map(P2PSession::confirmed_frame)
            .min()
            .unwrap_or(-1);
        if confirmed >= frames {
            break;
        }
        if start.elapsed() > timeout {
            return Err(format!(
                "timed out at confirmed frame {confirmed} of {frames} (frames {:?})",
                sessions
                    .iter()
                    .map(P2PSession::current_frame)
                    .collect::<Vec<_>>()
            ));
        }
        if !progressed {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let confirmed = sessions
        .iter()
        .map(P2PSession::confirmed_frame)
        .min()
        .unwrap_or(-1);
    let (mut compared, mut agreed) = (0, 0);
    for f in 0..=confirmed {
        if let (Some(a), Some(b)) = (peers[0].checksums.get(&f), peers[1].checksums.get(&f)) {
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
        desyncs,
        rollbacks: [peers[0].rollbacks, peers[1].rollbacks],
        peers,
    })
}
