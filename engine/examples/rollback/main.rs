//! `cargo run --release -p lanegraph --example rollback`: two peers of a small lanegraph game in
//! one process, through `lanegraph-netcode` (ggrs underneath), over loopback UDP with 50 ms
//! each way and 5 % loss, for 600 frames; prints whether their checksums agreed on every
//! confirmed frame.

mod game;

use std::time::Duration;

fn main() {
    match game::run_pair(
        600,
        Duration::from_millis(50),
        0.05,
        Duration::from_secs(120),
    ) {
        Ok(r) => {
            println!(
                "confirmed frame {}: {} of {} confirmed frames' checksums agree; desyncs \
                 reported: {}; rollbacks: {:?}; steps simulated: {:?}",
                r.confirmed,
                r.agreed,
                r.compared,
                r.desyncs(),
                r.rollbacks,
                r.advances
            );
            if r.agreed != r.compared || r.desyncs() != 0 {
                std::process::exit(1);
            }
        }
        Err(e) => {
            eprintln!("rollback: {e}");
            std::process::exit(1);
        }
    }
}
