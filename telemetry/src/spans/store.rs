//! The span store: every thread's ring, binding a thread to its ring, and the collector.
//!
//! Owns: the list of rings (leaked, so `&'static`), which thread writes which ring, and the
//! dropped total. Must never: allocate or lock after a thread's first span (the binding is a
//! const, destructor-free thread-local `Cell`).
//!
//! # Protocol
//! 1. A thread's first span binds a ring: a free one (its previous owner exited) or a new one of
//!    [`RING_CAPACITY`] spans, leaked so the collector can read it forever. The thread gets a
//!    track of its own (named after the thread) and registers a TLS destructor.
//! 2. Pushes go to the bound ring (see `ring`'s protocol).
//! 3. At thread exit the destructor unbinds (`Cell` back to `None`) and marks the ring free
//!    (release); a new thread takes it with an acquire CAS, so the old owner's last push happens
//!    before the new owner's first. Spans still in the ring stay collectable.
//! 4. [`collect`] takes the collector mutex and drains every ring in turn.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::ring::{DrainScratch, Ring};
use super::tracks::{register_track, TrackId, TrackKind};
use super::SpanRecord;

/// Spans per thread ring: 8192 x 40 B = 320 KiB per thread; at 1,000 spans per frame per thread
/// that holds 8 frames between collections (the engine collects every frame).
pub const RING_CAPACITY: usize = 8192;

/// Every ring ever made (writer: binding threads, under the lock; reader: the collector).
static RINGS: Mutex<Vec<&'static Ring>> = Mutex::new(Vec::new());
/// Serialises collectors (ring drains assume one collector at a time).
static COLLECT: Mutex<DrainScratch> = Mutex::new(DrainScratch::new());
/// Spans lost to overwriting, over the process' life (writer: collectors).
static DROPPED: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// This thread's ring; const and destructor-free, so readable all thread long.
    static BOUND: Cell<Option<&'static Ring>> = const { Cell::new(None) };
    /// Unbinds at thread exit (protocol step 3).
    static UNBIND: Unbind = const { Unbind };
}

struct Unbind;

impl Drop for Unbind {
    fn drop(&mut self) {
        if let Some(ring) = BOUND.with(|b| b.replace(None)) {
            ring.in_use.store(false, Ordering::Release);
        }
    }
}

/// This thread's ring, binding one on first use (`None` only during TLS teardown).
#[inline(always)]
pub(crate) fn current_ring() -> Option<&'static Ring> {
    match BOUND.with(Cell::get) {
        Some(r) => Some(r),
        None => bind(),
    }
}

#[cold]
fn bind() -> Option<&'static Ring> {
    // Register the destructor first: if TLS is being torn down, do not take a ring we could
    // never give back.
    UNBIND.try_with(|_| ()).ok()?;
    let ring = {
        let mut rings = RINGS.lock().unwrap_or_else(|p| p.into_inner());
        let free = rings.iter().copied().find(|r| {
            r.in_use
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        });
        match free {
            Some(r) => r,
            None => {
                let r: &'static Ring = Box::leak(Box::new(Ring::with_capacity(RING_CAPACITY)));
                r.in_use.store(true, Ordering::Relaxed);
                rings.push(r);
                r
            }
        }
    };
    let thread = std::thread::current();
    // A lane worker (`lg-<lane>-<index>`) gets its lane's track at its first span: no game or
    // job has to name it.
    let (name, kind) = match thread.name() {
        Some(n) => match crate::lane_tracks::parse_worker_name(n) {
            Some((lane, index)) => (
                format!("{lane} {index}"),
                TrackKind::LaneWorker {
                    lane: lane.to_string(),
                    index,
                },
            ),
            None => (n.to_string(), TrackKind::Thread),
        },
        None => (format!("thread {:?}", thread.id()), TrackKind::Thread),
    };
    let track = register_track(name, kind);
    ring.home_track.store(track.0, Ordering::Relaxed);
    BOUND.with(|b| b.set(Some(ring)));
    Some(ring)
}

/// Heap bytes held by the span rings' pool: one ring per thread that ever recorded spans at
/// the same time as the others (rings are reused after a thread exits, never freed). A leak
/// check subtracts its growth: a new ring means more threads recorded at once, not a leak.
pub fn ring_pool_bytes() -> u64 {
    let rings = RINGS.lock().unwrap_or_else(|p| p.into_inner());
    rings.iter().map(|r| r.heap_bytes()).sum()
}

/// This thread's own track.
#[inline(always)]
pub(crate) fn home_track(ring: &Ring) -> TrackId {
    TrackId(ring.home_track.load(Ordering::Relaxed))
}

/// Spans collected by one [`collect`] call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpanBatch {
    /// The spans, sorted by track, then start, then longest first (parents before children).
    pub spans: Vec<SpanRecord>,
    /// Spans lost to overwriting since the previous collection.
    pub dropped: u64,
}

/// Drains every thread's ring (protocol step 4) into a new batch.
pub fn collect() -> SpanBatch {
    let mut batch = SpanBatch::default();
    batch.dropped = collect_into(&mut batch.spans);
    super::sort_for_export(&mut batch.spans);
    batch
}

/// Drains every thread's ring (protocol step 4), appending to `out` in collection order (ring
/// by ring, each in the order its spans ended; exporters sort with
/// [`super::sort_for_export`]), and returns the spans lost to overwriting. Allocates nothing
/// once `out` has the capacity of a frame's spans, and sorts nothing: the engine calls it
/// every frame and reuses one buffer per held frame.
pub fn collect_into(out: &mut Vec<SpanRecord>) -> u64 {
    collect_into_at_most(out, usize::MAX)
}

/// [`collect_into`] keeping `out` at most `limit` long (spans beyond it are drained and counted
/// as lost): with `out`'s capacity at `limit`, a collection never allocates.
pub fn collect_into_at_most(out: &mut Vec<SpanRecord>, limit: usize) -> u64 {
    // One collector at a time; its lock also guards the reusable copy buffer.
    let mut scratch = COLLECT.lock().unwrap_or_else(|p| p.into_inner());
    let mut dropped = 0;
    {
        // Held while draining: only a thread's first span (registering its ring) waits on it.
        let rings = RINGS.lock().unwrap_or_else(|p| p.into_inner());
        for r in rings.iter() {
            dropped += r.drain_with(&mut scratch, out, limit);
        }
    }
    DROPPED.fetch_add(dropped, Ordering::Relaxed);
    dropped
}

/// Spans lost to overwriting over the process' life.
pub fn dropped_total() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}
