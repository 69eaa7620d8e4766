//! Starting a plan's lanes: which threads may spin (a spinner must never hold a core its peer
//! needs), each lane's queue, and one pinned thread per worker.

use super::{
    worker_main, LaneCounters, LaneOptions, Lanes, Shared, StartError, NEXT_LANES_ID, NO_OWNER,
    WAIT_SPIN_NS, WORKER_SPIN_NS,
};
use crate::clock;
use crate::plan::{LaneId, LaneKind, LanePlan};
use crate::queue::LaneQueue;
use crate::sync::{thread, Arc, AtomicU32, Mutex};

/// Who may spin: each lane's workers' spin budget (0: they park at once), and the owner's
/// while it waits.
struct SpinPolicy {
    workers: Box<[u64]>,
    owner: u64,
    /// The frame-critical workers and the owner outnumber the cores.
    oversubscribed: bool,
}

impl SpinPolicy {
    /// More threads than cores (workers plus the owner): nobody may spin, a spinner would hold
    /// the core its peer needs (the "never spin on a peer that may share a core" rule).
    fn of(plan: &LanePlan, opts: LaneOptions) -> SpinPolicy {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        let frame_workers: usize = plan
            .lanes()
            .iter()
            .filter(|l| l.kind == LaneKind::FrameCritical)
            .map(|l| l.worker_cores.len())
            .sum();
        // Workers may spin when the frame-critical workers fit the cores (the owner parks
        // while it waits in that case); the owner may spin only when it fits beside them.
        let workers_fit = frame_workers <= cores;
        let oversubscribed = frame_workers + 1 > cores;
        let workers = (0..plan.lanes().len())
            .map(|i| {
                let id = LaneId(i as u16);
                let spec = &plan.lanes()[i];
                let pinned = opts.pin && spec.worker_cores.iter().all(Option::is_some);
                let alone = if pinned {
                    !plan.lane_shares_core(id)
                } else {
                    workers_fit
                };
                let may_spin = opts.spin && spec.kind == LaneKind::FrameCritical && alone;
                if may_spin && !cfg!(loom) {
                    WORKER_SPIN_NS
                } else {
                    0
                }
            })
            .collect();
        // The owner spins while it waits unless it would take a core from a frame-critical
        // worker.
        let owner_shares = plan.owner_core().is_some_and(|c| {
            plan.lanes()
                .iter()
                .any(|l| l.kind == LaneKind::FrameCritical && l.worker_cores.contains(&Some(c)))
        });
        let owner_alone = if opts.pin {
            !owner_shares
        } else {
            !oversubscribed
        };
        let owner = if opts.spin && owner_alone && !cfg!(loom) {
            WAIT_SPIN_NS
        } else {
            0
        };
        SpinPolicy {
            workers,
            owner,
            oversubscribed,
        }
    }
}

impl Lanes {
    /// Starts every lane of `plan` with default options.
    pub fn start(plan: LanePlan) -> Result<Lanes, StartError> {
        Lanes::start_with(plan, LaneOptions::default())
    }

    /// Starts every lane of `plan`.
    pub fn start_with(plan: LanePlan, opts: LaneOptions) -> Result<Lanes, StartError> {
        clock::init();
        // Cache the core list before any worker pins itself (see `plan::machine_cores`).
        let _cores = crate::plan::machine_cores();
        let n = plan.lanes().len();
        let id = NEXT_LANES_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let spin = SpinPolicy::of(&plan, opts);
        // A spinning worker yields its core at each clock check where the lane's threads and
        // the owner outnumber the cores.
        let queues: Box<[LaneQueue]> = plan
            .lanes()
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let yield_in_spin = spin.workers[i] > 0 && spin.oversubscribed;
                LaneQueue::new(id, LaneId(i as u16), l.worker_cores.len(), yield_in_spin)
            })
            .collect();
        let counters: Box<[LaneCounters]> = (0..n).map(|_| LaneCounters::default()).collect();
        let shared = Arc::new(Shared {
            id,
            queues,
            spin_ns: spin.workers,
            counters,
            plan: plan.clone(),
            owner_thread: AtomicU32::new(NO_OWNER),
            wait_spin_ns: spin.owner,
            pin_outcomes: Mutex::new(Vec::new()),
            detached_panic_log: Mutex::new(Vec::new()),
        });
        let mut lanes = Lanes {
            shared,
            threads: Vec::with_capacity(plan.total_workers()),
        };
        lanes.spawn_workers(&plan, opts)?;
        Ok(lanes)
    }

    /// One thread per worker of every lane, named `lg-LANE-N`, pinned when `opts.pin`.
    fn spawn_workers(&mut self, plan: &LanePlan, opts: LaneOptions) -> Result<(), StartError> {
        for (li, spec) in plan.lanes().iter().enumerate() {
            for (wi, core) in spec.worker_cores.iter().enumerate() {
                let shared = Arc::clone(&self.shared);
                let core = if opts.pin { *core } else { None };
                let kind = spec.kind;
                let name = format!("lg-{}-{wi}", spec.name);
                let body = move || worker_main(shared, LaneId(li as u16), wi as u16, core, kind);
                #[cfg(not(loom))]
                let handle = thread::Builder::new()
                    .name(name)
                    .spawn(body)
                    .map_err(|source| StartError::Spawn {
                        lane: spec.name.clone(),
                        worker: wi,
                        source,
                    })?;
                #[cfg(loom)]
                let handle = {
                    let _ = name;
                    thread::spawn(body)
                };
                self.threads.push(handle);
            }
        }
        Ok(())
    }
}
