//! A counting completion latch: the caller of a graph run, a scope or a parallel-for waits on one
//! until every job it published has finished.
//!
//! Owns: the count of unfinished jobs and the hand-off that lets the waiter return. Must never:
//! let the waiter return (and free the latch, which lives on its stack) while a completer may
//! still touch the latch's memory, and never lose the final wake-up.
//!
//! # Protocol
//! 1. The waiter makes the latch with the count of jobs it will publish, and, when it serves a
//!    lane and will help it while waiting, that lane's queue (`helper`). Both are fixed before any
//!    job is published, so every completer sees them.
//! 2. A completer copies `helper` to its stack, then decrements `remaining` (acq-rel: its job's
//!    writes are released to the waiter, and the final decrement acquires everyone else's).
//! 3. The completer that brings `remaining` to zero finishes the hand-off: it locks `done`, sets
//!    it, and notifies `cv`; then, if there is a helper queue, notifies that queue under its lock.
//!    After step 3 begins a completer touches nothing of the latch except through the `done`
//!    mutex, and the helper queue lives in the lanes, which outlive every waiter.
//! 4. The waiter may spin on `remaining` (acquire), but returns only after it has seen `done ==
//!    true` under the `done` lock ([`Latch::wait_confirmed`]), that is, after the last completer
//!    has finished with the latch. (It may still be inside the mutex's unlock, which touches only
//!    the futex word's address: a spurious futex wake at worst, the standard pattern.)
//!
//! Loom: `tests/loom_lanes.rs` checks that the waiter sees every job's writes and is always woken.

use crate::clock;
use crate::queue::LaneQueue;
use crate::sync::{lock, spin_step, wait, AtomicUsize, Condvar, Mutex, Ordering};

/// See the module docs.
#[derive(Debug)]
pub(crate) struct Latch<'q> {
    /// Unfinished jobs. Writers: completers (acq-rel decrement). Reader: the waiter (acquire).
    remaining: AtomicUsize,
    /// Set once by the last completer, under its own lock; read by the waiter under the lock.
    done: Mutex<bool>,
    /// Notified by the last completer while holding `done`.
    cv: Condvar,
    /// The queue the waiter helps while it waits (fixed at construction: protocol step 1).
    helper: Option<&'q LaneQueue>,
}

impl<'q> Latch<'q> {
    /// A latch for `count` jobs. A count of zero is done at once.
    pub(crate) fn new(count: usize, helper: Option<&'q LaneQueue>) -> Self {
        Latch {
            remaining: AtomicUsize::new(count),
            done: Mutex::new(count == 0),
            cv: Condvar::new(),
            helper,
        }
    }

    /// Adds jobs before they are published (scopes learn their count as they spawn).
    pub(crate) fn add(&self, n: usize) {
        // Relaxed: the increment happens before the jobs are published (queue lock: release),
        // so no completer can decrement below it.
        self.remaining.fetch_add(n, Ordering::Relaxed);
    }

    /// Step 2 and 3: one job finished.
    #[inline]
    pub(crate) fn count_down(&self) {
        self.count_down_by(1);
    }

    /// Steps 2 and 3 for `n` jobs finished by one thread (a chain run inline).
    #[inline]
    pub(crate) fn count_down_by(&self, n: usize) {
        let helper = self.helper;
        if self.remaining.fetch_sub(n, Ordering::AcqRel) == n {
            {
                let mut d = lock(&self.done);
                *d = true;
                self.cv.notify_all();
            }
            if let Some(q) = helper {
                q.notify_all();
            }
        }
    }

    /// Whether every job has finished (acquire: their writes are visible). A `true` here still
    /// needs [`Latch::wait_confirmed`] before the latch may be freed.
    #[inline]
    pub(crate) fn probe(&self) -> bool {
        self.remaining.load(Ordering::Acquire) == 0
    }

    /// Step 4: blocks until the last completer has finished the hand-off.
    pub(crate) fn wait_confirmed(&self) {
        let mut d = lock(&self.done);
        while !*d {
            d = wait(&self.cv, d);
        }
    }

    /// Waits without helping: spins on `remaining` until `spin_ns` after `start` (the caller's
    /// clock read, so one read serves both the spin and the caller's own timing), then parks.
    /// Returns whether the count reached zero before the spin ran out (so the waiter did not
    /// park). To park at once, call [`Latch::wait_confirmed`].
    pub(crate) fn wait(&self, start: clock::Stamp, spin_ns: u64) -> bool {
        let mut i = 0u32;
        let in_spin = loop {
            if self.probe() {
                break true;
            }
            spin_step();
            i = i.wrapping_add(1);
            if i % 64 == 0 && clock::now().ns_since(start) >= spin_ns {
                break false;
            }
        };
        self.wait_confirmed();
        in_spin
    }
}
