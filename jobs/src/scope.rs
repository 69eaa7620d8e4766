//! Scoped jobs: closures that borrow from the caller's stack, spawned onto lanes, each
//! optionally after earlier jobs; the scope returns when all are done.
//!
//! Owns: job slots (closure storage, dependency bookkeeping), the per-thread slot pools that
//! make a scope of the same shape allocation-free once warm, and the scope's wait.
//! Must never: let a job outlive the scope (the scope waits for every job, also when its body
//! panics), run a job before its dependencies, or run a job after a dependency panicked.
//!
//! # Protocol
//! 1. `spawn` takes the next slot of the thread's pool (slots live in boxed chunks: their
//!    addresses never move), resets it, moves the closure into the slot's inline storage (64
//!    bytes; larger closures are boxed), arms `pending = 1` (the spawn guard) and adds one to
//!    the scope latch.
//! 2. For each dependency it locks that job's `deps`: if the job is not done it records this
//!    slot as a successor and increments `pending` (under the lock, so before the dependency can
//!    decrement it); if it is done and failed, this job is poisoned.
//! 3. It drops the spawn guard (acq-rel decrement). Whoever brings `pending` to zero (the spawner
//!    or the last dependency) publishes the job to its lane's queue.
//! 4. A worker runs the closure (or, if poisoned, drops it unrun), then locks its own `deps`,
//!    marks it done (and failed), and decrements each successor (poisoning it first if failed);
//!    the first successor that becomes ready on the same lane runs inline, others are pushed.
//!    Lock order is slot then queue, never the reverse, so no deadlock.
//! 5. Then it counts the scope latch down. While an inline successor is pending the latch stays
//!    above zero, so the scope (and its slots) outlive every access.
//! 6. The scope body's own guard is released when the body returns; the caller waits on the
//!    latch (helping its own lane only), returns the pool to the thread, and reports the first
//!    panic.

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::mem::{align_of, size_of, MaybeUninit};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use crate::error::{take_panic_message, JobPanicked, UnknownLane};
use crate::job::{JobRef, WorkerInfo};
use crate::lanes::Lanes;
use crate::latch::Latch;
use crate::plan::LaneId;
use crate::sync::{lock, AtomicBool, AtomicU32, AtomicUsize, Mutex, Ordering, UnsafeCell};

/// Bytes of closure stored inline in a slot; larger closures are boxed (one allocation).
pub const INLINE_CLOSURE_BYTES: usize = 64;
/// Slots per pool chunk (a chunk is allocated once, on warm-up).
const CHUNK: usize = 64;

#[repr(C, align(16))]
struct Storage([u8; INLINE_CLOSURE_BYTES]);

/// Moves the closure out of the storage and runs it (`true`) or drops it unrun (`false`).
type InvokeFn = unsafe fn(*mut u8, bool);

#[derive(Clone, Copy)]
struct SlotPtr(*const Slot);
// SAFETY: a SlotPtr is only dereferenced while its scope is waiting on its latch, during which
// the slot (in a boxed pool chunk owned by that scope) is alive and never moved; all shared
// access to the slot goes through atomics, its mutex, or cells written before publication.
unsafe impl Send for SlotPtr {}

struct Deps {
    done: bool,
    failed: bool,
    /// Successors (capacity kept across scopes: no allocation once warm).
    succ: Vec<SlotPtr>,
}

/// Written by the spawner before the job is published; read by the one thread that runs it.
struct Meta {
    invoke: Option<InvokeFn>,
    lane: LaneId,
    name: &'static str,
    index: u32,
    scope: *const ScopeShared<'static>,
}

struct Slot {
    storage: UnsafeCell<MaybeUninit<Storage>>,
    meta: UnsafeCell<Meta>,
    /// Spawn guard + unfinished dependencies. Writers: the spawner (reset, increments under a
    /// dependency's lock, guard decrement) and completing dependencies (acq-rel decrement).
    pending: AtomicU32,
    /// Set (relaxed) by a failed dependency before its releasing decrement.
    poisoned: AtomicBool,
    deps: Mutex<Deps>,
}

// SAFETY: see `SlotPtr`: every field is either an atomic, a mutex, or a cell written only by
// the spawner before publication (the queue's publication orders it: the injector's lock, or a
// ring's release fence before `bottom` and its readers' acquire, see `JobRef`'s `Send`; or the
// acq-rel `pending` chain) and read only by the single thread that then runs the job.
unsafe impl Sync for Slot {}
// SAFETY: as above; slots are moved between threads only inside a pool, while no job of theirs
// is in flight.
unsafe impl Send for Slot {}

impl Slot {
    fn new() -> Slot {
        Slot {
            storage: UnsafeCell::new(MaybeUninit::uninit()),
            meta: UnsafeCell::new(Meta {
                invoke: None,
                lane: LaneId(0),
                name: "",
                index: 0,
                scope: std::ptr::null(),
            }),
            pending: AtomicU32::new(0),
            poisoned: AtomicBool::new(false),
            deps: Mutex::new(Deps {
                done: true,
                failed: false,
                succ: Vec::new(),
            }),
        }
    }
}

/// A thread's reusable slots for one scope nesting level.
#[derive(Default)]
struct SlotPool {
    chunks: Vec<Box<[Slot]>>,
}

impl SlotPool {
    fn slot(&mut self, k: usize) -> &Slot {
        while k >= self.chunks.len() * CHUNK {
            self.chunks.push(
                (0..CHUNK)
                    .map(|_| Slot::new())
                    .collect::<Vec<_>>()
                    .into_boxed_slice(),
            );
        }
        &self.chunks[k / CHUNK][k % CHUNK]
    }
}

#[cfg(not(loom))]
std::thread_local! {
    static POOLS: RefCell<Vec<SlotPool>> = const { RefCell::new(Vec::new()) };
}
#[cfg(loom)]
loom::thread_local! {
    static POOLS: RefCell<Vec<SlotPool>> = RefCell::new(Vec::new());
}

fn take_pool() -> SlotPool {
    POOLS.with(|p| p.borrow_mut().pop()).unwrap_or_default()
}

fn return_pool(pool: SlotPool) {
    POOLS.with(|p| p.borrow_mut().push(pool));
}

/// State the jobs of a scope share.
struct ScopeShared<'a> {
    lanes: &'a Lanes,
    latch: Latch<'a>,
    /// First panic: (job name, message).
    panic: Mutex<Option<(String, String)>>,
    skipped: AtomicUsize,
}

/// A handle to a job spawned in a scope, for ordering later jobs after it. Valid only in the
/// scope that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobHandle {
    index: u32,
    scope: u64,
}

/// A scoped spawn failed (the closure was not run; it is dropped).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpawnError {
    /// The lane is not in the plan.
    #[error(transparent)]
    UnknownLane(#[from] UnknownLane),
    /// A dependency handle came from another scope.
    #[error("job handle #{0} belongs to another scope; fix: order jobs only after handles of the same scope")]
    ForeignHandle(u32),
}

/// Spawns jobs that may borrow anything that outlives the scope (see [`Lanes::scope`]).
pub struct Scope<'scope, 'env: 'scope> {
    shared: &'scope ScopeShared<'scope>,
    pool: RefCell<SlotPool>,
    spawned: Cell<u32>,
    id: u64,
    /// Invariance over both lifetimes, as `std::thread::Scope` (no lifetime tricks by callers).
    _marker: PhantomData<(&'scope mut &'scope (), &'env mut &'env ())>,
}

static NEXT_SCOPE_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Runs `f` on `lane` as soon as a worker is free.
    pub fn spawn<F>(&'scope self, lane: LaneId, f: F) -> Result<JobHandle, SpawnError>
    where
        F: FnOnce() + Send + 'scope,
    {
        self.spawn_named_after("", lane, &[], f)
    }

    /// Runs `f` on `lane` after every job in `after` has finished.
    pub fn spawn_after<F>(
        &'scope self,
        lane: LaneId,
        after: &[JobHandle],
        f: F,
    ) -> Result<JobHandle, SpawnError>
    where
        F: FnOnce() + Send + 'scope,
    {
        self.spawn_named_after("", lane, after, f)
    }

    /// As [`Scope::spawn_after`], with a name for errors and traces.
    pub fn spawn_named_after<F>(
        &'scope self,
        name: &'static str,
        lane: LaneId,
        after: &[JobHandle],
        f: F,
    ) -> Result<JobHandle, SpawnError>
    where
        F: FnOnce() + Send + 'scope,
    {
        let lanes = self.shared.lanes;
        if lane.index() >= lanes.plan().lanes().len() {
            return Err(UnknownLane(lane.index()).into());
        }
        let k = self.spawned.get();
        for h in after {
            if h.scope != self.id || h.index >= k {
                return Err(SpawnError::ForeignHandle(h.index));
            }
        }
        let mut pool = self.pool.borrow_mut();
        // Steps 1-3 of the protocol.
        let slot_ptr: *const Slot = pool.slot(k as usize);
        // SAFETY: the slot is in a boxed chunk that the pool keeps until the scope has waited
        // for every job; no job of this scope uses slot k yet (k is fresh).
        let slot = unsafe { &*slot_ptr };
        {
            let mut d = lock(&slot.deps);
            d.done = false;
            d.failed = false;
            d.succ.clear();
        }
        slot.poisoned.store(false, Ordering::Relaxed);
        slot.pending.store(1, Ordering::Relaxed);
        let invoke = store_closure(slot, f);
        slot.meta.with_mut(|m| {
            // SAFETY: the job is not yet published: the spawner is the only accessor.
            let m = unsafe { &mut *m };
            m.invoke = Some(invoke);
            m.lane = lane;
            m.name = name;
            m.index = k;
            m.scope = std::ptr::from_ref(self.shared).cast();
        });
        self.shared.latch.add(1);
        for h in after {
            let dep = pool.slot(h.index as usize);
            let mut d = lock(&dep.deps);
            if !d.done {
                d.succ.push(SlotPtr(slot_ptr));
                // Relaxed: under the dependency's lock; its decrement comes later, under the
                // same lock (step 2).
                slot.pending.fetch_add(1, Ordering::Relaxed);
            } else if d.failed {
                slot.poisoned.store(true, Ordering::Relaxed);
            }
        }
        drop(pool);
        self.spawned.set(k + 1);
        if slot.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            lanes.shared().queues[lane.index()].push(JobRef {
                data: slot_ptr as *const (),
                arg: 0,
                exec: exec_scope_job,
            });
        }
        Ok(JobHandle {
            index: k,
            scope: self.id,
        })
    }
}

/// Moves `f` into the slot (inline when it fits, boxed otherwise) and returns its invoker.
fn store_closure<F: FnOnce() + Send>(slot: &Slot, f: F) -> InvokeFn {
    if size_of::<F>() <= INLINE_CLOSURE_BYTES && align_of::<F>() <= align_of::<Storage>() {
        slot.storage.with_mut(|s| {
            // SAFETY: (1) the storage is 64 bytes aligned to 16 and F fits both (checked above);
            // (2) the slot is unpublished, so nobody else reads it; (3) the previous closure was
            // moved out by its invoke, so nothing is overwritten that needed dropping.
            unsafe { (s as *mut u8).cast::<F>().write(f) }
        });
        invoke::<F>
    } else {
        let boxed: Box<F> = Box::new(f);
        slot.storage.with_mut(|s| {
            // SAFETY: as above, for a `Box<F>` (one pointer).
            unsafe { (s as *mut u8).cast::<Box<F>>().write(boxed) }
        });
        invoke::<Box<F>>
    }
}

/// # Safety
/// `storage` holds an initialised `F` written by `store_closure`, moved out exactly once.
unsafe fn invoke<F: FnOnce()>(storage: *mut u8, run: bool) {
    // SAFETY: forwarded from the contract: initialised F, read once.
    let f = unsafe { storage.cast::<F>().read() };
    if run {
        f();
    } else {
        drop(f);
    }
}

/// Entry function of a scoped job.
///
/// # Safety
/// `data` is a `*const Slot` of a scope that is still waiting, published exactly once.
unsafe fn exec_scope_job(data: *const (), _arg: usize, who: WorkerInfo) {
    let mut slot_ptr = data as *const Slot;
    loop {
        // SAFETY: (1) the slot's scope waits on its latch, which this job has not counted down,
        // so the pool chunk is alive; (2) meta was written before publication (the queue's
        // publication, lock or ring fence, or the acq-rel pending chain orders it before this
        // read).
        let slot = unsafe { &*slot_ptr };
        let (invoke, name, index, scope) = slot.meta.with_mut(|m| {
            // SAFETY: read-only access by the one thread running the job.
            let m = unsafe { &*m };
            (m.invoke, m.name, m.index, m.scope)
        });
        // SAFETY: the scope outlives its jobs (as for the slot).
        let scope = unsafe { &*scope };
        let poisoned = slot.poisoned.load(Ordering::Relaxed);
        let mut failed = poisoned;
        if let Some(invoke) = invoke {
            let result = slot.storage.with_mut(|s| {
                // SAFETY: the storage holds the closure stored at spawn, moved out exactly once
                // (here); `invoke` matches its type.
                catch_unwind(AssertUnwindSafe(|| unsafe {
                    invoke(s as *mut u8, !poisoned)
                }))
            });
            if poisoned {
                scope.skipped.fetch_add(1, Ordering::Relaxed);
            }
            if let Err(p) = result {
                failed = true;
                let message = take_panic_message(p);
                let mut first = lock(&scope.panic);
                if first.is_none() {
                    let job = if name.is_empty() {
                        format!("#{index}")
                    } else {
                        name.to_string()
                    };
                    *first = Some((job, message));
                }
            }
        }
        // Step 4.
        let mut inline: Option<*const Slot> = None;
        {
            let mut d = lock(&slot.deps);
            d.done = true;
            d.failed = failed;
            for s in d.succ.iter() {
                // SAFETY: successors are slots of the same scope, alive as above.
                let succ = unsafe { &*s.0 };
                if failed {
                    succ.poisoned.store(true, Ordering::Relaxed);
                }
                if succ.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
                    // SAFETY: meta of a job that is now ours to schedule.
                    let lane = succ.meta.with_mut(|m| unsafe { (*m).lane });
                    if inline.is_none() && lane == who.lane {
                        inline = Some(s.0);
                    } else {
                        scope.lanes.shared().queues[lane.index()].push(JobRef {
                            data: s.0 as *const (),
                            arg: 0,
                            exec: exec_scope_job,
                        });
                    }
                }
            }
        }
        // Step 5: after this, touch the scope only through an inline successor.
        scope.latch.count_down();
        match inline {
            Some(next) => slot_ptr = next,
            None => return,
        }
    }
}

impl Lanes {
    /// Runs `f` with a [`Scope`] whose jobs may borrow from the caller's stack, then waits for
    /// every job spawned in it. Allocation-free once warm for scopes of the same shape (slots
    /// are pooled per thread; closures up to 64 bytes are stored inline).
    ///
    /// Errors: the first job that panicked (named), after all the others finished; jobs that
    /// depend on it were dropped unrun. A panic of `f` itself is re-raised after every job
    /// finished.
    pub fn scope<'env, F, R>(&'env self, f: F) -> Result<R, JobPanicked>
    where
        F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R,
    {
        let helper = self.shared().helper_queue();
        // The latch starts at 1: the body's guard, released when the body returns.
        let shared = ScopeShared {
            lanes: self,
            latch: Latch::new(1, helper.map(|(q, _)| q)),
            panic: Mutex::new(None),
            skipped: AtomicUsize::new(0),
        };
        let scope = Scope {
            shared: &shared,
            pool: RefCell::new(take_pool()),
            spawned: Cell::new(0),
            id: NEXT_SCOPE_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            _marker: PhantomData,
        };
        let result = catch_unwind(AssertUnwindSafe(|| f(&scope)));
        shared.latch.count_down();
        self.shared().wait(&shared.latch, helper, false);
        // `f` may have kept `&scope` (its lifetime is the scope's): take the pool through it.
        return_pool(std::mem::take(&mut *scope.pool.borrow_mut()));
        let body = match result {
            Ok(r) => r,
            Err(p) => resume_unwind(p),
        };
        let failure = lock(&shared.panic).take();
        match failure {
            Some((job, message)) => Err(JobPanicked {
                job,
                message,
                skipped: shared.skipped.load(Ordering::Relaxed),
            }),
            None => Ok(body),
        }
    }
}
