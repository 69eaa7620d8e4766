//! Loom models of the lane runtime through its public API: the real queue, latch, dependency
//! counters, sleep/wake and shutdown code, with loom's atomics, mutexes and threads (see
//! `src/sync.rs`). Capacities are shrunk to the smallest shapes that reach each edge: one or two
//! workers, two or three jobs.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p lanegraph-jobs --release
//! --test loom_lanes` in its own target dir (`scripts/test` does; ~1-2 min on 2 cores).
#![cfg(loom)]
// Opted in from the workspace's `unsafe_code = "deny"`: a plain cell (`Plain`) is how loom checks
// that job dependencies order non-atomic accesses.
#![allow(unsafe_code)]

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;

use lanegraph_jobs::{GraphBuilder, LaneKind, LanePlan, Lanes};

fn lanes(spec: &[(&str, usize)]) -> Lanes {
    let mut plan = LanePlan::empty(&[0]);
    for (name, n) in spec {
        plan = plan
            .with_lane(name, LaneKind::FrameCritical, vec![None; *n])
            .unwrap();
    }
    Lanes::start(plan).unwrap()
}

/// A lane `main` of one worker that the calling thread owns and helps while it waits.
fn owner_served_main() -> Lanes {
    let plan = LanePlan::empty(&[0])
        .with_lane("main", LaneKind::FrameCritical, vec![None])
        .unwrap()
        .with_owner_lane("main")
        .unwrap();
    let lanes = Lanes::start(plan).unwrap();
    lanes.register_owner();
    lanes
}

struct Diamond {
    a: AtomicUsize,
    b: AtomicUsize,
    c_saw: AtomicUsize,
}

/// Two predecessors on two lanes finish concurrently; the join node runs exactly once, after
/// both, and sees both writes (relaxed stores: only the acq-rel pending counter orders them).
/// Covers: dependency counters, queue hand-off between lanes, latch, shutdown.
#[test]
fn join_counter_schedules_once_and_publishes_writes() {
    loom::model(|| {
        let lanes = lanes(&[("physics", 1), ("render", 1)]);
        let mut g = GraphBuilder::<Diamond>::new("diamond");
        let a = g.node("a", "physics", |_, d| d.a.store(1, Ordering::Relaxed));
        let b = g.node("b", "render", |_, d| d.b.store(1, Ordering::Relaxed));
        let c = g.node("c", "physics", |_, d| {
            let seen = d.a.load(Ordering::Relaxed) + d.b.load(Ordering::Relaxed);
            d.c_saw.fetch_add(seen * 10 + 1, Ordering::Relaxed);
        });
        g.edge(a, c).edge(b, c);
        let mut g = g.build(&lanes).unwrap();
        let d = Diamond {
            a: AtomicUsize::new(0),
            b: AtomicUsize::new(0),
            c_saw: AtomicUsize::new(0),
        };
        g.run(&lanes, &d).unwrap();
        // c ran once (the +1) and saw both writes (the 2 * 10).
        assert_eq!(d.c_saw.load(Ordering::Relaxed), 21);
        drop(lanes);
    });
}

/// A scoped job ordered after another sees its write; the scope returns only after both.
/// Covers: slot dependency registration racing the dependency's completion, inline successor.
#[test]
fn scoped_dependency_registration_races_completion() {
    loom::model(|| {
        let lanes = lanes(&[("physics", 1)]);
        let physics = lanes.lane("physics").unwrap();
        let x = AtomicUsize::new(0);
        let y = AtomicUsize::new(0);
        lanes
            .scope(|s| {
                let a = s.spawn(physics, || x.store(5, Ordering::Relaxed)).unwrap();
                s.spawn_after(physics, &[a], || {
                    y.store(x.load(Ordering::Relaxed) + 1, Ordering::Relaxed)
                })
                .unwrap();
            })
            .unwrap();
        assert_eq!(y.load(Ordering::Relaxed), 6);
    });
}

/// Dropping the lanes while a job is queued or running still runs it (shutdown drains).
/// Covers: shutdown. Not the push's own wake-up: shutdown's wake-all rescues a push that failed
/// to notify (this model passes with `push_shared`'s notify removed); that is
/// `a_push_wakes_a_parked_worker_without_shutdown`'s job.
#[test]
fn no_lost_wakeup_and_shutdown_drains() {
    loom::model(|| {
        let lanes = lanes(&[("asset", 1)]);
        let asset = lanes.lane("asset").unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let r2 = Arc::clone(&ran);
        lanes
            .spawn_detached(asset, move || {
                r2.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
        drop(lanes);
        assert_eq!(ran.load(Ordering::Relaxed), 1);
    });
}

/// Two workers claim the chunks of a parallel-for: each chunk exactly once, and the caller sees
/// every chunk's write when it returns. Covers: batch wake of several sleepers, claim counter.
#[test]
fn parallel_for_claims_each_chunk_once() {
    loom::model(|| {
        let lanes = lanes(&[("physics", 2)]);
        let physics = lanes.lane("physics").unwrap();
        let hits = [AtomicUsize::new(0), AtomicUsize::new(0)];
        lanes
            .parallel_for(physics, 0..2, 1, |c, _| {
                hits[c].fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
        assert_eq!(hits[0].load(Ordering::Relaxed), 1);
        assert_eq!(hits[1].load(Ordering::Relaxed), 1);
    });
}

/// The owner helps its own lane while it waits: it and the lane's worker race for the nodes,
/// the latch's completion must wake the owner through the lane queue (not the latch's own
/// condition variable), and every node runs once. Covers: `help_until`, helper wake-up.
#[test]
fn owner_helping_its_lane_is_woken_by_completion() {
    loom::model(|| {
        let lanes = owner_served_main();
        let mut g = GraphBuilder::<AtomicUsize>::new("helped");
        let a = g.node("a", "main", |_, n| {
            n.fetch_add(1, Ordering::Relaxed);
        });
        let b = g.node("b", "main", |_, n| {
            n.fetch_add(1, Ordering::Relaxed);
        });
        let c = g.node("c", "main", |_, n| {
            n.fetch_add(10, Ordering::Relaxed);
        });
        g.edge(a, c).edge(b, c);
        let mut g = g.build(&lanes).unwrap();
        let n = AtomicUsize::new(0);
        g.run(&lanes, &n).unwrap();
        assert_eq!(n.load(Ordering::Relaxed), 12);
    });
}

/// A graph whose only nodes are two roots on the owner's lane: the owner keeps one root to run
/// itself (`push_batch_keeping_one`) and must wake the lane's worker for the other. The roots
/// meet (each signals, then waits for both), so they must run at once.
/// Fails when: the push wakes one sleeper too few (loom reports a deadlock: the owner blocks in
/// its root, the worker sleeps on).
#[test]
fn roots_kept_back_by_the_owner_still_wake_a_worker_for_the_rest() {
    loom::model(|| {
        let lanes = owner_served_main();
        let mut g = GraphBuilder::<Signal>::new("meet");
        g.node("a", "main", |_, s| {
            s.add();
            s.wait_for(2);
        });
        g.node("b", "main", |_, s| {
            s.add();
            s.wait_for(2);
        });
        let mut g = g.build(&lanes).unwrap();
        let s = Signal::default();
        g.run(&lanes, &s).unwrap();
        drop(lanes);
    });
}

/// A join on a lane of two workers: its two predecessors run on both workers (the first inline
/// after the root, the second stolen while the first waits for it), so both decrement the
/// join's count at once. Only a lane of one worker may count with a plain load and store.
/// Fails when: the one-thread counter path is taken on a two-worker lane (a decrement is lost:
/// loom reports the join never runs and the run deadlocks).
#[test]
fn a_join_on_a_two_worker_lane_is_counted_by_both_workers() {
    loom::model(|| {
        let lanes = lanes(&[("physics", 2)]);
        let mut g = GraphBuilder::<Signal>::new("join");
        let a = g.node("a", "physics", |_, _| {});
        // `b` runs inline after `a` and waits until `c` has started on the other worker.
        let b = g.node("b", "physics", |_, s| s.wait_for(1));
        let c = g.node("c", "physics", |_, s| s.add());
        let d = g.node("d", "physics", |_, s| s.add());
        g.edge(a, b).edge(a, c).edge(b, d).edge(c, d);
        let mut g = g.build(&lanes).unwrap();
        let s = Signal::default();
        g.run(&lanes, &s).unwrap();
        assert_eq!(*s.set.lock().unwrap(), 2);
        drop(lanes);
    });
}

/// A one-shot flag a loom thread blocks on (a spin-wait would make loom explore every spin).
#[derive(Default)]
struct Signal {
    set: loom::sync::Mutex<usize>,
    cv: loom::sync::Condvar,
}

impl Signal {
    fn add(&self) {
        *self.set.lock().unwrap() += 1;
        self.cv.notify_all();
    }
    fn wait_for(&self, n: usize) {
        let mut g = self.set.lock().unwrap();
        while *g < n {
            g = self.cv.wait(g).unwrap();
        }
    }
}

/// A push wakes a parked worker by itself: the caller waits for the job *before* dropping the
/// lanes, so shutdown's wake-all cannot rescue a push that failed to notify.
/// Fails when: `push_shared` skips its notify (loom reports a deadlock: the worker parked, the
/// caller blocked on the job).
#[test]
fn a_push_wakes_a_parked_worker_without_shutdown() {
    loom::model(|| {
        let lanes = lanes(&[("asset", 1)]);
        let asset = lanes.lane("asset").unwrap();
        let done = Arc::new(Signal::default());
        let d2 = Arc::clone(&done);
        lanes.spawn_detached(asset, move || d2.add()).unwrap();
        done.wait_for(1);
        drop(lanes);
    });
}

/// Two sleepers, two single-job pushes: each push must wake a sleeper of its own (the partial
/// `notify_one` credit path), because the first job blocks until the second has run, so a
/// second job left to the busy first worker never runs.
/// Fails when: `notify_up_to` takes a second parked worker off `parked` for each job it
/// notifies one for (the second push then finds nobody left to notify; loom reports a
/// deadlock).
#[test]
fn each_push_wakes_a_sleeper_of_its_own() {
    loom::model(|| {
        let lanes = lanes(&[("physics", 2)]);
        let physics = lanes.lane("physics").unwrap();
        let second_ran = Arc::new(Signal::default());
        let done = Arc::new(Signal::default());
        let (s1, d1) = (Arc::clone(&second_ran), Arc::clone(&done));
        lanes
            .spawn_detached(physics, move || {
                s1.wait_for(1);
                d1.add();
            })
            .unwrap();
        let (s2, d2) = (Arc::clone(&second_ran), Arc::clone(&done));
        lanes
            .spawn_detached(physics, move || {
                s2.add();
                d2.add();
            })
            .unwrap();
        done.wait_for(2);
        drop(lanes);
    });
}

/// A job a worker readies goes to its own deque; when the worker then blocks (here: node `b`,
/// run inline, waits until `c` has run), its parked sibling must be woken by that push and
/// steal `c`. Nothing else wakes it: the caller waits for the graph before dropping the lanes.
/// Fails when: the SeqCst fence after a deque push (`wake_for_local`) or before a sleeper's
/// deque check (`park`) is removed (loom reports a deadlock: the sibling sleeps, `b` waits).
#[test]
fn a_job_readied_on_a_worker_wakes_its_parked_sibling() {
    loom::model(|| {
        let lanes = lanes(&[("physics", 2)]);
        let mut g = GraphBuilder::<Signal>::new("fork");
        let a = g.node("a", "physics", |_, _| {});
        // `b` is `a`'s first successor, so the worker that ran `a` runs `b` inline and pushes
        // `c` to its deque.
        let b = g.node("b", "physics", |_, s| s.wait_for(1));
        let c = g.node("c", "physics", |_, s| s.add());
        g.edge(a, b).edge(a, c);
        let mut g = g.build(&lanes).unwrap();
        let s = Signal::default();
        g.run(&lanes, &s).unwrap();
        drop(lanes);
    });
}

/// A worker waits on a scope of its own lane (`help_until`) while its sibling runs the scoped
/// job: when the sibling steals it, the waiting worker parks as a helper of its latch, and the
/// latch's completion must wake it on its own parker.
/// Fails when: the latch's `notify_all` skips the parked helping workers (loom reports a
/// deadlock).
#[test]
fn a_worker_waiting_on_its_own_lanes_scope_is_woken_by_completion() {
    loom::model(|| {
        let lanes = lanes(&[("physics", 2)]);
        let physics = lanes.lane("physics").unwrap();
        let hits = AtomicUsize::new(0);
        lanes
            .scope(|s| {
                s.spawn(physics, || {
                    lanes
                        .scope(|inner| {
                            inner
                                .spawn(physics, || {
                                    hits.fetch_add(1, Ordering::Relaxed);
                                })
                                .unwrap();
                        })
                        .unwrap();
                    hits.fetch_add(10, Ordering::Relaxed);
                })
                .unwrap();
            })
            .unwrap();
        assert_eq!(hits.load(Ordering::Relaxed), 11);
    });
}

/// A plain (non-atomic) cell whose every access loom checks for a happens-before edge: a read
/// not ordered after the write is reported as a causality violation, where a relaxed atomic
/// would only maybe return a stale value.
struct Plain(loom::cell::UnsafeCell<usize>);
// SAFETY: the models use it only where the job dependencies they test order every access
// (that ordering is what loom checks).
unsafe impl Sync for Plain {}

impl Plain {
    /// # Safety
    /// No access to the cell races this one (loom checks it).
    unsafe fn write(&self, v: usize) {
        // SAFETY: the caller's contract.
        self.0.with_mut(|p| unsafe { *p = v });
    }

    /// # Safety
    /// As for `write`.
    unsafe fn read(&self) -> usize {
        // SAFETY: the caller's contract.
        self.0.with(|p| unsafe { *p })
    }
}

/// A dependency completes on one worker while the spawner still registers its dependent: the
/// spawner's guard decrement then takes the dependent's last count and queues it, and the
/// other worker may run it. The dependent's read of the dependency's plain write must be
/// ordered after it through that decrement.
/// Fails when: `spawn`'s guard decrement is `Release` instead of `AcqRel` (loom reports a
/// causality violation on the cell: the spawner acquired nothing from the worker).
#[test]
fn a_dependent_queued_by_the_spawner_sees_its_dependency_write() {
    loom::model(|| {
        let lanes = lanes(&[("physics", 2)]);
        let physics = lanes.lane("physics").unwrap();
        let x = Plain(loom::cell::UnsafeCell::new(0));
        let seen = AtomicUsize::new(0);
        lanes
            .scope(|s| {
                let x = &x;
                // SAFETY: `b` runs after `a` (its dependency); nothing else touches `x`.
                let a = s.spawn(physics, || unsafe { x.write(5) }).unwrap();
                s.spawn_after(physics, &[a], || {
                    // SAFETY: as above.
                    seen.store(unsafe { x.read() }, Ordering::Relaxed);
                })
                .unwrap();
            })
            .unwrap();
        assert_eq!(seen.load(Ordering::Relaxed), 5);
        drop(lanes);
    });
}

/// A dependent of two jobs that finish on the lane's two workers: whichever worker takes its
/// last count (step 4 of a scope job) runs or queues it, and it reads both jobs' plain writes,
/// so that decrement must acquire the other job's release.
/// Fails when: step 4's successor decrement is `Release` instead of `AcqRel` (loom reports a
/// causality violation on the other job's cell).
#[test]
fn a_dependent_of_two_jobs_sees_both_writes_whoever_releases_it() {
    loom::model(|| {
        let lanes = lanes(&[("physics", 2)]);
        let physics = lanes.lane("physics").unwrap();
        let (x, y) = (
            Plain(loom::cell::UnsafeCell::new(0)),
            Plain(loom::cell::UnsafeCell::new(0)),
        );
        let seen = AtomicUsize::new(0);
        lanes
            .scope(|s| {
                let (x, y) = (&x, &y);
                // SAFETY: `c` runs after `a` and `b` (its dependencies); nothing else touches
                // `x` or `y`.
                let a = s.spawn(physics, || unsafe { x.write(1) }).unwrap();
                let b = s.spawn(physics, || unsafe { y.write(2) }).unwrap();
                s.spawn_after(physics, &[a, b], || {
                    // SAFETY: as above.
                    seen.store(unsafe { x.read() + y.read() }, Ordering::Relaxed);
                })
                .unwrap();
            })
            .unwrap();
        assert_eq!(seen.load(Ordering::Relaxed), 3);
        drop(lanes);
    });
}

/// The lost wake-up: a physics job waits on a scope whose job runs on the asset lane
/// (its worker parks on the latch as a helper: the most recent sleeper), a second physics job
/// is pushed while the other physics worker sleeps, then the latch completes and the first job
/// needs the second. The push must reach the idle worker, or the wake-up the latch-waiter took
/// must be passed on; otherwise nothing runs the second job and loom reports a deadlock.
/// Fails when: both halves of the fix are removed (the push notifies the most recent sleeper,
/// and a latch-waiter leaves `help_until` without passing the wake-up on).
#[test]
fn a_wake_up_taken_by_a_latch_waiter_reaches_the_pushed_job() {
    // Four threads and two lanes' locks: at two preemptions this model takes about five
    // minutes on two cores. One preemption does not reach the bug (with the fix removed it
    // passes); two do (loom reports the deadlock), so the bound is fixed here at two whatever
    // `LOOM_MAX_PREEMPTIONS` says.
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(2);
    model.check(|| {
        let lanes = lanes(&[("physics", 2), ("asset", 1)]);
        let physics = lanes.lane("physics").unwrap();
        let asset = lanes.lane("asset").unwrap();
        let (waiting, gate, second) = (Signal::default(), Signal::default(), Signal::default());
        lanes
            .scope(|s| {
                s.spawn(physics, || {
                    lanes
                        .scope(|inner| {
                            inner
                                .spawn(asset, || {
                                    waiting.add();
                                    gate.wait_for(1);
                                })
                                .unwrap();
                        })
                        .unwrap();
                    // The first job now needs the second.
                    second.wait_for(1);
                })
                .unwrap();
                waiting.wait_for(1);
                s.spawn(physics, || second.add()).unwrap();
                gate.add();
            })
            .unwrap();
        drop(lanes);
    });
}

/// A latch completion notifies every worker waiting on a latch in its helper queue and takes
/// them off the parked list; a push right after it (before the woken worker runs) must not
/// spend its wake-up on that worker again, or an idle sleeper stays asleep while the job waits.
/// One physics worker parks helping on a scope whose job runs on the asset lane; the owner
/// completes that job, then pushes a physics job at once. The queue's `notified` bookkeeping
/// asserts (debug builds, as the loom profile is) that no worker is notified twice in one
/// wake-up.
/// Fails when: `notify_all` leaves the notified helping workers on `parked` (the assertion in
/// `notify_up_to` fires on the push).
#[test]
fn a_push_after_a_latch_completion_does_not_notify_the_woken_worker_again() {
    loom::model(|| {
        let lanes = lanes(&[("physics", 1), ("asset", 1)]);
        let physics = lanes.lane("physics").unwrap();
        let asset = lanes.lane("asset").unwrap();
        let (waiting, gate) = (Signal::default(), Signal::default());
        let ran = AtomicUsize::new(0);
        lanes
            .scope(|s| {
                s.spawn(physics, || {
                    // The physics worker waits on this scope, helping (and parking on) physics.
                    lanes
                        .scope(|inner| {
                            inner
                                .spawn(asset, || {
                                    waiting.add();
                                    gate.wait_for(1);
                                })
                                .unwrap();
                        })
                        .unwrap();
                })
                .unwrap();
                waiting.wait_for(1);
                gate.add();
                s.spawn(physics, || {
                    ran.fetch_add(1, Ordering::Relaxed);
                })
                .unwrap();
            })
            .unwrap();
        assert_eq!(ran.load(Ordering::Relaxed), 1);
        drop(lanes);
    });
}
