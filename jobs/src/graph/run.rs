//! Running a prebuilt graph (the protocol is in the parent module's docs).
//!
//! Owns: the per-run state (pending counters, poison flags, timings), the node entry
//! function and the wait. Must never: allocate once warm (everything is sized at build).

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::{GraphError, NodeCtx};
use crate::clock::{self, Stamp};
use crate::error::{take_panic_message, JobPanicked};
use crate::job::{JobRef, WorkerInfo};
use crate::lanes::Lanes;
use crate::latch::Latch;
use crate::plan::LaneId;
use crate::sync::{lock, AtomicBool, AtomicU32, AtomicUsize, Mutex, Ordering, UnsafeCell};

pub(crate) type NodeBody<C> = Box<dyn Fn(&NodeCtx<'_>, &C) + Send + Sync>;

/// When and where one node ran in the last run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NodeTiming {
    /// Clock stamp when the node's body started (zero: it did not run).
    pub start: Stamp,
    /// Clock stamp when it returned.
    pub end: Stamp,
    /// The lane it ran on.
    pub lane: u16,
    /// The worker index within the lane (`u16::MAX`: a helping thread).
    pub worker: u16,
    /// Process-unique thread index (a trace track).
    pub thread: u32,
    /// Whether the node ran (false: skipped after a predecessor panicked, or timing off).
    pub ran: bool,
}

/// One node's timing in the current run, written where the caller reads it (no copy after the
/// run: a caller that never looks at the timings never pulls the runner's cache lines over).
/// Writer: the one thread that runs or skips the node, once per run with timing on. Reader:
/// [`Graph::run`]'s caller through the returned slice, after the latch (acquire) ordered every
/// write before it; the slice borrows the graph, so the next run (`&mut`) cannot begin while
/// it is read.
#[repr(transparent)]
struct TimingSlot(UnsafeCell<NodeTiming>);

// SAFETY: (1) each slot is written by exactly one thread per run, the one that owns its node
// (it brought the node's counter to zero, or ran it as a root or inline successor: protocol
// step 4 of the parent module), so two writers never meet; (2) reads happen only after the
// run's latch completed, which orders every write before them (release by the counting-down
// runner, acquire by the waiter), and the returned slice's borrow keeps the next run's writers
// out; so no access races with a write.
unsafe impl Sync for TimingSlot {}

impl TimingSlot {
    /// Writes this run's timing.
    ///
    /// # Safety
    /// The caller owns this slot's node in the current run (see the `Sync` impl).
    #[inline]
    unsafe fn set(&self, t: NodeTiming) {
        // SAFETY: the caller owns the node, so nobody else reads or writes the slot now.
        self.0.with_mut(|p| unsafe { p.write(t) });
    }
}

/// One node's per-run state (see `Core::state`).
#[derive(Debug)]
#[repr(align(64))]
struct NodeState {
    /// Pending predecessors. Writers: completing predecessors (acq-rel decrement); the thread
    /// that reaches zero owns the node and re-arms the counter (relaxed; protocol step 1).
    pending: AtomicU32,
    /// Set (relaxed) by a failed or skipped predecessor before its decrement (which releases
    /// it); read (relaxed) by the owner of the node after its acquiring decrement, which clears
    /// it for the next run.
    poisoned: AtomicBool,
}

/// Everything the workers read during a run.
struct Core<C> {
    names: Box<[String]>,
    bodies: Box<[NodeBody<C>]>,
    lane_of: Box<[LaneId]>,
    succ_off: Box<[u32]>,
    succs: Box<[u32]>,
    preds: Box<[u32]>,
    /// Each node's per-run state, one cache line per node: its counter is decremented by
    /// predecessors on any worker, so two nodes never share a line (no false sharing between
    /// workers, however many there are).
    state: Box<[NodeState]>,
    record_timing: bool,
    /// Per node: its timing in the last run (with timing on; all zero otherwise).
    timings: Box<[TimingSlot]>,
    /// Every node runs on one thread: the graph lies on one lane, that lane has one worker, and
    /// no helper serves it (it is not the owner's lane). Its counters then need no atomic
    /// read-modify-write: only that worker touches them (a run's caller pushes roots, which
    /// have no counter), and across runs the latch (release, acquire by the caller) and the
    /// next run's push (the queue lock) order the worker's accesses.
    one_thread: bool,
    /// The first panic of the run (node, message): written only on failure.
    panic: Mutex<Option<(u32, String)>>,
    /// Nodes skipped in this run (relaxed counter, read after the latch).
    skipped: AtomicUsize,
}

/// A validated graph, ready to run again and again (see the module docs of `graph`).
pub struct Graph<C> {
    name: String,
    core: Core<C>,
    /// Roots grouped by lane: (lane, start, end) into `roots`.
    root_groups: Box<[(LaneId, u32, u32)]>,
    /// Per root group: its roots are the graph's only nodes on their lane (nothing more will
    /// be readied there), so a caller that helps that lane takes one of them itself and wakes
    /// one sleeper fewer (`LaneQueue::push_batch_keeping_one`).
    roots_only: Box<[bool]>,
    roots: Box<[u32]>,
    scratch: Vec<JobRef>,
    /// Under loom the cells cannot be read as values in place: each run copies them here.
    #[cfg(loom)]
    timings: Vec<NodeTiming>,
    lanes_id: usize,
}

impl<C> std::fmt::Debug for Graph<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("name", &self.name)
            .field("nodes", &self.core.names.len())
            .finish()
    }
}

struct RunCtx<'a, C> {
    core: &'a Core<C>,
    ctx: &'a C,
    lanes: &'a Lanes,
    latch: &'a Latch<'a>,
}

impl<C: Sync> Graph<C> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        name: String,
        names: Vec<String>,
        bodies: Vec<NodeBody<C>>,
        lane_of: Vec<LaneId>,
        succ_lists: Vec<Vec<u32>>,
        preds: Vec<u32>,
        record_timing: bool,
        lanes: &Lanes,
    ) -> Graph<C> {
        let n = names.len();
        let (succ_off, succs) = flatten_successors(&succ_lists);
        let (roots, root_groups) = roots_by_lane(&preds, &lane_of);
        // Room in each lane's queue for all of this graph's nodes on it: no grow in a run.
        let mut per_lane = vec![0usize; lanes.plan().lanes().len()];
        for l in &lane_of {
            per_lane[l.index()] += 1;
        }
        for (i, count) in per_lane.iter().enumerate() {
            if *count > 0 {
                lanes.shared().queues[i].reserve(*count);
            }
        }
        let one_thread = match lane_of.first() {
            Some(&l) => {
                lane_of.iter().all(|&x| x == l)
                    && lanes.plan().lanes()[l.index()].worker_cores.len() == 1
                    && lanes.plan().owner_lane() != Some(l)
            }
            None => false,
        };
        let roots_only: Box<[bool]> = root_groups
            .iter()
            .map(|&(lane, start, end)| per_lane[lane.index()] == (end - start) as usize)
            .collect();
        Graph {
            name,
            core: Core {
                names: names.into_boxed_slice(),
                bodies: bodies.into_boxed_slice(),
                lane_of: lane_of.into_boxed_slice(),
                succ_off: succ_off.into_boxed_slice(),
                succs: succs.into_boxed_slice(),
                state: preds
                    .iter()
                    .map(|&p| NodeState {
                        pending: AtomicU32::new(p),
                        poisoned: AtomicBool::new(false),
                    })
                    .collect(),
                preds: preds.into_boxed_slice(),
                record_timing,
                timings: (0..n)
                    .map(|_| TimingSlot(UnsafeCell::new(NodeTiming::default())))
                    .collect(),
                one_thread,
                panic: Mutex::new(None),
                skipped: AtomicUsize::new(0),
            },
            root_groups: root_groups.into_boxed_slice(),
            roots_only,
            roots: roots.into_boxed_slice(),
            scratch: Vec::with_capacity(n),
            #[cfg(loom)]
            timings: vec![NodeTiming::default(); n],
            lanes_id: lanes.id(),
        }
    }

    /// The graph's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.core.names.len()
    }

    /// Whether the graph has no nodes (never true for a built graph).
    pub fn is_empty(&self) -> bool {
        self.core.names.is_empty()
    }

    /// The name of node `index`.
    pub fn node_name(&self, index: usize) -> Option<&str> {
        self.core.names.get(index).map(String::as_str)
    }

    /// The lane of node `index`.
    pub fn node_lane(&self, index: usize) -> Option<LaneId> {
        self.core.lane_of.get(index).copied()
    }

    /// Per-node timing of the last run, indexed like the nodes.
    pub fn last_timings(&self) -> &[NodeTiming] {
        self.timings()
    }

    /// Runs every node once, each after its predecessors, each on its lane, with `ctx` shared by
    /// reference; returns when all have finished (or were skipped). Allocation-free once warm.
    ///
    /// Errors: the graph was built for other lanes; a node panicked (named, with its message;
    /// its dependants were skipped; the others ran; the lanes keep working).
    pub fn run(&mut self, lanes: &Lanes, ctx: &C) -> Result<&[NodeTiming], GraphError> {
        if lanes.id() != self.lanes_id {
            return Err(GraphError::WrongLanes(self.name.clone()));
        }
        let core = &self.core;
        let n = core.names.len();
        // No per-run reset of the node state (protocol step 1): the last run re-armed it.
        core.skipped.store(0, Ordering::Relaxed);
        let helper = lanes.shared().helper_queue();
        let latch = Latch::new(n, helper.map(|(q, _)| q));
        let run = RunCtx {
            core,
            ctx,
            lanes,
            latch: &latch,
        };
        let data = &run as *const RunCtx<'_, C> as *const ();
        let mut woke = false;
        let helped = helper.map(|(_, who)| who.lane);
        for (&(lane, start, end), &roots_only) in self.root_groups.iter().zip(&self.roots_only) {
            self.scratch.clear();
            for &r in &self.roots[start as usize..end as usize] {
                self.scratch.push(JobRef {
                    data,
                    arg: r as usize,
                    exec: exec_node::<C>,
                });
            }
            let queue = &lanes.shared().queues[lane.index()];
            // The caller helps this lane until the run is over and nothing more will be
            // readied there: it runs one of these roots itself (a one-node frame on the owner's
            // lane wakes no worker at all).
            woke |= if roots_only && helped == Some(lane) {
                queue.push_batch_keeping_one(&self.scratch)
            } else {
                queue.push_batch(&self.scratch)
            };
        }
        self.scratch.clear();
        lanes.shared().wait(&latch, helper, woke);
        // Every job has finished with `run` (the latch says so); it lives until here.
        let _ = &run;
        #[cfg(loom)]
        if core.record_timing {
            for (t, slot) in self.timings.iter_mut().zip(core.timings.iter()) {
                // SAFETY: the latch completed: every runner is done with the slots.
                slot.0.with_mut(|p| *t = unsafe { *p });
            }
        }
        let failure = lock(&core.panic).take();
        if let Some((node, message)) = failure {
            return Err(GraphError::NodePanicked(JobPanicked {
                job: core.names[node as usize].clone(),
                message,
                skipped: core.skipped.load(Ordering::Relaxed),
            }));
        }
        Ok(self.timings())
    }

    /// The last run's timings, read in place.
    fn timings(&self) -> &[NodeTiming] {
        #[cfg(not(loom))]
        {
            let slots: &[TimingSlot] = &self.core.timings;
            // SAFETY: (1) layout: `TimingSlot` is `repr(transparent)` over `sync::UnsafeCell`,
            // itself transparent outside loom over `std::cell::UnsafeCell<NodeTiming>`, which
            // has the same in-memory representation as `NodeTiming`; so the slice's memory is
            // `len` valid `NodeTiming`s; (2) no writer: runs write slots only inside `run`,
            // which takes `&mut self`, and the last one's latch ordered its writes before this
            // read; the returned borrow of `self` keeps the next run out while it lives.
            unsafe { std::slice::from_raw_parts(slots.as_ptr().cast::<NodeTiming>(), slots.len()) }
        }
        #[cfg(loom)]
        {
            &self.timings
        }
    }
}

/// The successor lists as one array and each node's offset into it (`n + 1` offsets).
fn flatten_successors(succ_lists: &[Vec<u32>]) -> (Vec<u32>, Vec<u32>) {
    let mut succ_off = Vec::with_capacity(succ_lists.len() + 1);
    let mut succs = Vec::new();
    for list in succ_lists {
        succ_off.push(succs.len() as u32);
        succs.extend_from_slice(list);
    }
    succ_off.push(succs.len() as u32);
    (succ_off, succs)
}

/// The nodes without predecessors, sorted by lane, and the `(lane, start, end)` ranges of
/// `roots` each lane's roots take.
fn roots_by_lane(preds: &[u32], lane_of: &[LaneId]) -> (Vec<u32>, Vec<(LaneId, u32, u32)>) {
    let n = preds.len() as u32;
    let mut roots: Vec<u32> = (0..n).filter(|&i| preds[i as usize] == 0).collect();
    roots.sort_by_key(|&i| (lane_of[i as usize], i));
    let mut root_groups = Vec::new();
    let mut start = 0;
    while start < roots.len() {
        let lane = lane_of[roots[start] as usize];
        let mut end = start;
        while end < roots.len() && lane_of[roots[end] as usize] == lane {
            end += 1;
        }
        root_groups.push((lane, start as u32, end as u32));
        start = end;
    }
    (roots, root_groups)
}

/// The entry function of a graph node job.
///
/// # Safety
/// `data` points to the `RunCtx<C>` of a run whose latch has not completed; `arg` is a node
/// index of that graph, pushed exactly once per run.
unsafe fn exec_node<C: Sync>(data: *const (), arg: usize, who: WorkerInfo) {
    // SAFETY: (1) `data` is the `RunCtx<C>` on `Graph::run`'s stack; (2) `run` does not return
    // before the latch completes, and this node has not counted it down yet (protocol step 4),
    // so the context is alive; (3) it is only read here (shared references and atomics).
    let run = unsafe { &*(data as *const RunCtx<'_, C>) };
    let core = run.core;
    let mut node = arg as u32;
    // Nodes finished in this inline chain, counted down at its end (one latch RMW per chain).
    let mut finished = 0usize;
    // Ready successors on our lane, pushed in one batch (one lock) per node; only the filled
    // prefix is ever read, so the buffer is initialised once per job, not per node.
    let mut batch = [PLACEHOLDER; PUSH_BATCH];
    let queue = &run.lanes.shared().queues[who.lane.index()];
    // One clock read per node: on this thread, a node's end stamp is the next node's start
    // stamp (an inline chain, or the next node of this run from our own deque). The time
    // between them (readying successors) is counted in the next node; every stamp is a real
    // clock read, none is estimated.
    let mut last_end: Option<Stamp> = None;
    loop {
        let i = node as usize;
        // Relaxed: our acquiring decrement of `pending` (or the queue lock, for roots, or program
        // order, for a single-predecessor node run inline) ordered every predecessor's poison
        // store before this load.
        let mut failed = core.state[i].poisoned.load(Ordering::Relaxed);
        if failed {
            // Re-armed for the next run (step 1): no predecessor writes the flag again in this
            // run, and the next run's pushes publish the store.
            core.state[i].poisoned.store(false, Ordering::Relaxed);
            core.skipped.fetch_add(1, Ordering::Relaxed);
            if core.record_timing {
                // A skipped node must not report an earlier run's stamps as its own.
                // SAFETY: this thread owns node `i` in this run (it reached its job).
                unsafe { core.timings[i].set(NodeTiming::default()) };
            }
        } else {
            let ctx = NodeCtx {
                lanes: run.lanes,
                who,
                name: &core.names[i],
            };
            let start = if core.record_timing {
                last_end.unwrap_or_else(clock::now)
            } else {
                Stamp(0)
            };
            let result = catch_unwind(AssertUnwindSafe(|| (core.bodies[i])(&ctx, run.ctx)));
            if core.record_timing {
                let end = clock::now();
                last_end = Some(end);
                let timing = NodeTiming {
                    start,
                    end,
                    lane: who.lane.index() as u16,
                    worker: who.worker,
                    thread: who.thread,
                    ran: true,
                };
                // SAFETY: this thread owns node `i` in this run (it reached its job).
                unsafe { core.timings[i].set(timing) };
            }
            if let Err(p) = result {
                failed = true;
                let message = take_panic_message(p);
                let mut slot = lock(&core.panic);
                if slot.is_none() {
                    *slot = Some((node, message));
                }
            }
        }
        finished += 1;
        let mut inline: Option<u32> = None;
        let mut batched = 0usize;
        let (from, to) = (core.succ_off[i] as usize, core.succ_off[i + 1] as usize);
        for &s in &core.succs[from..to] {
            let si = s as usize;
            if failed {
                core.state[si].poisoned.store(true, Ordering::Relaxed);
            }
            // A single-predecessor successor is ours alone: no counter traffic. Otherwise
            // AcqRel: release our node's writes (and the poison) to whoever finishes the count;
            // acquire everyone else's if we do.
            let preds = core.preds[si];
            if preds > 1 {
                let pending = &core.state[si].pending;
                let last = if core.one_thread {
                    // Only this thread touches the counter (see `Core::one_thread`): a plain
                    // load and store, no lock-prefixed instruction.
                    let left = pending.load(Ordering::Relaxed) - 1;
                    pending.store(left, Ordering::Relaxed);
                    left == 0
                } else {
                    pending.fetch_sub(1, Ordering::AcqRel) == 1
                };
                if !last {
                    continue;
                }
                // Re-armed for the next run (step 1): every predecessor has counted down, so
                // nothing else touches this counter in this run.
                core.state[si].pending.store(preds, Ordering::Relaxed);
            }
            let lane = core.lane_of[si];
            let job = JobRef {
                data,
                arg: si,
                exec: exec_node::<C>,
            };
            if lane != who.lane {
                run.lanes.shared().queues[lane.index()].push_shared(&[job]);
            } else if inline.is_none() {
                inline = Some(s);
            } else {
                batch[batched] = job;
                batched += 1;
                if batched == PUSH_BATCH {
                    queue.push_from(who, &batch[..batched]);
                    batched = 0;
                }
            }
        }
        if batched > 0 {
            queue.push_from(who, &batch[..batched]);
        }
        if let Some(s) = inline {
            node = s;
            continue;
        }
        // The chain ended: continue with the newest job of our own deque if it is a node of
        // this same run (the latch is counted down once per stretch, not once per chain: the
        // latch's line is shared by every thread of the run).
        if let Some(next) = queue.pop_own(who) {
            if next.data == data && next.exec as *const () == exec_node::<C> as *const () {
                node = next.arg as u32;
                continue;
            }
            // Someone else's job: back where it was, for the worker loop to run.
            queue.push_from(who, &[next]);
        }
        // Last touch of `run`: a pending successor would keep the latch above zero until here
        // (protocol step 4), and nothing of ours is pending any more.
        run.latch.count_down_by(finished);
        return;
    }
}

/// Same-lane successors pushed per lock.
const PUSH_BATCH: usize = 8;

/// Filler for the unused tail of a push buffer; never pushed (only the filled prefix is).
const PLACEHOLDER: JobRef = JobRef {
    data: std::ptr::null(),
    arg: 0,
    exec: noop_job,
};

/// The entry function of [`PLACEHOLDER`] (never called).
unsafe fn noop_job(_: *const (), _: usize, _: WorkerInfo) {}
