//! Prebuilt job graphs: a DAG of named nodes, each tied to a lane, built once and run every
//! frame with a shared context.
//!
//! Owns: the graph API (builder, run, per-node timing, errors). Must never: allocate per run once
//! warm, run a node before all its predecessors, run a node off its lane, or hang when a node
//! panics.
//!
//! # Run protocol
//! 1. `run` arms the latch with the node count and pushes the roots to their lanes' queues, one
//!    batch per lane. It resets no node state: every run leaves it armed for the next. The thread
//!    that brings a node's pending-predecessor counter to zero stores the predecessor count back
//!    at once (no other predecessor touches it again in this run); a skipped node clears its own
//!    poison flag and timing. Those relaxed stores precede that job's latch count-down
//!    (release), which `run` acquires before it returns, and the next run's pushes publish them.
//!    (Resetting every counter from the caller made it write every node's cache line once per
//!    run, which the workers then had to fetch back.)
//! 2. A worker runs a node (catching a panic: the node is marked failed and its successors
//!    poisoned), then, for each successor: poisons it if needed (relaxed store, published by the
//!    next step's release), decrements its counter (acq-rel). The worker that brings a counter to
//!    zero owns that successor: it sees every predecessor's writes (the decrements form one
//!    release sequence) and schedules it exactly once (loom: `tests/loom_lanes.rs`).
//! 3. The first ready successor on the worker's own lane runs inline on the same worker, with no
//!    queue round trip (a chain costs one counter decrement per link); the others are pushed to
//!    the worker's own deque (stealable by its siblings). When a chain ends, the job continues
//!    with the newest job of its own deque if that is a node of the same run (the rest go back),
//!    so a worker works through its share of a run as one stretch.
//! 4. A poisoned node does not run; it poisons its successors in turn. Every node, run or
//!    skipped, is counted down on the latch once, after it has scheduled its successors; a
//!    stretch counts all its nodes down in one decrement at its end (the latch's line is shared
//!    by every thread of the run, and a decrement per node made it the hottest line at two
//!    threads). While a node's successor is pending, or a stretch holds uncounted nodes, the latch
//!    cannot reach zero, so the run state outlives every access.
//! 5. The caller waits on the latch (helping its own lane only), copies the timings out, and
//!    returns the first panic, if any, naming the node.

mod builder;
mod run;

pub use builder::GraphBuilder;
pub use run::{Graph, NodeTiming};

use crate::error::JobPanicked;
use crate::job::WorkerInfo;
use crate::lanes::Lanes;
use crate::plan::LaneId;

/// A node of a graph under construction. Valid only with the builder that made it (another
/// builder's id is a dangling edge, reported by `build`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodeId {
    pub(crate) index: u32,
    pub(crate) tag: u32,
}

impl NodeId {
    /// The node's index in its graph (the order nodes were declared in).
    pub fn index(self) -> usize {
        self.index as usize
    }
}

/// What a running node knows about where it runs. Pass it on to run nested parallel work on
/// the same lanes.
#[derive(Debug, Clone, Copy)]
pub struct NodeCtx<'a> {
    pub(crate) lanes: &'a Lanes,
    pub(crate) who: WorkerInfo,
    pub(crate) name: &'a str,
}

impl<'a> NodeCtx<'a> {
    /// The lanes the graph runs on (for nested `parallel_for` and scopes).
    pub fn lanes(&self) -> &'a Lanes {
        self.lanes
    }

    /// The lane running the node.
    pub fn lane(&self) -> LaneId {
        self.who.lane
    }

    /// The thread running the node.
    pub fn worker(&self) -> WorkerInfo {
        self.who
    }

    /// The node's name.
    pub fn name(&self) -> &'a str {
        self.name
    }
}

/// A graph could not be built or its run failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GraphError {
    /// The graph has no nodes.
    #[error("graph `{0}` has no nodes; fix: add at least one node before build()")]
    Empty(String),
    /// A node has an empty name.
    #[error(
        "node #{index} has an empty name; fix: name every node (names appear in errors and traces)"
    )]
    EmptyName {
        /// The node's index.
        index: usize,
    },
    /// Two nodes share a name.
    #[error("node name `{0}` is used twice; fix: give every node its own name")]
    DuplicateNode(String),
    /// A node is on a lane the plan does not have.
    #[error("node `{node}` is on lane `{lane}`, which the lane plan does not have (lanes: {lanes:?}); fix: add the lane to the plan or use one of those")]
    UnknownLane {
        /// The node.
        node: String,
        /// The lane asked for.
        lane: String,
        /// The plan's lanes.
        lanes: Vec<String>,
    },
    /// An edge names a node this builder did not make.
    #[error("graph `{graph}`: edge {from} -> {to} names a node that is not in this graph; fix: use NodeIds returned by this builder's node()")]
    DanglingEdge {
        /// The graph.
        graph: String,
        /// The edge's source, as far as it is known.
        from: String,
        /// The edge's target, as far as it is known.
        to: String,
    },
    /// The edges form a cycle (the nodes on it, in edge order).
    #[error("the graph has a cycle: {} -> {}; fix: remove one of those edges", .0.join(" -> "), .0.first().map(String::as_str).unwrap_or(""))]
    Cycle(Vec<String>),
    /// More nodes than a graph may hold.
    #[error("{0} nodes is more than a graph may hold; fix: split it")]
    TooLarge(usize),
    /// The graph was built for another `Lanes` runtime.
    #[error("graph `{0}` was built for another Lanes runtime; fix: build it again with the lanes you run it on")]
    WrongLanes(String),
    /// A node panicked during the run.
    #[error(transparent)]
    NodePanicked(#[from] JobPanicked),
}
