//! The lane runtime: one set of pinned worker threads per lane, each serving its lane's queue.
//!
//! Owns: starting, pinning and stopping workers; the per-lane queues; waiting on a latch with
//! the right helping rule; detached (fire-and-forget) jobs; per-lane busy statistics.
//! Must never: let a worker run another lane's jobs, spin on a core it shares, or outlive the
//! `Lanes` value (drop joins every worker).
//!
//! # Helping rule
//! A thread that waits for work it published (a graph run, a scope, a parallel-for) helps only
//! with its *own* lane's queue: a lane worker with its lane, the registered owner thread
//! ([`Lanes::register_owner`]) with the plan's owner lane if it has one. Any other thread spins
//! briefly and parks. So a physics worker never
//! picks up a long asset job while the frame waits on it.
//!
//! # Shutdown (drop)
//! 1. Every queue's shutdown flag is set under its lock and all its sleepers are woken.
//! 2. Workers finish what is queued (nothing published is lost; detached jobs run to the end)
//!    and exit when their queue is empty.
//! 3. Drop joins every worker. Graph runs and scopes borrow the `Lanes`, so none can be in flight.
//!
//! | file | idea |
//! |------|------|
//! | `pin` | Pinning a worker to its core, and the background lanes' lower priority |
//! | `start` | Starting the lanes: who may spin, the queues, and each worker's thread |

mod pin;
mod start;

pub use pin::{PinOutcome, BACKGROUND_NICE};

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::clock;
use crate::job::{self, JobRef, ThreadRole, WorkerInfo};
use crate::latch::Latch;
use crate::plan::{LaneId, LaneKind, LanePlan};
use crate::queue::{LaneQueue, SpinBudget, WorkerSearch};
use crate::sync::{lock, thread, Arc, AtomicU32, AtomicU64, Mutex, Ordering};

/// The longest an idle frame-critical worker spins before it parks, in ns. The budget adapts
/// below it (`queue::SpinBudget`): it learns gaps up to 50 µs (the nodes of one frame, a few µs
/// apart; fixed sub-steps with ~25-40 µs of owner work between them), so a busy frame never pays
/// a futex wake; a lane idle for longer drops to a 2 µs spin, 0.2 % of a core at a 1 kHz tick.
pub const WORKER_SPIN_NS: u64 = 50_000;

/// The longest a thread waiting on a latch (without helping) spins before it parks, in ns. Each
/// thread's budget adapts below it like a worker's (`queue::SpinBudget`): a round trip of ~1 µs
/// keeps it short, fork-joins that finish within 50 µs are spun through instead of paid for
/// with a futex wake of the waiter, and longer ones drop it to 2 µs, so a long wait burns little.
pub const WAIT_SPIN_NS: u64 = 50_000;

/// How long a thread helping its own lane spins between jobs before it parks, in ns (fixed: a
/// 50 µs helper spin measured no better, `docs/benchmarks.md`).
pub const HELP_SPIN_NS: u64 = 20_000;

thread_local! {
    /// This thread's learned latch-wait spin (see [`WAIT_SPIN_NS`]); `None` until its first wait.
    static WAIT_BUDGET: std::cell::Cell<Option<SpinBudget>> = const { std::cell::Cell::new(None) };
}

/// Waits for `latch` without helping, spinning for this thread's learned budget (at most
/// `max_ns`; 0: park at once) and updating the budget from how the wait went.
fn wait_learning(latch: &Latch<'_>, max_ns: u64) {
    // Already done (or no spin allowed): nothing to learn from this wait.
    if max_ns == 0 || latch.probe() {
        latch.wait_confirmed();
        return;
    }
    let mut budget = WAIT_BUDGET
        .with(std::cell::Cell::get)
        .filter(|b| b.max() == max_ns)
        .unwrap_or_else(|| SpinBudget::new(max_ns));
    let start = crate::clock::now();
    if latch.wait(start, budget.cur()) {
        budget.success();
    } else {
        budget.parked(crate::clock::now().ns_since(start));
    }
    WAIT_BUDGET.with(|c| c.set(Some(budget)));
}

/// Statistics of one lane (monotonic counters since start).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LaneStats {
    /// Nanoseconds its workers spent running jobs.
    pub busy_ns: u64,
    /// Jobs its workers took from a queue (the graph nodes one job runs itself, inline
    /// successors and the next nodes of its own run, count once, with that job).
    pub jobs: u64,
    /// Jobs queued right now, in the lane's shared queue and its workers' deques (a snapshot).
    pub queued: usize,
    /// Detached jobs that panicked.
    pub detached_panics: u64,
    /// Times a worker of the lane woke from a park (each one a futex wake-up and a context
    /// switch: the idle cost of a lane). A one-node frame on the owner's lane run by the owner
    /// wakes none.
    pub wakeups: u64,
    /// Of `wakeups`, the timed parks that ran out (a ticked lane's, [`Lanes::set_tick`], or a
    /// frame lead's, [`Lanes::set_frame_lead`]): the worker woke itself before the work came.
    pub timer_wakeups: u64,
}

#[derive(Debug, Default)]
struct LaneCounters {
    /// Writers: this lane's workers (relaxed add). Readers: `stats` (relaxed): counters only.
    busy_ns: AtomicU64,
    jobs: AtomicU64,
    detached_panics: AtomicU64,
}

/// State shared between the `Lanes` handle and its workers.
pub(crate) struct Shared {
    /// Process-unique identity of this runtime (never an address: a dropped runtime's address
    /// can be reused by the next one, and graphs and thread roles must not mistake them).
    pub(crate) id: usize,
    pub(crate) queues: Box<[LaneQueue]>,
    /// Per lane: how long its idle workers spin (0 where the lane shares a core, or background).
    spin_ns: Box<[u64]>,
    counters: Box<[LaneCounters]>,
    pub(crate) plan: LanePlan,
    /// `job::thread_index()` of the thread registered with [`Lanes::register_owner`], or
    /// [`NO_OWNER`]. Relaxed: each thread compares it with its own index, so only the
    /// registering thread's own write matters to the answer it gets.
    owner_thread: AtomicU32,
    /// How long a non-helping waiter spins.
    wait_spin_ns: u64,
    pin_outcomes: Mutex<Vec<PinOutcome>>,
    /// Messages of detached-job panics, bounded (the counter counts them all).
    detached_panic_log: Mutex<Vec<String>>,
}

/// `Shared::owner_thread` when no thread is registered as the owner.
const NO_OWNER: u32 = u32::MAX;

/// Source of `Shared::id` (relaxed: only uniqueness matters).
static NEXT_LANES_ID: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);

/// How many detached-job panic messages are kept for [`Lanes::take_detached_panics`].
const DETACHED_PANIC_LOG_CAP: usize = 64;

/// The running lanes of a [`LanePlan`]. Dropping it stops and joins every worker.
pub struct Lanes {
    shared: Arc<Shared>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl fmt::Debug for Lanes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lanes")
            .field("plan", &self.shared.plan)
            .finish()
    }
}

/// Options for starting lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneOptions {
    /// Pin workers to the plan's cores (default true).
    pub pin: bool,
    /// Allow frame-critical workers to spin before parking (default true; never where a lane
    /// shares its core).
    pub spin: bool,
}

impl Default for LaneOptions {
    fn default() -> Self {
        LaneOptions {
            pin: true,
            spin: true,
        }
    }
}

/// Lanes could not be started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The OS refused to create a worker thread.
    #[error("could not start worker {worker} of lane `{lane}`: {source}; fix: lower the worker count in the lane plan or raise the process's thread limit")]
    Spawn {
        /// The lane.
        lane: String,
        /// The worker index.
        worker: usize,
        /// The OS error.
        source: std::io::Error,
    },
}

/// The longest tick [`Lanes::set_tick`] keeps (a minute): longer periods are clamped to it.
pub const MAX_TICK: std::time::Duration = std::time::Duration::from_secs(60);

impl Lanes {
    /// Makes the calling thread these lanes' owner thread: while it waits for a graph, scope
    /// or parallel-for it started, it runs jobs of the plan's owner lane
    /// ([`LanePlan::with_owner_lane`]), if the plan has one. One owner at a time: a call from
    /// another thread moves the role. Every other thread that is not one of these lanes'
    /// workers waits without helping, so an IO, rayon or user thread that starts work never
    /// runs frame-critical jobs. The engine registers the thread that builds it and, each
    /// frame, the thread that runs the frame.
    pub fn register_owner(&self) {
        self.shared
            .owner_thread
            .store(job::thread_index(), Ordering::Relaxed);
    }

    /// Whether the calling thread is the registered owner thread.
    pub fn is_owner_thread(&self) -> bool {
        self.shared.owner_thread.load(Ordering::Relaxed) == job::thread_index()
    }

    /// The plan these lanes run.
    pub fn plan(&self) -> &LanePlan {
        &self.shared.plan
    }

    /// The lane called `name`.
    pub fn lane(&self, name: &str) -> Option<LaneId> {
        self.shared.plan.lane_id(name)
    }

    /// How pinning went for every worker that has started so far.
    pub fn pin_outcomes(&self) -> Vec<PinOutcome> {
        lock(&self.shared.pin_outcomes).clone()
    }

    /// Counters of one lane.
    pub fn stats(&self, lane: LaneId) -> Option<LaneStats> {
        let c = self.shared.counters.get(lane.index())?;
        let (wakeups, timer_wakeups) = self.shared.queues[lane.index()].wakeups();
        Some(LaneStats {
            busy_ns: c.busy_ns.load(Ordering::Relaxed),
            jobs: c.jobs.load(Ordering::Relaxed),
            queued: self.shared.queues[lane.index()].len(),
            detached_panics: c.detached_panics.load(Ordering::Relaxed),
            wakeups,
            timer_wakeups,
        })
    }

    /// Runs `f` on `lane` without waiting for it (background work such as asset decoding).
    /// Boxes the closure (one allocation per job: fine for background throughput work, not for
    /// per-frame fork-join, which uses graphs, scopes and the parallel helpers). A panic in `f`
    /// is caught, counted in [`LaneStats::detached_panics`] and kept for
    /// [`Lanes::take_detached_panics`]; the lane lives on. Queued jobs run even if the lanes are
    /// dropped first (drop drains).
    pub fn spawn_detached(
        &self,
        lane: LaneId,
        f: impl FnOnce() + Send + 'static,
    ) -> Result<(), crate::error::UnknownLane> {
        let q = self.queue(lane)?;
        let job: Box<Detached> = Box::new(Detached {
            f: Box::new(f),
            shared: Arc::clone(&self.shared),
        });
        // Always the injector: background work queues behind what is waiting (FIFO), even when
        // spawned from one of the lane's own workers.
        q.push_shared(&[JobRef {
            data: Box::into_raw(job) as *const (),
            arg: 0,
            exec: exec_detached,
        }]);
        Ok(())
    }

    /// A detached job built once and spawned any number of times without allocating
    /// ([`Lanes::spawn_repeatable`]): for work a frame hands off again and again, such as the
    /// render lane's drain job. Each spawn runs `f` once on `lane`, with the panic handling of
    /// [`Lanes::spawn_detached`]; spawns may overlap (`f` is `Fn + Sync`).
    pub fn repeatable(
        &self,
        lane: LaneId,
        f: impl Fn() + Send + Sync + 'static,
    ) -> Result<RepeatableJob, crate::error::UnknownLane> {
        if lane.index() >= self.shared.queues.len() {
            return Err(crate::error::UnknownLane(lane.index()));
        }
        Ok(RepeatableJob {
            inner: std::sync::Arc::new(Repeatable {
                f: Box::new(f),
                shared: Arc::clone(&self.shared),
                lane,
            }),
        })
    }

    /// Spawns `job` once more (one reference count taken, no allocation). Refused with
    /// [`crate::error::UnknownLane`] for a job made by another `Lanes`.
    pub fn spawn_repeatable(&self, job: &RepeatableJob) -> Result<(), crate::error::UnknownLane> {
        if job.inner.shared.id != self.shared.id {
            return Err(crate::error::UnknownLane(job.inner.lane.index()));
        }
        job.spawn();
        Ok(())
    }

    /// Tells the runtime that `lane`'s work arrives once per `period` (a frame, a fixed step).
    /// Its idle workers then park with a timer that ends a learned lead before the next
    /// expected arrival and spin through it, so the tick's first job starts without a futex
    /// wake-up: lower latency for the tick, paid for with a timer wake and a short spin per tick
    /// (`docs/benchmarks.md`, `tick_wake`). A push before the timer still wakes them at once.
    /// `None` turns it off (the default: spin briefly, then park until woken). Only lanes whose
    /// workers may spin use it (not one that shares its core, nor a background lane). A period
    /// longer than [`MAX_TICK`] is taken as `MAX_TICK`.
    pub fn set_tick(
        &self,
        lane: LaneId,
        period: Option<std::time::Duration>,
    ) -> Result<(), crate::error::UnknownLane> {
        let q = self.queue(lane)?;
        // A period past `MAX_TICK` (`Duration::MAX` included) is clamped to it: the timed
        // park's arithmetic stays far from overflow, and a tick that long gains nothing anyway.
        let ns = period.map_or(0, |p| {
            u64::try_from(p.min(MAX_TICK).as_nanos())
                .unwrap_or(u64::MAX)
                .max(1)
        });
        q.set_tick_ns(ns);
        Ok(())
    }

    /// Turns `lane`'s frame wake-up lead on or off (off by default). Its workers always learn
    /// the frame period from when each frame's first job arrives after a [`Lanes::rest`];
    /// with the lead on, a worker whose spin found nothing (between frames, or in a long gap
    /// within one) parks with a timer that ends a learned lead (twice the frame starts'
    /// jitter, 5 to 50 µs) before the next frame's expected start, then spins through it, so
    /// that frame's first job starts without a futex wake-up; a push before then wakes it as
    /// usual.
    /// Lower latency for the frame's first job, paid for with a timer wake-up and up to twice
    /// the lead of spinning per frame; off by default because on the development VM a futex
    /// wake of an idle core is as quick as the timer (`docs/benchmarks.md`, `frame_wake`).
    /// Only lanes whose workers may spin use it (as [`Lanes::set_tick`]).
    pub fn set_frame_lead(&self, lane: LaneId, on: bool) -> Result<(), crate::error::UnknownLane> {
        self.queue(lane)?.set_frame_lead(on);
        Ok(())
    }

    /// Tells every lane the frame's work is over (the owner is past its last join and about to
    /// wait for pacing or vsync): idle workers stop spinning and park at once, until the next
    /// push wakes them, so a frame of almost no lane work costs almost no CPU between frames.
    /// Work in flight is not touched; the next frame's first push wakes its lane as any push
    /// does. The engine calls it at the end of every frame.
    pub fn rest(&self) {
        for q in self.shared.queues.iter() {
            q.rest();
        }
    }

    /// The messages of detached jobs that panicked since the last call (at most 64 kept).
    pub fn take_detached_panics(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.shared.detached_panic_log))
    }

    /// The run queues of `lane`.
    fn queue(&self, lane: LaneId) -> Result<&LaneQueue, crate::error::UnknownLane> {
        self.shared
            .queues
            .get(lane.index())
            .ok_or(crate::error::UnknownLane(lane.index()))
    }

    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
    }

    /// Identity of this runtime (graphs remember which lanes they were built for).
    pub(crate) fn id(&self) -> usize {
        self.shared.id
    }
}

/// Pins the calling thread to `core` (best effort; returns whether the OS accepted). For an
/// owner thread or a bench thread that wants the core its plan expects it on.
pub fn pin_thread_to(core: usize) -> bool {
    pin::pin_current(core)
}

impl Drop for Lanes {
    fn drop(&mut self) {
        for q in self.shared.queues.iter() {
            q.shutdown();
        }
        // A thread cannot join itself. Dropped on one of its own workers (a job held the last
        // handle, e.g. an `Arc<Lanes>`), the workers are detached instead: each still drains its
        // queue and exits; nothing queued is lost, only the wait for the exit is skipped.
        if job::current_role().is_some_and(|r| r.lanes == self.shared.id) {
            self.threads.clear();
            return;
        }
        for t in self.threads.drain(..) {
            // A worker only panics on a broken internal invariant; surface it.
            if let Err(p) = t.join() {
                if !std::thread::panicking() {
                    std::panic::resume_unwind(p);
                }
            }
        }
    }
}

/// A job built once and spawned many times ([`Lanes::repeatable`]).
#[derive(Clone)]
pub struct RepeatableJob {
    inner: std::sync::Arc<Repeatable>,
}

impl RepeatableJob {
    /// Queues the job once more on its lane (one reference count taken, no allocation). For a
    /// job that hands the lane back and queues its own continuation behind what is waiting.
    /// Once the lane's workers have all drained and left (its `Lanes` dropped), the job runs on
    /// the calling thread instead: nothing spawned is lost or leaked.
    pub fn spawn(&self) {
        let raw = std::sync::Arc::into_raw(std::sync::Arc::clone(&self.inner));
        // The injector, never the spawning worker's deque: the continuation queues behind what
        // is waiting (a deque would run it next).
        self.inner.shared.queues[self.inner.lane.index()].push_shared(&[JobRef {
            data: raw as *const (),
            arg: 0,
            exec: exec_repeatable,
        }]);
    }
}

impl fmt::Debug for RepeatableJob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RepeatableJob")
            .field("lane", &self.inner.lane)
            .finish_non_exhaustive()
    }
}

struct Repeatable {
    f: Box<dyn Fn() + Send + Sync>,
    shared: Arc<Shared>,
    lane: LaneId,
}

/// # Safety
/// `data` is one reference of a `std::sync::Arc<Repeatable>` leaked by `spawn_repeatable`,
/// given back exactly once.
unsafe fn exec_repeatable(data: *const (), _arg: usize, who: WorkerInfo) {
    // SAFETY: (1) `data` came from `Arc::into_raw` of a clone in `spawn_repeatable`, so it owns
    // one strong count of a live `Repeatable`; (2) the queue hands each pushed job to exactly
    // one thread, so that count is given back exactly once, here; (3) `Repeatable` is `Sync`
    // (`f: Fn + Sync`), so other spawns running `f` at the same time share it soundly.
    let job = unsafe { std::sync::Arc::from_raw(data as *const Repeatable) };
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| (job.f)())) {
        note_detached_panic(&job.shared, who, p);
    }
}

/// Counts and logs a detached job's panic on its lane.
fn note_detached_panic(shared: &Shared, who: WorkerInfo, p: Box<dyn std::any::Any + Send>) {
    shared.counters[who.lane.index()]
        .detached_panics
        .fetch_add(1, Ordering::Relaxed);
    let message = crate::error::take_panic_message(p);
    let mut log = lock(&shared.detached_panic_log);
    if log.len() < DETACHED_PANIC_LOG_CAP {
        let lane = &shared.plan.lanes()[who.lane.index()].name;
        log.push(format!("lane `{lane}`: {message}"));
    }
}

struct Detached {
    f: Box<dyn FnOnce() + Send>,
    shared: Arc<Shared>,
}

/// # Safety
/// `data` is a `Box<Detached>` leaked by `spawn_detached`, run exactly once.
unsafe fn exec_detached(data: *const (), _arg: usize, who: WorkerInfo) {
    // SAFETY: (1) `data` came from `Box::into_raw` in `spawn_detached`; (2) the queue hands each
    // pushed job to exactly one thread, so the box is reclaimed exactly once.
    let job = unsafe { Box::from_raw(data as *mut Detached) };
    let Detached { f, shared } = *job;
    if let Err(p) = catch_unwind(AssertUnwindSafe(f)) {
        note_detached_panic(&shared, who, p);
    }
}

fn worker_main(
    shared: Arc<Shared>,
    lane: LaneId,
    worker: u16,
    core: Option<usize>,
    kind: LaneKind,
) {
    let spec = &shared.plan.lanes()[lane.index()];
    let pinned = core.map(pin::pin_current).unwrap_or(false);
    let lowered = (kind == LaneKind::Background).then(pin::lower_priority_current);
    if kind == LaneKind::FrameCritical {
        // Best effort: only a ticked lane's timed parks depend on it, and they stay correct
        // (only later) without it.
        let _tight: bool = pin::tighten_timer_slack_current();
    }
    {
        let mut outcomes = lock(&shared.pin_outcomes);
        let first_refusal = core.is_some() && !pinned && outcomes.iter().all(|o| o.pinned);
        outcomes.push(PinOutcome {
            lane: spec.name.clone(),
            worker: worker as usize,
            core,
            pinned,
            lowered_priority: lowered,
        });
        if first_refusal {
            tracing::warn!(
                lane = %spec.name,
                core = core.unwrap_or(usize::MAX),
                "lanes/pin_refused | the OS refused to pin a worker to its core | containers and cpusets can forbid affinity changes | nothing to do: lanes run unpinned (reported once) | docs/jobs.md#pinning"
            );
        }
    }
    job::set_role(Some(ThreadRole {
        lanes: shared.id,
        lane,
        worker,
    }));
    let who = WorkerInfo {
        lane,
        worker,
        thread: job::thread_index(),
    };
    let q = &shared.queues[lane.index()];
    let mut search = WorkerSearch::new(worker, SpinBudget::new(shared.spin_ns[lane.index()]));
    let counters = &shared.counters[lane.index()];
    // Busy time is measured per stretch of back-to-back jobs (two clock reads per stretch, not
    // per job): from the first job found after idling until the search comes up empty.
    while let Some(first) = q.next_for_worker(&mut search) {
        let t0 = clock::now();
        let mut jobs = 0;
        let mut next = Some(first);
        while let Some(job) = next {
            // SAFETY: taken once from the queue it was pushed to; its pusher keeps the data
            // alive until the job's latch completes (see `JobRef`). Entry functions catch panics.
            unsafe { job.run(who) };
            jobs += 1;
            next = q.find_now(&mut search);
        }
        let busy = clock::now().ns_since(t0);
        counters.busy_ns.fetch_add(busy, Ordering::Relaxed);
        counters.jobs.fetch_add(jobs, Ordering::Relaxed);
    }
    job::set_role(None);
}

impl Shared {
    /// The queue the current thread should help while it waits, if any (the helping rule).
    pub(crate) fn helper_queue(&self) -> Option<(&LaneQueue, WorkerInfo)> {
        let me = self.id;
        match job::current_role() {
            Some(role) if role.lanes == me => Some((
                &self.queues[role.lane.index()],
                WorkerInfo {
                    lane: role.lane,
                    worker: role.worker,
                    thread: job::thread_index(),
                },
            )),
            Some(_) => None,
            // Only the registered owner helps; any other thread without a role just waits.
            None if self.owner_thread.load(Ordering::Relaxed) != job::thread_index() => None,
            None => self.plan.owner_lane().map(|lane| {
                (
                    &self.queues[lane.index()],
                    WorkerInfo {
                        lane,
                        worker: WorkerInfo::HELPER,
                        thread: job::thread_index(),
                    },
                )
            }),
        }
    }

    /// Waits for `latch`, helping `helper` (which must be the latch's helper queue) if given.
    /// `woke_sleepers`: publishing the work had to wake a parked worker, so the answer is a
    /// futex wake away: park at once instead of spinning.
    pub(crate) fn wait(
        &self,
        latch: &Latch<'_>,
        helper: Option<(&LaneQueue, WorkerInfo)>,
        woke_sleepers: bool,
    ) {
        match helper {
            Some((q, who)) => {
                // The owner helping its lane takes the role while it helps, so nested waits
                // inside the jobs it runs follow the same rule.
                let prev = job::current_role();
                if prev.is_none() {
                    job::set_role(Some(ThreadRole {
                        lanes: self.id,
                        lane: who.lane,
                        worker: who.worker,
                    }));
                }
                let spin = self.spin_ns[who.lane.index()]
                    .min(self.wait_spin_ns)
                    .min(HELP_SPIN_NS);
                q.help_until(latch, who, spin);
                if prev.is_none() {
                    job::set_role(None);
                }
            }
            None if woke_sleepers => latch.wait_confirmed(),
            None => wait_learning(latch, self.wait_spin_ns),
        }
    }
}
