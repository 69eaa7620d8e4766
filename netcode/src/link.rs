//! [`UdpLink`]: ggrs messages over a non-blocking UDP socket, one datagram each (bincode, as
//! ggrs's own socket frames them), with [`LinkConditions`] to simulate a one-way delay and a
//! loss rate (seeded: the same drops every run).
//!
//! Owns: the socket, the receive buffer and the delayed sends. Must never: block, allocate a
//! buffer sized by what a datagram claims (a datagram is read into a fixed
//! [`MAX_DATAGRAM`]-byte buffer and decoded with that bound), or pass on a datagram that does
//! not decode (it is counted in [`UdpLink::dropped`] and dropped).

use std::collections::VecDeque;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use bincode::Options;
use ggrs::{Message, NonBlockingSocket};

/// The largest datagram read or decoded, bytes: a ggrs message with a full prediction window
/// of inputs is a few hundred bytes; anything longer is dropped, never allocated for.
pub const MAX_DATAGRAM: usize = 4096;

/// Simulated network conditions on the sending side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkConditions {
    /// Each datagram waits this long before it is sent.
    pub one_way_delay: Duration,
    /// Share of datagrams lost, 0..1.
    pub loss: f64,
    /// Seed of the losses.
    pub seed: u64,
}

impl Default for LinkConditions {
    fn default() -> Self {
        LinkConditions {
            one_way_delay: Duration::ZERO,
            loss: 0.0,
            seed: 1,
        }
    }
}

/// A ggrs socket over UDP (module docs).
#[derive(Debug)]
pub struct UdpLink {
    socket: UdpSocket,
    conditions: LinkConditions,
    seed: u64,
    queue: VecDeque<(Instant, SocketAddr, Vec<u8>)>,
    buffer: Box<[u8; MAX_DATAGRAM]>,
    dropped: u64,
}

/// bincode with a size limit: a length prefix in a forged datagram cannot make it allocate
/// more than the datagram could hold.
fn codec() -> impl Options {
    bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .allow_trailing_bytes()
        .with_limit(MAX_DATAGRAM as u64)
}

impl UdpLink {
    /// Bound to `addr` (`127.0.0.1:0`: a free loopback port), non-blocking.
    ///
    /// # Errors
    /// The socket could not be bound or made non-blocking.
    pub fn bind(addr: SocketAddr, conditions: LinkConditions) -> std::io::Result<UdpLink> {
        let socket = UdpSocket::bind(addr)?;
        socket.set_nonblocking(true)?;
        Ok(UdpLink {
            socket,
            conditions,
            seed: conditions.seed | 1,
            queue: VecDeque::new(),
            buffer: Box::new([0; MAX_DATAGRAM]),
            dropped: 0,
        })
    }

    /// The bound address.
    ///
    /// # Errors
    /// The OS could not say.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// A second handle on the same socket: datagrams sent through it leave from this link's
    /// address (a test forges the peer's datagrams this way).
    ///
    /// # Errors
    /// The OS could not duplicate the socket.
    pub fn try_clone_socket(&self) -> std::io::Result<UdpSocket> {
        self.socket.try_clone()
    }

    /// Datagrams received that were too long or did not decode as a ggrs message.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The next number in `[0, 1)` of the loss sequence (xorshift64*).
    fn roll(&mut self) -> f64 {
        let s = &mut self.seed;
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        (s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn flush(&mut self) {
        let now = Instant::now();
        while self.queue.front().is_some_and(|(due, _, _)| *due <= now) {
            if let Some((_, addr, bytes)) = self.queue.pop_front() {
                // A full socket buffer is one more lost datagram: ggrs resends.
                let _ = self.socket.send_to(&bytes, addr);
            }
        }
    }
}

impl NonBlockingSocket<SocketAddr> for UdpLink {
    fn send_to(&mut self, msg: &Message, addr: &SocketAddr) {
        let lost = self.conditions.loss > 0.0 && self.roll() < self.conditions.loss;
        if !lost {
            if let Ok(bytes) = codec().serialize(msg) {
                let due = Instant::now() + self.conditions.one_way_delay;
                self.queue.push_back((due, *addr, bytes));
            }
        }
        self.flush();
    }

    fn receive_all_messages(&mut self) -> Vec<(SocketAddr, Message)> {
        self.flush();
        let mut out = Vec::new();
        loop {
            match self.socket.recv_from(&mut self.buffer[..]) {
                Ok((n, from)) => {
                    // A datagram filling the whole buffer may have been cut: not decoded.
                    let decoded = (n < MAX_DATAGRAM)
                        .then(|| codec().deserialize::<Message>(&self.buffer[..n]).ok())
                        .flatten();
                    match decoded {
                        Some(msg) => out.push((from, msg)),
                        None => self.dropped += 1,
                    }
                }
                // Would block: nothing more now. Another error (an ICMP port unreachable
                // surfacing on Linux) says nothing about the next datagram either.
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => break,
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversized_and_undecodable_datagrams_are_dropped_and_counted() {
        let mut link =
            UdpLink::bind("127.0.0.1:0".parse().unwrap(), LinkConditions::default()).unwrap();
        let to = link.local_addr().unwrap();
        let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
        sender.send_to(&vec![7u8; MAX_DATAGRAM + 100], to).unwrap();
        sender.send_to(&[0xff; 12], to).unwrap();
        // A length prefix claiming 2^60 bytes: refused by the bound, never allocated.
        let mut forged = vec![0u8; 2];
        forged.extend(2u32.to_le_bytes()); // the Input variant
        forged.extend((1u64 << 60).to_le_bytes());
        sender.send_to(&forged, to).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(link.receive_all_messages().is_empty());
        assert_eq!(link.dropped(), 3);
    }
}
