//! Data-parallel helpers on a lane: a parallel for over an index range, and over disjoint
//! `&mut` chunks of a slice.
//!
//! Owns: splitting the work into chunks that the lane's workers claim dynamically. Must never:
//! allocate (the state lives on the caller's stack; the jobs are `JobRef`s to it), hand one
//! chunk to two threads, or return before every chunk has finished.
//!
//! # Protocol
//! 1. The caller puts the shared state on its stack: the next unclaimed chunk (`next`), the
//!    chunk count, the body, a stop flag and a latch armed with `k`, the number of claim jobs
//!    (at most one per worker of the lane, plus one for a caller that serves the lane).
//! 2. It pushes `k` identical jobs to the lane in one batch (which wakes `k` sleepers at once).
//! 3. Each claim job takes chunk indices with `fetch_add` on `next` (relaxed: the index only
//!    needs atomicity; the chunk's data was published by the push) until they run out, running
//!    the body on each, then counts the latch down. A panic stops further claims.
//! 4. The caller waits on the latch (helping its own lane, which lets a lane worker take part
//!    in its own parallel-for), then reports the first panic.

use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::{take_panic_message, JobPanicked, UnknownLane};
use crate::job::{JobRef, WorkerInfo};
use crate::lanes::Lanes;
use crate::latch::Latch;
use crate::plan::LaneId;
use crate::sync::{lock, AtomicBool, AtomicUsize, Mutex, Ordering};

/// Claim jobs pushed per batch (a stack array: no allocation).
const PUSH_BATCH: usize = 32;

/// A parallel helper failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParallelError {
    /// The lane is not in the plan.
    #[error(transparent)]
    UnknownLane(#[from] UnknownLane),
    /// The body panicked on a chunk (the other claimed chunks finished; later ones were not
    /// started).
    #[error(transparent)]
    Panicked(#[from] JobPanicked),
    /// A chunk length or grain of zero.
    #[error("{what} must be at least 1; fix: pass a positive {what}")]
    ZeroSize {
        /// Which argument.
        what: &'static str,
    },
}

struct ParState<'a> {
    next: AtomicUsize,
    chunks: usize,
    start: usize,
    end: usize,
    grain: usize,
    body: &'a (dyn Fn(usize, Range<usize>) + Sync),
    stop: AtomicBool,
    panic: Mutex<Option<(usize, String)>>,
    latch: Latch<'a>,
}

/// Entry function of one claim job.
///
/// # Safety
/// `data` is a `ParState` whose caller is waiting on its latch, which this job has not counted
/// down yet.
unsafe fn exec_claim(data: *const (), _arg: usize, _who: WorkerInfo) {
    // SAFETY: (1) the state is on the caller's stack and the caller waits on the latch; (2) this
    // job counts it down only at the end, after its last access.
    let st = unsafe { &*(data as *const ParState<'_>) };
    loop {
        if st.stop.load(Ordering::Relaxed) {
            break;
        }
        let c = st.next.fetch_add(1, Ordering::Relaxed);
        if c >= st.chunks {
            break;
        }
        // No overflow: `c < chunks = ceil(len / grain)`, so `lo < end`, and `hi` adds at most
        // the distance left to `end`.
        let lo = st.start + c * st.grain;
        let hi = lo + st.grain.min(st.end - lo);
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| (st.body)(c, lo..hi))) {
            st.stop.store(true, Ordering::Relaxed);
            let message = take_panic_message(p);
            let mut first = lock(&st.panic);
            if first.is_none() {
                *first = Some((c, message));
            }
        }
    }
    st.latch.count_down();
}

impl Lanes {
    /// Calls `body(chunk_index, range)` for consecutive sub-ranges of `range` of `grain` indices
    /// (the last may be shorter), in parallel on `lane`'s workers; returns when all are done.
    /// Allocation-free.
    pub fn parallel_for(
        &self,
        lane: LaneId,
        range: Range<usize>,
        grain: usize,
        body: impl Fn(usize, Range<usize>) + Sync,
    ) -> Result<(), ParallelError> {
        if grain == 0 {
            return Err(ParallelError::ZeroSize { what: "grain" });
        }
        let spec = self.plan().lane(lane).ok_or(UnknownLane(lane.index()))?;
        let len = range.end.saturating_sub(range.start);
        if len == 0 {
            return Ok(());
        }
        let chunks = len.div_ceil(grain);
        let helper = self.shared().helper_queue();
        let helps = helper.is_some_and(|(_, who)| who.lane == lane);
        let claimers = (spec.worker_cores.len() + usize::from(helps)).min(chunks);
        let st = ParState {
            next: AtomicUsize::new(0),
            chunks,
            start: range.start,
            end: range.end,
            grain,
            body: &body,
            stop: AtomicBool::new(false),
            panic: Mutex::new(None),
            latch: Latch::new(claimers, helper.map(|(q, _)| q)),
        };
        let job = JobRef {
            data: &st as *const ParState<'_> as *const (),
            arg: 0,
            exec: exec_claim,
        };
        let batch = [job; PUSH_BATCH];
        let q = &self.shared().queues[lane.index()];
        let mut left = claimers;
        let mut woke = false;
        while left > 0 {
            let n = left.min(PUSH_BATCH);
            woke |= q.push_batch(&batch[..n]);
            left -= n;
        }
        self.shared().wait(&st.latch, helper, woke);
        let failure = lock(&st.panic).take();
        match failure {
            Some((chunk, message)) => Err(JobPanicked {
                job: format!("parallel_for chunk {chunk}"),
                message,
                skipped: 0,
            }
            .into()),
            None => Ok(()),
        }
    }

    /// Calls `body(chunk_index, chunk)` for the disjoint `chunk_len`-element chunks of `data`
    /// (the last may be shorter), in parallel on `lane`; each chunk is handed to exactly one
    /// thread. Allocation-free.
    pub fn parallel_chunks_mut<T: Send>(
        &self,
        lane: LaneId,
        data: &mut [T],
        chunk_len: usize,
        body: impl Fn(usize, &mut [T]) + Sync,
    ) -> Result<(), ParallelError> {
        if chunk_len == 0 {
            return Err(ParallelError::ZeroSize { what: "chunk_len" });
        }
        let len = data.len();
        let base = SendPtr(data.as_mut_ptr());
        let chunks = len.div_ceil(chunk_len);
        self.parallel_for(lane, 0..chunks, 1, |_, r| {
            for c in r {
                let lo = c * chunk_len;
                let n = chunk_len.min(len - lo);
                // SAFETY: (1) `c < chunks`, so `lo + n <= len`: in bounds of `data`; (2) every
                // chunk index is claimed by exactly one `fetch_add`, so no two threads get
                // overlapping ranges; (3) `data` is mutably borrowed for the whole call and
                // `parallel_for` returns only after every chunk finished.
                let chunk = unsafe { std::slice::from_raw_parts_mut(base.get().add(lo), n) };
                body(c, chunk);
            }
        })
    }
}

struct SendPtr<T>(*mut T);
impl<T> Clone for SendPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SendPtr<T> {}
impl<T> SendPtr<T> {
    fn get(self) -> *mut T {
        self.0
    }
}
// SAFETY: the pointer is used only to build disjoint chunks of a `&mut [T]` with `T: Send`
// (see `parallel_chunks_mut`), each on one thread.
unsafe impl<T: Send> Send for SendPtr<T> {}
// SAFETY: shared only to compute those disjoint chunks; never dereferenced as a whole.
unsafe impl<T: Send> Sync for SendPtr<T> {}
