//! Rollback netcode through ggrs: the example game's two peers in one process over
//! loopback UDP with 100 ms round trip and 5 % loss, prediction 8, input delay 2, for 600
//! frames. Saves and loads go through each World's snapshot ring, the World's state hash is
//! the checksum: both peers' checksums agree on every confirmed frame, ggrs reports no desync,
//! and both peers really rolled back.

#[path = "../../engine/examples/rollback/game.rs"]
mod game;

use std::time::Duration;

#[test]
fn two_ggrs_peers_agree_on_every_confirmed_frame_over_a_lossy_link() {
    let r = game::run_pair(
        600,
        Duration::from_millis(50),
        0.05,
        Duration::from_secs(300),
    )
    .unwrap();
    assert!(r.confirmed >= 600, "{r:?}");
    assert!(
        r.compared as i32 > r.confirmed,
        "every confirmed frame compared: {r:?}"
    );
    assert_eq!(
        r.agreed, r.compared,
        "checksums differ on a confirmed frame"
    );
    assert_eq!(r.desyncs(), 0, "a desync was reported: {:?}", r.events);
    assert!(
        r.rollbacks.iter().all(|&n| n > 0),
        "the scripted inputs must make both peers roll back: {:?}",
        r.rollbacks
    );
    // Both simulated more steps than they confirmed: the rollbacks re-simulated.
    assert!(r.advances.iter().all(|&a| a > 600));
}

mod forged {
    //! Forged, truncated and replayed datagrams from the peer's own address (sent through a
    //! second handle on the peer's own socket, over loopback), bounded in count and time: no
    //! crash, and every disagreement between the peers' checksums is reported.

    use super::game;
    use lanegraph_netcode::ggrs::{Message, NonBlockingSocket};
    use lanegraph_netcode::{NetEvent, UdpLink};
    use serde::{Deserialize, Serialize};
    use std::net::{SocketAddr, UdpSocket};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    /// ggrs 0.11.1's wire layout, as a forger who read its source writes it.
    #[derive(Clone, Debug, Serialize, Deserialize)]
    struct Status {
        disconnected: bool,
        last_frame: i32,
    }
    #[derive(Clone, Debug, Serialize, Deserialize)]
    enum Body {
        SyncRequest(u32),
        SyncReply(u32),
        Input {
            peer_connect_status: Vec<Status>,
            disconnect_requested: bool,
            start_frame: i32,
            ack_frame: i32,
            bytes: Vec<u8>,
        },
        InputAck(i32),
        QualityReport(i16, u128),
        QualityReply(u128),
        ChecksumReport(u128, i32),
        KeepAlive,
    }
    #[derive(Clone, Debug, Serialize, Deserialize)]
    struct Forged {
        magic: u16,
        body: Body,
    }

    /// A link that keeps a copy of every datagram it sends (the forger's sniffed traffic).
    struct Tap {
        link: UdpLink,
        sent: Arc<Mutex<Vec<Vec<u8>>>>,
    }
    impl NonBlockingSocket<SocketAddr> for Tap {
        fn send_to(&mut self, msg: &Message, addr: &SocketAddr) {
            if let (Ok(bytes), Ok(mut sent)) = (bincode::serialize(msg), self.sent.lock()) {
                if sent.len() < 4096 {
                    sent.push(bytes);
                }
            }
            self.link.send_to(msg, addr);
        }
        fn receive_all_messages(&mut self) -> Vec<(SocketAddr, Message)> {
            self.link.receive_all_messages()
        }
    }

    fn rng(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    /// One forged datagram: a replay, a truncation, a bit flip, random bytes, or a sniffed
    /// message with its fields bent out of range.
    fn forge(sniffed: &[Vec<u8>], s: &mut u64) -> Vec<u8> {
        let pick = |s: &mut u64| sniffed[rng(s) as usize % sniffed.len()].clone();
        match rng(s) % 5 {
            0 => pick(s),
            1 => {
                let d = pick(s);
                d[..rng(s) as usize % d.len().max(1)].to_vec()
            }
            2 => {
                let mut d = pick(s);
                for _ in 0..1 + rng(s) % 4 {
                    let bit = rng(s) as usize % (d.len() * 8).max(1);
                    if let Some(b) = d.get_mut(bit / 8) {
                        *b ^= 1 << (bit % 8);
                    }
                }
                d
            }
            3 => (0..rng(s) % 64).map(|_| rng(s) as u8).collect(),
            _ => {
                let d = pick(s);
                let Ok(mut m) = bincode::deserialize::<Forged>(&d) else {
                    return d;
                };
                let wild = [i32::MIN, -2, -1, 0, 7, 100_000, i32::MAX][rng(s) as usize % 7];
                match &mut m.body {
                    Body::Input {
                        peer_connect_status,
                        start_frame,
                        ack_frame,
                        bytes,
                        ..
                    } => match rng(s) % 4 {
                        0 => *start_frame = wild,
                        1 => *ack_frame = wild,
                        2 => bytes.truncate(rng(s) as usize % (bytes.len() + 1)),
                        _ => peer_connect_status.resize(
                            rng(s) as usize % 9,
                            Status {
                                disconnected: rng(s) % 2 == 0,
                                last_frame: wild,
                            },
                        ),
                    },
                    Body::InputAck(f) | Body::ChecksumReport(_, f) => *f = wild,
                    Body::QualityReport(adv, _) => *adv = i16::MIN,
                    _ => m.body = Body::ChecksumReport(rng(s) as u128, wild),
                }
                bincode::serialize(&m).unwrap_or(d)
            }
        }
    }

    /// One match with forgeries from `seed`: what the forger sent and what the peers saw.
    fn forged_match(seed: u64) -> (u32, game::PairReport) {
        let (links, addrs) = game::links(Duration::from_millis(5), 0.0).unwrap();
        // A second handle on peer 1's socket: what it sends leaves from peer 1's address.
        let forger: UdpSocket = links[1].try_clone_socket().unwrap();
        let sent = Arc::new(Mutex::new(Vec::new()));
        let [a, b] = links;
        let taps = [
            Tap {
                link: a,
                sent: Arc::new(Mutex::new(Vec::new())),
            },
            Tap {
                link: b,
                sent: Arc::clone(&sent),
            },
        ];
        let (mut seed, mut forged) = (seed | 1, 0u32);
        const MAX_FORGED: u32 = 2_000;
        let report = game::run_sessions(taps, addrs, 300, Duration::from_secs(60), &mut |round| {
            // After the peers synchronised, a burst of forgeries every few rounds.
            let sniffed = sent.lock().map(|s| s.clone()).unwrap_or_default();
            if round < 50 || round % 3 != 0 || sniffed.is_empty() || forged >= MAX_FORGED {
                return;
            }
            for _ in 0..8 {
                let d = forge(&sniffed, &mut seed);
                let _ = forger.send_to(&d, addrs[0]);
                forged += 1;
            }
        })
        .expect("no request failed");
        (forged, report)
    }

    #[test]
    fn forged_truncated_and_replayed_datagrams_from_the_peers_own_address_crash_nothing() {
        let mut contained = 0;
        for seed in [0x9e37_79b9_7f4a_7c15u64, 0x51, 0xa7, 0x1234_5678] {
            let (forged, report) = forged_match(seed);
            assert!(
                forged >= 8,
                "seed {seed:#x}: only {forged} datagrams were forged"
            );
            // Whatever ggrs made of them, the process goes on: a panic inside it is a typed
            // event that ended that peer's session.
            let failed = report
                .events
                .iter()
                .flatten()
                .filter(|e| matches!(e, NetEvent::LibraryFailed { .. }))
                .count();
            contained += failed;
            // Every disagreement on a confirmed frame is reported (a desync event, or the
            // session ended by the library's failure).
            if report.agreed != report.compared {
                assert!(
                    report.desyncs() > 0 || failed > 0,
                    "seed {seed:#x}: {} of {} confirmed frames disagree and nothing was reported",
                    report.compared - report.agreed,
                    report.compared
                );
            }
            // Without a failure the match ran its course.
            if failed == 0 {
                assert!(report.confirmed >= 300, "seed {seed:#x}: {report:?}");
            }
            eprintln!(
                "seed {seed:#x}: forged {forged}; confirmed {}; agreed {}/{}; desyncs {}; library failures {failed}",
                report.confirmed,
                report.agreed,
                report.compared,
                report.desyncs(),
            );
        }
        eprintln!("{contained} panics inside ggrs contained over 4 matches");
    }
}
