//! Where a worker or a helper finds its next job: its own deque (newest first), the injector
//! (a fair share moved to its deque), then its siblings' deques (oldest first).

use crate::deque::Steal;
use crate::job::{JobRef, WorkerInfo};
use crate::sync::{lock, spin_step, Ordering};

use super::*;

/// How often (in searches) a worker looks at the injector before its own deque.
pub(super) const INJECTOR_FIRST_EVERY: u32 = 64;

impl LaneQueue {
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
    pub(super) fn take_injected(&self, me: Searcher) -> Option<JobRef> {
        if self.len_hint.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut s = lock(&self.state);
        self.take_locked(&mut s, me)
    }

    /// [`LaneQueue::take_injected`] with the lock held. The moved jobs need no wake-up of their
    /// own: the push that put them in the injector already notified sleepers for them, and a
    /// thread that parks later checks the deques (step 4) after taking this lock.
    pub(super) fn take_locked(&self, s: &mut QueueState, me: Searcher) -> Option<JobRef> {
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
    pub(super) fn steal(&self, me: Searcher) -> Option<JobRef> {
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
    pub(super) fn work_visible(&self, me: Searcher) -> bool {
        self.len_hint.load(Ordering::Acquire) > 0
            || self
                .deques
                .iter()
                .enumerate()
                .any(|(i, d)| me != Searcher::Worker(i as u16) && !d.is_empty())
    }
}
