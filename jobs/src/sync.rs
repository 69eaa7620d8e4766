//! The one seam between lanegraph-jobs and its concurrency primitives.
//!
//! Owns: which atomics, locks, condition variables, cells and threads the crate uses. Under
//! `cfg(loom)` they are loom's, so the models in `tests/loom_*.rs` explore every interleaving of
//! the real code. Must never: be bypassed (a `std::sync` import elsewhere in this crate would hide
//! that access from loom).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicIsize, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub(crate) use loom::thread;

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    fence, AtomicBool, AtomicIsize, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::thread;

/// One step of a bounded spin. Under loom a spin is a yield, so the model checker can schedule
/// the thread being waited for (a `spin_loop` would be an unbounded loop to it).
#[inline]
pub(crate) fn spin_step() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

/// A cell whose accesses loom checks. `with_mut` hands out the raw pointer; callers uphold
/// exclusive access (each use carries its own `// SAFETY:`).
#[derive(Debug)]
// Transparent outside loom: a slice of cells can be read as a slice of values once no writer is
// left (`graph::run` hands out its timings that way).
#[cfg_attr(not(loom), repr(transparent))]
pub(crate) struct UnsafeCell<T>(
    #[cfg(loom)] loom::cell::UnsafeCell<T>,
    #[cfg(not(loom))] std::cell::UnsafeCell<T>,
);

impl<T> UnsafeCell<T> {
    pub(crate) fn new(v: T) -> Self {
        #[cfg(loom)]
        return UnsafeCell(loom::cell::UnsafeCell::new(v));
        #[cfg(not(loom))]
        return UnsafeCell(std::cell::UnsafeCell::new(v));
    }

    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(loom)]
        return self.0.with_mut(f);
        #[cfg(not(loom))]
        return f(self.0.get());
    }
}

/// Locks a mutex, recovering it when a panic poisoned it: every lock in this crate guards plain
/// bookkeeping that is consistent at every unlock, and job panics are caught before they could
/// unwind through a guard, so poison carries no information here.
#[inline]
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Waits on a condition variable with the same poison recovery as [`lock`].
#[inline]
pub(crate) fn wait<'a, T>(cv: &Condvar, g: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    match cv.wait(g) {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Waits on a condition variable for at most `timeout`, with the same poison recovery as
/// [`lock`]. Returns the guard and whether the wait timed out (never, under loom: a timeout is
/// just a wake-up the protocol must already tolerate, like a spurious one).
#[inline]
pub(crate) fn wait_timeout<'a, T>(
    cv: &Condvar,
    g: MutexGuard<'a, T>,
    timeout: std::time::Duration,
) -> (MutexGuard<'a, T>, bool) {
    match cv.wait_timeout(g, timeout) {
        Ok((g, r)) => (g, r.timed_out()),
        Err(p) => {
            let (g, r) = p.into_inner();
            (g, r.timed_out())
        }
    }
}
