//! The decision log: every strategy switch, with the figures that drove it.
//!
//! Owns: the [`Decision`] record and the bounded ring that keeps the latest ones. Must never:
//! grow without bound (the oldest entries fall out, and the count of dropped ones is kept) or
//! be written outside a decision (it is a record, not a trace).

use std::collections::VecDeque;
use std::fmt;

use super::agent::{AgentId, StrategyIndex};

/// Entries kept by default (about a minute of busy decisions; the report shows the latest).
pub(crate) const DEFAULT_LOG_CAPACITY: usize = 1024;

/// One strategy switch.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The frame whose tick decided it (the new strategy runs from the next frame).
    pub frame: u64,
    /// The agent.
    pub agent: AgentId,
    /// The agent's name.
    pub agent_name: String,
    /// Strategy before.
    pub from: StrategyIndex,
    /// Strategy after.
    pub to: StrategyIndex,
    /// Name of `from`.
    pub from_name: String,
    /// Name of `to`.
    pub to_name: String,
    /// Why, with the figures ("GPU pressure: gpu 14.2 ms > target 12.5 ms; ...").
    pub reason: String,
    /// The budget multiplier when it was decided.
    pub multiplier: f64,
    /// The frame-time target when it was decided, ms.
    pub target_ms: f64,
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "frame {}: {}: {} -> {} — {}",
            self.frame, self.agent_name, self.from_name, self.to_name, self.reason
        )
    }
}

/// The bounded log.
#[derive(Debug, Clone)]
pub struct DecisionLog {
    entries: VecDeque<Decision>,
    capacity: usize,
    total: u64,
}

impl DecisionLog {
    /// A log keeping the latest `capacity` decisions (at least 1).
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        DecisionLog {
            entries: VecDeque::with_capacity(capacity),
            capacity,
            total: 0,
        }
    }

    /// Appends one decision; the oldest falls out when full.
    pub(crate) fn push(&mut self, d: Decision) {
        if self.entries.len() == self.capacity {
            self.entries.pop_front();
        }
        self.entries.push_back(d);
        self.total += 1;
    }

    /// The kept decisions, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Decision> + ExactSizeIterator {
        self.entries.iter()
    }

    /// Kept entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing was ever decided (or kept).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every decision ever pushed, kept or not.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Decisions that fell out of the ring.
    pub fn dropped(&self) -> u64 {
        self.total - self.entries.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(frame: u64) -> Decision {
        Decision {
            frame,
            agent: AgentId(0),
            agent_name: "render".into(),
            from: StrategyIndex(0),
            to: StrategyIndex(1),
            from_name: "full".into(),
            to_name: "half".into(),
            reason: "GPU pressure: gpu 14.2 ms > target 12.5 ms".into(),
            multiplier: 1.0,
            target_ms: 12.5,
        }
    }

    #[test]
    fn bounded_and_counts_drops() {
        let mut log = DecisionLog::new(3);
        for f in 0..5 {
            log.push(d(f));
        }
        assert_eq!(log.len(), 3);
        assert_eq!(log.total(), 5);
        assert_eq!(log.dropped(), 2);
        assert_eq!(log.iter().next().unwrap().frame, 2);
    }

    #[test]
    fn reads_like_the_issue_says() {
        assert_eq!(
            d(7).to_string(),
            "frame 7: render: full -> half — GPU pressure: gpu 14.2 ms > target 12.5 ms"
        );
    }
}
