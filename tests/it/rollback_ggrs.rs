//! Rollback netcode through ggrs (issue 28): the example game's two peers in one process over
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
    assert_eq!(r.desyncs, 0, "ggrs saw a desync");
    assert!(
        r.rollbacks.iter().all(|&n| n > 0),
        "the scripted inputs must make both peers roll back: {:?}",
        r.rollbacks
    );
    // Both simulated more steps than they confirmed: the rollbacks re-simulated.
    assert!(r.peers.iter().all(|p| p.advances > 600));
}
