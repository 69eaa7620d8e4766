//! The lane runtime: detached jobs, shutdown, owner lane, pinning reports.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use lanegraph_jobs::{GraphBuilder, LaneKind, LanePlan, Lanes};

#[test]
fn dropping_lanes_runs_queued_detached_jobs_and_joins() {
    let done = Arc::new(AtomicUsize::new(0));
    {
        let lanes = common::lanes(1, 1, 1);
        let asset = lanes.lane("asset").unwrap();
        for _ in 0..200 {
            let done = Arc::clone(&done);
            lanes
                .spawn_detached(asset, move || {
                    std::thread::sleep(Duration::from_micros(50));
                    done.fetch_add(1, Ordering::SeqCst);
                })
                .unwrap();
        }
        // Dropped while work is queued and running.
    }
    assert_eq!(done.load(Ordering::SeqCst), 200, "nothing queued is lost");
}

/// A detached job on the asset lane runs a graph across two lanes (the engine's asset
/// pipeline: decode on `asset`, upload on `render`) through an `Arc<Lanes>`, and when the job
/// holds the last handle, the drop on the worker does not try to join that worker (a hang).
#[test]
fn a_detached_job_runs_a_cross_lane_graph_and_may_drop_the_last_handle() {
    struct Ctx {
        order: std::sync::Mutex<Vec<String>>,
    }
    let lanes = Arc::new(common::lanes(1, 1, 1));
    let mut b = GraphBuilder::<Ctx>::new("load");
    let decode = b.node("decode", "asset", |n, c: &Ctx| {
        c.order
            .lock()
            .unwrap()
            .push(format!("decode on {:?}", n.lane()));
    });
    let upload = b.node("upload", "render", |n, c: &Ctx| {
        c.order
            .lock()
            .unwrap()
            .push(format!("upload on {:?}", n.lane()));
    });
    b.edge(decode, upload);
    let mut graph = b.build(&lanes).expect("graph");
    let (asset, render) = (lanes.lane("asset").unwrap(), lanes.lane("render").unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = Arc::clone(&lanes);
    lanes
        .spawn_detached(asset, move || {
            let ctx = Ctx {
                order: std::sync::Mutex::new(Vec::new()),
            };
            let ran = graph
                .run(&handle, &ctx)
                .map(|_| ())
                .map_err(|e| e.to_string());
            // Keep the handle until the main thread has dropped its own: this job's drop is
            // then the last one, on the asset worker.
            std::thread::sleep(Duration::from_millis(50));
            drop(handle);
            let _ = tx.send((ran, ctx.order.into_inner().unwrap()));
        })
        .unwrap();
    drop(lanes);
    let (ran, order) = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the job finished (no self-join hang)");
    assert_eq!(ran, Ok(()));
    assert_eq!(
        order,
        vec![
            format!("decode on {asset:?}"),
            format!("upload on {render:?}")
        ]
    );
}

#[test]
fn detached_panics_are_counted_and_the_lane_lives_on() {
    let lanes = common::lanes(1, 1, 1);
    let asset = lanes.lane("asset").unwrap();
    lanes
        .spawn_detached(asset, || panic!("corrupt.png: bad header"))
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    lanes
        .spawn_detached(asset, move || tx.send(5).unwrap())
        .unwrap();
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 5);
    let stats = lanes.stats(asset).unwrap();
    assert_eq!(stats.detached_panics, 1);
    let msgs = lanes.take_detached_panics();
    assert_eq!(msgs.len(), 1);
    assert!(msgs[0].contains("corrupt.png"), "{msgs:?}");
}

#[test]
fn the_owner_lane_runs_on_the_waiting_thread() {
    let plan = LanePlan::empty(&[0])
        .with_lane("physics", LaneKind::FrameCritical, vec![None])
        .unwrap()
        .with_lane("main", LaneKind::FrameCritical, vec![None])
        .unwrap()
        .with_owner_lane("main")
        .unwrap();
    let lanes = Lanes::start(plan).unwrap();
    lanes.register_owner();
    let me = std::thread::current().id();
    let on_owner = AtomicUsize::new(0);
    // Jobs the lane's worker takes wait (up to a shared 5 s deadline) until the owner has run
    // one: a preempted owner would otherwise find the worker had drained all 64 first. Only an
    // owner that never helps runs into the deadline.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut b = GraphBuilder::<AtomicUsize>::new("g");
    for i in 0..64 {
        b.node(&format!("m{i}"), "main", move |_, c| {
            if std::thread::current().id() == me {
                c.fetch_add(1, Ordering::Relaxed);
            } else {
                while c.load(Ordering::Relaxed) == 0 && std::time::Instant::now() < deadline {
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
            std::thread::sleep(Duration::from_micros(20));
        });
    }
    let mut g = b.build(&lanes).unwrap();
    g.run(&lanes, &on_owner).unwrap();
    assert!(
        on_owner.load(Ordering::Relaxed) > 0,
        "the owner thread should have helped its own lane"
    );
}

#[test]
fn a_waiting_owner_never_runs_other_lanes_jobs() {
    let lanes = common::lanes(1, 1, 1);
    let me = std::thread::current().id();
    let stolen = AtomicUsize::new(0);
    let mut b = GraphBuilder::<AtomicUsize>::new("g");
    for i in 0..32 {
        b.node(&format!("p{i}"), "physics", move |_, c| {
            if std::thread::current().id() == me {
                c.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    let mut g = b.build(&lanes).unwrap();
    for _ in 0..10 {
        g.run(&lanes, &stolen).unwrap();
    }
    assert_eq!(stolen.load(Ordering::Relaxed), 0);
}

#[test]
fn pin_outcomes_are_reported_for_every_worker() {
    let plan = LanePlan::auto();
    let workers = plan.total_workers();
    let lanes = Lanes::start(plan).unwrap();
    // Workers report as they start; give them a moment.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while lanes.pin_outcomes().len() < workers && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let outcomes = lanes.pin_outcomes();
    assert_eq!(outcomes.len(), workers);
    for o in outcomes {
        assert!(o.core.is_some(), "auto plans pin every worker: {o:?}");
        if o.lane == "asset" {
            assert!(o.lowered_priority.is_some());
        }
    }
}

#[test]
fn a_repeatable_job_runs_once_per_spawn_and_its_panics_are_counted() {
    let lanes = common::lanes(1, 1, 1);
    let render = lanes.lane("render").unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let seen = ran.clone();
    let job = lanes
        .repeatable(render, move || {
            if seen.fetch_add(1, Ordering::SeqCst) == 3 {
                panic!("the fourth run panics");
            }
        })
        .unwrap();
    for _ in 0..10 {
        lanes.spawn_repeatable(&job).unwrap();
    }
    let t0 = std::time::Instant::now();
    while ran.load(Ordering::SeqCst) < 10 {
        assert!(t0.elapsed() < Duration::from_secs(20), "spawns were lost");
        std::thread::sleep(Duration::from_millis(1));
    }
    // The lane lived on past the panic, and counted it.
    let t0 = std::time::Instant::now();
    while lanes.stats(render).unwrap().detached_panics < 1 {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the panic was not counted"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let log = lanes.take_detached_panics();
    assert!(log.iter().any(|m| m.contains("fourth run")), "{log:?}");
    // A job made by other lanes is refused.
    let other = common::lanes(1, 1, 1);
    assert!(other.spawn_repeatable(&job).is_err());
}

/// Only the registered owner helps the owner lane: another thread that starts work on it (an
/// IO or user thread) waits for the lane's worker instead of running frame-critical jobs.
#[test]
fn only_the_registered_owner_helps_the_owner_lane() {
    use std::sync::atomic::AtomicBool;
    let plan = LanePlan::empty(&[0])
        .with_lane("physics", LaneKind::FrameCritical, vec![None])
        .unwrap()
        .with_owner_lane("physics")
        .unwrap();
    let lanes = Lanes::start(plan).unwrap();
    let physics = lanes.lane("physics").unwrap();
    // Where the scoped job ran, with the lane's one worker held busy until `release`: a waiter
    // that helps runs the job itself; one that does not waits until the worker is released.
    let run_once = |lanes: &Lanes, release_from_job: bool| {
        let release = Arc::new(AtomicBool::new(false));
        let r = Arc::clone(&release);
        lanes
            .spawn_detached(physics, move || {
                let deadline = std::time::Instant::now() + Duration::from_secs(5);
                while !r.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
                    std::thread::sleep(Duration::from_micros(100));
                }
            })
            .unwrap();
        // Give the worker time to take the blocking job (not an assertion: a slow start only
        // makes a helping waiter less likely to be caught).
        std::thread::sleep(Duration::from_millis(20));
        let ran_on = std::sync::Mutex::new(None);
        let releaser = (!release_from_job).then(|| {
            let r = Arc::clone(&release);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                r.store(true, Ordering::SeqCst);
            })
        });
        lanes
            .scope(|s| {
                s.spawn(physics, || {
                    *ran_on.lock().unwrap() = Some(std::thread::current().id());
                    release.store(true, Ordering::SeqCst);
                })
                .unwrap();
            })
            .unwrap();
        if let Some(t) = releaser {
            t.join().unwrap();
        }
        ran_on.into_inner().unwrap().unwrap()
    };
    // An unregistered thread: the job runs on the worker, after the release.
    let other = std::thread::scope(|s| {
        s.spawn(|| (std::thread::current().id(), run_once(&lanes, false)))
            .join()
            .unwrap()
    });
    assert_ne!(
        other.1, other.0,
        "a thread without a role ran a physics job"
    );
    // The registered owner helps: it runs the job itself while the worker is held.
    lanes.register_owner();
    assert!(lanes.is_owner_thread());
    assert_eq!(run_once(&lanes, true), std::thread::current().id());
}

/// Everything a worker holds is stealable. Eight roots on a two-worker lane: the first blocks
/// until the other seven have run. Whichever worker takes it from the lane's queue takes its
/// fair share with it (`len / (workers + 1)` = 2 jobs); the second must reach the other worker.
/// With the old private batch it was hidden behind the blocked job until the timeout (the
/// review's "a fork-join's claim job waits behind an unrelated long job"); with deques the
/// other worker steals it.
#[test]
fn a_job_taken_with_a_blocked_one_is_stolen_not_hidden() {
    struct Gate {
        ran: std::sync::Mutex<usize>,
        cv: std::sync::Condvar,
        timed_out: std::sync::atomic::AtomicBool,
    }
    let lanes = common::lanes(2, 1, 1);
    let mut g = GraphBuilder::<Gate>::new("gate");
    g.node("blocked", "physics", |_, gate| {
        let ran = gate.ran.lock().unwrap();
        let (_ran, wait) = gate
            .cv
            .wait_timeout_while(ran, Duration::from_secs(20), |r| *r < 7)
            .unwrap();
        if wait.timed_out() {
            gate.timed_out.store(true, Ordering::SeqCst);
        }
    });
    for i in 0..7 {
        g.node(&format!("quick{i}"), "physics", |_, gate| {
            *gate.ran.lock().unwrap() += 1;
            gate.cv.notify_all();
        });
    }
    let mut g = g.build(&lanes).unwrap();
    for _ in 0..20 {
        let gate = Gate {
            ran: std::sync::Mutex::new(0),
            cv: std::sync::Condvar::new(),
            timed_out: std::sync::atomic::AtomicBool::new(false),
        };
        g.run(&lanes, &gate).unwrap();
        assert!(
            !gate.timed_out.load(Ordering::SeqCst),
            "a job stayed hidden behind the blocked one"
        );
    }
}

/// A ticked lane's worker in a timed park (here: a 60 s tick, so its timer would end a minute
/// from now) is still woken by a push at once: the tick is a hint, never a delay. Runs the
/// graph on a helper thread so a missed wake-up fails the test instead of hanging it.
#[test]
fn a_push_wakes_a_ticked_lane_before_its_timer() {
    let plan = LanePlan::empty(&[0])
        .with_lane("tick", LaneKind::FrameCritical, vec![None])
        .unwrap();
    let lanes = Arc::new(Lanes::start(plan).unwrap());
    let tick = lanes.lane("tick").unwrap();
    lanes.set_tick(tick, Some(Duration::from_secs(60))).unwrap();
    let mut g = GraphBuilder::<AtomicUsize>::new("ticked");
    g.node("n", "tick", |_, c| {
        c.fetch_add(1, Ordering::Relaxed);
    });
    let mut g = g.build(&lanes).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let l2 = Arc::clone(&lanes);
    let runner = std::thread::spawn(move || {
        let c = AtomicUsize::new(0);
        for _ in 0..5 {
            g.run(&l2, &c).unwrap();
            // Long enough for the worker to give up spinning and take its timed park.
            std::thread::sleep(Duration::from_millis(20));
        }
        tx.send(c.load(Ordering::Relaxed)).unwrap();
    });
    let ran = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("a push did not wake the ticked lane's timed park");
    assert_eq!(ran, 5);
    runner.join().unwrap();
    // Unknown lanes are typed errors; `None` turns the tick off.
    let other = common::lanes(1, 1, 1);
    let unknown = other.lane("asset").unwrap();
    assert!(lanes
        .set_tick(unknown, Some(Duration::from_millis(1)))
        .is_err());
    lanes.set_tick(tick, None).unwrap();
}

/// Regression test: `set_tick(Some(Duration::MAX))` overflowed the jitter average on the
/// second or third arrival (debug build: the worker panicked outside any job and the lane
/// hung). Each arrival here is a few ms apart, so the jitter is updated every round.
#[test]
fn a_tick_of_duration_max_is_clamped_and_the_lane_keeps_running() {
    let plan = LanePlan::empty(&[0])
        .with_lane("tick", LaneKind::FrameCritical, vec![None])
        .unwrap();
    let lanes = Arc::new(Lanes::start(plan).unwrap());
    let tick = lanes.lane("tick").unwrap();
    lanes.set_tick(tick, Some(Duration::MAX)).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let l2 = Arc::clone(&lanes);
    let runner = std::thread::spawn(move || {
        let done = Arc::new(AtomicUsize::new(0));
        for round in 1..=6 {
            let d = Arc::clone(&done);
            l2.spawn_detached(tick, move || {
                d.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
            // Each round's job ran (on a worker still alive) before the next is pushed.
            while done.load(Ordering::SeqCst) < round {
                std::thread::yield_now();
            }
            std::thread::sleep(Duration::from_millis(3));
        }
        tx.send(done.load(Ordering::SeqCst)).unwrap();
    });
    let ran = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the ticked lane stopped running jobs");
    assert_eq!(ran, 6);
    runner.join().unwrap();
    assert_eq!(lanes.stats(tick).unwrap().detached_panics, 0);
}

/// Regression test: detached jobs are documented as FIFO, but a batch a worker took from the
/// injector into its ring was popped newest first (1, 3, 2, 4, 5, 6). One worker runs them in
/// the order they were spawned.
#[test]
fn detached_jobs_on_one_worker_run_in_the_order_spawned() {
    let lanes = common::lanes(1, 1, 1);
    let asset = lanes.lane("asset").unwrap();
    for round in 0..20 {
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let gate = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // The first job holds the worker until every other job is queued, so the worker meets
        // a long injector and takes batches from it.
        let g = Arc::clone(&gate);
        lanes
            .spawn_detached(asset, move || {
                while !g.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
            })
            .unwrap();
        let n = 40;
        for i in 0..n {
            let o = Arc::clone(&order);
            lanes
                .spawn_detached(asset, move || o.lock().unwrap().push(i))
                .unwrap();
        }
        gate.store(true, Ordering::Release);
        let t0 = std::time::Instant::now();
        while order.lock().unwrap().len() < n {
            assert!(t0.elapsed() < Duration::from_secs(20), "jobs lost");
            std::thread::yield_now();
        }
        let got = order.lock().unwrap().clone();
        assert_eq!(got, (0..n).collect::<Vec<_>>(), "round {round}");
    }
}

/// Two physics workers and `asset` asset workers that never spin (a parked worker is then
/// woken only by a notify: the wake-up paths are what is tested).
fn unspun_lanes(asset: usize) -> Arc<Lanes> {
    let plan = LanePlan::empty(&[0])
        .with_lane("physics", LaneKind::FrameCritical, vec![None; 2])
        .unwrap()
        .with_lane("asset", LaneKind::Background, vec![None; asset])
        .unwrap();
    let opts = lanegraph_jobs::LaneOptions {
        pin: false,
        spin: false,
    };
    Arc::new(Lanes::start_with(plan, opts).unwrap())
}

/// The lost wake-up: a push notifies the most recently parked worker, usually one parked
/// waiting on a latch. When that latch completed before the worker ran again, it left its wait
/// without taking the job and without passing the wake-up on: the job sat in the injector while
/// its idle sibling slept, and a waiter that needed it hung. Spinning off, two physics workers:
/// a physics job waits on a scope whose job runs on the asset lane, a second physics job is
/// pushed, the scope completes, and the first job then needs the second.
#[test]
fn a_wake_up_taken_by_a_latch_waiter_is_passed_on() {
    use std::sync::atomic::AtomicBool;
    let lanes = unspun_lanes(1);
    let physics = lanes.lane("physics").unwrap();
    let asset = lanes.lane("asset").unwrap();
    for round in 0..20 {
        // Both physics workers asleep.
        std::thread::sleep(Duration::from_millis(20));
        let gate = Arc::new(AtomicBool::new(false));
        let waiting = Arc::new(AtomicBool::new(false));
        let second_ran = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        {
            let (l, gate, waiting, second_ran) = (
                Arc::clone(&lanes),
                Arc::clone(&gate),
                Arc::clone(&waiting),
                Arc::clone(&second_ran),
            );
            lanes
                .spawn_detached(physics, move || {
                    l.scope(|s| {
                        s.spawn(asset, || {
                            waiting.store(true, Ordering::SeqCst);
                            while !gate.load(Ordering::SeqCst) {
                                std::thread::yield_now();
                            }
                        })
                        .unwrap();
                    })
                    .unwrap();
                    // The first job now needs the second: without the wake-up passed on, no
                    // physics worker is awake to run it.
                    let t0 = std::time::Instant::now();
                    while !second_ran.load(Ordering::SeqCst) {
                        if t0.elapsed() > Duration::from_secs(5) {
                            let _ = tx.send(Err(t0.elapsed()));
                            return;
                        }
                        std::thread::yield_now();
                    }
                    let _ = tx.send(Ok(t0.elapsed()));
                })
                .unwrap();
        }
        // The first job's worker is parked on its scope's latch (the most recent sleeper).
        while !waiting.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        std::thread::sleep(Duration::from_millis(20));
        let s2 = Arc::clone(&second_ran);
        lanes
            .spawn_detached(physics, move || s2.store(true, Ordering::SeqCst))
            .unwrap();
        gate.store(true, Ordering::SeqCst);
        let waited = rx.recv_timeout(Duration::from_secs(20)).unwrap();
        assert!(
            waited.is_ok(),
            "round {round}: the pushed job waited {:?} in the injector while a worker slept",
            waited.unwrap_err()
        );
    }
}

/// The lost wake-up when every parked worker waits on a latch: the push notifies one of
/// them, its latch completes before it runs, and the other (parked on a latch that needs the
/// pushed job) must be woken, or both jobs wait forever for the pushed one. Two mechanisms wake
/// it: the leaving waiter passes the wake-up on, and a latch completion wakes every
/// latch-waiter of the lane; this test fails only when both are gone (it guards the pair).
#[test]
fn a_latch_waiter_leaving_without_the_job_wakes_a_sibling() {
    use std::sync::atomic::AtomicBool;
    let lanes = unspun_lanes(2);
    let physics = lanes.lane("physics").unwrap();
    let asset = lanes.lane("asset").unwrap();
    for round in 0..10 {
        std::thread::sleep(Duration::from_millis(20));
        let second_ran = Arc::new(AtomicBool::new(false));
        let gate = Arc::new(AtomicBool::new(false));
        let started = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = std::sync::mpsc::channel();
        // J1: waits on an asset job that needs the pushed job.
        {
            let (l, s2, st) = (
                Arc::clone(&lanes),
                Arc::clone(&second_ran),
                Arc::clone(&started),
            );
            lanes
                .spawn_detached(physics, move || {
                    l.scope(|s| {
                        s.spawn(asset, || {
                            st.fetch_add(1, Ordering::SeqCst);
                            let t0 = std::time::Instant::now();
                            while !s2.load(Ordering::SeqCst)
                                && t0.elapsed() < Duration::from_secs(5)
                            {
                                std::thread::yield_now();
                            }
                        })
                        .unwrap();
                    })
                    .unwrap();
                })
                .unwrap();
        }
        while started.load(Ordering::SeqCst) < 1 {
            std::thread::yield_now();
        }
        std::thread::sleep(Duration::from_millis(20));
        // J3: waits on a gated asset job (it parks last: the push's choice), then needs the
        // pushed job itself.
        {
            let (l, s2, st, g) = (
                Arc::clone(&lanes),
                Arc::clone(&second_ran),
                Arc::clone(&started),
                Arc::clone(&gate),
            );
            lanes
                .spawn_detached(physics, move || {
                    l.scope(|s| {
                        s.spawn(asset, || {
                            st.fetch_add(1, Ordering::SeqCst);
                            while !g.load(Ordering::SeqCst) {
                                std::thread::yield_now();
                            }
                        })
                        .unwrap();
                    })
                    .unwrap();
                    let t0 = std::time::Instant::now();
                    while !s2.load(Ordering::SeqCst) {
                        if t0.elapsed() > Duration::from_secs(5) {
                            let _ = tx.send(Err(t0.elapsed()));
                            return;
                        }
                        std::thread::yield_now();
                    }
                    let _ = tx.send(Ok(t0.elapsed()));
                })
                .unwrap();
        }
        while started.load(Ordering::SeqCst) < 2 {
            std::thread::yield_now();
        }
        std::thread::sleep(Duration::from_millis(20));
        let s2 = Arc::clone(&second_ran);
        lanes
            .spawn_detached(physics, move || s2.store(true, Ordering::SeqCst))
            .unwrap();
        gate.store(true, Ordering::SeqCst);
        let waited = rx.recv_timeout(Duration::from_secs(20)).unwrap();
        assert!(
            waited.is_ok(),
            "round {round}: the pushed job waited {:?} while both workers slept",
            waited.unwrap_err()
        );
        // Let J1's asset job see the flag and finish before the next round.
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The latency half of the lost wake-up: with one physics worker waiting on a latch and its
/// sibling idle, a new job went to the latch-waiter (10 of 10 rounds), which runs it inside its
/// wait, while the idle sibling slept on. The idle worker is woken first now.
#[test]
fn a_push_wakes_an_idle_worker_before_a_latch_waiter() {
    use std::sync::atomic::AtomicBool;
    let lanes = unspun_lanes(1);
    let physics = lanes.lane("physics").unwrap();
    let asset = lanes.lane("asset").unwrap();
    let mut on_waiter = 0;
    for _ in 0..10 {
        std::thread::sleep(Duration::from_millis(20));
        let gate = Arc::new(AtomicBool::new(false));
        let waiting = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        {
            let (l, gate, waiting) = (Arc::clone(&lanes), Arc::clone(&gate), Arc::clone(&waiting));
            let tx = tx.clone();
            lanes
                .spawn_detached(physics, move || {
                    let _ = tx.send(("waiter", std::thread::current().id()));
                    l.scope(|s| {
                        s.spawn(asset, || {
                            waiting.store(true, Ordering::SeqCst);
                            while !gate.load(Ordering::SeqCst) {
                                std::thread::yield_now();
                            }
                        })
                        .unwrap();
                    })
                    .unwrap();
                })
                .unwrap();
        }
        while !waiting.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        std::thread::sleep(Duration::from_millis(20));
        lanes
            .spawn_detached(physics, move || {
                let _ = tx.send(("pushed", std::thread::current().id()));
            })
            .unwrap();
        let a = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        let b = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!((a.0, b.0), ("waiter", "pushed"));
        if a.1 == b.1 {
            on_waiter += 1;
        }
        gate.store(true, Ordering::SeqCst);
    }
    assert_eq!(
        on_waiter, 0,
        "the pushed job ran on the latch-waiter in {on_waiter} of 10"
    );
}

/// Regression test: a repeatable job spawned after its `Lanes` dropped was
/// silently lost, its closure and state leaked. Now it runs (on the spawning thread: no worker
/// is left) and its state is released.
#[test]
fn a_repeatable_job_spawned_after_its_lanes_dropped_runs_and_leaks_nothing() {
    let ran = Arc::new(AtomicUsize::new(0));
    let job = {
        let lanes = common::lanes(1, 1, 1);
        let asset = lanes.lane("asset").unwrap();
        let r = Arc::clone(&ran);
        lanes
            .repeatable(asset, move || {
                r.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap()
    };
    job.spawn();
    job.spawn();
    assert_eq!(
        ran.load(Ordering::SeqCst),
        2,
        "nothing spawned after the drop is lost"
    );
    drop(job);
    assert_eq!(Arc::strong_count(&ran), 1, "the job's closure was released");
}

/// Regression test: a job queued from another lane while the `Lanes` drops
/// (a detached asset job spawning render work, as the asset pipeline does) never ran when the
/// target lane's workers had already drained and left.
#[test]
fn a_job_queued_from_another_lane_during_drop_still_runs() {
    for _ in 0..10 {
        let ran = Arc::new(AtomicUsize::new(0));
        {
            let lanes = common::lanes(1, 1, 1);
            let (asset, render) = (lanes.lane("asset").unwrap(), lanes.lane("render").unwrap());
            let r = Arc::clone(&ran);
            let on_render = lanes
                .repeatable(render, move || {
                    r.fetch_add(1, Ordering::SeqCst);
                })
                .unwrap();
            lanes
                .spawn_detached(asset, move || {
                    // Long enough for the render lane to drain and leave once the drop starts.
                    std::thread::sleep(Duration::from_millis(30));
                    on_render.spawn();
                })
                .unwrap();
            // Dropped here, with the asset job still sleeping.
        }
        assert_eq!(ran.load(Ordering::SeqCst), 1, "the cross-lane job was lost");
    }
}

/// The engine's plan shape with one unspun physics worker: the physics lane is the owner's
/// lane, and the calling thread is the owner (so every wake-up of the worker is a park ended).
fn owner_served_physics() -> Lanes {
    let plan = LanePlan::empty(&[0])
        .with_lane("physics", LaneKind::FrameCritical, vec![None])
        .unwrap()
        .with_owner_lane("physics")
        .unwrap();
    let opts = lanegraph_jobs::LaneOptions {
        pin: false,
        spin: false,
    };
    let lanes = Lanes::start_with(plan, opts).unwrap();
    lanes.register_owner();
    lanes
}

/// A frame whose only lane work is one node on the owner's lane (the engine's plan: the owner
/// serves physics): the owner runs it itself and wakes no worker. `idle_frame_60hz` used to
/// pay two wake-ups per frame for this (the push woke the worker, which found the owner had
/// taken the job). The worker never spins here, so every wake-up is a park it came back from.
#[test]
fn a_one_node_frame_on_the_owners_lane_wakes_no_worker() {
    let lanes = owner_served_physics();
    let physics = lanes.lane("physics").unwrap();
    let mut b = GraphBuilder::<AtomicUsize>::new("frame");
    b.node("work", "physics", |_, c| {
        c.fetch_add(1, Ordering::Relaxed);
    });
    let mut g = b.build(&lanes).unwrap();
    let ran = AtomicUsize::new(0);
    // The worker parks once at start; let it get there.
    std::thread::sleep(Duration::from_millis(20));
    let before = lanes.stats(physics).unwrap().wakeups;
    for _ in 0..30 {
        g.run(&lanes, &ran).unwrap();
        lanes.rest();
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(ran.load(Ordering::Relaxed), 30);
    let woke = lanes.stats(physics).unwrap().wakeups - before;
    assert!(
        woke <= 2,
        "30 one-node frames run by the owner woke the physics worker {woke} times"
    );
}

/// The other side of the rule above: a caller that keeps one root for itself still wakes a
/// worker for every other one. Two roots on the owner's lane that can only finish together (a
/// barrier of two) complete, so the worker ran one of them while the owner ran the other.
#[test]
fn roots_beyond_the_one_the_owner_keeps_still_wake_a_worker() {
    let lanes = owner_served_physics();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut b = GraphBuilder::<AtomicUsize>::new("pair");
    for name in ["a", "b"] {
        b.node(name, "physics", move |_, arrived| {
            arrived.fetch_add(1, Ordering::AcqRel);
            // A barrier that gives up at the deadline, so a broken rule fails, not hangs.
            while arrived.load(Ordering::Acquire) % 2 == 1 && std::time::Instant::now() < deadline {
                std::thread::yield_now();
            }
        });
    }
    let mut g = b.build(&lanes).unwrap();
    for round in 0..20 {
        std::thread::sleep(Duration::from_millis(2));
        let arrived = AtomicUsize::new(0);
        g.run(&lanes, &arrived).unwrap();
        assert!(
            std::time::Instant::now() < deadline,
            "round {round}: the two roots never ran at the same time (no worker was woken)"
        );
    }
}

/// Lanes that sleep between frames: a lane's workers learn the frame period from
/// when each frame's first job arrives after a rest; with the frame lead on
/// (`Lanes::set_frame_lead`), a worker resting between frames wakes on its own timer just
/// before the next frame's expected start, and without it, it sleeps until the frame's push.
/// 100 frames per second of one node on a worker's lane (no owner lane). Driven by a count:
/// without the lead 40 frames must see no timer wake-up; with it, frames run until three
/// timer wake-ups are seen, up to 1,000 frames (10 s), since on a loaded machine the owner's
/// sleep or the worker's timer can overshoot the lead and miss most frames.
#[test]
fn a_resting_worker_wakes_on_its_own_before_the_next_frame_only_with_the_frame_lead() {
    const WANTED: u64 = 3;
    let run = |lead: bool, frames: usize| -> (u64, u64, usize) {
        let plan = LanePlan::empty(&[0])
            .with_lane("physics", LaneKind::FrameCritical, vec![None])
            .unwrap();
        let lanes = Lanes::start_with(
            plan,
            lanegraph_jobs::LaneOptions {
                pin: false,
                spin: true,
            },
        )
        .unwrap();
        let physics = lanes.lane("physics").unwrap();
        lanes.set_frame_lead(physics, lead).unwrap();
        let mut b = GraphBuilder::<()>::new("frame");
        b.node("work", "physics", |_, _| {});
        let mut g = b.build(&lanes).unwrap();
        let period = Duration::from_millis(10);
        let mut next = std::time::Instant::now();
        let mut frame = |g: &mut lanegraph_jobs::Graph<()>| {
            g.run(&lanes, &()).unwrap();
            lanes.rest();
            next += period;
            match next.checked_duration_since(std::time::Instant::now()) {
                Some(d) => std::thread::sleep(d),
                // Late (a loaded machine): start the schedule again from now.
                None => next = std::time::Instant::now(),
            }
        };
        // Warm-up: the period is learned from the first frames' starts.
        for _ in 0..10 {
            frame(&mut g);
        }
        let before = lanes.stats(physics).unwrap();
        let mut ran = 0;
        while ran < frames {
            frame(&mut g);
            ran += 1;
            let now = lanes.stats(physics).unwrap();
            if lead && now.timer_wakeups - before.timer_wakeups >= WANTED {
                break;
            }
        }
        let after = lanes.stats(physics).unwrap();
        (
            after.timer_wakeups - before.timer_wakeups,
            after.wakeups - before.wakeups,
            ran,
        )
    };
    let (timed_off, _, _) = run(false, 40);
    assert_eq!(
        timed_off, 0,
        "without the frame lead no worker parks on a timer"
    );
    let (timed_on, woke_on, ran) = run(true, 1_000);
    assert!(
        timed_on >= WANTED,
        "with the frame lead the worker woke on its own timer {timed_on} times in {ran} frames \
         ({woke_on} wake-ups in all)"
    );
}
