//! Protocol steps 3-7 (module docs): an idle thread spins, parks (with a timer ahead of a
//! tick or a frame), wakes, helps on a latch; and shutdown.

use crate::clock;
use crate::job::{JobRef, WorkerInfo};
use crate::latch::Latch;
use crate::sync::{fence, lock, spin_step, thread, wait, wait_timeout, MutexGuard, Ordering};
use std::time::Duration;

use super::idle::{MIN_TIMED_PARK_NS, TICK_LEAD_MAX_NS, TICK_LEAD_MIN_NS};
use super::*;

impl LaneQueue {
    /// The spin loops' periodic check: yields if told to, then says whether `spin_ns` has
    /// passed since `start`.
    #[inline]
    pub(super) fn spin_expired(&self, start: clock::Stamp, spin_ns: u64) -> bool {
        if self.yield_in_spin {
            thread::yield_now();
        }
        clock::now().ns_since(start) >= spin_ns
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
    pub(super) fn tick_wait(&self, ws: &mut WorkerSearch) -> Option<JobRef> {
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
    pub(super) fn frame_wait(&self, ws: &mut WorkerSearch) -> Option<JobRef> {
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
    pub(super) fn lead_wait(
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
    pub(super) fn wait_for_worker(&self, ws: &mut WorkerSearch) -> Option<JobRef> {
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
    pub(super) fn park<'a>(
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
    pub(super) fn spin_for_work(&self, me: Searcher, start: clock::Stamp, spin_ns: u64) -> bool {
        self.spin_while(me, start, spin_ns, true)
    }

    /// Steps 3a and 3b's spin through the expected arrival: a rest does not end it (the lane
    /// rests until that very push).
    pub(super) fn spin_for_work_through_rest(
        &self,
        me: Searcher,
        start: clock::Stamp,
        spin_ns: u64,
    ) -> bool {
        self.spin_while(me, start, spin_ns, false)
    }

    pub(super) fn spin_while(
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
    pub(super) fn spin_until(&self, latch: &Latch<'_>, me: Searcher, spin_ns: u64) -> bool {
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
}

/// How a park ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Park {
    /// Did not wait: a deque or the injector has work, or the helper's latch is done.
    WorkVisible,
    /// Waited and was woken (a push, a latch, shutdown, or spuriously).
    Woken,
    /// Waited until the timer (a ticked lane's timed park).
    TimedOut,
    /// Did not wait: shut down and nothing left.
    ShutDown,
}
