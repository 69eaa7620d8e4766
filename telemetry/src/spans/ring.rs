//! One thread's span ring: bounded, allocation-free on push, overwrite-oldest, drained by a
//! collector on another thread.
//!
//! Owns: the ring's cells and its two cursors. Must never: block the writer, allocate on push, or
//! hand the collector a span whose fields came from two different pushes.
//!
//! # Protocol (one writer, one collector at a time)
//! Cursors: `claimed` and `committed` count pushes ever started and finished (writer: the ring's
//! owning thread; readers: the collector). `tail` counts pushes the collector has consumed
//! (writer and reader: the collector, serialised by the store's collect mutex).
//! Writer, push number `h` (`h == committed`):
//! 1. `claimed = h + 1` (relaxed), then a release fence: announces "cell `h % cap` is being
//!    overwritten" before any of its words change.
//! 2. Store the span's five words into cell `h % cap` (relaxed atomic stores: plain `mov`s on
//!    x86_64, and no data race for the collector to trip on).
//! 3. `committed = h + 1` (release): publishes the words of push `h`.
//!
//! Collector:
//! 1. `c = committed` (acquire): pushes `< c` are complete. Only the last `cap` of them can still
//!    be in the ring; older ones were overwritten: counted as dropped.
//! 2. Copy the words of pushes `[max(tail, c - cap), c)` (relaxed loads).
//! 3. Acquire fence, then `k = claimed` (relaxed). If a copied word came from a push `j >= cap`
//!    that overwrote push `j - cap`, that push's step 1 happens-before this read (release fence ->
//!    word -> acquire fence), so `k >= j + 1`. Pushes `< k - cap` may therefore be torn: discard
//!    and count them as dropped. Pushes `>= k - cap` were not touched after step 2 read them.
//! 4. `tail = c`.
//!
//! The name is stored as a pointer and length of a `&'static str`; the collector rebuilds the
//! `&str` only for pushes that passed step 3, i.e. whose two words come from one `&'static str`.

// Opted in from the workspace's `unsafe_code = "deny"`: a span's `&'static str` name travels as
// two atomic words and is rebuilt after the seqlock check of collector step 3.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};

use crate::sync::{fence, AtomicU64, AtomicUsize};

use lanegraph_jobs::clock::Stamp;

use super::{SpanRecord, TrackId, NO_WORKLOAD};

/// One pushed span as five words.
#[derive(Debug, Default)]
struct Cell {
    name_ptr: AtomicUsize,
    /// Name length (low 32 bits) and track id (high 32 bits).
    len_track: AtomicU64,
    start: AtomicU64,
    end: AtomicU64,
    n: AtomicU64,
}

/// The words of one push, copied out before validation.
#[derive(Clone, Copy)]
struct Raw {
    index: u64,
    name_ptr: usize,
    len_track: u64,
    start: u64,
    end: u64,
    n: u64,
}

/// The collector's reusable copy buffer: drains copy a ring's words here before validating
/// them, so a steady collection allocates nothing.
#[derive(Default)]
pub(crate) struct DrainScratch(Vec<Raw>);

impl DrainScratch {
    /// An empty buffer (usable in a `static`).
    pub(crate) const fn new() -> DrainScratch {
        DrainScratch(Vec::new())
    }
}

/// A thread's span ring (see the module protocol).
#[derive(Debug)]
pub(crate) struct Ring {
    cells: Box<[Cell]>,
    mask: u64,
    claimed: AtomicU64,
    committed: AtomicU64,
    tail: AtomicU64,
    /// Whether a live thread owns this ring (cleared at its exit; the store reuses free rings).
    pub(super) in_use: AtomicBool,
    /// The owning thread's own track (writer: the store when a thread binds the ring).
    pub(super) home_track: std::sync::atomic::AtomicU32,
}

impl Ring {
    /// A ring of `capacity` spans, rounded up to a power of two.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        let cap = capacity.max(2).next_power_of_two();
        Ring {
            cells: (0..cap).map(|_| Cell::default()).collect(),
            mask: cap as u64 - 1,
            claimed: AtomicU64::new(0),
            committed: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            in_use: AtomicBool::new(false),
            home_track: std::sync::atomic::AtomicU32::new(0),
        }
    }

    /// Capacity in spans.
    /// Heap bytes of its cells.
    pub(crate) fn heap_bytes(&self) -> u64 {
        std::mem::size_of_val(&*self.cells) as u64
    }

    pub(crate) fn capacity(&self) -> u64 {
        self.mask + 1
    }

    /// Writer steps 1-3. Call only from the owning thread.
    #[inline(always)]
    pub(crate) fn push(
        &self,
        name: &'static str,
        track: TrackId,
        start: Stamp,
        end: Stamp,
        n: u64,
    ) {
        let h = self.committed.load(Ordering::Relaxed);
        self.claimed.store(h + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        let c = &self.cells[(h & self.mask) as usize];
        c.name_ptr.store(name.as_ptr() as usize, Ordering::Relaxed);
        let len = name.len().min(u32::MAX as usize) as u64;
        c.len_track
            .store(len | (u64::from(track.0) << 32), Ordering::Relaxed);
        c.start.store(start.0, Ordering::Relaxed);
        c.end.store(end.0, Ordering::Relaxed);
        c.n.store(n, Ordering::Relaxed);
        self.committed.store(h + 1, Ordering::Release);
    }

    /// Collector steps 1-4: appends the spans pushed since the last drain to `out`, returns how
    /// many were lost to overwriting. Callers serialise drains of one ring.
    #[cfg(test)]
    pub(crate) fn drain_into(&self, out: &mut Vec<SpanRecord>) -> u64 {
        self.drain_with(&mut DrainScratch::new(), out, usize::MAX)
    }

    /// [`Ring::drain_into`] copying through `scratch` (no allocation once it is large enough),
    /// keeping `out` at most `limit` long: spans beyond it count as lost.
    pub(crate) fn drain_with(
        &self,
        scratch: &mut DrainScratch,
        out: &mut Vec<SpanRecord>,
        limit: usize,
    ) -> u64 {
        let tail = self.tail.load(Ordering::Relaxed);
        let c = self.committed.load(Ordering::Acquire);
        let first = tail.max(c.saturating_sub(self.capacity()));
        let mut dropped = first - tail;
        let raws = &mut scratch.0;
        raws.clear();
        // Sized once for a whole ring (the most one drain can copy), so the buffer reaches its
        // final size at the first drain instead of creeping up over a run.
        raws.reserve(self.capacity() as usize);
        raws.extend((first..c).map(|index| {
            let cell = &self.cells[(index & self.mask) as usize];
            Raw {
                index,
                name_ptr: cell.name_ptr.load(Ordering::Relaxed),
                len_track: cell.len_track.load(Ordering::Relaxed),
                start: cell.start.load(Ordering::Relaxed),
                end: cell.end.load(Ordering::Relaxed),
                n: cell.n.load(Ordering::Relaxed),
            }
        }));
        fence(Ordering::Acquire);
        let k = self.claimed.load(Ordering::Relaxed);
        let safe_from = k.saturating_sub(self.capacity());
        out.reserve(raws.len().min(limit.saturating_sub(out.len())));
        for &r in raws.iter() {
            if r.index < safe_from || out.len() >= limit {
                dropped += 1;
                continue;
            }
            let len = (r.len_track & 0xFFFF_FFFF) as usize;
            // SAFETY: checklist for rebuilding the name:
            // - `r.index >= safe_from`, so by collector step 3 every word of `r` was written by
            //   the single push number `r.index` (no later push touched the cell before we read).
            // - That push stored `name.as_ptr()` and `name.len()` of one `&'static str` (`len`
            //   fits 32 bits: the writer clamps, and a name over 4 GiB cannot be a literal).
            // - A `&'static str` points to valid UTF-8 that lives for the rest of the process.
            let name: &'static str = unsafe {
                std::str::from_utf8_unchecked(std::slice::from_raw_parts(
                    r.name_ptr as *const u8,
                    len,
                ))
            };
            out.push(SpanRecord {
                name,
                track: TrackId((r.len_track >> 32) as u32),
                start: Stamp(r.start),
                end: Stamp(r.end),
                n: (r.n != NO_WORKLOAD).then_some(r.n),
            });
        }
        self.tail.store(c, Ordering::Relaxed);
        dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drains_in_push_order_and_counts_overwrites() {
        let r = Ring::with_capacity(4);
        let mut out = Vec::new();
        for i in 0..3u64 {
            r.push("a", TrackId(1), Stamp(i), Stamp(i + 1), i);
        }
        assert_eq!(r.drain_into(&mut out), 0);
        assert_eq!(
            out.iter().map(|s| s.start.0).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        out.clear();
        for i in 10..20u64 {
            r.push("b", TrackId(2), Stamp(i), Stamp(i + 1), NO_WORKLOAD);
        }
        assert_eq!(r.drain_into(&mut out), 6, "10 pushed into 4 cells");
        assert_eq!(
            out.iter().map(|s| s.start.0).collect::<Vec<_>>(),
            vec![16, 17, 18, 19]
        );
        assert!(out
            .iter()
            .all(|s| s.name == "b" && s.track == TrackId(2) && s.n.is_none()));
        out.clear();
        assert_eq!(r.drain_into(&mut out), 0);
        assert!(out.is_empty());
    }

    #[test]
    fn concurrent_drain_never_sees_torn_spans() {
        // The writer encodes the push number in every field; a torn span would mix numbers.
        let r = Ring::with_capacity(8);
        let names: [&'static str; 2] = ["even", "odd-name"];
        let stop = AtomicBool::new(false);
        let (mut seen, mut lost) = (0u64, 0u64);
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..200_000u64 {
                    let name = names[(i % 2) as usize];
                    r.push(name, TrackId((i % 2) as u32), Stamp(i), Stamp(i), i);
                }
                stop.store(true, Ordering::Release);
            });
            let mut out = Vec::new();
            loop {
                let done = stop.load(Ordering::Acquire);
                lost += r.drain_into(&mut out);
                for sp in out.drain(..) {
                    let i = sp.start.0;
                    assert_eq!(sp.end.0, i);
                    assert_eq!(sp.n, Some(i));
                    assert_eq!(sp.track.0 as u64, i % 2);
                    assert_eq!(sp.name, names[(i % 2) as usize]);
                    seen += 1;
                }
                if done {
                    break;
                }
            }
        });
        assert_eq!(
            seen + lost,
            200_000,
            "every push is either drained or counted dropped"
        );
    }
}
