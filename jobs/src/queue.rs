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

use std::collections::VecDeque;

use crate::clock;
use crate::deque::{Deque, Steal};
use crate::job::{self, JobRef, WorkerInfo};
use crate::latch::Latch;
use crate::plan::LaneId;
use crate::sync::{
    fence, lock, spin_step, thread, wait, wait_timeout, AtomicBool, AtomicU32, AtomicU64,
    AtomicUsize, Condvar, Mutex, MutexGuard, Ordering,
};
use crossbeam_utils::CachePadded;
use std::time::Duration;

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

/// Most jobs a worker moves from the injector to its deque at once (at most its fair share: the
/// injector's length divided by the lane's threads). Amortises the lock over a burst of graph
/// roots; the moved jobs stay stealable.
pub(crate) const INJECTOR_BATCH: usize = 16;

/// The shortest timed park of a ticked lane worth its timer; a nearer tick is waited for the
/// usual way (spin, then park).
const MIN_TIMED_PARK_NS: u64 = 100_000;

/// A ticked lane's wake-up lead (how long before the expected tick a timed park ends): twice
/// the learned jitter of the arrivals plus a floor, within these bounds. The spin after the
/// timer lasts at most twice the lead, so a tick costs at most a timer wake-up and
/// `2 * TICK_LEAD_MAX_NS` of spinning.
const TICK_LEAD_MIN_NS: u64 = 5_000;
const TICK_LEAD_MAX_NS: u64 = 50_000;

/// How often (in searches) a worker looks at the injector before its own deque.
const INJECTOR_FIRST_EVERY: u32 = 64;

/// Initial injector capacity: enough for a frame's worth of graph nodes on most lanes without a
/// grow; larger graphs grow it once, on warm-up.
const INITIAL_CAPACITY: usize = 1024;

#[derive(Debug)]
struct QueueState {
    jobs: VecDeque<JobRef>,
    /// Parked workers not yet notified, the most recently parked last: a push wakes from the
    /// end (the warmest caches; the others stay asleep). Capacity reserved for every worker.
    parked: Vec<u16>,
    /// Per worker: it is in step 4 now (parked, notified or not), and whether it parked while
    /// waiting on a latch (`help_until`), so a latch's completion wakes it.
    waiting: Box<[bool]>,
    helping: Box<[bool]>,
    /// Per worker: notified since it last joined the sleepers. A notified worker is off
    /// `parked`, so no later push spends a notify (a futex syscall) on a worker already woken
    /// and leaves a sleeper asleep; `notify_up_to` checks it (debug builds and the loom
    /// models). Set by whoever notifies, cleared by the worker as it leaves step 4.
    notified: Box<[bool]>,
    /// Workers with `waiting` set.
    waiting_workers: u32,
    /// Helpers (threads serving the lane without a deque: the owner thread) in step 4, on
    /// `helper_wake`.
    helpers: u32,
    /// How many of the `helpers` have been notified and not yet woken (at most `helpers`; may
    /// undercount after a spurious wake-up, never overcount).
    helpers_notified: u32,
    shutdown: bool,
    /// Workers that have exited (shut down and drained). Once every worker has, nobody will
    /// take from this queue again: a push runs its jobs on the pushing thread instead.
    exited: usize,
}

impl QueueState {
    /// Threads in step 4: the count `sleepers_hint` mirrors.
    fn sleepers(&self) -> u32 {
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

/// A worker's search state: its learned spin, the injector-first counter, and what it learned
/// of when work arrives (for a ticked lane's and the frame lead's timed wake-ups).
#[derive(Debug)]
pub(crate) struct WorkerSearch {
    pub(crate) me: u16,
    pub(crate) spin: SpinBudget,
    ticks: u32,
    /// Arrivals after an idle gap, on a ticked lane: their jitter around the known tick.
    tick: Arrivals,
    /// Frames' first jobs (after the lane's rests): the frame period and its jitter.
    frame: Arrivals,
    /// The lane's rest count when this idle gap began: a job that ends a gap in which the
    /// lane rested is a frame's first.
    gap_rests: u64,
}

impl WorkerSearch {
    pub(crate) fn new(me: u16, spin: SpinBudget) -> Self {
        WorkerSearch {
            me,
            spin,
            ticks: 0,
            tick: Arrivals {
                jitter_ns: TICK_LEAD_MAX_NS,
                ..Arrivals::default()
            },
            frame: Arrivals::default(),
            gap_rests: 0,
        }
    }
}

/// When work arrives, as one worker learned it, for the timed wake-ups of steps 3a and 3b:
/// the last arrival, the period (a ticked lane's, given; or the frame period, learned from
/// when each frame's first job arrives after [`crate::Lanes::rest`] as a moving average of the
/// gaps), and the moving average of the arrivals' distance from one period after the previous
/// one (the jitter). A learned period leaves out a gap far from it (a paused game, a skipped
/// frame); four in a row mean the period changed, and the latest is taken.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Arrivals {
    /// When the last arrival came.
    last_start: Option<clock::Stamp>,
    /// The learned period in ns (0: not learned yet; unused for a given tick).
    period_ns: u64,
    /// Mean distance of an arrival from one period after the previous one, in ns.
    jitter_ns: u64,
    /// Gaps rejected in a row.
    rejected: u32,
}

impl Arrivals {
    /// Work arrived at `now` on a lane ticked every `tick` ns: only the jitter is learned.
    pub(crate) fn arrived_every(&mut self, now: clock::Stamp, tick: u64) {
        if let Some(prev) = self.last_start {
            let gap = now.ns_since(prev);
            // A gap of several ticks (a paused game) says nothing about the jitter.
            if gap < tick.saturating_mul(2) {
                // Saturating: a gap or a tick near `u64::MAX` must not overflow (the tick is
                // clamped where it is set, and this stays safe without that).
                self.jitter_ns = self
                    .jitter_ns
                    .saturating_mul(7)
                    .saturating_add(gap.abs_diff(tick))
                    / 8;
            }
        }
        self.last_start = Some(now);
    }

    /// A frame's first job arrived at `now`: the period is learned too.
    pub(crate) fn arrived(&mut self, now: clock::Stamp) {
        if let Some(prev) = self.last_start {
            let gap = now.ns_since(prev);
            let p = self.period_ns;
            if gap > MAX_LEARNED_FRAME_NS {
                // A pause: says nothing about the period.
            } else if p == 0 || self.rejected >= 3 {
                self.period_ns = gap;
                self.jitter_ns = TICK_LEAD_MAX_NS;
                self.rejected = 0;
            } else if gap.abs_diff(p) <= p / 2 {
                self.jitter_ns = (self.jitter_ns * 7 + gap.abs_diff(p)) / 8;
                self.period_ns = (p * 7 + gap) / 8;
                self.rejected = 0;
            } else {
                self.rejected += 1;
            }
        }
        self.last_start = Some(now);
    }

    /// The learned period and the next frame start's expected time: `None` until learned.
    pub(crate) fn next(&self) -> Option<(u64, clock::Stamp, u64)> {
        match (self.period_ns, self.last_start) {
            (0, _) | (_, None) => None,
            (p, Some(at)) => Some((p, at, self.jitter_ns)),
        }
    }
}

/// Frame periods longer than this (100 ms: below 10 frames per second) are not learned: a
/// timed wake-up gains nothing there.
const MAX_LEARNED_FRAME_NS: u64 = 100_000_000;

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

    /// The spin loops' periodic check: yields if told to, then says whether `spin_ns` has
    /// passed since `start`.
    #[inline]
    fn spin_expired(&self, start: clock::Stamp, spin_ns: u64) -> bool {
        if self.yield_in_spin {
            thread::yield_now();
        }
        clock::now().ns_since(start) >= spin_ns
    }

    /// Makes room for `n` more injector jobs (setup path: graphs call it when built for a lane).
    pub(crate) fn reserve(&self, n: usize) {
        let mut s = lock(&self.state);
        let spare = s.jobs.capacity() - s.jobs.len();
        s.jobs.reserve(n.saturating_sub(spare));
    }

    /// The calling thread's worker index, when it is one of this lane's workers.
    #[inline]
    fn local_worker(&self) -> Option<u16> {
        job::current_role()
            .filter(|r| {
                r.lanes == self.lanes_id && r.lane == self.lane && r.worker != WorkerInfo::HELPER
            })
            .map(|r| r.worker)
    }

    /// Queues jobs: to the calling worker's deque when it is one of this lane's workers, to the
    /// injector otherwise. Returns whether it had to wake anyone (the lane was asleep: a waiter
    /// should park, not spin).
    pub(crate) fn push_batch(&self, jobs: &[JobRef]) -> bool {
        match self.local_worker() {
            Some(w) => self.push_local(w, jobs),
            None => self.push_shared(jobs),
        }
    }

    /// [`LaneQueue::push_batch`] for a thread that serves this lane and waits for these jobs
    /// right away (a graph run's roots, pushed by the owner or a worker of this lane, which
    /// then helps until the run's latch completes): it will take one of them itself, so one
    /// sleeper fewer is woken. A one-node frame on the owner's lane wakes nobody. Never for a
    /// push whose pusher may go on to other work: the job kept back would wait for it.
    pub(crate) fn push_batch_keeping_one(&self, jobs: &[JobRef]) -> bool {
        let wake = jobs.len().saturating_sub(1);
        match self.local_worker() {
            Some(w) => self.push_local_waking(w, jobs, wake),
            None => self.push_shared_waking(jobs, wake),
        }
    }

    /// [`LaneQueue::push_batch`] for one job.
    #[inline]
    pub(crate) fn push(&self, job: JobRef) -> bool {
        self.push_batch(std::slice::from_ref(&job))
    }

    /// Queues jobs readied by `who`, a thread serving this lane (to its deque if it is a worker).
    #[inline]
    pub(crate) fn push_from(&self, who: WorkerInfo, jobs: &[JobRef]) -> bool {
        match Searcher::of(who) {
            Searcher::Worker(w) => self.push_local(w, jobs),
            Searcher::Helper => self.push_shared(jobs),
        }
    }

    /// The newest job of the calling worker's own deque (`None` for a helper, or when empty):
    /// a graph node that finished its inline chain continues with it when it is a node of the
    /// same run, without returning to the worker loop.
    #[inline]
    pub(crate) fn pop_own(&self, who: WorkerInfo) -> Option<JobRef> {
        match Searcher::of(who) {
            // SAFETY: `who` is the calling thread's own identity (the runtime hands every job
            // the `WorkerInfo` of the thread running it), so ring `w` is this thread's own.
            Searcher::Worker(w) => unsafe { self.deques[w as usize].pop() },
            Searcher::Helper => None,
        }
    }

    /// Step 1: appends to the injector and wakes as many sleepers as there are jobs.
    pub(crate) fn push_shared(&self, jobs: &[JobRef]) -> bool {
        self.push_shared_waking(jobs, jobs.len())
    }

    /// Step 1, waking at most `wake` sleepers (`jobs.len()` but for a pusher that takes one of
    /// the jobs itself).
    fn push_shared_waking(&self, jobs: &[JobRef], wake: usize) -> bool {
        if jobs.is_empty() {
            return false;
        }
        if self.resting.load(Ordering::Relaxed) {
            self.resting.store(false, Ordering::Relaxed);
        }
        let mut s = lock(&self.state);
        if s.shutdown && s.exited == self.deques.len() {
            // Every worker has drained and left (the `Lanes` is dropped, or being dropped and
            // this lane is done): nobody would take the jobs, so they run here, on the pushing
            // thread (a worker of another lane still draining, or any thread holding a
            // repeatable job). Drop drains: nothing pushed is lost or leaked.
            drop(s);
            let who = WorkerInfo {
                lane: self.lane,
                worker: WorkerInfo::HELPER,
                thread: job::thread_index(),
            };
            for &j in jobs {
                // SAFETY: each job is run exactly once, here, instead of being queued; its
                // pusher keeps its data alive until its latch completes (see `JobRef`), which
                // running it does.
                unsafe { j.run(who) };
            }
            return false;
        }
        s.jobs.extend(jobs.iter().copied());
        self.len_hint.store(s.jobs.len(), Ordering::Release);
        self.notify_up_to(&mut s, wake)
    }

    /// Notifies up to `n` sleepers not yet notified (under the lock): parked workers first,
    /// idle ones before those waiting on a latch (a latch-waiter may leave for its latch before
    /// it takes the job; an idle worker is there for the job), the most recently parked first
    /// within each kind, then helpers. Returns whether there were sleepers.
    fn notify_up_to(&self, s: &mut QueueState, n: usize) -> bool {
        let had = s.sleepers() > 0;
        let mut left = n;
        while left > 0 {
            let QueueState {
                parked,
                helping,
                notified,
                ..
            } = &mut *s;
            let at = parked
                .iter()
                .rposition(|&w| !helping[w as usize])
                .or(parked.len().checked_sub(1));
            let Some(at) = at else { break };
            let w = parked.remove(at);
            debug_assert!(
                !notified[w as usize],
                "worker {w} was notified again while still waking: a notified worker left on \
                 the parked list takes a later push's wake-up from a sleeper"
            );
            notified[w as usize] = true;
            self.parkers[w as usize].notify_one();
            left -= 1;
        }
        let unnotified = (s.helpers - s.helpers_notified) as usize;
        if left > 0 && unnotified > 0 {
            if left >= unnotified {
                self.helper_wake.notify_all();
                s.helpers_notified = s.helpers;
            } else {
                for _ in 0..left {
                    self.helper_wake.notify_one();
                }
                s.helpers_notified += left as u32;
            }
        }
        had
    }

    /// Step 2: worker `w` (the calling thread) pushes to its own deque; what does not fit goes
    /// to the injector.
    fn push_local(&self, w: u16, jobs: &[JobRef]) -> bool {
        self.push_local_waking(w, jobs, jobs.len())
    }

    /// Step 2, waking at most `wake` sleepers (see [`LaneQueue::push_batch_keeping_one`]).
    fn push_local_waking(&self, w: u16, jobs: &[JobRef], wake: usize) -> bool {
        let deque = &self.deques[w as usize];
        for (i, &job) in jobs.iter().enumerate() {
            // SAFETY: `w` is the calling thread's own worker index (from its role, or from the
            // `WorkerInfo` the runtime handed to the job it is running), so only this thread
            // pushes to or pops from ring `w`.
            if unsafe { deque.push(job) }.is_err() {
                // Full: the rest goes to the injector, which wakes sleepers itself.
                let rest = jobs.len() - i;
                let woke = self.push_shared_waking(&jobs[i..], wake.min(rest));
                return self.wake_for_local(wake.saturating_sub(rest).min(i)) || woke;
            }
        }
        self.wake_for_local(wake)
    }

    /// Step 2's second half: `n` jobs were just pushed to a deque.
    #[inline]
    fn wake_for_local(&self, n: usize) -> bool {
        if n == 0 {
            return false;
        }
        fence(Ordering::SeqCst);
        if self.sleepers_hint.load(Ordering::Relaxed) == 0 {
            return false;
        }
        let mut s = lock(&self.state);
        self.notify_up_to(&mut s, n)
    }

    /// Takes one job for `me` without waiting: own deque, injector, siblings (module docs).
    #[inline]
    pub(crate) fn find(&self, me: Searcher) -> Option<JobRef> {
        if let Searcher::Worker(w) = me {
            let left = &self.batch_left[w as usize];
            // SAFETY: `me` names the calling thread's own worker index (as in `push_local`).
            if let Some(job) = unsafe { self.deques[w as usize].pop() } {
                let n = left.load(Ordering::Relaxed);
                left.store(n.saturating_sub(1), Ordering::Relaxed);
                return Some(job);
            }
            left.store(0, Ordering::Relaxed);
        }
        self.take_injected(me).or_else(|| self.steal(me))
    }

    /// A worker's search without waiting, with the injector-first tick.
    #[inline]
    pub(crate) fn find_now(&self, ws: &mut WorkerSearch) -> Option<JobRef> {
        ws.ticks = ws.ticks.wrapping_add(1);
        if ws.ticks % INJECTOR_FIRST_EVERY == 0
            && self.batch_left[ws.me as usize].load(Ordering::Relaxed) == 0
        {
            if let Some(job) = self.take_injected(Searcher::Worker(ws.me)) {
                return Some(job);
            }
        }
        self.find(Searcher::Worker(ws.me))
    }

    /// Takes from the injector: one job for a helper; a worker takes its fair share, runs the
    /// first and moves the rest to its deque (still stealable).
    fn take_injected(&self, me: Searcher) -> Option<JobRef> {
        if self.len_hint.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut s = lock(&self.state);
        self.take_locked(&mut s, me)
    }

    /// [`LaneQueue::take_injected`] with the lock held. The moved jobs need no wake-up of their
    /// own: the push that put them in the injector already notified sleepers for them, and a
    /// thread that parks later checks the deques (step 4) after taking this lock.
    fn take_locked(&self, s: &mut QueueState, me: Searcher) -> Option<JobRef> {
        let len = s.jobs.len();
        let first = s.jobs.pop_front()?;
        if let Searcher::Worker(w) = me {
            let k = (len / (self.deques.len() + 1)).clamp(1, INJECTOR_BATCH);
            let deque = &self.deques[w as usize];
            // SAFETY: as in `push_local`: ring `w` is the calling thread's own.
            let free = unsafe { deque.free_for_owner() };
            let moved = (k - 1).min(free).min(s.jobs.len());
            // Pushed newest first, so the oldest sits at the bottom and the owner, popping from
            // the bottom, runs the batch in the order it was queued (the injector is FIFO, and
            // so is one worker's run of it). All `moved` pushes succeed: `free` slots were
            // free and thieves only free more.
            for &job in s.jobs.iter().take(moved).rev() {
                // SAFETY: as in `push_local`: ring `w` is the calling thread's own.
                let pushed = unsafe { deque.push(job) };
                debug_assert!(pushed.is_ok(), "a ring with free slots refused a push");
            }
            s.jobs.drain(..moved);
            self.batch_left[w as usize].store(moved, Ordering::Relaxed);
        }
        self.len_hint.store(s.jobs.len(), Ordering::Release);
        Some(first)
    }

    /// Steals the oldest job of another thread's deque.
    fn steal(&self, me: Searcher) -> Option<JobRef> {
        let n = self.deques.len();
        let start = match me {
            Searcher::Worker(w) => w as usize + 1,
            Searcher::Helper => 0,
        };
        for k in 0..n {
            let i = (start + k) % n;
            if me == Searcher::Worker(i as u16) {
                continue;
            }
            loop {
                match self.deques[i].steal() {
                    Steal::Taken(job) => return Some(job),
                    Steal::Empty => break,
                    Steal::Retry => spin_step(),
                }
            }
        }
        None
    }

    /// Whether any deque (other than `me`'s own, known empty) or the injector may hold work.
    #[inline]
    fn work_visible(&self, me: Searcher) -> bool {
        self.len_hint.load(Ordering::Acquire) > 0
            || self
                .deques
                .iter()
                .enumerate()
                .any(|(i, d)| me != Searcher::Worker(i as u16) && !d.is_empty())
    }

    /// Steps 3 to 5 for a worker whose search ([`LaneQueue::find_now`]) just came up empty:
    /// the next job, waiting as long as it takes. `None` once shut down and drained. The job
    /// that ends this idle gap is an arrival (a ticked lane times its parks by it).
    pub(crate) fn next_for_worker(&self, ws: &mut WorkerSearch) -> Option<JobRef> {
        ws.gap_rests = self.rests.load(Ordering::Relaxed);
        let job = self.wait_for_worker(ws)?;
        let frame_start = self.rests.load(Ordering::Relaxed) != ws.gap_rests;
        let tick = self.tick_ns.load(Ordering::Relaxed);
        if frame_start || tick > 0 {
            // One clock read per arrival that teaches anything (a frame's first job, or any
            // job ending an idle gap on a ticked lane).
            let now = clock::now();
            if frame_start {
                ws.frame.arrived(now);
            }
            if tick > 0 {
                ws.tick.arrived_every(now, tick);
            }
        }
        Some(job)
    }

    /// Step 3a, for a ticked lane whose spin found nothing (so a frame's next job, which the
    /// spin catches, never waits for a timer): parks with a timer until `lead` before the next
    /// expected tick (as a sleeper: a push before then wakes it as usual), then spins for at
    /// most twice the lead (not a sleeper: the tick's push needs no futex wake). The lead is
    /// twice the learned arrival jitter, within bounds. `None`: not ticked, the tick is too
    /// near, or nothing came in the window (the caller then waits the usual way).
    fn tick_wait(&self, ws: &mut WorkerSearch) -> Option<JobRef> {
        let tick = self.tick_ns.load(Ordering::Relaxed);
        if tick == 0 {
            return None;
        }
        let (arrived, jitter) = (ws.tick.last_start?, ws.tick.jitter_ns);
        self.lead_wait(ws, tick, arrived, jitter)
    }

    /// Step 3b, for a worker whose spin found nothing on a lane with the frame lead on
    /// ([`crate::Lanes::set_frame_lead`]): as step 3a, with the frame period and jitter it
    /// learned from the frames' first jobs ([`Arrivals`]).
    fn frame_wait(&self, ws: &mut WorkerSearch) -> Option<JobRef> {
        if !self.frame_lead.load(Ordering::Relaxed) {
            return None;
        }
        let (period, started, jitter) = ws.frame.next()?;
        self.lead_wait(ws, period, started, jitter)
    }

    /// Steps 3a and 3b: work arrives every `period` ns from `arrived`, `jitter` ns off on
    /// average. Parks (as a sleeper) until a lead of twice the jitter (within bounds) before
    /// the next expected arrival, then spins (as a spinner: the arrival's push needs no futex
    /// wake, and a rest does not cut it short) for at most twice the lead.
    fn lead_wait(
        &self,
        ws: &mut WorkerSearch,
        period: u64,
        arrived: clock::Stamp,
        jitter: u64,
    ) -> Option<JobRef> {
        let me = Searcher::Worker(ws.me);
        let since = clock::now().ns_since(arrived);
        let lead = jitter
            .saturating_mul(2)
            .clamp(TICK_LEAD_MIN_NS, TICK_LEAD_MAX_NS);
        let next_tick = (since.saturating_add(lead) / period)
            .saturating_add(1)
            .saturating_mul(period);
        let park_ns = next_tick.saturating_sub(since.saturating_add(lead));
        if park_ns < MIN_TIMED_PARK_NS {
            return None;
        }
        let mut s = lock(&self.state);
        if let Some(job) = self.take_locked(&mut s, me) {
            return Some(job);
        }
        let (s, outcome) = self.park(s, me, false, || false, Some(park_ns));
        drop(s);
        if outcome != Park::TimedOut {
            // Woken by a push (or spuriously), work visible, or shut down: the usual path.
            return None;
        }
        if !self.spin_for_work_through_rest(me, clock::now(), 2 * lead) {
            return None;
        }
        self.find_now(ws)
    }

    /// Steps 3 to 5 for a worker that has just searched in vain: spin for the learned budget,
    /// then park; search again only when there may be work.
    fn wait_for_worker(&self, ws: &mut WorkerSearch) -> Option<JobRef> {
        let me = Searcher::Worker(ws.me);
        loop {
            // One clock read starts both the spin and the idle gap a parked worker learns from;
            // a lane that may not spin reads no clock at all.
            let idle_since = if ws.spin.max() > 0 && !self.resting.load(Ordering::Relaxed) {
                let start = clock::now();
                if self.spin_for_work(me, start, ws.spin.cur()) {
                    ws.spin.success();
                    if let Some(job) = self.find_now(ws) {
                        return Some(job);
                    }
                    continue;
                }
                Some(start)
            } else {
                None
            };
            // The spin found nothing (or the lane rests between frames): a ticked lane parks
            // until just before its next tick (step 3a), not mid-frame, where the spin catches
            // the next job; with the frame lead on, a lane wakes a learned lead before the next
            // frame's expected start (step 3b). A push before then wakes it as usual.
            if ws.spin.max() > 0 {
                let timed = if self.tick_ns.load(Ordering::Relaxed) > 0 {
                    self.tick_wait(ws)
                } else {
                    self.frame_wait(ws)
                };
                if let Some(job) = timed {
                    return Some(job);
                }
            }
            let mut s = lock(&self.state);
            loop {
                if let Some(job) = self.take_locked(&mut s, me) {
                    if let Some(start) = idle_since {
                        ws.spin.parked(clock::now().ns_since(start));
                    }
                    return Some(job);
                }
                let (g, outcome) = self.park(s, me, false, || false, None);
                s = g;
                match outcome {
                    Park::WorkVisible => break,
                    Park::Woken | Park::TimedOut => {}
                    Park::ShutDown => {
                        // Under the lock, with the injector empty: this worker takes nothing
                        // more. A push after the last worker leaves runs on its own thread.
                        s.exited += 1;
                        return None;
                    }
                }
            }
            drop(s);
            if let Some(start) = idle_since {
                ws.spin.parked(clock::now().ns_since(start));
            }
            if let Some(job) = self.find_now(ws) {
                return Some(job);
            }
        }
    }

    /// Step 4 and 5 (with the lock held and the injector empty): join the sleepers, fence,
    /// check the deques and `done`, and wait on this thread's parker (at most `timeout_ns`, if
    /// given) unless there is something to do. `helping`: the caller waits on a latch (its
    /// completion must wake it).
    fn park<'a>(
        &self,
        mut s: MutexGuard<'a, QueueState>,
        me: Searcher,
        helping: bool,
        done: impl Fn() -> bool,
        timeout_ns: Option<u64>,
    ) -> (MutexGuard<'a, QueueState>, Park) {
        match me {
            Searcher::Worker(w) => {
                s.parked.push(w);
                s.notified[w as usize] = false;
                s.waiting[w as usize] = true;
                s.helping[w as usize] = helping;
                s.waiting_workers += 1;
            }
            Searcher::Helper => s.helpers += 1,
        }
        self.sleepers_hint.store(s.sleepers(), Ordering::Relaxed);
        fence(Ordering::SeqCst);
        let cv = match me {
            Searcher::Worker(w) => &self.parkers[w as usize],
            Searcher::Helper => &self.helper_wake,
        };
        let outcome = if done() || self.work_visible(me) {
            Park::WorkVisible
        } else if s.shutdown {
            Park::ShutDown
        } else if let Some(ns) = timeout_ns {
            let (g, timed_out) = wait_timeout(cv, s, Duration::from_nanos(ns));
            s = g;
            if timed_out {
                Park::TimedOut
            } else {
                Park::Woken
            }
        } else {
            s = wait(cv, s);
            Park::Woken
        };
        match me {
            Searcher::Worker(w) => {
                if matches!(outcome, Park::Woken | Park::TimedOut) {
                    self.wakeups.fetch_add(1, Ordering::Relaxed);
                }
                if outcome == Park::TimedOut {
                    self.timer_wakeups.fetch_add(1, Ordering::Relaxed);
                }
                s.waiting[w as usize] = false;
                s.helping[w as usize] = false;
                s.waiting_workers -= 1;
                // Still listed: nobody notified it (it did not wait, timed out, or woke
                // spuriously). A notifier removed it when it notified.
                if let Some(at) = s.parked.iter().rposition(|&x| x == w) {
                    s.parked.remove(at);
                }
            }
            Searcher::Helper => {
                s.helpers -= 1;
                let taken = match outcome {
                    Park::Woken | Park::TimedOut => 1,
                    Park::WorkVisible | Park::ShutDown => 0,
                };
                s.helpers_notified = s.helpers_notified.saturating_sub(taken).min(s.helpers);
            }
        }
        self.sleepers_hint.store(s.sleepers(), Ordering::Relaxed);
        (s, outcome)
    }

    /// Step 3: spins until there may be work, for at most `spin_ns` from `start`, or until the
    /// lane rests.
    fn spin_for_work(&self, me: Searcher, start: clock::Stamp, spin_ns: u64) -> bool {
        self.spin_while(me, start, spin_ns, true)
    }

    /// Steps 3a and 3b's spin through the expected arrival: a rest does not end it (the lane
    /// rests until that very push).
    fn spin_for_work_through_rest(&self, me: Searcher, start: clock::Stamp, spin_ns: u64) -> bool {
        self.spin_while(me, start, spin_ns, false)
    }

    fn spin_while(
        &self,
        me: Searcher,
        start: clock::Stamp,
        spin_ns: u64,
        stop_at_rest: bool,
    ) -> bool {
        let mut i = 0u32;
        loop {
            if self.work_visible(me) {
                return true;
            }
            spin_step();
            i = i.wrapping_add(1);
            // Read the clock every 64 spins: a clock read costs more than a pause.
            if i % 64 == 0
                && (self.spin_expired(start, spin_ns)
                    || (stop_at_rest && self.resting.load(Ordering::Relaxed)))
            {
                return false;
            }
        }
    }

    /// Between frames (`Lanes::rest`): idle workers stop spinning and park until the next push.
    pub(crate) fn rest(&self) {
        self.rests.fetch_add(1, Ordering::Relaxed);
        self.resting.store(true, Ordering::Relaxed);
    }

    /// Step 6's waiter: runs this lane's jobs on the calling thread until `latch` is done.
    /// `latch` must have been made with this queue as its helper queue.
    pub(crate) fn help_until(&self, latch: &Latch<'_>, who: WorkerInfo, spin_ns: u64) {
        let me = Searcher::of(who);
        loop {
            if latch.probe() {
                break;
            }
            if let Some(job) = self.find(me) {
                // SAFETY: taken once from the queue it was pushed to; its pusher keeps the data
                // alive until its latch completes (see `JobRef`).
                unsafe { job.run(who) };
                continue;
            }
            if spin_ns > 0 && self.spin_until(latch, me, spin_ns) {
                continue;
            }
            let s = lock(&self.state);
            if latch.probe() {
                break;
            }
            let mut s = s;
            if let Some(job) = self.take_locked(&mut s, me) {
                drop(s);
                // SAFETY: as above.
                unsafe { job.run(who) };
                continue;
            }
            // Shut down cannot happen while a helper waits (lanes outlive their waiters).
            let _ = self.park(s, me, true, || latch.probe(), None);
        }
        // A push may have notified this thread while it waited (it was the sleeper the push
        // chose) and the latch completed before it ran: it leaves without the job, so the
        // wake-up is passed on, or the job would sit in the injector while a sibling sleeps.
        // Work visible to others is the only case that needs it.
        if self.work_visible(me) {
            let mut s = lock(&self.state);
            self.notify_up_to(&mut s, 1);
        }
        latch.wait_confirmed();
    }

    /// Spins until there may be work or the latch is done, for at most `spin_ns`.
    fn spin_until(&self, latch: &Latch<'_>, me: Searcher, spin_ns: u64) -> bool {
        let start = clock::now();
        let mut i = 0u32;
        loop {
            if latch.probe() || self.work_visible(me) {
                return true;
            }
            spin_step();
            i = i.wrapping_add(1);
            if i % 64 == 0 && self.spin_expired(start, spin_ns) {
                return false;
            }
        }
    }

    /// Wakes every thread waiting on a latch in step 4 (a helper's latch completed): helpers
    /// and workers that parked in `help_until`; idle workers sleep on. Takes the lock so the
    /// notification cannot fall between a helper's check and its wait (step 6).
    pub(crate) fn notify_all(&self) {
        let mut s = lock(&self.state);
        self.helper_wake.notify_all();
        s.helpers_notified = s.helpers;
        let QueueState {
            parked,
            waiting,
            helping,
            notified,
            ..
        } = &mut *s;
        for (w, cv) in self.parkers.iter().enumerate() {
            if waiting[w] && helping[w] {
                notified[w] = true;
                cv.notify_one();
            }
        }
        parked.retain(|&w| !helping[w as usize]);
    }

    /// Step 7.
    pub(crate) fn shutdown(&self) {
        let mut s = lock(&self.state);
        s.shutdown = true;
        self.helper_wake.notify_all();
        s.helpers_notified = s.helpers;
        for cv in self.parkers.iter() {
            cv.notify_one();
        }
        s.notified.iter_mut().for_each(|n| *n = true);
        s.parked.clear();
    }

    /// Jobs queued now, in the injector and every deque (a racy snapshot, for reports).
    pub(crate) fn len(&self) -> usize {
        self.len_hint.load(Ordering::Relaxed) + self.deques.iter().map(Deque::len).sum::<usize>()
    }
}

/// How a park ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Park {
    /// Did not wait: a deque or the injector has work, or the helper's latch is done.
    WorkVisible,
    /// Waited and was woken (a push, a latch, shutdown, or spuriously).
    Woken,
    /// Waited until the timer (a ticked lane's timed park).
    TimedOut,
    /// Did not wait: shut down and nothing left.
    ShutDown,
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
    fn the_frame_period_is_learned_from_frame_starts_and_a_pause_is_not() {
        let mut f = Arrivals::default();
        let ms = 1_000_000u64;
        // Stamps are clock ticks: make them from nanoseconds.
        clock::init();
        let stamp = |ns: u64| clock::Stamp((ns as f64 / clock::ns_per_tick()) as u64);
        assert!(
            f.next().is_none(),
            "nothing learned before two frame starts"
        );
        let mut t = 1_000 * ms;
        f.arrived(stamp(t));
        assert!(f.next().is_none());
        for _ in 0..20 {
            t += 16 * ms + 200_000;
            f.arrived(stamp(t));
        }
        let (period, started, jitter) = f.next().unwrap();
        assert!(period.abs_diff(16_200_000) < 100_000, "period {period}");
        assert_eq!(started, stamp(t));
        assert!(jitter < TICK_LEAD_MAX_NS, "jitter {jitter}");
        // A pause of a second is not averaged in.
        t += 1_000 * ms;
        f.arrived(stamp(t));
        assert!(f.next().unwrap().0.abs_diff(16_200_000) < 100_000);
        // One skipped frame is rejected; four gaps of a new period in a row adopt it.
        t += 33 * ms;
        f.arrived(stamp(t));
        assert!(f.next().unwrap().0.abs_diff(16_200_000) < 100_000);
        for _ in 0..4 {
            t += 33 * ms;
            f.arrived(stamp(t));
        }
        assert!(f.next().unwrap().0.abs_diff(33 * ms) < 1_000_000);
    }

    #[test]
    fn a_zero_budget_never_spins() {
        let mut b = SpinBudget::new(0);
        b.parked(10);
        b.success();
        assert_eq!(b.cur, 0);
    }

    #[test]
    fn a_push_wakes_the_most_recently_parked_workers_once_each() {
        // No real sleepers here: set the state as three parked workers would (parked in the
        // order 0, 1, 2), and check whom each push notifies.
        let q = LaneQueue::new(0, LaneId(0), 3, false);
        {
            let mut s = lock(&q.state);
            for w in 0..3u16 {
                s.parked.push(w);
                s.waiting[w as usize] = true;
            }
            s.waiting_workers = 3;
        }
        let job = JobRef {
            data: std::ptr::null(),
            arg: 0,
            exec: |_, _, _| {},
        };
        // One job: the most recently parked worker (2) is notified, the others sleep on.
        assert!(q.push(job));
        assert_eq!(lock(&q.state).parked, vec![0, 1]);
        // Two more: workers 1 and 0; a fourth push finds nobody left to notify.
        assert!(q.push_batch(&[job, job]));
        assert!(lock(&q.state).parked.is_empty());
        assert!(q.push(job), "sleepers still counted until they wake");
        // A helper: notified once, its credit kept until it wakes.
        {
            let mut s = lock(&q.state);
            s.helpers = 1;
        }
        assert!(q.push(job));
        assert_eq!(lock(&q.state).helpers_notified, 1);
        assert!(q.push(job));
        assert_eq!(lock(&q.state).helpers_notified, 1, "no second notification");
        lock(&q.state).jobs.clear();
    }
}
