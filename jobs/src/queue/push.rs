//! Protocol steps 1-2 (module docs): a push to the injector or to a worker's own deque, and
//! the sleepers it wakes.

use crate::job::{self, JobRef, WorkerInfo};
use crate::sync::{fence, lock, Ordering};

use super::*;

impl LaneQueue {
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

    /// Step 1: appends to the injector and wakes as many sleepers as there are jobs.
    pub(crate) fn push_shared(&self, jobs: &[JobRef]) -> bool {
        self.push_shared_waking(jobs, jobs.len())
    }

    /// Step 1, waking at most `wake` sleepers (`jobs.len()` but for a pusher that takes one of
    /// the jobs itself).
    pub(super) fn push_shared_waking(&self, jobs: &[JobRef], wake: usize) -> bool {
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
    pub(super) fn notify_up_to(&self, s: &mut QueueState, n: usize) -> bool {
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
    pub(super) fn push_local(&self, w: u16, jobs: &[JobRef]) -> bool {
        self.push_local_waking(w, jobs, jobs.len())
    }

    /// Step 2, waking at most `wake` sleepers (see [`LaneQueue::push_batch_keeping_one`]).
    pub(super) fn push_local_waking(&self, w: u16, jobs: &[JobRef], wake: usize) -> bool {
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
    pub(super) fn wake_for_local(&self, n: usize) -> bool {
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
}
