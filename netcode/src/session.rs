//! [`Session`]: one ggrs peer whose requests are carried out on a World, with a panic inside
//! ggrs contained.
//!
//! Owns: the ggrs session, the [`SnapshotRing`] it rolls back through, the checksums saved per
//! frame (bounded), the counters, and the conversion of ggrs's events and failures into
//! [`NetEvent`] and [`NetError`]. Must never: run the game's systems except on an
//! `AdvanceFrame` request (on the inputs ggrs hands it, confirmed or predicted), keep the
//! session after a panic inside ggrs (its state is unknown: it ends, typed), or drop a desync
//! ggrs reports.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};

use ggrs::{
    Config, DesyncDetection, GgrsError, GgrsEvent, GgrsRequest, NonBlockingSocket, P2PSession,
    PlayerType, SessionBuilder, SessionState,
};
use lanegraph::world::{SnapshotRing, World, WorldError};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Frames whose checksum a session keeps (the oldest go first): far more than any rollback
/// reaches back, bounded however long the match.
pub const CHECKSUM_FRAMES: usize = 1 << 16;

/// What a game's per-player input must be: small, copyable, comparable (ggrs compares the
/// prediction with what arrives), serialisable (it is the only game data on the wire), and
/// `Default` for "no input" (a disconnected player).
pub trait NetInput: Copy + PartialEq + Default + Serialize + DeserializeOwned + 'static {}
impl<T: Copy + PartialEq + Default + Serialize + DeserializeOwned + 'static> NetInput for T {}

/// The ggrs configuration of a session with input `I`: the state ggrs keeps per saved frame is
/// the World's step (the capture itself stays in the ring), peers are UDP addresses.
struct Cfg<I>(PhantomData<fn() -> I>);

impl<I: NetInput> Config for Cfg<I> {
    type Input = I;
    type State = u64;
    type Address = SocketAddr;
}

/// How to run a session.
#[derive(Debug, Clone, PartialEq)]
pub struct NetConfig {
    /// Players in the match.
    pub players: usize,
    /// This peer's player handle.
    pub local_player: usize,
    /// Every other player: its handle and the address of its peer.
    pub remotes: Vec<(usize, SocketAddr)>,
    /// Frames ggrs may run ahead of confirmed input (8: ggrs's own default).
    pub prediction_window: usize,
    /// Frames the local input is delayed by (2 hides a little latency and saves rollbacks).
    pub input_delay: usize,
    /// Captures kept for rollback. A load reaches at most `prediction_window` frames back,
    /// but every re-simulated frame is saved again: 16 times the window is ample.
    pub ring_captures: usize,
    /// Checksums are compared between peers every this many frames (1: every frame).
    pub desync_interval: u32,
}

impl NetConfig {
    /// Two players: `local_player` here, the other at `remote`, with the defaults above.
    pub fn two_players(local_player: usize, remote: SocketAddr) -> Self {
        NetConfig {
            players: 2,
            local_player,
            remotes: vec![(1 - local_player.min(1), remote)],
            prediction_window: 8,
            input_delay: 2,
            ring_captures: 128,
            desync_interval: 1,
        }
    }
}

/// What the network did, for the game to show or act on.
#[derive(Debug, Clone, PartialEq)]
pub enum NetEvent {
    /// Synchronizing with a peer: `count` of `total` round trips done.
    Synchronizing {
        /// The peer.
        peer: SocketAddr,
        /// Round trips done.
        count: u32,
        /// Round trips needed.
        total: u32,
    },
    /// Synchronized with a peer: the match can run.
    Synchronized {
        /// The peer.
        peer: SocketAddr,
    },
    /// Nothing heard from a peer for a while; it is dropped in `disconnect_in_ms`.
    Interrupted {
        /// The peer.
        peer: SocketAddr,
        /// Milliseconds before it is disconnected.
        disconnect_in_ms: u128,
    },
    /// A peer is heard again after [`NetEvent::Interrupted`].
    Resumed {
        /// The peer.
        peer: SocketAddr,
    },
    /// A peer is gone; its player's input is `Default` from now on.
    Disconnected {
        /// The peer.
        peer: SocketAddr,
    },
    /// ggrs suggests waiting this many frames so the other peers catch up.
    WaitRecommended {
        /// Frames.
        frames: u32,
    },
    /// The peers' World state hashes differ on a confirmed frame: the game is not
    /// deterministic (docs/systems.md, "State a system keeps", and the SyncTest mode find
    /// where).
    Desync {
        /// The frame.
        frame: i32,
        /// This peer's checksum.
        local: u128,
        /// The other peer's.
        remote: u128,
        /// The peer.
        peer: SocketAddr,
    },
    /// The network library panicked (a forged or corrupt datagram from a peer's own address
    /// does this to ggrs 0.11.1). The panic was contained; the session has ended: the game
    /// goes on offline or ends, with its outputs.
    LibraryFailed {
        /// What the session was doing.
        during: &'static str,
        /// The panic's message.
        message: String,
    },
}

/// A session that cannot go on, or a request it could not carry out.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// ggrs refused the configuration (players, handles, window).
    #[error(
        "netcode: the session could not start: {0} (fix: check NetConfig's players and handles)"
    )]
    Start(String),
    /// ggrs returned an error other than "wait for the remote peer".
    #[error("netcode: ggrs: {0}")]
    Ggrs(String),
    /// The network library panicked; the session has ended ([`NetEvent::LibraryFailed`]).
    #[error("netcode: the network library panicked during {during}: {message}; the session has ended (fix: end the match or go on offline; the World is as the last advance left it)")]
    LibraryFailed {
        /// What the session was doing.
        during: &'static str,
        /// The panic's message.
        message: String,
    },
    /// The session ended earlier (after [`NetError::LibraryFailed`]).
    #[error("netcode: the session has ended (fix: start a new one)")]
    Ended,
    /// ggrs asked to roll back to a frame no capture holds any more.
    #[error("netcode: ggrs asked to load frame {frame} (step {tick}), which the ring of {captures} captures no longer holds (fix: raise NetConfig::ring_captures)")]
    RingTooShort {
        /// The frame.
        frame: i32,
        /// Its step.
        tick: u64,
        /// The ring's size.
        captures: usize,
    },
    /// ggrs asked to load a frame it never asked to save (a bug in ggrs).
    #[error("netcode: ggrs asked to load frame {0}, which it never saved")]
    NeverSaved(i32),
    /// The World could not be captured or put back (a component or resource that is not
    /// `Clone`).
    #[error("netcode: {0}")]
    World(#[from] WorldError),
}

/// What one [`Session::step`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stepped {
    /// The session is still synchronizing with its peers: nothing ran.
    Synchronizing,
    /// ggrs ran ahead as far as its prediction window allows: wait for the remote input.
    Waiting,
    /// The frame advanced (with any rollback and re-simulation it needed).
    Advanced,
}

/// How a frame's inputs (one per player, in handle order) enter the World.
type ApplyInputs<I> = Box<dyn FnMut(&mut World, &[I])>;

/// One peer of a rollback match (module docs).
pub struct Session<I: NetInput> {
    p2p: Option<P2PSession<Cfg<I>>>,
    local: usize,
    ring: SnapshotRing,
    captures: usize,
    saved_tick: Option<u64>,
    checksums: BTreeMap<i32, u128>,
    apply: ApplyInputs<I>,
    inputs: Vec<I>,
    rollbacks: u64,
    advances: u64,
}

impl<I: NetInput> std::fmt::Debug for Session<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("running", &self.p2p.is_some())
            .field("local", &self.local)
            .field("rollbacks", &self.rollbacks)
            .field("advances", &self.advances)
            .finish()
    }
}

/// The text of a panic's payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

impl<I: NetInput> Session<I> {
    /// A peer-to-peer session over `link`. `apply` puts one frame's inputs (one per player, in
    /// handle order) into the World before its systems run: the only glue a game writes.
    ///
    /// # Errors
    /// [`NetError::Start`] when ggrs refuses the configuration.
    pub fn p2p(
        cfg: &NetConfig,
        link: impl NonBlockingSocket<SocketAddr> + 'static,
        apply: impl FnMut(&mut World, &[I]) + 'static,
    ) -> Result<Self, NetError> {
        let start = |e: GgrsError| NetError::Start(e.to_string());
        let mut b = SessionBuilder::<Cfg<I>>::new()
            .with_num_players(cfg.players)
            .with_max_prediction_window(cfg.prediction_window)
            .with_input_delay(cfg.input_delay)
            .with_desync_detection_mode(DesyncDetection::On {
                interval: cfg.desync_interval.max(1),
            });
        b = b
            .add_player(PlayerType::Local, cfg.local_player)
            .map_err(start)?;
        for &(handle, addr) in &cfg.remotes {
            b = b
                .add_player(PlayerType::Remote(addr), handle)
                .map_err(start)?;
        }
        let p2p = b.start_p2p_session(link).map_err(start)?;
        let captures = cfg.ring_captures.max(2);
        Ok(Session {
            p2p: Some(p2p),
            local: cfg.local_player,
            ring: SnapshotRing::new(captures),
            captures,
            saved_tick: None,
            checksums: BTreeMap::new(),
            apply: Box::new(apply),
            inputs: Vec::with_capacity(cfg.players),
            rollbacks: 0,
            advances: 0,
        })
    }

    /// Runs `f` on the ggrs session with a panic inside it contained: the session ends and
    /// the panic comes back as its message.
    fn contained<T>(
        &mut self,
        during: &'static str,
        f: impl FnOnce(&mut P2PSession<Cfg<I>>) -> T,
    ) -> Result<T, NetError> {
        let p2p = self.p2p.as_mut().ok_or(NetError::Ended)?;
        match catch_unwind(AssertUnwindSafe(|| f(p2p))) {
            Ok(v) => Ok(v),
            Err(payload) => {
                // ggrs's state after a panic is unknown: the session ends here.
                self.p2p = None;
                Err(NetError::LibraryFailed {
                    during,
                    message: panic_message(&*payload),
                })
            }
        }
    }

    /// Receives what the peers sent and returns what happened since the last call. A panic
    /// inside ggrs is the last event ([`NetEvent::LibraryFailed`]); an ended session returns
    /// nothing.
    pub fn poll(&mut self) -> Vec<NetEvent> {
        if self.p2p.is_none() {
            return Vec::new();
        }
        let polled = self.contained("poll", |p2p| {
            p2p.poll_remote_clients();
            p2p.events().collect::<Vec<_>>()
        });
        match polled {
            Ok(events) => events.into_iter().map(event_of).collect(),
            Err(NetError::LibraryFailed { during, message }) => {
                vec![NetEvent::LibraryFailed { during, message }]
            }
            Err(_) => Vec::new(),
        }
    }

    /// One frame: hands ggrs this peer's `input`, then carries out what it asks on `world`
    /// (save, load for a rollback, advance: `apply` then the World's systems), in order.
    ///
    /// # Errors
    /// [`NetError::LibraryFailed`] when ggrs panicked (the session has ended; the World is as
    /// the last completed request left it), [`NetError::Ended`] after that, and the request
    /// failures of [`NetError`].
    pub fn step(&mut self, world: &mut World, input: I) -> Result<Stepped, NetError> {
        let local = self.local;
        let advanced = self.contained("advance", |p2p| {
            (p2p.current_state() == SessionState::Running).then(|| {
                p2p.add_local_input(local, input)?;
                p2p.advance_frame()
            })
        })?;
        let requests = match advanced {
            None => return Ok(Stepped::Synchronizing),
            Some(Ok(r)) => r,
            Some(Err(GgrsError::PredictionThreshold)) => return Ok(Stepped::Waiting),
            Some(Err(e)) => return Err(NetError::Ggrs(e.to_string())),
        };
        for r in requests {
            self.carry_out(world, r)?;
        }
        Ok(Stepped::Advanced)
    }

    fn carry_out(&mut self, world: &mut World, r: GgrsRequest<Cfg<I>>) -> Result<(), NetError> {
        match r {
            GgrsRequest::SaveGameState { cell, frame } => {
                // ggrs asks again for a frame it saved while it waits on the prediction
                // window: the world has not moved, so the capture stands.
                if self.saved_tick != Some(world.tick()) {
                    self.ring.save(world)?;
                    self.saved_tick = Some(world.tick());
                }
                let checksum = u128::from(world.state_hash());
                self.checksums.insert(frame, checksum);
                while self.checksums.len() > CHECKSUM_FRAMES {
                    self.checksums.pop_first();
                }
                cell.save(frame, Some(world.tick()), Some(checksum));
            }
            GgrsRequest::LoadGameState { cell, frame } => {
                let tick = cell.load().ok_or(NetError::NeverSaved(frame))?;
                let snap = self.ring.at_tick(tick).ok_or(NetError::RingTooShort {
                    frame,
                    tick,
                    captures: self.captures,
                })?;
                world.restore(snap)?;
                self.saved_tick = None;
                self.rollbacks += 1;
            }
            GgrsRequest::AdvanceFrame { inputs } => {
                self.inputs.clear();
                self.inputs.extend(inputs.iter().map(|(i, _)| *i));
                (self.apply)(world, &self.inputs);
                world.run_systems();
                self.saved_tick = None;
                self.advances += 1;
            }
        }
        Ok(())
    }

    /// True until the session ends (a contained panic).
    pub fn is_live(&self) -> bool {
        self.p2p.is_some()
    }

    /// The frame ggrs is at (`None` once ended).
    pub fn current_frame(&self) -> Option<i32> {
        self.p2p.as_ref().map(P2PSession::current_frame)
    }

    /// The newest frame every peer's input is confirmed for (`None` once ended).
    pub fn confirmed_frame(&self) -> Option<i32> {
        self.p2p.as_ref().map(P2PSession::confirmed_frame)
    }

    /// The checksum (World state hash) saved last for `frame`, while kept.
    pub fn checksum(&self, frame: i32) -> Option<u128> {
        self.checksums.get(&frame).copied()
    }

    /// Rollbacks carried out (loads).
    pub fn rollbacks(&self) -> u64 {
        self.rollbacks
    }

    /// Frames advanced, re-simulations included.
    pub fn advances(&self) -> u64 {
        self.advances
    }
}

fn event_of<I: NetInput>(e: GgrsEvent<Cfg<I>>) -> NetEvent {
    match e {
        GgrsEvent::Synchronizing { addr, total, count } => NetEvent::Synchronizing {
            peer: addr,
            count,
            total,
        },
        GgrsEvent::Synchronized { addr } => NetEvent::Synchronized { peer: addr },
        GgrsEvent::Disconnected { addr } => NetEvent::Disconnected { peer: addr },
        GgrsEvent::NetworkInterrupted {
            addr,
            disconnect_timeout,
        } => NetEvent::Interrupted {
            peer: addr,
            disconnect_in_ms: disconnect_timeout,
        },
        GgrsEvent::NetworkResumed { addr } => NetEvent::Resumed { peer: addr },
        GgrsEvent::WaitRecommendation { skip_frames } => NetEvent::WaitRecommended {
            frames: skip_frames,
        },
        GgrsEvent::DesyncDetected {
            frame,
            local_checksum,
            remote_checksum,
            addr,
        } => NetEvent::Desync {
            frame,
            local: local_checksum,
            remote: remote_checksum,
            peer: addr,
        },
    }
}
