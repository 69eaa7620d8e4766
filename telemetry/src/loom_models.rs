//! Loom models of telemetry's lock-free protocols: the span ring's seqlock and the metric shards.
//!
//! Owns: the models, run by `scripts/test` as
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target-loom \
//!  cargo test -p lanegraph --no-default-features --profile loom --lib telemetry::loom_models`.
//! Must never: model a copy of the code. Each model drives the real [`Ring`], [`shard::add_at`],
//! [`SlotPool`] and [`Histogram::observe_at`] through the `sync` seam, so a change to the
//! protocol is a change to what loom explores.
//!
//! What they catch (each mutation applied by hand and seen to fail, 2026-11-30): in the ring,
//! removing the collector's torn-span check (`safe_from`), the writer's release fence or the
//! collector's acquire fence fails both ring models, and a relaxed `committed` store makes them
//! read an unwritten cell; a pool that hands one exclusive slot to two threads fails
//! `slot_handover_keeps_every_add`; a load + store in place of the histogram's shared
//! `fetch_add` fails `histogram_shared_and_exclusive_observers`. All five run in about a second
//! at `LOOM_MAX_PREEMPTIONS=2`.
//!
//! The tracking allocator's per-thread slots (`alloc.rs`) use the same single-writer /
//! shared-`fetch_add` update as [`shard::add_at`], modelled here; its slots live in a `static`
//! (an allocator cannot build them lazily), which loom atomics cannot.

use loom::sync::Arc;
use loom::thread;

use super::histogram::{Buckets, Histogram};
use super::shard::{self, Slot, SlotPool};
use super::spans::ring::Ring;
use super::spans::{SpanRecord, TrackId};
use lanegraph_jobs::clock::Stamp;

/// One name per push number, each of another length, so a span whose pointer and length came
/// from different pushes rebuilds to a string that matches neither (or reads past one).
const NAMES: [&str; 5] = ["a", "bb", "ccc", "dddd", "eeeee"];

/// Push number `i`: every word of the span encodes `i`.
fn push(ring: &Ring, i: u64) {
    let i_usize = usize::try_from(i).expect("small push numbers");
    ring.push(
        NAMES[i_usize],
        TrackId(i as u32),
        Stamp(i),
        Stamp(i + 100),
        i,
    );
}

/// Asserts every drained span is whole (all words from one push) and returns the push numbers.
fn check_whole(out: &[SpanRecord]) -> Vec<u64> {
    out.iter()
        .map(|s| {
            let i = s.start.0;
            let i_usize = usize::try_from(i).expect("small push numbers");
            assert!(i_usize < NAMES.len(), "start word {i} from no push");
            assert_eq!(s.end.0, i + 100, "torn span: end from another push");
            assert_eq!(s.n, Some(i), "torn span: workload from another push");
            assert_eq!(
                u64::from(s.track.0),
                i,
                "torn span: track from another push"
            );
            assert_eq!(s.name, NAMES[i_usize], "torn span: name from another push");
            i
        })
        .collect()
}

/// Every push is drained exactly once or counted dropped, and drained pushes come in order.
fn check_accounting(seen: &[u64], dropped: u64, pushes: u64) {
    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "pushes drained out of order or twice: {seen:?}"
    );
    assert_eq!(
        seen.len() as u64 + dropped,
        pushes,
        "lost or duplicated pushes: seen {seen:?}, dropped {dropped}"
    );
}

/// Two full cells, then the writer overwrites both while the collector copies them: the case
/// the seqlock exists for.
#[test]
fn ring_overwrite_during_drain() {
    loom::model(|| {
        let ring = Arc::new(Ring::with_capacity(2));
        push(&ring, 0);
        push(&ring, 1);
        let writer = {
            let ring = ring.clone();
            thread::spawn(move || {
                push(&ring, 2);
                push(&ring, 3);
            })
        };
        let mut out = Vec::new();
        let mut dropped = ring.drain_into(&mut out);
        let mut seen = check_whole(&out);
        writer.join().expect("writer");
        out.clear();
        dropped += ring.drain_into(&mut out);
        seen.extend(check_whole(&out));
        check_accounting(&seen, dropped, 4);
    });
}

/// A collector draining twice while the writer fills a fresh ring (no overwrite unless the
/// writer laps the collector).
#[test]
fn ring_drains_while_filling() {
    loom::model(|| {
        let ring = Arc::new(Ring::with_capacity(2));
        let writer = {
            let ring = ring.clone();
            thread::spawn(move || {
                for i in 0..3 {
                    push(&ring, i);
                }
            })
        };
        let mut out = Vec::new();
        let mut dropped = ring.drain_into(&mut out);
        dropped += ring.drain_into(&mut out);
        writer.join().expect("writer");
        dropped += ring.drain_into(&mut out);
        let seen = check_whole(&out);
        check_accounting(&seen, dropped, 3);
    });
}

/// Exclusive single-writer adds and shared `fetch_add`s on one counter: a concurrent reader sees
/// a sum that never goes backwards or past the total, and the joined sum is exact.
#[test]
fn counter_shards_sum_exactly() {
    loom::model(|| {
        let cells = Arc::new(shard::cells_for(1));
        let adders: Vec<_> = [Slot::Exclusive(0), Slot::Shared, Slot::Shared]
            .into_iter()
            .map(|slot| {
                let cells = cells.clone();
                thread::spawn(move || {
                    shard::add_at(&cells, slot, 1);
                    shard::add_at(&cells, slot, 2);
                })
            })
            .collect();
        let first = shard::sum(&cells);
        let second = shard::sum(&cells);
        assert!(
            first <= second && second <= 9,
            "sum went {first} -> {second}"
        );
        for a in adders {
            a.join().expect("adder");
        }
        assert_eq!(shard::sum(&cells), 9);
    });
}

/// Protocol step 4: a thread gives its exclusive slot back and another takes it over. The pool's
/// mutex must order the old owner's last store before the new owner's load, or an add is lost.
#[test]
fn slot_handover_keeps_every_add() {
    loom::model(|| {
        let cells = Arc::new(shard::cells_for(1));
        let pool = Arc::new(SlotPool::new(1));
        // Three threads, one exclusive slot: the slot changes hands at least once, and two
        // threads may both want it after it is given back.
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let (cells, pool) = (cells.clone(), pool.clone());
                thread::spawn(move || {
                    let slot = pool.take();
                    shard::add_at(&cells, slot, 1);
                    shard::add_at(&cells, slot, 1);
                    pool.give_back(slot);
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        assert_eq!(shard::sum(&cells), 6);
    });
}

/// A histogram's exclusive load+store path and its shared `fetch_add` + CAS-loop sum, at once:
/// counts and sum exact after the join.
#[test]
fn histogram_shared_and_exclusive_observers() {
    loom::model(|| {
        let buckets = Buckets::new(vec![1.0]).expect("valid bounds");
        let h = Arc::new(Histogram::with_exclusive_slots(buckets, 1));
        let observers: Vec<_> = [
            (Slot::Exclusive(0), 0.5),
            (Slot::Shared, 2.0),
            (Slot::Shared, 4.0),
        ]
        .into_iter()
        .map(|(slot, v)| {
            let h = h.clone();
            thread::spawn(move || h.observe_at(slot, usize::from(v > 1.0), v))
        })
        .collect();
        for o in observers {
            o.join().expect("observer");
        }
        let snap = h.snapshot();
        assert_eq!(snap.counts, vec![1, 2]);
        assert_eq!(snap.count, 3);
        assert_eq!(snap.sum, 6.5);
    });
}
