//! A lane worker's own run queue: a fixed-capacity Chase-Lev work-stealing deque of jobs.
//!
//! Owns: the ring of job slots and its two indices. The owning worker pushes and pops at the
//! bottom (LIFO: the job it just readied runs next, its data still in cache); any other thread
//! of the lane steals at the top (FIFO: the oldest, usually largest, piece of work).
//! Must never: hand one pushed job to two threads, lose one, allocate (the ring is sized once,
//! when the lanes start; a full ring refuses the push and the caller sends the job to the lane's
//! shared queue instead), or be pushed to or popped from by any thread but its owner.
//!
//! Why our own and not `crossbeam-deque`: its ring grows and shrinks with the load (a
//! reallocation, and an epoch-deferred free, whenever a frame's burst crosses a power of two), so
//! a steady frame would allocate; and its atomics are invisible to loom, so the lanes' parking
//! protocol could not be model-checked against it. This one is the algorithm of Lê, Pop, Cohen
//! and Zappa Nardelli, "Correct and Efficient Work-Stealing for Weak Memory Models" (PPoPP 2013),
//! without the resize.
//!
//! # Protocol (indices only grow; `bottom - top` is the length)
//! 1. Push (owner): read `bottom` (its own), `top` (acquire); if the ring is full, refuse. Write
//!    the slot (relaxed), then a release fence, then `bottom + 1` (relaxed): a thread that reads
//!    the new `bottom` with acquire sees the slot.
//! 2. Pop (owner): store `bottom - 1` (relaxed), then a SeqCst fence, then read `top`. Either a
//!    thief's SeqCst fence came first (we see its `top + 1`) or ours did (it sees our smaller
//!    `bottom`): the last job is never taken by both. With more than one job left the bottom slot
//!    is ours alone; with exactly one, owner and thief race for it with a CAS on `top`, and the
//!    owner puts `bottom` back either way.
//! 3. Steal (anyone else): read `top` (acquire), a SeqCst fence, `bottom` (acquire); if there is a
//!    job, read its slot and claim it with a CAS of `top` (SeqCst). A failed CAS means the owner
//!    or another thief took it: retry. The slot is read before the CAS and may be overwritten by a
//!    push meanwhile (once `top` has moved on, the slot is free to reuse), so slots are atomics,
//!    and a value read by a thief whose CAS failed is thrown away unused.
//!
//! Loom: `tests/loom_lanes.rs` (`deque_*` models) checks exactly-once delivery for push/pop/steal
//! races; the lanes' models check the deque against the parking protocol.

use crate::job::{ExecFn, JobRef};
use crate::sync::{fence, AtomicIsize, AtomicPtr, AtomicUsize, Ordering};
use crossbeam_utils::CachePadded;

/// Slots per worker ring. A layered frame readies at most a layer's width at once on one
/// worker; anything beyond goes to the lane's shared queue. Small under loom, so the models
/// reach the full-ring path.
#[cfg(not(loom))]
pub(crate) const DEQUE_CAPACITY: usize = 256;
#[cfg(loom)]
pub(crate) const DEQUE_CAPACITY: usize = 2;

/// One job, stored as three atomics (see step 3: a thief may read a slot while it is rewritten).
/// Pointers are stored as pointers (`AtomicPtr`), never as integers, so they keep their
/// provenance: the job's data and its entry function come back as the pointers that went in.
#[derive(Debug)]
struct Slot {
    data: AtomicPtr<()>,
    arg: AtomicUsize,
    /// The job's `ExecFn`, as a data pointer (function pointers have no atomic type).
    exec: AtomicPtr<()>,
}

impl Default for Slot {
    fn default() -> Self {
        Slot {
            data: AtomicPtr::new(std::ptr::null_mut()),
            arg: AtomicUsize::new(0),
            exec: AtomicPtr::new(std::ptr::null_mut()),
        }
    }
}

/// The result of a steal attempt.
#[derive(Debug)]
pub(crate) enum Steal {
    /// Nothing to take.
    Empty,
    /// Took the oldest job.
    Taken(JobRef),
    /// Lost a race for it: try again.
    Retry,
}

/// See the module docs.
#[derive(Debug)]
pub(crate) struct Deque {
    /// Next slot to steal. Writers: the owner's last-job CAS and thieves' CAS (SeqCst).
    top: CachePadded<AtomicIsize>,
    /// Next slot to push. Writer: the owner only (relaxed, after a fence). Readers: thieves and
    /// sleepers checking for work (acquire).
    bottom: CachePadded<AtomicIsize>,
    slots: Box<[Slot]>,
}

const MASK: usize = DEQUE_CAPACITY - 1;
const _: () = assert!(std::mem::size_of::<ExecFn>() == std::mem::size_of::<*mut ()>());
const _: () = assert!(DEQUE_CAPACITY.is_power_of_two());

impl Deque {
    pub(crate) fn new() -> Self {
        Deque {
            top: CachePadded::new(AtomicIsize::new(0)),
            bottom: CachePadded::new(AtomicIsize::new(0)),
            slots: (0..DEQUE_CAPACITY).map(|_| Slot::default()).collect(),
        }
    }

    fn write(&self, i: isize, job: JobRef) {
        let s = &self.slots[i as usize & MASK];
        s.data.store(job.data.cast_mut(), Ordering::Relaxed);
        s.arg.store(job.arg, Ordering::Relaxed);
        s.exec.store(job.exec as *mut (), Ordering::Relaxed);
    }

    /// Reads slot `i`.
    ///
    /// # Safety
    /// Slot `i` has been written by a push whose `bottom` store the caller has observed (so
    /// `exec` holds a real `ExecFn`), and the caller uses the job only if it then wins the slot
    /// (owner's pop, or a successful CAS of `top`).
    unsafe fn read(&self, i: isize) -> JobRef {
        let s = &self.slots[i as usize & MASK];
        let exec = s.exec.load(Ordering::Relaxed);
        JobRef {
            data: s.data.load(Ordering::Relaxed).cast_const(),
            arg: s.arg.load(Ordering::Relaxed),
            // SAFETY: (1) every value ever stored in `exec` is an `ExecFn` cast to a pointer
            // (`write`), and a pointer-to-function-pointer transmute keeps the provenance the
            // cast gave it (no integer round trip); (2) a slot is written whole before its
            // `bottom` is published (release fence), and the caller observed that `bottom`
            // (acquire), so this load reads one of those values, never the null of `default`
            // (a torn job, read while the owner rewrote the slot, is discarded by the caller's
            // failed CAS before use, but its `exec` is still some valid `ExecFn`); (3) function
            // and data pointers have the same size on every supported target (checked below).
            exec: unsafe { std::mem::transmute::<*mut (), ExecFn>(exec) },
        }
    }

    /// Step 1. Gives the job back when the ring is full.
    ///
    /// # Safety
    /// Only the owning worker's thread calls `push` and `pop`.
    pub(crate) unsafe fn push(&self, job: JobRef) -> Result<(), JobRef> {
        let b = self.bottom.load(Ordering::Relaxed);
        let t = self.top.load(Ordering::Acquire);
        if b - t >= DEQUE_CAPACITY as isize {
            return Err(job);
        }
        self.write(b, job);
        fence(Ordering::Release);
        self.bottom.store(b + 1, Ordering::Relaxed);
        Ok(())
    }

    /// Step 2: the newest job.
    ///
    /// # Safety
    /// Only the owning worker's thread calls `push` and `pop`.
    pub(crate) unsafe fn pop(&self) -> Option<JobRef> {
        let b = self.bottom.load(Ordering::Relaxed) - 1;
        // Cheap exit for the common empty case: only the owner moves `bottom`, and `top` never
        // passes it, so an empty ring stays empty until the owner pushes.
        if b < self.top.load(Ordering::Relaxed) {
            return None;
        }
        self.bottom.store(b, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        let t = self.top.load(Ordering::Relaxed);
        if t > b {
            // A thief took the last one between our check and our store.
            self.bottom.store(b + 1, Ordering::Relaxed);
            return None;
        }
        // SAFETY: slot `b` was written by our own push (program order); we use it only if we
        // win it: alone (t < b) or by the CAS below.
        let job = unsafe { self.read(b) };
        if t == b {
            let won = self
                .top
                .compare_exchange(t, t + 1, Ordering::SeqCst, Ordering::Relaxed)
                .is_ok();
            self.bottom.store(b + 1, Ordering::Relaxed);
            return won.then_some(job);
        }
        Some(job)
    }

    /// Step 3: the oldest job, from any thread.
    pub(crate) fn steal(&self) -> Steal {
        let t = self.top.load(Ordering::Acquire);
        fence(Ordering::SeqCst);
        let b = self.bottom.load(Ordering::Acquire);
        if t >= b {
            return Steal::Empty;
        }
        // SAFETY: `t < b` with `b` read by acquire: slot `t` was published by a push; the job is
        // used only if the CAS below claims it.
        let job = unsafe { self.read(t) };
        match self
            .top
            .compare_exchange(t, t + 1, Ordering::SeqCst, Ordering::Relaxed)
        {
            Ok(_) => Steal::Taken(job),
            Err(_) => Steal::Retry,
        }
    }

    /// Whether the ring looks empty (acquire reads; exact only if the owner is not running).
    /// A sleeper calls it after its SeqCst fence (see `queue.rs`, step 3).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        let b = self.bottom.load(Ordering::Acquire);
        let t = self.top.load(Ordering::Acquire);
        t >= b
    }

    /// Slots free for the owner's pushes: at least this many pushes in a row succeed (thieves
    /// only ever free slots).
    ///
    /// # Safety
    /// Only the owning worker's thread calls it (it reads `bottom` as its writer).
    pub(crate) unsafe fn free_for_owner(&self) -> usize {
        let b = self.bottom.load(Ordering::Relaxed);
        let t = self.top.load(Ordering::Acquire);
        DEQUE_CAPACITY.saturating_sub((b - t).max(0) as usize)
    }

    /// Jobs in the ring now (racy; for reports).
    pub(crate) fn len(&self) -> usize {
        let b = self.bottom.load(Ordering::Relaxed);
        let t = self.top.load(Ordering::Relaxed);
        (b - t).max(0) as usize
    }
}

/// Loom models of the ring alone (the lanes' models in `tests/loom_lanes.rs` use it through the
/// public API). Run: `RUSTFLAGS="--cfg loom" cargo test -p lanegraph-jobs --lib deque`.
#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use crate::job::WorkerInfo;
    use loom::sync::Arc;

    unsafe fn noop(_: *const (), _: usize, _: WorkerInfo) {}

    fn job(arg: usize) -> JobRef {
        JobRef {
            data: std::ptr::null(),
            arg,
            exec: noop,
        }
    }

    fn steal_all(d: &Deque, into: &mut Vec<usize>) {
        loop {
            match d.steal() {
                Steal::Taken(j) => into.push(j.arg),
                Steal::Retry => loom::thread::yield_now(),
                Steal::Empty => return,
            }
        }
    }

    /// A thread that steals until the ring looks empty, returning what it took.
    fn spawn_thief(d: &Arc<Deque>) -> loom::thread::JoinHandle<Vec<usize>> {
        let d = Arc::clone(d);
        loom::thread::spawn(move || {
            let mut got = Vec::new();
            steal_all(&d, &mut got);
            got
        })
    }

    /// Owner pushes two jobs and pops while a thief steals: every job is taken exactly once,
    /// including the last one, which owner and thief race for.
    /// Fails when: `pop`'s SeqCst fence is weakened to AcqRel (both take the last job).
    #[test]
    fn pop_and_steal_take_each_job_exactly_once() {
        loom::model(|| {
            let d = Arc::new(Deque::new());
            // SAFETY: this thread is the ring's only pusher and popper.
            unsafe {
                d.push(job(1)).unwrap();
                d.push(job(2)).unwrap();
            }
            let thief = spawn_thief(&d);
            let mut got = Vec::new();
            // SAFETY: as above.
            while let Some(j) = unsafe { d.pop() } {
                got.push(j.arg);
            }
            got.extend(thief.join().unwrap());
            got.sort_unstable();
            assert_eq!(got, vec![1, 2], "each job exactly once");
        });
    }

    /// The owner pops the ring's last job while a thief races for it, then pushes again: the
    /// second job is still taken, exactly once (the race for the last job must leave `bottom`
    /// where a push lands above `top`).
    /// Fails when: `pop` does not put `bottom` back after the last-job CAS (the next push lands
    /// below `top`: the ring looks empty and job 2 is lost).
    #[test]
    fn a_push_after_the_race_for_the_last_job_is_not_lost() {
        loom::model(|| {
            let d = Arc::new(Deque::new());
            // SAFETY: this thread is the ring's only pusher and popper.
            unsafe { d.push(job(1)).unwrap() };
            let thief = spawn_thief(&d);
            let mut got = Vec::new();
            // SAFETY: as above.
            if let Some(j) = unsafe { d.pop() } {
                got.push(j.arg);
            }
            // SAFETY: as above.
            unsafe { d.push(job(2)).unwrap() };
            // SAFETY: as above.
            while let Some(j) = unsafe { d.pop() } {
                got.push(j.arg);
            }
            got.extend(thief.join().unwrap());
            steal_all(&d, &mut got);
            got.sort_unstable();
            assert_eq!(got, vec![1, 2], "each job exactly once");
        });
    }

    /// A push into a ring a thief is draining: the thief sees the slot the push published, the
    /// full ring refuses, and nothing is lost or duplicated.
    /// Fails when: `push`'s release fence is removed (the thief reads a stale slot).
    #[test]
    fn a_thief_sees_what_the_push_published_and_a_full_ring_refuses() {
        loom::model(|| {
            let d = Arc::new(Deque::new());
            let thief = spawn_thief(&d);
            let mut got = Vec::new();
            let mut refused = Vec::new();
            for a in 1..=3 {
                // SAFETY: this thread is the ring's only pusher and popper.
                if let Err(j) = unsafe { d.push(job(a)) } {
                    refused.push(j.arg);
                }
            }
            // SAFETY: as above.
            while let Some(j) = unsafe { d.pop() } {
                got.push(j.arg);
            }
            got.extend(thief.join().unwrap());
            got.extend(refused);
            got.sort_unstable();
            assert_eq!(
                got,
                vec![1, 2, 3],
                "each job exactly once, refused ones returned"
            );
        });
    }
}
