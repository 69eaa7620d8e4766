//! A type-erased reference to one unit of work on a lane.
//!
//! Owns: the `JobRef` representation (a data pointer, an argument and an entry function) and the
//! per-thread "who am I" record that waiting threads use to decide whether they may help.
//! Must never: own the data it points to. Whoever pushes a `JobRef` keeps the data alive until the
//! job's completion has been observed through a latch (graph runs and scopes block on theirs).

use crate::plan::LaneId;

/// What a job's entry function learns about the thread running it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerInfo {
    /// The lane whose queue the job came from.
    pub lane: LaneId,
    /// The worker index within that lane, or [`WorkerInfo::HELPER`] for a thread helping its
    /// own lane while it waits (the owner thread on its owner lane).
    pub worker: u16,
    /// A process-unique index of the thread (stable for the thread's life), for trace tracks.
    pub thread: u32,
}

impl WorkerInfo {
    /// `worker` value of a thread that is helping, not a lane worker.
    pub const HELPER: u16 = u16::MAX;
}

/// Entry function of a job: `exec(data, arg, who)`.
///
/// # Safety
/// Called at most once per push, with the `data` and `arg` that were pushed, while the pusher
/// still keeps `data` alive.
pub(crate) type ExecFn = unsafe fn(data: *const (), arg: usize, who: WorkerInfo);

/// One unit of work: copyable, two words and a function pointer, no allocation.
#[derive(Clone, Copy)]
pub(crate) struct JobRef {
    pub(crate) data: *const (),
    pub(crate) arg: usize,
    pub(crate) exec: ExecFn,
}

impl std::fmt::Debug for JobRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobRef")
            .field("data", &self.data)
            .field("arg", &self.arg)
            .finish()
    }
}

// SAFETY: a JobRef is moved to another thread only through a lane queue. Scenario: the pusher
// builds the data (graph run state or scope slot, both `Sync` by construction: atomics, mutexes,
// and cells written once before the push), then publishes the job one of two ways, each a
// release/acquire pair: to the injector under its mutex (the taker locks the same mutex), or to a
// worker's ring (the slot's writes, then a release fence, then `bottom`; a thief or sleeper
// reads `bottom` with acquire, and the owner's own pop is on its own thread: `deque` steps 1-3).
// The worker then calls `exec`; the pusher waits on the latch that `exec` counts down before it
// frees or reuses the data. So the pointer never dangles and every write before the push is
// visible to the worker.
unsafe impl Send for JobRef {}

impl JobRef {
    /// Runs the job.
    ///
    /// # Safety
    /// As for [`ExecFn`]: once per push, data still alive.
    /// Entry functions catch every panic of the job itself; should one unwind anyway (a broken
    /// internal invariant), the process aborts rather than let the unwind free the pusher's
    /// stack state while other threads still use it.
    #[inline]
    pub(crate) unsafe fn run(self, who: WorkerInfo) {
        let guard = crate::error::AbortOnUnwind;
        // SAFETY: forwarded from this function's contract.
        unsafe { (self.exec)(self.data, self.arg, who) };
        std::mem::forget(guard);
    }
}

/// Which lane (if any) the current thread serves, set by the lane runtime for its workers and by
/// a thread that helps its owner lane while it waits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ThreadRole {
    /// Identity of the `Lanes` instance (its shared state's address).
    pub(crate) lanes: usize,
    pub(crate) lane: LaneId,
    pub(crate) worker: u16,
}

#[cfg(not(loom))]
std::thread_local! {
    static ROLE: std::cell::Cell<Option<ThreadRole>> = const { std::cell::Cell::new(None) };
    static THREAD_INDEX: std::cell::Cell<u32> = const { std::cell::Cell::new(u32::MAX) };
}

#[cfg(loom)]
loom::thread_local! {
    static ROLE: std::cell::Cell<Option<ThreadRole>> = std::cell::Cell::new(None);
    static THREAD_INDEX: std::cell::Cell<u32> = std::cell::Cell::new(u32::MAX);
}

static NEXT_THREAD_INDEX: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// The role of the current thread.
pub(crate) fn current_role() -> Option<ThreadRole> {
    ROLE.with(|r| r.get())
}

/// Sets the role of the current thread, returning the previous one.
pub(crate) fn set_role(role: Option<ThreadRole>) -> Option<ThreadRole> {
    ROLE.with(|r| r.replace(role))
}

/// A small, stable, process-unique index of the current thread (for trace tracks).
pub fn thread_index() -> u32 {
    THREAD_INDEX.with(|t| {
        let v = t.get();
        if v != u32::MAX {
            return v;
        }
        // Relaxed: uniqueness needs only the atomicity of the increment.
        let v = NEXT_THREAD_INDEX.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        t.set(v);
        v
    })
}
