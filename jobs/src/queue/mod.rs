//! A lane's run queues, and how its workers find work, sleep and wake.
//!
//! Owns: the lane's shared FIFO (the injector: jobs pushed from outside the lane, and overflow),
//! one work-stealing deque per worker ([`crate::deque`]: jobs a worker readies or spawns), the
//! sleeper count, the shutdown flag, and the spin-then-park policy of idle threads.
//! Must never: lose a wake-up, spin where the lane shares its core, hide a job from the lane's
//! other threads (everything queued is in the injector or a deque, both stealable), or allocate
//! once warm (the injector's `VecDeque` keeps its capacity; deques are fixed rings).
//!
//! # Where jobs go and where they are taken
//! - A worker of this lane pushes what it readies (graph successors, scope jobs, claim jobs of a
//!   parallel-for) to its own deque; a full ring sends the rest to the injector. Everyone else
//!   (the owner thread, other lanes, detached and repeatable jobs) pushes to the injector.
//! - A worker looks for work in this order: its own deque (newest first), the injector (it takes
//!   its fair share, `len / (workers + 1)` up to 16, runs the first and puts the rest in its
//!   deque oldest at the bottom, so it pops them in the order they were queued, while siblings
//!   and helpers can still steal them), then its siblings' deques (oldest first). Every 64th
//!   search starts at the injector, so work from outside is never starved by a lane that keeps
//!   readying its own; it waits while the worker's ring still holds a batch it took from the
//!   injector (those jobs are older: one worker runs the injector FIFO).
//! - A thread helping this lane while it waits on a latch searches the same way (the owner
//!   thread has no deque: injector, then every worker's deque).
//!
//! # Protocol (sleep and wake)
//! Every worker has a parker of its own (a condition variable used with `state`); helpers share
//! one (`helper_wake`). `state` lists the parked workers not yet notified (`parked`, most
//! recently parked last) and counts the waiting helpers and how many of them were notified.
//! 1. An injector push locks `state`, appends, publishes the length to `len_hint` (release),
//!    and notifies up to one sleeper per pushed job: parked workers first, taken from the end of
//!    `parked` (the warmest caches; the others sleep on) and removed from it as they are
//!    notified, then helpers not yet notified (`helpers > helpers_notified`; all of them when
//!    the batch is at least as large), counted in `helpers_notified`. Then it unlocks. A sleeper
//!    already notified is not notified again (every notify is a futex syscall).
//! 2. A deque push (by the owning worker) writes the ring, then issues a SeqCst fence, then
//!    reads `sleepers_hint`; only if it is non-zero does it lock `state` and notify as in step 1.
//! 3. An idle thread first spins (only where the lane does not share its core, for at most its
//!    learned budget), reading `len_hint` and the deques' indices without the lock.
//!    a. A worker of a ticked lane ([`crate::Lanes::set_tick`]) whose spin found nothing and
//!    whose next tick is at least 100 us away then parks as in step 4, with a timer that ends
//!    a learned lead before the tick, then spins through the tick (as a spinner, not a
//!    sleeper, so the tick's push needs no futex wake), and waits the usual way if nothing
//!    came.
//! 4. It then locks `state`; finding the injector empty, it joins the sleepers (a worker pushes
//!    itself on `parked` and marks itself waiting, and helping if it waits on a latch; a helper
//!    counts itself), stores the count to `sleepers_hint`, issues a SeqCst fence, and checks
//!    every deque (and its latch, if it waits on one) once more. Steps 2 and 4 are the two sides
//!    of a store-buffer race, each with a SeqCst fence between its store and its load: either
//!    the pusher's fence is first and the sleeper's check sees the job, or the sleeper's is
//!    first and the pusher sees a sleeper and notifies under the lock, which the sleeper holds
//!    until its wait has begun. Finding work, it leaves the sleepers and searches again.
//!    Otherwise, unless shut down, it waits on its parker (releasing the lock atomically). An
//!    injector push is ordered by the lock alone. No lost wake-up (loom: `tests/loom_lanes.rs`;
//!    weakening either fence fails `a_job_readied_on_a_worker_wakes_its_parked_sibling`).
//! 5. On waking (or not waiting) it leaves the sleepers under the lock. A worker still on
//!    `parked` was not notified (a spurious wake-up, a timer, or it never waited) and takes
//!    itself off. A helper takes one credit from `helpers_notified` (saturating): a spurious
//!    wake-up takes a credit it was not given, so the count can only undercount the notified
//!    helpers still waiting, and a later push notifies once more than needed, never once less.
//! 6. A latch that completes locks its helper queue's `state` and notifies every thread waiting
//!    on a latch there: all helpers, and the workers marked helping. Idle workers sleep on.
//! 7. Shutdown sets the flag under the lock and notifies everyone; workers drain the injector and
//!    their deques (nothing pushed is lost) and exit when all are empty.
//!
//! | file | idea |
//! |------|------|
//! | `idle` | What an idle worker learned: its adaptive spin budget and when work arrives (ticks, frames) |
//! | `push` | Protocol steps 1-2: pushing to the injector or a worker's deque, and whom that wakes |
//! | `search` | Where a worker or a helper finds its next job: own deque, injector, siblings |
//! | `sleep` | Protocol steps 3-7: spinning, parking, timed wake-ups, helping on a latch, shutdown |
//! | `tests` | The queue's unit tests |

mod idle;
mod push;
mod search;
mod sleep;
#[cfg(all(test, not(loom)))]
mod tests;

pub(crate) use idle::{SpinBudget, WorkerSearch};

use std::collections::VecDeque;

use crate::deque::Deque;
use crate::job::{self, JobRef, WorkerInfo};
use crate::plan::LaneId;
use crate::sync::{lock, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Condvar, Mutex, Ordering};
use crossbeam_utils::CachePadded;

/// Most jobs a worker moves from the injector to its deque at once (at most its fair share: the
/// injector's length divided by the lane's threads). Amortises the lock over a burst of graph
/// roots; the moved jobs stay stealable.
pub(crate) const INJECTOR_BATCH: usize = 16;

/// Initial injector capacity: enough for a frame's worth of graph nodes on most lanes without a
/// grow; larger graphs grow it once, on warm-up.
pub(super) const INITIAL_CAPACITY: usize = 1024;

#[derive(Debug)]
pub(super) struct QueueState {
    pub(super) jobs: VecDeque<JobRef>,
    /// Parked workers not yet notified, the most recently parked last: a push wakes from the
    /// end (the warmest caches; the others stay asleep). Capacity reserved for every worker.
    pub(super) parked: Vec<u16>,
    /// Per worker: it is in step 4 now (parked, notified or not), and whether it parked while
    /// waiting on a latch (`help_until`), so a latch's completion wakes it.
    pub(super) waiting: Box<[bool]>,
    pub(super) helping: Box<[bool]>,
    /// Per worker: notified since it last joined the sleepers. A notified worker is off
    /// `parked`, so no later push spends a notify (a futex syscall) on a worker already woken
    /// and leaves a sleeper asleep; `notify_up_to` checks it (debug builds and the loom
    /// models). Set by whoever notifies, cleared by the worker as it leaves step 4.
    pub(super) notified: Box<[bool]>,
    /// Workers with `waiting` set.
    pub(super) waiting_workers: u32,
    /// Helpers (threads serving the lane without a deque: the owner thread) in step 4, on
    /// `helper_wake`.
    pub(super) helpers: u32,
    /// How many of the `helpers` have been notified and not yet woken (at most `helpers`; may
    /// undercount after a spurious wake-up, never overcount).
    pub(super) helpers_notified: u32,
    pub(super) shutdown: bool,
    /// Workers that have exited (shut down and drained). Once every worker has, nobody will
    /// take from this queue again: a push runs its jobs on the pushing thread instead.
    pub(super) exited: usize,
}

impl QueueState {
    /// Threads in step 4: the count `sleepers_hint` mirrors.
    pub(super) fn sleepers(&self) -> u32 {
        self.waiting_workers + self.helpers
    }
}

/// Who is searching a lane's queues: one of its workers (which owns a deque), or a helper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Searcher {
    /// Worker `i` of the lane, on its own thread.
    Worker(u16),
    /// A thread helping the lane while it waits (no deque of its own).
    Helper,
}

impl Searcher {
    pub(crate) fn of(who: WorkerInfo) -> Searcher {
        if who.worker == WorkerInfo::HELPER {
            Searcher::Helper
        } else {
            Searcher::Worker(who.worker)
        }
    }
}

/// The run queues of one lane.
#[derive(Debug)]
pub(crate) struct LaneQueue {
    /// `Lanes` identity and lane index: a push from one of this lane's workers goes to its deque.
    lanes_id: usize,
    lane: LaneId,
    /// Writers: pushers and poppers, under the lock. Readers: the same, under the lock.
    state: Mutex<QueueState>,
    /// One parker per worker: worker `i` waits on `parkers[i]` (step 4), with `state`; pushers,
    /// latches and shutdown notify it while holding `state`.
    parkers: Box<[Condvar]>,
    /// Where helpers wait (step 4), with `state`; notified like the parkers.
    helper_wake: Condvar,
    /// Number of jobs in the injector. Writer: whoever holds `state`, after changing it
    /// (release). Reader: searching and spinning threads, without the lock (acquire). A hint.
    len_hint: AtomicUsize,
    /// `state.sleepers()`, readable without the lock. Writer: a sleeper, under the lock, before its
    /// SeqCst fence (step 4). Reader: a deque pusher, after its SeqCst fence (step 2).
    sleepers_hint: AtomicU32,
    /// One per worker; ring `i` is pushed and popped only by worker `i`'s thread.
    deques: Box<[Deque]>,
    /// Per worker: injector jobs it moved into its ring and has not popped yet (an upper
    /// bound: every own pop counts one, an empty ring resets it). While non-zero, its
    /// injector-first tick waits: those jobs are older than anything in the injector, and a
    /// worker runs the injector's jobs in the order they were queued. Writer and reader: that
    /// worker only (relaxed).
    batch_left: Box<[CachePadded<AtomicUsize>]>,
    /// The lane's threads plus the owner outnumber the cores: a spinning thread yields its core
    /// at every clock check, so a runnable peer (the owner, woken to start the next frame) is
    /// not kept off the CPU until the spin runs out. Fixed at start.
    yield_in_spin: bool,
    /// The lane's tick period in ns (0: not ticked), set by `Lanes::set_tick`. Relaxed: a hint
    /// read by idle workers (step 3a).
    tick_ns: AtomicU64,
    /// The frame's work on this lane is over (`Lanes::rest`): idle workers park at once instead
    /// of spinning, until the next push clears it. Writers: `rest` (set), pushes (clear).
    /// Readers: idle workers, before and during a spin. Relaxed: a hint about spinning only,
    /// never about whether work exists (the park protocol's fences decide that).
    resting: AtomicBool,
    /// How many times the lane was told to rest (`Lanes::rest`): a worker whose idle gap saw
    /// it change knows the job that ended the gap starts a frame. Writer: `rest` (relaxed add).
    /// Readers: idle workers (relaxed): frame timing only, never whether work exists.
    rests: AtomicU64,
    /// Times a worker of this lane came back from waiting on its parker (notified, timed out
    /// or spuriously): a futex wake-up each, the idle cost `LaneStats::wakeups` reports.
    /// Writer: the waking worker, under `state` (relaxed add). Reader: `Lanes::stats`
    /// (relaxed): a counter only.
    wakeups: AtomicU64,
    /// Timed parks of this lane's workers that ran out (a tick's or a frame's lead reached):
    /// `LaneStats::timer_wakeups`. Writer and reader as `wakeups`.
    timer_wakeups: AtomicU64,
    /// Idle workers resting between frames wake a learned lead before the next frame's
    /// expected start (`Lanes::set_frame_lead`). Relaxed: a hint read by idle workers.
    frame_lead: AtomicBool,
}

impl LaneQueue {
    pub(crate) fn new(lanes_id: usize, lane: LaneId, workers: usize, yield_in_spin: bool) -> Self {
        let workers = workers.max(1);
        LaneQueue {
            lanes_id,
            lane,
            state: Mutex::new(QueueState {
                jobs: VecDeque::with_capacity(INITIAL_CAPACITY),
                parked: Vec::with_capacity(workers),
                waiting: vec![false; workers].into_boxed_slice(),
                helping: vec![false; workers].into_boxed_slice(),
                notified: vec![false; workers].into_boxed_slice(),
                waiting_workers: 0,
                helpers: 0,
                helpers_notified: 0,
                shutdown: false,
                exited: 0,
            }),
            parkers: (0..workers).map(|_| Condvar::new()).collect(),
            helper_wake: Condvar::new(),
            len_hint: AtomicUsize::new(0),
            sleepers_hint: AtomicU32::new(0),
            deques: (0..workers).map(|_| Deque::new()).collect(),
            batch_left: (0..workers)
                .map(|_| CachePadded::new(AtomicUsize::new(0)))
                .collect(),
            yield_in_spin,
            tick_ns: AtomicU64::new(0),
            resting: AtomicBool::new(false),
            rests: AtomicU64::new(0),
            wakeups: AtomicU64::new(0),
            timer_wakeups: AtomicU64::new(0),
            frame_lead: AtomicBool::new(false),
        }
    }

    /// Times this lane's workers came back from a park (see `wakeups`), and how many of those
    /// were timed parks that ran out.
    pub(crate) fn wakeups(&self) -> (u64, u64) {
        (
            self.wakeups.load(Ordering::Relaxed),
            self.timer_wakeups.load(Ordering::Relaxed),
        )
    }

    /// Turns the frame wake-up lead on or off (`Lanes::set_frame_lead`).
    pub(crate) fn set_frame_lead(&self, on: bool) {
        self.frame_lead.store(on, Ordering::Relaxed);
    }

    /// Declares the lane ticked every `ns` (0: not ticked; step 3a).
    pub(crate) fn set_tick_ns(&self, ns: u64) {
        self.tick_ns.store(ns, Ordering::Relaxed);
    }

    /// Makes room for `n` more injector jobs (setup path: graphs call it when built for a lane).
    pub(crate) fn reserve(&self, n: usize) {
        let mut s = lock(&self.state);
        let spare = s.jobs.capacity() - s.jobs.len();
        s.jobs.reserve(n.saturating_sub(spare));
    }

    /// The calling thread's worker index, when it is one of this lane's workers.
    #[inline]
    pub(super) fn local_worker(&self) -> Option<u16> {
        job::current_role()
            .filter(|r| {
                r.lanes == self.lanes_id && r.lane == self.lane && r.worker != WorkerInfo::HELPER
            })
            .map(|r| r.worker)
    }

    /// Jobs queued now, in the injector and every deque (a racy snapshot, for reports).
    pub(crate) fn len(&self) -> usize {
        self.len_hint.load(Ordering::Relaxed) + self.deques.iter().map(Deque::len).sum::<usize>()
    }
}
