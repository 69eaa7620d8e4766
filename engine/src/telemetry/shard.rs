//! Per-thread shard slots: how counters and histograms avoid serialising concurrent writers.
//!
//! Owns: handing each thread a slot index and the cache-line-padded cell type. Must never:
//! allocate on the hot path ([`current_slot`] after the first call on a thread), or let two live
//! threads own one exclusive slot.
//!
//! # Protocol
//! 1. A thread's first metric update takes a slot from the pool (a freed one first, else the next
//!    unused index) under [`POOL`]'s mutex. Indices below [`exclusive_slots`] are *exclusive*: one
//!    live thread owns each. A thread that finds them all taken gets [`Slot::Shared`].
//! 2. The owner of an exclusive slot updates its cell with a relaxed load and a relaxed store (a
//!    single-writer read-modify-write: no `lock` prefix, ~1 ns). A shared-slot thread uses
//!    `fetch_add` on the metric's last cell, which any number of threads may share.
//! 3. Readers sum all cells with relaxed loads. A sum read while writers run is some value
//!    between the totals before and after the concurrent updates; once writers have finished
//!    (joined, or otherwise synchronised with the reader) it is exact.
//! 4. At thread exit a TLS destructor first turns the thread's cached slot into `Shared` (so a
//!    metric updated by a later TLS destructor on this thread goes through `fetch_add`), then
//!    returns the slot to the pool. The pool's mutex orders the old owner's last store before the
//!    new owner's first load, so the new owner continues the cell's count exactly.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The most exclusive slots (each metric carries this many cells plus one shared cell; 64 keeps a
/// counter at 4 KiB on the largest machines).
pub const MAX_EXCLUSIVE_SLOTS: usize = 64;

/// Extra exclusive slots above the core count: the owner thread, the I/O and asset helpers and a
/// test harness' threads usually exist on top of one worker per core.
const EXTRA_SLOTS: usize = 8;

/// A cache line of its own for one 64-bit cell (64 bytes: x86_64 and most ARM cores).
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct PaddedCell(pub AtomicU64);

/// Which cell a thread writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// This thread alone writes cell `i` (single-writer update).
    Exclusive(usize),
    /// Many threads share the last cell (`fetch_add`).
    Shared,
}

/// How many exclusive slots this process uses: cores + 8, at most [`MAX_EXCLUSIVE_SLOTS`].
/// Fixed at first use so every metric has the same layout.
pub fn exclusive_slots() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cores + EXTRA_SLOTS).min(MAX_EXCLUSIVE_SLOTS)
    })
}

/// Cached slot of this thread: `UNASSIGNED`, `SHARED`, or an exclusive index.
const UNASSIGNED: usize = usize::MAX;
const SHARED: usize = usize::MAX - 1;

struct Pool {
    free: Vec<usize>,
    next: usize,
}

/// The slot pool (writer: threads taking or returning a slot; cold path only).
static POOL: Mutex<Pool> = Mutex::new(Pool {
    free: Vec::new(),
    next: 0,
});

thread_local! {
    /// This thread's slot; const-initialised and without a destructor, so it is readable at any
    /// point of the thread's life, TLS teardown included.
    static SLOT: Cell<usize> = const { Cell::new(UNASSIGNED) };
    /// Returns the slot at thread exit (protocol step 4). Touched once per thread.
    static RELEASE: SlotRelease = const { SlotRelease };
}

struct SlotRelease;

impl Drop for SlotRelease {
    fn drop(&mut self) {
        let slot = SLOT.with(|s| s.replace(SHARED));
        if slot < SHARED {
            let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
            pool.free.push(slot);
        }
    }
}

/// This thread's slot (assigns one on the first call).
#[inline]
pub fn current_slot() -> Slot {
    let s = SLOT.with(Cell::get);
    if s < SHARED {
        Slot::Exclusive(s)
    } else if s == SHARED {
        Slot::Shared
    } else {
        assign()
    }
}

#[cold]
fn assign() -> Slot {
    // Register the destructor first: if TLS is already being torn down it fails, and this thread
    // stays on the shared cell rather than leaking an exclusive slot.
    if RELEASE.try_with(|_| ()).is_err() {
        SLOT.with(|s| s.set(SHARED));
        return Slot::Shared;
    }
    let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
    let slot = match pool.free.pop() {
        Some(i) => i,
        None if pool.next < exclusive_slots() => {
            pool.next += 1;
            pool.next - 1
        }
        None => SHARED,
    };
    drop(pool);
    SLOT.with(|s| s.set(slot));
    if slot == SHARED {
        Slot::Shared
    } else {
        Slot::Exclusive(slot)
    }
}

/// Adds `v` to this thread's cell among `cells` (`cells.len() == exclusive_slots() + 1`).
#[inline]
pub fn add(cells: &[PaddedCell], v: u64) {
    match current_slot() {
        Slot::Exclusive(i) => {
            let c = &cells[i].0;
            // Single writer (protocol step 2): no other thread stores to this cell while this
            // thread owns the slot, so load + store cannot lose an update.
            c.store(c.load(Ordering::Relaxed).wrapping_add(v), Ordering::Relaxed);
        }
        Slot::Shared => {
            cells[cells.len() - 1].0.fetch_add(v, Ordering::Relaxed);
        }
    }
}

/// Sum of all cells (protocol step 3).
pub fn sum(cells: &[PaddedCell]) -> u64 {
    cells
        .iter()
        .fold(0u64, |acc, c| acc.wrapping_add(c.0.load(Ordering::Relaxed)))
}

/// A fresh cell array for one metric.
pub fn new_cells() -> Box<[PaddedCell]> {
    (0..exclusive_slots() + 1)
        .map(|_| PaddedCell::default())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_keeps_its_slot() {
        let a = current_slot();
        assert_eq!(a, current_slot());
    }

    #[test]
    fn more_threads_than_slots_still_sum_exactly() {
        let cells: std::sync::Arc<[PaddedCell]> = new_cells().into();
        let threads = exclusive_slots() + 6;
        std::thread::scope(|s| {
            for _ in 0..threads {
                let cells = &cells;
                s.spawn(move || {
                    for _ in 0..10_000 {
                        add(cells, 1);
                    }
                });
            }
        });
        assert_eq!(sum(&cells), threads as u64 * 10_000);
    }

    #[test]
    fn slots_are_reused_after_thread_exit() {
        let n = exclusive_slots();
        let got: Vec<Slot> = (0..n * 3)
            .map(|_| std::thread::spawn(current_slot).join().unwrap())
            .collect();
        // Had exited threads kept their slots, every one of the last `n` would be shared.
        let late_exclusive = got[n * 2..]
            .iter()
            .filter(|s| matches!(s, Slot::Exclusive(_)))
            .count();
        assert!(late_exclusive > 0, "slots leaked: {got:?}");
    }
}
