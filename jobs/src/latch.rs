//! A counting completion latch: the caller of a graph run, a scope or a parallel-for waits on one
//! until every job it published has finished.
//!
//! Owns: the count of unfinished jobs and the hand-off that lets the waiter return. Must never:
//! let the waiter return (and free the latch, which lives on its stack) while a completer may
//! still touch the latch's memory, and never lose the final wake-up.
//!
//! Import cycle with `queue`, kept on purpose: a latch's completer notifies the lane queue of the
//! waiter that helps it (`LaneQueue`), and the queue's `help_until` waits on a `Latch`. The two
//! are one protocol, checked together by the loom models (`docs/jobs.md`, "Loom"); each file
//! holds one side of it.
//!
//! # Protocol
//! 1. The waiter makes the latch with the count of jobs it will publish, and, when it serves a
//!    lane and will help it while waiting, that lane's queue (`helper`). Both are fixed before any
//!    job is published, so every completer sees them.
//! 2. A completer copies `helper` to its stack, then decrements `remaining` (acq-rel: its job's
//!    writes are released to the waiter, and the final decrement acquires everyone else's).
//! 3. The completer that brings `remaining` to zero finishes the hand-off:
//!    a. it locks `done`, sets it, notifies `cv` if a waiter parked on it, and unlocks;
//!    b. it sets `finished` (release). This is its last touch of the latch;
//!    c. if there is a helper queue, it notifies that queue under the queue's lock (the queue
//!    lives in the lanes, which outlive every waiter; `helper` was copied in step 2).
//! 4. The waiter returns only once it has seen `finished` (acquire), that is, after the last
//!    completer has finished with the latch. It may spin on `finished`; a waiter that parks does
//!    so on `cv` under `done` (marking itself parked), and after waking waits the few
//!    instructions until `finished` is set too (yielding). A waiter spinning on `finished` never
//!    takes the `done` lock while the completer holds it: the old order (flag first, then the
//!    lock) made a spinning waiter block on the completer's lock and wait for a futex wake,
//!    half of the time, doubling a 30 us graph run.
//!
//! Loom: `tests/loom_lanes.rs` checks that the waiter sees every job's writes and is always woken.

use crate::clock;
use crate::queue::LaneQueue;
use crate::sync::{
    lock, spin_step, thread, wait, AtomicBool, AtomicUsize, Condvar, Mutex, Ordering,
};
use crossbeam_utils::CachePadded;

/// What the last completer and a parked waiter share under the `done` lock.
#[derive(Debug)]
struct DoneState {
    done: bool,
    parked: bool,
}

/// See the module docs.
#[derive(Debug)]
pub(crate) struct Latch<'q> {
    /// Unfinished jobs. Writers: completers (acq-rel decrement). Not read by the waiter: on a
    /// line of its own so the completers' decrements never miss because a spinning waiter keeps
    /// pulling the line away (it cost a 1-thread graph run a third of its time).
    remaining: CachePadded<AtomicUsize>,
    /// Set once (release) by the completer that brought `remaining` to zero, as its last touch
    /// of the latch (step 3b); the waiter returns once it sees it (acquire).
    finished: AtomicBool,
    /// Set once by the last completer, under its own lock (step 3a), with whether the waiter is
    /// parked on `cv`; read by the waiter under the lock.
    done: Mutex<DoneState>,
    /// Notified by the last completer while holding `done`, when the waiter parked.
    cv: Condvar,
    /// The queue the waiter helps while it waits (fixed at construction: protocol step 1).
    helper: Option<&'q LaneQueue>,
}

impl<'q> Latch<'q> {
    /// A latch for `count` jobs. A count of zero is done at once.
    pub(crate) fn new(count: usize, helper: Option<&'q LaneQueue>) -> Self {
        Latch {
            remaining: CachePadded::new(AtomicUsize::new(count)),
            finished: AtomicBool::new(count == 0),
            done: Mutex::new(DoneState {
                done: count == 0,
                parked: false,
            }),
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
                d.done = true;
                if d.parked {
                    self.cv.notify_all();
                }
            }
            // Release: the acquiring decrement above saw every completer's writes; this passes
            // them on to the waiter. Last touch of the latch (step 3b).
            self.finished.store(true, Ordering::Release);
            if let Some(q) = helper {
                q.notify_all();
            }
        }
    }

    /// Whether every job has finished and the last completer is done with the latch (acquire:
    /// their writes are visible). After `true` the latch may be freed.
    #[inline]
    pub(crate) fn probe(&self) -> bool {
        self.finished.load(Ordering::Acquire)
    }

    /// Step 4: blocks until the last completer has finished the hand-off.
    pub(crate) fn wait_confirmed(&self) {
        if self.probe() {
            return;
        }
        {
            let mut d = lock(&self.done);
            while !d.done {
                d.parked = true;
                d = wait(&self.cv, d);
            }
        }
        // The completer is between its unlock and its `finished` store (step 3a-b): a few
        // instructions, unless it was preempted there.
        while !self.probe() {
            thread::yield_now();
        }
    }

    /// Waits without helping: spins on `finished` until `spin_ns` after `start` (the caller's
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
