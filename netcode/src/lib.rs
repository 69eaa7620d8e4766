//! Rollback netcode for lanegraph games: [`Session`] runs a [ggrs](https://docs.rs/ggrs) peer
//! whose saves, loads and advances are the World's own (a [`SnapshotRing`] of captures, the
//! game's systems, the World's state hash as the checksum), so a game writes no glue: it says
//! how its input enters the World and calls [`Session::step`] once a frame.
//!
//! Owns: the session (ggrs underneath), the snapshot ring it rolls back through, the
//! checksums, the UDP link ([`UdpLink`]: bounded datagrams, optional simulated delay and loss)
//! and the containment of a panic inside ggrs (a forged datagram from the peer's own address
//! panics ggrs 0.11.1): it becomes [`NetEvent::LibraryFailed`] and the session ends, typed,
//! instead of taking the game down. Must never: let a panic of the network library unwind into
//! the game, advance the World on anything but the inputs ggrs hands it, or drop a desync ggrs
//! reports.
//!
//! | file | idea |
//! |------|------|
//! | `session` | [`Session`]: ggrs requests carried out on a World, panic containment, events |
//! | `link` | [`UdpLink`]: ggrs messages over a UDP socket, bounded, with simulated conditions |

#![deny(unreachable_pub, missing_docs)]

mod link;
mod session;

pub use link::{LinkConditions, UdpLink, MAX_DATAGRAM};
pub use session::{NetConfig, NetError, NetEvent, NetInput, Session, Stepped, CHECKSUM_FRAMES};

/// ggrs itself, for a game that needs its types (`InputStatus`, `NonBlockingSocket`).
pub use ggrs;
/// The capture ring a session rolls back through (re-exported for its docs' links).
pub use lanegraph::world::SnapshotRing;
