//! Structured, rate-limited engine events: the catalogue and the limiter.
//!
//! Owns: [`EngineEvent`] (every event this module can emit, with its stable five-part message),
//! the per-(subsystem, event, severity) rate limiter, and the suppressed-count summary.
//! Must never: run on a success path (every entry point here is reached only after a breach),
//! put a dynamic value into message text (values are structured fields), or lose count of an
//! event it suppressed.
//!
//! # Message grammar
//! Every message is `code | what | why | fix | doc anchor`: build-stable text that tools can
//! match on, with the measurements as `tracing` fields.
//!
//! # Rate limiting protocol
//! 1. Each event kind is one key: (subsystem, event, severity) is fixed per kind.
//! 2. The first occurrence opens a [`RATE_LIMIT_WINDOW_NS`] window and is emitted.
//! 3. Later occurrences inside the window are counted as suppressed, not emitted.
//! 4. The first occurrence after the window closes, or `flush` at the next frame start after it
//!    closes, first emits one `LG-LOG-001` summary carrying the suppressed count, then (for an
//!    occurrence) opens a new window and is emitted.
//!
//! The limiter's time base is the real monotonic clock (`lanegraph_jobs::clock`), read only on
//! these cold paths: rate limiting is about log volume per wall-clock second.

use lanegraph_jobs::clock;

/// The rate limit window: one event per key per second.
pub(crate) const RATE_LIMIT_WINDOW_NS: u64 = 1_000_000_000;

/// The `tracing` target every engine event uses.
pub(crate) const EVENT_TARGET: &str = "lanegraph";

/// Every rate-limited event the runtime emits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EngineEvent {
    /// A system's run took strictly longer than its budget (warn).
    BudgetOverrun,
    /// A system's run took at least 3 times its budget (error).
    BudgetCritical,
    /// The game loop dropped fixed steps (the step cap or the frame-delta clamp) (warn).
    StepsDropped,
}

/// How severe an event is (mapped to the `tracing` level).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    /// `tracing::Level::WARN`.
    Warn,
    /// `tracing::Level::ERROR`.
    Error,
}

impl EngineEvent {
    /// Number of kinds (size of the limiter's table).
    pub const COUNT: usize = 3;
    /// Every kind, in table order.
    pub const ALL: [EngineEvent; Self::COUNT] = [
        EngineEvent::BudgetOverrun,
        EngineEvent::BudgetCritical,
        EngineEvent::StepsDropped,
    ];

    const fn slot(self) -> usize {
        match self {
            EngineEvent::BudgetOverrun => 0,
            EngineEvent::BudgetCritical => 1,
            EngineEvent::StepsDropped => 2,
        }
    }

    /// The subsystem part of the rate-limit key.
    pub const fn subsystem(self) -> &'static str {
        match self {
            EngineEvent::BudgetOverrun | EngineEvent::BudgetCritical => "system",
            EngineEvent::StepsDropped => "game_loop",
        }
    }

    /// The event part of the rate-limit key (also the `event` field).
    pub const fn name(self) -> &'static str {
        match self {
            EngineEvent::BudgetOverrun => "budget_overrun",
            EngineEvent::BudgetCritical => "budget_critical",
            EngineEvent::StepsDropped => "steps_dropped",
        }
    }

    /// The severity part of the rate-limit key.
    pub const fn severity(self) -> Severity {
        match self {
            EngineEvent::BudgetCritical => Severity::Error,
            EngineEvent::BudgetOverrun | EngineEvent::StepsDropped => Severity::Warn,
        }
    }

    /// The stable message (`code | what | why | fix | doc anchor`).
    pub const fn message(self) -> &'static str {
        match self {
            EngineEvent::BudgetOverrun => BUDGET_OVERRUN_MSG,
            EngineEvent::BudgetCritical => BUDGET_CRITICAL_MSG,
            EngineEvent::StepsDropped => STEPS_DROPPED_MSG,
        }
    }
}

/// Message of [`EngineEvent::BudgetOverrun`].
pub(crate) const BUDGET_OVERRUN_MSG: &str =
    "LG-SYS-001 | system ran over its budget | the measured run \
    time exceeded the budget declared in its SystemDef | cut the system's work or declare a budget \
    it can meet | docs/systems.md#budget-overrun";
/// Message of [`EngineEvent::BudgetCritical`].
pub(crate) const BUDGET_CRITICAL_MSG: &str =
    "LG-SYS-002 | system ran at 3x its budget or more | the \
    measured run time reached the critical multiple of the declared budget | profile the system \
    and cut its work; the budget is a promise, not a hope | docs/systems.md#budget-critical";
/// Message of [`EngineEvent::StepsDropped`].
pub(crate) const STEPS_DROPPED_MSG: &str =
    "LG-LOOP-001 | fixed steps dropped | the frame took longer \
    than the step cap or the frame-delta clamp allows, so the simulation runs in slow motion \
    instead of freezing | reduce per-step work or lengthen the fixed step | \
    docs/systems.md#steps-dropped";
/// Message of the suppressed-count summary.
pub(crate) const RATE_LIMITED_MSG: &str =
    "LG-LOG-001 | events suppressed by the rate limiter | the same \
    (subsystem, event, severity) fired more than once within the 1 s window | read the counters \
    for exact numbers and fix the cause of the event | docs/systems.md#rate-limiting";

/// Emission counts of one event kind since the world was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EventCounts {
    /// Occurrences emitted through `tracing`.
    pub emitted: u64,
    /// Occurrences the limiter suppressed.
    pub suppressed: u64,
    /// Summary events emitted for this kind.
    pub summaries: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct RateSlot {
    /// Start of the open window (clock ns), `None` before the first occurrence.
    window_start: Option<u64>,
    /// Suppressed in the open window, not yet summarised.
    pending: u64,
    counts: EventCounts,
}

/// The rate limiter and its counters: one slot per [`EngineEvent`], no allocation.
#[derive(Debug, Clone, Default)]
pub(crate) struct EventLog {
    slots: [RateSlot; EngineEvent::COUNT],
}

impl EventLog {
    /// Decides whether an occurrence of `kind` at `now_ns` is emitted (true) or suppressed;
    /// emits the pending summary first when the previous window has closed.
    pub(crate) fn admit(&mut self, kind: EngineEvent, now_ns: u64) -> bool {
        let slot = &mut self.slots[kind.slot()];
        match slot.window_start {
            Some(start) if now_ns.saturating_sub(start) < RATE_LIMIT_WINDOW_NS => {
                slot.pending += 1;
                slot.counts.suppressed += 1;
                false
            }
            _ => {
                if slot.pending > 0 {
                    emit_summary(kind, slot.pending);
                    slot.pending = 0;
                    slot.counts.summaries += 1;
                }
                slot.window_start = Some(now_ns);
                slot.counts.emitted += 1;
                true
            }
        }
    }

    /// Emits the summary of every key whose window has closed with suppressed occurrences.
    /// Cheap when nothing is pending (no clock read).
    pub(crate) fn flush(&mut self) {
        if self.slots.iter().all(|s| s.pending == 0) {
            return;
        }
        self.flush_at(clock::now().as_ns());
    }

    /// [`flush`](Self::flush) at an explicit time.
    pub(crate) fn flush_at(&mut self, now_ns: u64) {
        for kind in EngineEvent::ALL {
            let slot = &mut self.slots[kind.slot()];
            let closed = slot
                .window_start
                .is_some_and(|s| now_ns.saturating_sub(s) >= RATE_LIMIT_WINDOW_NS);
            if slot.pending > 0 && closed {
                emit_summary(kind, slot.pending);
                slot.pending = 0;
                slot.counts.summaries += 1;
                slot.window_start = None;
            }
        }
    }

    /// Counts for one kind.
    pub(crate) fn counts(&self, kind: EngineEvent) -> EventCounts {
        self.slots[kind.slot()].counts
    }
}

/// The current time for the limiter (cold path only).
#[cold]
pub(crate) fn limiter_now() -> u64 {
    clock::now().as_ns()
}

#[cold]
fn emit_summary(kind: EngineEvent, suppressed: u64) {
    match kind.severity() {
        Severity::Warn => tracing::warn!(
            target: EVENT_TARGET,
            code = "LG-LOG-001",
            subsystem = kind.subsystem(),
            event = kind.name(),
            severity = "warn",
            suppressed,
            "{}",
            RATE_LIMITED_MSG
        ),
        Severity::Error => tracing::error!(
            target: EVENT_TARGET,
            code = "LG-LOG-001",
            subsystem = kind.subsystem(),
            event = kind.name(),
            severity = "error",
            suppressed,
            "{}",
            RATE_LIMITED_MSG
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_per_window_then_a_summary() {
        let mut log = EventLog::default();
        let k = EngineEvent::BudgetOverrun;
        assert!(log.admit(k, 10));
        for t in 0..99 {
            assert!(!log.admit(k, 10 + t * 1_000_000));
        }
        assert_eq!(log.counts(k).suppressed, 99);
        // The window closes exactly 1 s after it opened.
        assert!(!log.admit(k, 10 + RATE_LIMIT_WINDOW_NS - 1));
        assert!(log.admit(k, 10 + RATE_LIMIT_WINDOW_NS));
        let c = log.counts(k);
        assert_eq!((c.emitted, c.suppressed, c.summaries), (2, 100, 1));
        // Keys are independent.
        assert!(log.admit(EngineEvent::BudgetCritical, 20));
    }

    #[test]
    fn flush_summarises_a_closed_window_once() {
        let mut log = EventLog::default();
        let k = EngineEvent::StepsDropped;
        assert!(log.admit(k, 0));
        assert!(!log.admit(k, 5));
        log.flush_at(RATE_LIMIT_WINDOW_NS - 1);
        assert_eq!(log.counts(k).summaries, 0);
        log.flush_at(RATE_LIMIT_WINDOW_NS);
        log.flush_at(RATE_LIMIT_WINDOW_NS * 3);
        assert_eq!(log.counts(k).summaries, 1);
        // The next occurrence opens a fresh window and is emitted.
        assert!(log.admit(k, RATE_LIMIT_WINDOW_NS * 3));
    }

    #[test]
    fn messages_follow_the_five_part_grammar() {
        for kind in EngineEvent::ALL {
            assert_eq!(kind.message().split(" | ").count(), 5, "{kind:?}");
        }
        assert_eq!(RATE_LIMITED_MSG.split(" | ").count(), 5);
    }
}
