//! A lane's run queue, and how its workers sleep and wake.
//!
//! Owns: the FIFO of ready jobs of one lane, the sleeper count, the shutdown flag, and the
//! spin-then-park policy of idle workers. Must never: lose a wake-up, spin where the lane shares
//! its core, or allocate once warm (the `VecDeque` keeps its capacity; it grows only on warm-up).
//!
//! # Protocol
//! 1. A pusher locks `state`, appends, publishes the new length to `len_hint` (release), and, if
//!    some sleepers have not been notified yet (`sleepers > notified`), notifies
//!    `min(pushed, sleepers - notified)` of them (all of them when the batch is at least as
//!    large: a graph that needs every worker wakes every worker at once) and adds them to
//!    `notified`, then unlocks. A sleeper already notified is not notified again: on Linux every
//!    `notify_one` is a futex syscall, and a scope spawning 16 jobs one by one used to make 16
//!    of them while the one worker it had woken was still on its way to the lock.
//! 2. An idle worker first spins (only on a lane whose cores it does not share, and for at most
//!    `spin_ns`), reading `len_hint` without the lock. The hint may be stale; it only decides
//!    when to take the lock.
//! 3. It then locks `state` and, finding no job and no shutdown, increments `sleepers` and waits
//!    on `wake`, which releases the lock atomically. Because steps 1 and 3 both hold the lock,
//!    a push either happens before the check (the worker sees the job) or after the wait began
//!    (the pusher sees an unnotified sleeper and notifies): no lost wake-up (loom:
//!    `tests/loom_lanes.rs`). On waking, under the lock, it leaves `sleepers` and takes one
//!    credit from `notified` (saturating). A spurious wake-up takes a credit it was not given,
//!    so `notified` can only undercount the notified sleepers still waiting: a later push then
//!    notifies once more than needed, never once less. Every thread that takes a credit checks
//!    the queue under the same lock before it waits again.
//! 4. A thread that waits for a latch while serving this lane ([`LaneQueue::help_until`]) sleeps
//!    on the same condition variable as a sleeper, so both a new job and the latch's completion
//!    (which notifies all sleepers of this queue, under the lock) wake it.
//! 5. Shutdown sets the flag under the lock and notifies everyone; workers drain what is queued
//!    (nothing pushed is lost) and exit when the queue is empty.

use std::collections::VecDeque;

use crate::clock;
use crate::job::{JobRef, WorkerInfo};
use crate::latch::Latch;
use crate::sync::{lock, spin_step, wait, AtomicUsize, Condvar, Mutex, MutexGuard, Ordering};

/// The shortest spin an adaptive budget falls to: long enough to catch the next node of a busy
/// frame (nodes follow each other within a few µs), short enough to cost 0.2 % of a core at a
/// 1 kHz idle tick.
pub(crate) const MIN_SPIN_NS: u64 = 2_000;

/// An idle worker's adaptive spin budget: doubles (up to `max`) when work arrived while it spun.
/// When it had to park anyway, it learns from how long the lane was really idle: a gap that
/// `max` would have covered sets the budget to that gap plus a quarter (so the next gap of that
/// length is spun through, not paid for with a futex wake of a parked core); a longer gap
/// quarters it (down to [`MIN_SPIN_NS`]). Busy frames and short periodic gaps (fixed sub-steps
/// with owner work between them) keep it high; an idle lane ticked now and then drops to the
/// floor, so it costs little CPU between frames.
///
/// The first design only doubled on success. A budget at the floor then never grew when the
/// gap was a little longer than the floor: every step of a 25 µs physics kernel run back to back
/// paid a 10-20 µs wake (`bench simd`, `engine_path` at 64 Ki).
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

    /// The spin to use now.
    pub(crate) fn cur(&self) -> u64 {
        self.cur
    }

    /// The most it may grow to.
    pub(crate) fn max(&self) -> u64 {
        self.max
    }

    pub(crate) fn success(&mut self) {
        self.cur = (self.cur * 2).min(self.max);
    }

    /// The worker parked and found work `idle_ns` after it began to spin.
    pub(crate) fn parked(&mut self, idle_ns: u64) {
        self.cur = if idle_ns <= self.max {
            (idle_ns + idle_ns / 4).clamp(MIN_SPIN_NS.min(self.max), self.max)
        } else {
            (self.cur / 4).max(MIN_SPIN_NS.min(self.max))
        };
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
    /// How many of the `sleepers` have been notified and not yet woken (at most `sleepers`; may
    /// undercount after a spurious wake-up, never overcount).
    notified: u32,
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
                notified: 0,
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
        let unnotified = sleepers - s.notified as usize;
        if unnotified > 0 {
            if jobs.len() >= unnotified {
                self.wake.notify_all();
                s.notified = s.sleepers;
            } else {
                for _ in 0..jobs.len() {
                    self.wake.notify_one();
                }
                s.notified += jobs.len() as u32;
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
            // One clock read starts both the spin and the idle gap a parked worker learns from;
            // a lane that may not spin reads no clock at all.
            let idle_since = if spin.max > 0 {
                let start = clock::now();
                if self.spin_for_work(start, spin.cur) {
                    spin.success();
                    continue;
                }
                Some(start)
            } else {
                None
            };
            let mut s = lock(&self.state);
            loop {
                if self.take_batch(&mut s, out) {
                    if let Some(start) = idle_since {
                        spin.parked(clock::now().ns_since(start));
                    }
                    return true;
                }
                if s.shutdown {
                    return false;
                }
                s = self.sleep(s);
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

    /// Step 2: spins until the hint says there is work, for at most `spin_ns` from `start`.
    fn spin_for_work(&self, start: clock::Stamp, spin_ns: u64) -> bool {
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
            s = self.sleep(s);
        }
        latch.wait_confirmed();
    }

    /// Steps 3 and 4's wait: joins the sleepers, waits on `wake` (releasing the lock), and on
    /// waking leaves the sleepers and takes one notification credit. The caller then checks the
    /// queue under the lock it gets back.
    fn sleep<'a>(&self, mut s: MutexGuard<'a, QueueState>) -> MutexGuard<'a, QueueState> {
        s.sleepers += 1;
        s = wait(&self.wake, s);
        s.sleepers -= 1;
        s.notified = s.notified.saturating_sub(1).min(s.sleepers);
        s
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
        let mut s = lock(&self.state);
        self.wake.notify_all();
        s.notified = s.sleepers;
    }

    /// Step 5.
    pub(crate) fn shutdown(&self) {
        let mut s = lock(&self.state);
        s.shutdown = true;
        self.wake.notify_all();
        s.notified = s.sleepers;
    }

    /// Jobs queued now (a racy snapshot, for reports).
    pub(crate) fn len(&self) -> usize {
        self.len_hint.load(Ordering::Relaxed)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_spin_budget_learns_a_gap_it_can_cover_and_drops_on_a_long_one() {
        let mut b = SpinBudget::new(50_000);
        assert_eq!(b.cur, MIN_SPIN_NS);
        // Parked, and the work came 30 µs after the spin began: next time spin 37.5 µs.
        b.parked(30_000);
        assert_eq!(b.cur, 37_500);
        // A gap near the cap is clamped to it.
        b.parked(45_000);
        assert_eq!(b.cur, 50_000);
        // A gap the cap cannot cover quarters the budget, down to the floor.
        b.parked(1_000_000);
        assert_eq!(b.cur, 12_500);
        b.parked(1_000_000);
        b.parked(1_000_000);
        assert_eq!(b.cur, MIN_SPIN_NS);
        // A tiny gap never goes below the floor; success doubles up to the cap.
        b.parked(10);
        assert_eq!(b.cur, MIN_SPIN_NS);
        for _ in 0..10 {
            b.success();
        }
        assert_eq!(b.cur, 50_000);
    }

    #[test]
    fn a_zero_budget_never_spins() {
        let mut b = SpinBudget::new(0);
        b.parked(10);
        b.success();
        assert_eq!(b.cur, 0);
    }

    #[test]
    fn a_notified_sleeper_is_not_notified_again() {
        // No real sleeper here: set the counters as a parked worker and a first push would, and
        // check that a second push before the wake adds no notification.
        let q = LaneQueue::new(1);
        {
            let mut s = lock(&q.state);
            s.sleepers = 1;
        }
        let job = JobRef {
            data: std::ptr::null(),
            arg: 0,
            exec: |_, _, _| {},
        };
        assert!(q.push(job));
        assert_eq!(lock(&q.state).notified, 1);
        assert!(q.push(job));
        assert_eq!(lock(&q.state).notified, 1, "no second notification");
        // Two sleepers, one of them notified: a batch of two notifies only the other.
        {
            let mut s = lock(&q.state);
            s.sleepers = 2;
        }
        assert!(q.push_batch(&[job, job]));
        assert_eq!(lock(&q.state).notified, 2);
        lock(&q.state).jobs.clear();
    }
}
