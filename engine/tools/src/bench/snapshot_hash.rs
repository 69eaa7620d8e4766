//! The snapshot suite's state-hash rows: how fast `World::state_hash` reads a world.
//!
//! Owns: `state_hash_gb_per_s` and `state_hash_unchanged_10k_x4`. Must never: time a hash
//! whose column digests were all cached when it claims to time reading the world (every
//! sample of the first row marks every domain changed first).
//!
//! - `state_hash_gb_per_s`: the suite's 10k x 4 world (1,000,000 component bytes) hashed after
//!   every domain is marked changed, so every column and the entity set are read again;
//!   gigabytes of component data per second. Baseline: XXH3-64 of 1,000,000 bytes in one slice
//!   (the floor a byte-reading hash has on this machine). Goal: >= 4 GB/s.
//! - `state_hash_unchanged_10k_x4`: the same world hashed again with nothing changed (every
//!   digest reused), microseconds; baseline: the hash above, microseconds.

use std::hint::black_box;

use lanegraph::hooks::WorldHooks;
use lanegraph::world::{DomainSet, World};
use lanegraph_jobs::clock;

use super::stats::median;
use super::Figure;

const SUITE: &str = "snapshot";

/// The hash rows of `w`, whose components hold `component_bytes` bytes.
pub(super) fn rows(w: &mut World, component_bytes: usize, samples: usize) -> Vec<Figure> {
    let floor_bytes = vec![0x5au8; component_bytes];
    let (mut full, mut floor, mut unchanged) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..samples {
        w.mark_changed(DomainSet::ALL);
        let t0 = clock::now();
        black_box(w.state_hash());
        full.push(clock::now().ns_since(t0) as f64);
        let t0 = clock::now();
        black_box(w.state_hash());
        unchanged.push(clock::now().ns_since(t0) as f64);
        let t0 = clock::now();
        black_box(xxhash_rust::xxh3::xxh3_64(black_box(&floor_bytes)));
        floor.push(clock::now().ns_since(t0) as f64);
    }
    let (full, floor) = (median(&mut full), median(&mut floor));
    let gb_per_s = |ns: f64| component_bytes as f64 / ns.max(1.0);
    vec![
        Figure::new(
            SUITE,
            "state_hash_gb_per_s",
            1,
            "gb_per_s",
            "GB/s",
            gb_per_s(full),
        )
        .with_baseline("XXH3-64 of the same bytes in one slice", gb_per_s(floor)),
        Figure::new(
            SUITE,
            "state_hash_unchanged_10k_x4",
            1,
            "us_per_hash",
            "us",
            median(&mut unchanged) / 1e3,
        )
        .with_baseline("the hash with every column changed", full / 1e3),
    ]
}
