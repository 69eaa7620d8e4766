//! The tracking global allocator: live bytes, lifetime bytes and net allocations, per thread.
//!
//! Owns: [`TrackingAllocator`], the per-thread allocation counters and [`memory_stats`]. Must
//! never: allocate, lock, log or panic inside the allocator (it *is* the allocator: any of those
//! could recurse into it or deadlock).
//!
//! # Install (one line, in a binary)
//! ```ignore
//! #[global_allocator]
//! static ALLOC: lanegraph_telemetry::TrackingAllocator = lanegraph_telemetry::TrackingAllocator::new();
//! ```
//!
//! # Protocol
//! 1. Counters live in a static array of cache-line slots ([`MAX_ALLOC_SLOTS`]); slot 0 is
//!    shared. A thread's first allocation claims the next unused slot with one `fetch_add` on
//!    `NEXT_SLOT` and caches it in a const-initialised, destructor-free `thread_local!` `Cell`
//!    (such a TLS key never allocates and stays readable during TLS teardown).
//! 2. The owner of a slot updates it with relaxed load + store (single writer: an order of
//!    magnitude cheaper than a `fetch_add` on one global atomic, more so contended; figures in
//!    docs/bench-notes/telemetry.md). When the slots run out, threads share slot 0 through
//!    `fetch_add`: correct, just slower.
//! 3. Slots are never returned: doing so would need a TLS destructor, and registering one can
//!    allocate (std's fallback destructor list is a `Vec`) from inside the allocator. A game's
//!    thread set is fixed, so 1,023 exclusive slots are plenty (a test binary that starts an engine
//!    per test needs hundreds); a process that churns threads
//!    degrades to step 2's shared slot, never to wrong totals.
//! 4. [`memory_stats`] sums every slot with relaxed loads: exact for the threads that have
//!    synchronised with the reader, a close reading while others allocate.
//!
//! `realloc` counts as freeing the old block and allocating the new one (lifetime bytes grow by
//! the new size; net allocations do not move).

// Opted in from the workspace's `unsafe_code = "deny"`: a global allocator is an `unsafe impl
// GlobalAlloc` whose methods forward raw pointers to the system allocator.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Counter slots (slot 0 shared); 1,024 x 64 B = 64 KiB of static memory (zeroed, in .bss).
pub const MAX_ALLOC_SLOTS: usize = 1024;

#[derive(Debug)]
#[repr(align(64))]
struct AllocSlot {
    allocated_bytes: AtomicU64,
    freed_bytes: AtomicU64,
    allocs: AtomicU64,
    frees: AtomicU64,
    /// The highest net bytes (allocated - freed, as `i64` bits) since the owner last reset it;
    /// kept for exclusive slots only, written and read by the owning thread alone.
    peak_net: AtomicU64,
}

impl AllocSlot {
    const fn new() -> Self {
        AllocSlot {
            allocated_bytes: AtomicU64::new(0),
            freed_bytes: AtomicU64::new(0),
            allocs: AtomicU64::new(0),
            frees: AtomicU64::new(0),
            peak_net: AtomicU64::new(0),
        }
    }
}

/// Writers: each slot's owning thread (slot 0: any thread, via `fetch_add`). Readers:
/// [`memory_stats`], relaxed.
static SLOTS: [AllocSlot; MAX_ALLOC_SLOTS] = [const { AllocSlot::new() }; MAX_ALLOC_SLOTS];

/// The next unclaimed slot (starts at 1: slot 0 is shared). Only ever incremented.
static NEXT_SLOT: AtomicUsize = AtomicUsize::new(1);

/// Set once any thread allocates through a [`TrackingAllocator`].
static INSTALLED: AtomicBool = AtomicBool::new(false);

const UNASSIGNED: usize = usize::MAX;

thread_local! {
    /// This thread's slot (protocol step 1): const, no destructor, so it never allocates.
    static SLOT: Cell<usize> = const { Cell::new(UNASSIGNED) };
}

#[inline]
fn slot() -> usize {
    // `try_with` cannot fail for a const key without a destructor, but an allocator must not
    // panic: fall back to the shared slot.
    let s = SLOT.try_with(Cell::get).unwrap_or(0);
    if s != UNASSIGNED {
        return s;
    }
    claim()
}

#[cold]
fn claim() -> usize {
    INSTALLED.store(true, Ordering::Relaxed);
    let s = NEXT_SLOT.fetch_add(1, Ordering::Relaxed);
    let s = if s < MAX_ALLOC_SLOTS { s } else { 0 };
    let _ = SLOT.try_with(|c| c.set(s));
    s
}

/// Single-writer add for an exclusive slot, `fetch_add` for the shared one (protocol step 2).
#[inline]
fn bump(cell: &AtomicU64, v: u64, shared: bool) {
    if shared {
        cell.fetch_add(v, Ordering::Relaxed);
    } else {
        cell.store(
            cell.load(Ordering::Relaxed).wrapping_add(v),
            Ordering::Relaxed,
        );
    }
}

#[inline]
fn on_alloc(size: usize) {
    let s = slot();
    let slot = &SLOTS[s];
    bump(&slot.allocated_bytes, size as u64, s == 0);
    bump(&slot.allocs, 1, s == 0);
    if s != 0 {
        // The owner alone writes its slot: a plain compare and store keeps the peak.
        let net = net_of(slot);
        if net > slot.peak_net.load(Ordering::Relaxed) as i64 {
            slot.peak_net.store(net as u64, Ordering::Relaxed);
        }
    }
}

/// A slot's allocated less freed bytes.
#[inline]
fn net_of(slot: &AllocSlot) -> i64 {
    slot.allocated_bytes
        .load(Ordering::Relaxed)
        .wrapping_sub(slot.freed_bytes.load(Ordering::Relaxed)) as i64
}

#[inline]
fn on_free(size: usize) {
    let s = slot();
    let slot = &SLOTS[s];
    bump(&slot.freed_bytes, size as u64, s == 0);
    bump(&slot.frees, 1, s == 0);
}

/// A global allocator that forwards to `A` (the system allocator by default) and counts.
#[derive(Debug, Default, Clone, Copy)]
pub struct TrackingAllocator<A = System> {
    inner: A,
}

impl TrackingAllocator<System> {
    /// Tracks the system allocator.
    pub const fn new() -> Self {
        TrackingAllocator { inner: System }
    }
}

impl<A> TrackingAllocator<A> {
    /// Tracks another allocator (e.g. mimalloc's).
    pub const fn wrapping(inner: A) -> Self {
        TrackingAllocator { inner }
    }
}

// SAFETY: every method forwards its arguments unchanged to `self.inner`, which upholds the
// `GlobalAlloc` contract; the bookkeeping around each call only touches atomics and a
// destructor-free thread-local, so it cannot allocate, unwind or alter the returned pointers.
unsafe impl<A: GlobalAlloc> GlobalAlloc for TrackingAllocator<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller guarantees `layout` has non-zero size (GlobalAlloc::alloc contract);
        // we pass it on unchanged.
        let p = unsafe { self.inner.alloc(layout) };
        if !p.is_null() {
            on_alloc(layout.size());
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`: non-zero size guaranteed by the caller, passed on unchanged.
        let p = unsafe { self.inner.alloc_zeroed(layout) };
        if !p.is_null() {
            on_alloc(layout.size());
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller guarantees `ptr` came from this allocator with `layout`; every block
        // this allocator hands out came from `self.inner` with the same layout.
        unsafe { self.inner.dealloc(ptr, layout) };
        on_free(layout.size());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `ptr`/`layout` describe a live block of this allocator
        // (hence of `self.inner`) and that `new_size` is non-zero and fits `isize` when rounded
        // to `layout.align()`; all passed on unchanged.
        let p = unsafe { self.inner.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // The new block counted before the old one is freed: a moving realloc held both,
            // and the thread's peak says so.
            on_alloc(new_size);
            on_free(layout.size());
        }
        p
    }
}

impl<A: GlobalAlloc> TrackingAllocator<A> {
    /// The body of [`AllocatorHooks::alloc_free_roundtrip`](crate::hooks::AllocatorHooks::alloc_free_roundtrip), which documents it.
    pub(crate) fn alloc_free_roundtrip(&self, size: usize) -> bool {
        let Ok(layout) = Layout::from_size_align(size.max(1), 8) else {
            return false;
        };
        // SAFETY: `layout` has non-zero size (`size.max(1)`) and a valid power-of-two alignment.
        let p = unsafe { self.alloc(layout) };
        if p.is_null() {
            return false;
        }
        std::hint::black_box(p);
        // SAFETY: `p` was just returned by `self.alloc(layout)` and is freed once, with `layout`.
        unsafe { self.dealloc(p, layout) };
        true
    }
}

/// The same roundtrip as [`AllocatorHooks::alloc_free_roundtrip`](crate::hooks::AllocatorHooks::alloc_free_roundtrip) straight through
/// [`System`]: the untracked baseline of the `alloc_tracking` bench.
pub fn system_alloc_free_roundtrip(size: usize) -> bool {
    let Ok(layout) = Layout::from_size_align(size.max(1), 8) else {
        return false;
    };
    // SAFETY: `layout` has non-zero size and a valid alignment.
    let p = unsafe { System.alloc(layout) };
    if p.is_null() {
        return false;
    }
    std::hint::black_box(p);
    // SAFETY: `p` was just returned by `System.alloc(layout)` and is freed once, with `layout`.
    unsafe { System.dealloc(p, layout) };
    true
}

/// Heap totals over all threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct MemoryStats {
    /// Bytes allocated and not yet freed (`memory.current_bytes`).
    pub current_bytes: i64,
    /// Bytes ever allocated (`memory.bytes_allocated_lifetime`).
    pub bytes_allocated_lifetime: u64,
    /// Allocations minus frees (`memory.net_allocations`).
    pub net_allocations: i64,
    /// Allocation calls (realloc counts one).
    pub allocations: u64,
    /// Free calls (realloc counts one).
    pub frees: u64,
}

/// Whether a [`TrackingAllocator`] has served any allocation in this process (false when the
/// binary did not install one: every figure in [`memory_stats`] is then zero).
pub fn is_installed() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// The totals now (protocol step 4).
pub fn memory_stats() -> MemoryStats {
    let used = NEXT_SLOT.load(Ordering::Relaxed).min(MAX_ALLOC_SLOTS);
    let mut a = [0u64; 4];
    for s in &SLOTS[..used] {
        a[0] = a[0].wrapping_add(s.allocated_bytes.load(Ordering::Relaxed));
        a[1] = a[1].wrapping_add(s.freed_bytes.load(Ordering::Relaxed));
        a[2] = a[2].wrapping_add(s.allocs.load(Ordering::Relaxed));
        a[3] = a[3].wrapping_add(s.frees.load(Ordering::Relaxed));
    }
    MemoryStats {
        current_bytes: a[0].wrapping_sub(a[1]) as i64,
        bytes_allocated_lifetime: a[0],
        net_allocations: a[2].wrapping_sub(a[3]) as i64,
        allocations: a[2],
        frees: a[3],
    }
}

/// The highest net bytes the calling thread held (allocated less freed) since its last
/// [`reset_thread_peak`]: the peak memory of work done on this thread, exact whatever other
/// threads do (a moving `realloc` counts both blocks). `None` as for [`thread_memory_stats`].
pub fn thread_peak_bytes() -> Option<i64> {
    let s = SLOT.try_with(Cell::get).ok()?;
    if !is_installed() || s == UNASSIGNED || s == 0 {
        return None;
    }
    Some(SLOTS[s].peak_net.load(Ordering::Relaxed) as i64)
}

/// Starts the calling thread's peak over from what it holds now (see [`thread_peak_bytes`]).
pub fn reset_thread_peak() {
    let Ok(s) = SLOT.try_with(Cell::get) else {
        return;
    };
    if s != UNASSIGNED && s != 0 {
        let slot = &SLOTS[s];
        slot.peak_net.store(net_of(slot) as u64, Ordering::Relaxed);
    }
}

/// The calling thread's own totals: what it allocated and freed (`current_bytes` is negative
/// when it freed more than it allocated, e.g. blocks another thread made). Exact, whatever
/// other threads do, which makes it the tool for "this frame allocated nothing" checks. `None`
/// when the thread shares the overflow slot (more than 1,023 threads have allocated), or when no
/// tracking allocator is installed.
pub fn thread_memory_stats() -> Option<MemoryStats> {
    if !is_installed() {
        return None;
    }
    let s = SLOT.try_with(Cell::get).ok()?;
    if s == 0 {
        return None;
    }
    if s == UNASSIGNED {
        return Some(MemoryStats::default());
    }
    let slot = &SLOTS[s];
    let (a, f) = (
        slot.allocated_bytes.load(Ordering::Relaxed),
        slot.freed_bytes.load(Ordering::Relaxed),
    );
    let (n, m) = (
        slot.allocs.load(Ordering::Relaxed),
        slot.frees.load(Ordering::Relaxed),
    );
    Some(MemoryStats {
        current_bytes: a.wrapping_sub(f) as i64,
        bytes_allocated_lifetime: a,
        net_allocations: n.wrapping_sub(m) as i64,
        allocations: n,
        frees: m,
    })
}

/// Registers `memory.current_bytes`, `memory.allocated_lifetime` (bytes) and
/// `memory.net_allocations` in `registry`, read from [`memory_stats`] at each snapshot.
pub fn register_memory_metrics(registry: &super::Registry) -> Result<(), super::RegisterError> {
    use super::Unit;
    registry.register_gauge_fn(
        "memory.current_bytes",
        Unit::Bytes,
        "Heap bytes live now (tracking allocator).",
        || memory_stats().current_bytes as f64,
    )?;
    registry.register_counter_fn(
        // Not `..._bytes_...`: the unit suffix says bytes once (`.._allocated_lifetime_bytes_total`).
        "memory.allocated_lifetime",
        Unit::Bytes,
        "Heap bytes ever allocated (tracking allocator).",
        || memory_stats().bytes_allocated_lifetime,
    )?;
    registry.register_gauge_fn(
        "memory.net_allocations",
        Unit::None,
        "Allocations minus frees (tracking allocator).",
        || memory_stats().net_allocations as f64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrips_count_through_the_tracker_not_the_system() {
        let t = TrackingAllocator::new();
        let before = std::thread::spawn(move || {
            let b = memory_stats();
            assert!(t.alloc_free_roundtrip(1000));
            let mine = thread_memory_stats().expect("this thread has a slot now");
            assert!(system_alloc_free_roundtrip(1000));
            // Only the tracked roundtrip counts, exactly, on this thread's own slot.
            assert_eq!(thread_memory_stats(), Some(mine));
            assert_eq!((mine.allocations, mine.frees), (1, 1));
            assert_eq!(
                (mine.bytes_allocated_lifetime, mine.current_bytes),
                (1000, 0)
            );
            b
        })
        .join()
        .unwrap();
        let after = memory_stats();
        assert!(is_installed());
        assert!(after.bytes_allocated_lifetime >= before.bytes_allocated_lifetime + 1000);
        assert!(after.allocations > before.allocations);
        assert!(!t.alloc_free_roundtrip(usize::MAX));
    }

    #[test]
    fn a_threads_peak_holds_its_largest_block_until_reset() {
        let t = TrackingAllocator::new();
        std::thread::spawn(move || {
            assert!(t.alloc_free_roundtrip(8));
            reset_thread_peak();
            let base = thread_memory_stats().unwrap().current_bytes;
            assert_eq!(thread_peak_bytes(), Some(base));
            assert!(t.alloc_free_roundtrip(50_000));
            // Freed again, but the peak remembers it.
            assert_eq!(thread_memory_stats().unwrap().current_bytes, base);
            assert_eq!(thread_peak_bytes(), Some(base + 50_000));
            reset_thread_peak();
            assert_eq!(thread_peak_bytes(), Some(base));
        })
        .join()
        .unwrap();
    }
}
