//! A lane's run queue, and how its workers sleep and wake.
//!
//! Owns: the FIFO of ready jobs of one lane, the sleeper count, the shutdown flag, and the
//! spin-then-park policy of idle workers. Must never: lose a wake-up, spin where the lane shares
//! its core, or allocate once warm (the `VecDeque` keeps its capacity; it grows only on warm-up).
//!
//! # Protocol
//! 1. A pusher locks `state`, appends, publishes the new length to `len_hint` (release), and, if
//!    `sleepers > 0`, notifies `min(pushed, sleepers)` of them (all of them when the batch is at
//!    least as large: a graph that needs every worker wakes every worker at once), then unlocks.
//! 2. An idle worker first spins (only on a lane whose cores it does not share, and for at most
//!    `spin_ns`), reading `len_hint` without the lock. The hint may be stale; it only decides
//!    when to take the lock.
//! 3. It then locks `state` and, finding no job and no shutdown, increments `sleepers` and waits
//!    on `wake`, which releases the lock atomically. Because steps 1 and 3 both hold the lock,
//!    a push either happens before the check (the worker sees the job) or after the wait began
//!    (the pusher sees `sleepers > 0` and notifies): no lost wake-up (loom: `tests/loom_lanes.rs`).
//! 4. A thread that waits for a latch while serving this lane ([`LaneQueue::help_until`]) sleeps
//!    on the same condition variable as a sleeper, so both a new job and the latch's completion
//!    (which notifies all sleepers of this queue, under the lock) wake it.
//! 5. Shutdown sets the flag under the lock and notifies everyone; workers drain what is queued
//!    (nothing pushed is lost) and exit when the queue is empty.

use std::collections::VecDeque;

use crate::clock;
use crate::job::{JobRef, WorkerInfo};
use crate::latch::Latch;
use crate::sync::{lock, spin_step, wait, AtomicUsize, Condvar, Mutex, Ordering};

/// The shortest spin an adaptive budget falls to: long enough to catch the next node of a busy
/// frame (nodes follow each other within a few µs), short enough to cost 0.2 % of a core at a
/// 1 kHz idle tick.
pub(crate) const MIN_SPIN_NS: u64 = 2_000;

/// An idle worker's adaptive spin budget: doubles (up to `max`) when work arrived while it spun,
/// quarters (down to [`MIN_SPIN_NS`]) when it had to park anyway. Busy frames keep it high; an
/// idle lane ticked now and then drops to the floor, so it costs little CPU between frames.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpinBudget {
    max: u64,
    cur: u64,
}

impl SpinBudget {
    pub(crate) fn new(max: u64) -> Self {
        SpinBudget {
            max,
            cur: MIN_SPIN_NS.min(max),
        }
    }

    fn success(&mut self) {
        self.cur = (self.cur * 2).min(self.max);
    }

    fn failure(&mut self) {
        self.cur = (self.cur / 4).max(MIN_SPIN_NS.min(self.max));
    }
}

/// Jobs a worker takes from its lane's queue under one lock (at most its fair share: the
/// queue's length divided by the lane's workers). Amortises the lock over a burst of graph
/// nodes; small enough that one worker never hoards a frame's work.
pub(crate) const LOCAL_BATCH: usize = 16;

/// A worker's private run list: jobs it took from the queue in one batch.
pub(crate) struct LocalBatch {
    jobs: [Option<JobRef>; LOCAL_BATCH],
    head: usize,
    len: usize,
}

impl LocalBatch {
    pub(crate) fn new() -> Self {
        LocalBatch {
            jobs: [None; LOCAL_BATCH],
            head: 0,
            len: 0,
        }
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<JobRef> {
        if self.head == self.len {
            return None;
        }
        let j = self.jobs[self.head].take();
        self.head += 1;
        j
    }
}

/// Initial queue capacity: enough for a frame's worth of graph nodes on most lanes without a
/// grow; larger graphs grow it once, on warm-up.
const INITIAL_CAPACITY: usize = 1024;

#[derive(Debug)]
struct QueueState {
    jobs: VecDeque<JobRef>,
    /// Threads waiting on `wake` (idle workers and helping waiters).
    sleepers: u32,
    shutdown: bool,
}

/// The run queue of one lane.
#[derive(Debug)]
pub(crate) struct LaneQueue {
    /// Workers serving this queue (fixed at start): a batch pop takes at most `len / workers`.
    workers: usize,
    /// Writers: pushers and poppers, under the lock. Readers: the same, under the lock.
    state: Mutex<QueueState>,
    /// Waited on by sleepers (step 3) and helpers (step 4); notified by pushers, latches and
    /// shutdown, always while holding `state`.
    wake: Condvar,
    /// Number of queued jobs. Writer: whoever holds `state`, after changing the queue
    /// (release). Reader: spinning workers, without the lock (acquire). A hint only.
    len_hint: AtomicUsize,
}

impl LaneQueue {
    pub(crate) fn new(workers: usize) -> Self {
        LaneQueue {
            workers: workers.max(1),
            state: Mutex::new(QueueState {
                jobs: VecDeque::with_capacity(INITIAL_CAPACITY),
                sleepers: 0,
                shutdown: false,
            }),
            wake: Condvar::new(),
            len_hint: AtomicUsize::new(0),
        }
    }

    /// Makes room for `n` more queued jobs (setup path: graphs call it when built for a lane).
    pub(crate) fn reserve(&self, n: usize) {
        let mut s = lock(&self.state);
        let spare = s.jobs.capacity() - s.jobs.len();
        s.jobs.reserve(n.saturating_sub(spare));
    }

    /// Step 1: appends jobs and wakes as many sleepers as there are jobs. Returns whether it
    /// had to wake anyone (the lane was asleep: a waiter should park, not spin).
    pub(crate) fn push_batch(&self, jobs: &[JobRef]) -> bool {
        if jobs.is_empty() {
            return false;
        }
        let mut s = lock(&self.state);
        s.jobs.extend(jobs.iter().copied());
        self.len_hint.store(s.jobs.len(), Ordering::Release);
        let sleepers = s.sleepers as usize;
        if sleepers > 0 {
            if jobs.len() >= sleepers {
                self.wake.notify_all();
            } else {
                for _ in 0..jobs.len() {
                    self.wake.notify_one();
                }
            }
        }
        sleepers > 0
    }

    /// Step 1 for one job.
    #[inline]
    pub(crate) fn push(&self, job: JobRef) -> bool {
        self.push_batch(std::slice::from_ref(&job))
    }

    /// Takes the oldest job without waiting.
    #[inline]
    pub(crate) fn try_pop(&self) -> Option<JobRef> {
        if self.len_hint.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut s = lock(&self.state);
        let job = s.jobs.pop_front();
        self.len_hint.store(s.jobs.len(), Ordering::Release);
        job
    }

    /// Steps 2 and 3 for a worker: fills `out` with the next jobs (at most its fair share of
    /// the queue, at least one). Returns false once shut down and drained.
    pub(crate) fn next_batch_for_worker(
        &self,
        spin: &mut SpinBudget,
        out: &mut LocalBatch,
    ) -> bool {
        loop {
            if self.len_hint.load(Ordering::Acquire) > 0 {
                let mut s = lock(&self.state);
                if self.take_batch(&mut s, out) {
                    return true;
                }
            }
            if spin.max > 0 {
                if self.spin_for_work(spin.cur) {
                    spin.success();
                    continue;
                }
                spin.failure();
            }
            let mut s = lock(&self.state);
            loop {
                if self.take_batch(&mut s, out) {
                    return true;
                }
                if s.shutdown {
                    return false;
                }
                s.sleepers += 1;
                s = wait(&self.wake, s);
                s.sleepers -= 1;
            }
        }
    }

    /// Moves up to the worker's fair share of queued jobs into `out` (under the lock).
    fn take_batch(&self, s: &mut QueueState, out: &mut LocalBatch) -> bool {
        let len = s.jobs.len();
        if len == 0 {
            return false;
        }
        // At most a share that leaves as much for one more thread (a helper, or a worker waking
        // up): jobs in a private batch cannot be helped with, so never hoard the whole queue.
        let k = (len / (self.workers + 1)).clamp(1, LOCAL_BATCH);
        out.head = 0;
        out.len = k;
        for slot in out.jobs.iter_mut().take(k) {
            *slot = s.jobs.pop_front();
        }
        self.len_hint.store(len - k, Ordering::Release);
        true
    }

    /// Step 2: spins until the hint says there is work, for at most `spin_ns`.
    fn spin_for_work(&self, spin_ns: u64) -> bool {
        let start = clock::now();
        let mut i = 0u32;
        loop {
            if self.len_hint.load(Ordering::Acquire) > 0 {
                return true;
            }
            spin_step();
            i = i.wrapping_add(1);
            // Read the clock every 64 spins: a clock read costs more than a pause.
            if i % 64 == 0 && clock::now().ns_since(start) >= spin_ns {
                return false;
            }
        }
    }

    /// Step 4: runs this lane's jobs on the calling thread until `latch` is done.
    /// `latch` must have been made with this queue as its helper queue.
    pub(crate) fn help_until(&self, latch: &Latch<'_>, who: WorkerInfo, spin_ns: u64) {
        loop {
            if latch.probe() {
                break;
            }
            if let Some(job) = self.try_pop() {
                // SAFETY: popped once from the queue it was pushed to; its pusher keeps the data
                // alive until its latch completes (see `JobRef`).
                unsafe { job.run(who) };
                continue;
            }
            if spin_ns > 0 && self.spin_until(latch, spin_ns) {
                continue;
            }
            let mut s = lock(&self.state);
            if latch.probe() {
                break;
            }
            if let Some(job) = s.jobs.pop_front() {
                self.len_hint.store(s.jobs.len(), Ordering::Release);
                drop(s);
                // SAFETY: as above.
                unsafe { job.run(who) };
                continue;
            }
            s.sleepers += 1;
            s = wait(&self.wake, s);
            s.sleepers -= 1;
        }
        latch.wait_confirmed();
    }

    /// Spins until the queue has work or the latch is done, for at most `spin_ns`.
    fn spin_until(&self, latch: &Latch<'_>, spin_ns: u64) -> bool {
        let start = clock::now();
        let mut i = 0u32;
        loop {
            if latch.probe() || self.len_hint.load(Ordering::Acquire) > 0 {
                return true;
            }
            spin_step();
            i = i.wrapping_add(1);
            if i % 64 == 0 && clock::now().ns_since(start) >= spin_ns {
                return false;
            }
        }
    }

    /// Wakes every thread waiting on this queue (a helper's latch completed). Takes the lock so
    /// the notification cannot fall between a helper's check and its wait (step 4).
    pub(crate) fn notify_all(&self) {
        let _s = lock(&self.state);
        self.wake.notify_all();
    }

    /// Step 5.
    pub(crate) fn shutdown(&self) {
        let mut s = lock(&self.state);
        s.shutdown = true;
        self.wake.notify_all();
    }

    /// Jobs queued now (a racy snapshot, for reports).
    pub(crate) fn len(&self) -> usize {
        self.len_hint.load(Ordering::Relaxed)
    }
}
