//! What an idle worker learned: its adaptive spin budget ([`SpinBudget`]), and when work
//! arrives on its lane ([`Arrivals`]: a ticked lane's jitter, the frame period), kept in its
//! [`WorkerSearch`].

use crate::clock;

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
    pub(super) max: u64,
    pub(super) cur: u64,
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

/// The shortest timed park of a ticked lane worth its timer; a nearer tick is waited for the
/// usual way (spin, then park).
pub(super) const MIN_TIMED_PARK_NS: u64 = 100_000;

/// A ticked lane's wake-up lead (how long before the expected tick a timed park ends): twice
/// the learned jitter of the arrivals plus a floor, within these bounds. The spin after the
/// timer lasts at most twice the lead, so a tick costs at most a timer wake-up and
/// `2 * TICK_LEAD_MAX_NS` of spinning.
pub(super) const TICK_LEAD_MIN_NS: u64 = 5_000;
pub(super) const TICK_LEAD_MAX_NS: u64 = 50_000;

/// A worker's search state: its learned spin, the injector-first counter, and what it learned
/// of when work arrives (for a ticked lane's and the frame lead's timed wake-ups).
#[derive(Debug)]
pub(crate) struct WorkerSearch {
    pub(crate) me: u16,
    pub(crate) spin: SpinBudget,
    pub(super) ticks: u32,
    /// Arrivals after an idle gap, on a ticked lane: their jitter around the known tick.
    pub(super) tick: Arrivals,
    /// Frames' first jobs (after the lane's rests): the frame period and its jitter.
    pub(super) frame: Arrivals,
    /// The lane's rest count when this idle gap began: a job that ends a gap in which the
    /// lane rested is a frame's first.
    pub(super) gap_rests: u64,
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
    pub(super) last_start: Option<clock::Stamp>,
    /// The learned period in ns (0: not learned yet; unused for a given tick).
    pub(super) period_ns: u64,
    /// Mean distance of an arrival from one period after the previous one, in ns.
    pub(super) jitter_ns: u64,
    /// Gaps rejected in a row.
    pub(super) rejected: u32,
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
pub(super) const MAX_LEARNED_FRAME_NS: u64 = 100_000_000;
