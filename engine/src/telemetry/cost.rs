//! Agent cost events: (agent id, workload n, time) per agent per frame, for the budget controller.
//!
//! Owns: the event type and a bounded, lock-free queue from the threads that time agents to the
//! controller. Must never: block or allocate on [`CostEventQueue::push`], or lose an event
//! without counting it.

use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_channel::{Receiver, Sender, TrySendError};

use super::CostQueueFull;

/// Which agent a cost belongs to (the budget controller hands these out; stable for a run).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct AgentId(pub u32);

/// One agent's measured cost in one frame: the `(n, time)` sample the cost model fits.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AgentCostEvent {
    /// The agent.
    pub agent: AgentId,
    /// The frame it ran in.
    pub frame: u64,
    /// Its workload size this frame (per-domain: bodies for physics, draws for render...).
    pub n: u64,
    /// Time it took, in milliseconds.
    pub time_ms: f64,
}

/// Queue capacity used by [`CostEventQueue::default`]: 64 agents x 16 frames of slack.
pub const DEFAULT_COST_QUEUE_CAPACITY: usize = 1024;

/// A bounded multi-producer queue of cost events (crossbeam's array channel: a push is a few
/// atomic operations on a preallocated slot, no allocation).
#[derive(Debug, Clone)]
pub struct CostEventQueue {
    tx: Sender<AgentCostEvent>,
    rx: Receiver<AgentCostEvent>,
    capacity: usize,
    dropped: std::sync::Arc<AtomicU64>,
}

impl Default for CostEventQueue {
    fn default() -> Self {
        Self::with_capacity(DEFAULT_COST_QUEUE_CAPACITY)
    }
}

impl CostEventQueue {
    /// A queue holding at most `capacity` undrained events (at least one).
    pub fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        let (tx, rx) = crossbeam_channel::bounded(capacity);
        CostEventQueue {
            tx,
            rx,
            capacity,
            dropped: Default::default(),
        }
    }

    /// Queues an event; when full, drops it, counts it and says so.
    pub fn push(&self, event: AgentCostEvent) -> Result<(), CostQueueFull> {
        match self.tx.try_send(event) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                Err(CostQueueFull {
                    capacity: self.capacity,
                })
            }
        }
    }

    /// Moves every queued event into `out` (oldest first); returns how many.
    pub fn drain_into(&self, out: &mut Vec<AgentCostEvent>) -> usize {
        let before = out.len();
        out.extend(self.rx.try_iter());
        out.len() - before
    }

    /// Events dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(agent: u32, n: u64) -> AgentCostEvent {
        AgentCostEvent {
            agent: AgentId(agent),
            frame: 1,
            n,
            time_ms: n as f64 * 0.01,
        }
    }

    #[test]
    fn drains_in_order_and_counts_overflow() {
        let q = CostEventQueue::with_capacity(2);
        q.push(ev(0, 10)).unwrap();
        q.push(ev(1, 20)).unwrap();
        let e = q.push(ev(2, 30)).unwrap_err();
        assert_eq!(e.capacity, 2);
        assert_eq!(q.dropped(), 1);
        let mut out = Vec::new();
        assert_eq!(q.drain_into(&mut out), 2);
        assert_eq!(out, vec![ev(0, 10), ev(1, 20)]);
        q.push(ev(3, 1)).unwrap();
    }

    #[test]
    fn events_round_trip_through_json() {
        let e = ev(7, 1000);
        let s = serde_json::to_string(&e).unwrap();
        assert_eq!(serde_json::from_str::<AgentCostEvent>(&s).unwrap(), e);
    }
}
