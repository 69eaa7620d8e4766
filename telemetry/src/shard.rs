//! Per-thread shard slots: how counters and histograms avoid serialising concurrent writers.
//!
//! Owns: handing each thread a slot index ([`SlotPool`]) and the cache-line-padded cell type.
//! Must never: allocate on the hot path ([`current_slot`] after the first call on a thread), or
//! let two live threads own one exclusive slot.
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

// Under loom the thread-local glue is compiled out, so the pool is only reached from the models.
#![cfg_attr(loom, allow(dead_code))]

#[cfg(not(loom))]
use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use super::sync::{AtomicU64, Mutex};

/// The most exclusive slots (each metric carries this many cells plus one shared cell; 64 keeps a
/// counter at 4 KiB on the largest machines).
pub(crate) const MAX_EXCLUSIVE_SLOTS: usize = 64;

/// Extra exclusive slots above the core count: the owner thread, the I/O and asset helpers and a
/// test harness' threads usually exist on top of one worker per core.
const EXTRA_SLOTS: usize = 8;

/// A cache line of its own for one 64-bit cell (64 bytes: x86_64 and most ARM cores).
#[derive(Debug, Default)]
#[repr(align(64))]
pub(crate) struct PaddedCell(pub AtomicU64);

/// Which cell a thread writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    /// This thread alone writes cell `i` (single-writer update).
    Exclusive(usize),
    /// Many threads share the last cell (`fetch_add`).
    Shared,
}

/// How many exclusive slots this process uses: cores + 8, at most [`MAX_EXCLUSIVE_SLOTS`].
/// Fixed at first use so every metric has the same layout.
pub(crate) fn exclusive_slots() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cores + EXTRA_SLOTS).min(MAX_EXCLUSIVE_SLOTS)
    })
}

/// Cached slot of this thread: `UNASSIGNED`, `SHARED`, or an exclusive index.
#[cfg(not(loom))]
const UNASSIGNED: usize = usize::MAX;
#[cfg(not(loom))]
const SHARED: usize = usize::MAX - 1;

/// The slot pool (protocol steps 1 and 4; cold path only).
#[derive(Debug)]
pub(crate) struct SlotPool {
    inner: Mutex<PoolState>,
    /// How many exclusive slots exist.
    exclusive: usize,
}

#[derive(Debug)]
struct PoolState {
    free: Vec<usize>,
    next: usize,
}

impl SlotPool {
    /// A pool handing out `exclusive` exclusive slots, then [`Slot::Shared`].
    pub(crate) fn new(exclusive: usize) -> Self {
        SlotPool {
            inner: Mutex::new(PoolState {
                free: Vec::new(),
                next: 0,
            }),
            exclusive,
        }
    }

    /// Step 1: a freed slot first, else the next unused one, else [`Slot::Shared`].
    pub(crate) fn take(&self) -> Slot {
        let mut pool = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        match pool.free.pop() {
            Some(i) => Slot::Exclusive(i),
            None if pool.next < self.exclusive => {
                pool.next += 1;
                Slot::Exclusive(pool.next - 1)
            }
            None => Slot::Shared,
        }
    }

    /// Step 4: `slot` is free again. The caller must not update through it afterwards; the
    /// mutex orders its last store before the next owner's first load.
    pub(crate) fn give_back(&self, slot: Slot) {
        if let Slot::Exclusive(i) = slot {
            let mut pool = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            pool.free.push(i);
        }
    }
}

/// The process's slot pool, sized by [`exclusive_slots`] at first use.
#[cfg(not(loom))]
fn pool() -> &'static SlotPool {
    static POOL: OnceLock<SlotPool> = OnceLock::new();
    POOL.get_or_init(|| SlotPool::new(exclusive_slots()))
}

#[cfg(not(loom))]
thread_local! {
    /// This thread's slot; const-initialised and without a destructor, so it is readable at any
    /// point of the thread's life, TLS teardown included.
    static SLOT: Cell<usize> = const { Cell::new(UNASSIGNED) };
    /// Returns the slot at thread exit (protocol step 4). Touched once per thread.
    static RELEASE: SlotRelease = const { SlotRelease };
}

#[cfg(not(loom))]
struct SlotRelease;

#[cfg(not(loom))]
impl Drop for SlotRelease {
    fn drop(&mut self) {
        let slot = SLOT.with(|s| s.replace(SHARED));
        if slot < SHARED {
            pool().give_back(Slot::Exclusive(slot));
        }
    }
}

/// This thread's slot (assigns one on the first call).
#[cfg(not(loom))]
#[inline]
pub(crate) fn current_slot() -> Slot {
    let s = SLOT.with(Cell::get);
    if s < SHARED {
        Slot::Exclusive(s)
    } else if s == SHARED {
        Slot::Shared
    } else {
        assign()
    }
}

/// Under loom every model thread shares the OS thread's TLS, so the thread-local glue is not
/// modelled: the models drive [`SlotPool`] and [`add_at`] with explicit slots, and anything else
/// that updates a metric under loom takes the shared cell.
#[cfg(loom)]
#[inline]
pub(crate) fn current_slot() -> Slot {
    Slot::Shared
}

#[cfg(not(loom))]
#[cold]
fn assign() -> Slot {
    // Register the destructor first: if TLS is already being torn down it fails, and this thread
    // stays on the shared cell rather than leaking an exclusive slot.
    if RELEASE.try_with(|_| ()).is_err() {
        SLOT.with(|s| s.set(SHARED));
        return Slot::Shared;
    }
    let slot = pool().take();
    SLOT.with(|s| {
        s.set(match slot {
            Slot::Exclusive(i) => i,
            Slot::Shared => SHARED,
        })
    });
    slot
}

/// Adds `v` to this thread's cell among `cells` (`cells.len() == exclusive_slots() + 1`).
#[inline]
pub(crate) fn add(cells: &[PaddedCell], v: u64) {
    add_at(cells, current_slot(), v);
}

/// Adds `v` to the cell of `slot` (protocol step 2). The caller owns `slot` if it is exclusive.
#[inline]
pub(crate) fn add_at(cells: &[PaddedCell], slot: Slot, v: u64) {
    match slot {
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
pub(crate) fn sum(cells: &[PaddedCell]) -> u64 {
    cells
        .iter()
        .fold(0u64, |acc, c| acc.wrapping_add(c.0.load(Ordering::Relaxed)))
}

/// A fresh cell array for one metric.
pub(crate) fn new_cells() -> Box<[PaddedCell]> {
    cells_for(exclusive_slots())
}

/// A cell array for `exclusive` exclusive slots plus the shared one.
pub(crate) fn cells_for(exclusive: usize) -> Box<[PaddedCell]> {
    (0..exclusive + 1).map(|_| PaddedCell::default()).collect()
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
        // Sequential threads, each joined (its slot given back in its TLS destructor) before the
        // next starts. Other tests in this binary hold slots for a while, so keep going until a
        // late thread gets an exclusive slot; had exited threads kept theirs, none ever would
        // once the first `n` were gone, and the 20 s deadline fails the test.
        let n = exclusive_slots();
        let start = std::time::Instant::now();
        let mut got = Vec::new();
        loop {
            let slot = std::thread::spawn(current_slot).join().unwrap();
            got.push(slot);
            if got.len() > n && matches!(slot, Slot::Exclusive(_)) {
                return;
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(20),
                "slots leaked: {} threads after the first {n}, none exclusive: {:?}",
                got.len() - n,
                &got[got.len().saturating_sub(16)..]
            );
        }
    }
}
