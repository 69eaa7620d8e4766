//! Prebuilt graphs through the public API: ordering, lanes, errors, panics, re-runs.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use lanegraph_jobs::{GraphBuilder, GraphError, WorkerInfo};

#[derive(Default)]
struct Log {
    order: Mutex<Vec<(String, WorkerInfo, String)>>,
}

fn record(log: &Log, name: &str, who: WorkerInfo) {
    let thread = std::thread::current().name().unwrap_or("?").to_string();
    log.order
        .lock()
        .unwrap()
        .push((name.to_string(), who, thread));
}

#[test]
fn nodes_run_once_in_order_on_their_lanes() {
    let lanes = common::lanes(2, 1, 1);
    let mut b = GraphBuilder::<Log>::new("frame");
    let load = b.node("load", "asset", |c, log| record(log, c.name(), c.worker()));
    let upload = b.node("upload", "render", |c, log| {
        record(log, c.name(), c.worker())
    });
    let sim_a = b.node("sim_a", "physics", |c, log| {
        record(log, c.name(), c.worker())
    });
    let sim_b = b.node("sim_b", "physics", |c, log| {
        record(log, c.name(), c.worker())
    });
    let draw = b.node("draw", "render", |c, log| record(log, c.name(), c.worker()));
    b.edge(load, upload);
    b.edges_from(&[upload, sim_a, sim_b], draw);
    let mut g = b.build(&lanes).unwrap();
    for _ in 0..50 {
        let log = Log::default();
        let timings = g.run(&lanes, &log).unwrap();
        assert!(timings.iter().all(|t| t.ran && t.end >= t.start));
        let order = log.order.into_inner().unwrap();
        assert_eq!(order.len(), 5);
        let pos = |n: &str| order.iter().position(|(x, _, _)| x == n).unwrap();
        assert!(pos("load") < pos("upload"));
        assert!(pos("upload") < pos("draw"));
        assert!(pos("sim_a") < pos("draw") && pos("sim_b") < pos("draw"));
        for (name, who, thread) in &order {
            let lane = match name.as_str() {
                "load" => "asset",
                "upload" | "draw" => "render",
                _ => "physics",
            };
            assert_eq!(who.lane, lanes.lane(lane).unwrap(), "{name} on wrong lane");
            assert!(
                thread.starts_with(&format!("lg-{lane}-")),
                "{name} ran on thread {thread}, not a {lane} worker"
            );
        }
    }
}

#[test]
fn build_rejects_cycles_naming_the_nodes() {
    let lanes = common::lanes(1, 1, 1);
    let mut b = GraphBuilder::<()>::new("bad");
    let a = b.node("a", "physics", |_, _| {});
    let x = b.node("x", "physics", |_, _| {});
    let y = b.node("y", "render", |_, _| {});
    let z = b.node("z", "physics", |_, _| {});
    b.edge(a, x).edge(x, y).edge(y, z).edge(z, x);
    let err = b.build(&lanes).unwrap_err();
    assert_eq!(
        err,
        GraphError::Cycle(vec!["x".into(), "y".into(), "z".into()])
    );
    assert!(err.to_string().contains("x -> y -> z -> x"), "{err}");
}

#[test]
fn build_rejects_unknown_lanes_dangling_edges_and_duplicates() {
    let lanes = common::lanes(1, 1, 1);
    let mut b = GraphBuilder::<()>::new("g");
    b.node("a", "audio", |_, _| {});
    let err = b.build(&lanes).unwrap_err();
    assert!(
        matches!(err, GraphError::UnknownLane { ref lane, .. } if lane == "audio"),
        "{err}"
    );

    let mut other = GraphBuilder::<()>::new("other");
    let foreign = other.node("f", "physics", |_, _| {});
    let mut b = GraphBuilder::<()>::new("g");
    let a = b.node("a", "physics", |_, _| {});
    b.edge(a, foreign);
    assert!(matches!(
        b.build(&lanes),
        Err(GraphError::DanglingEdge { .. })
    ));

    let mut b = GraphBuilder::<()>::new("g");
    b.node("a", "physics", |_, _| {});
    b.node("a", "physics", |_, _| {});
    assert_eq!(
        b.build(&lanes).unwrap_err(),
        GraphError::DuplicateNode("a".into())
    );

    let b = GraphBuilder::<()>::new("empty");
    assert!(matches!(b.build(&lanes), Err(GraphError::Empty(_))));
}

#[test]
fn a_panicking_node_is_named_its_dependants_skip_and_the_lane_lives_on() {
    let lanes = common::lanes(2, 1, 1);
    let ran = AtomicUsize::new(0);
    let mut b = GraphBuilder::<AtomicUsize>::new("g");
    let root = b.node("root", "physics", |_, r| {
        r.fetch_add(1, Ordering::SeqCst);
    });
    let bad = b.node("bad", "physics", |_, _| panic!("boom at step 7"));
    let after_bad = b.node("after_bad", "render", |_, r| {
        r.fetch_add(100, Ordering::SeqCst);
    });
    let after_after = b.node("after_after", "physics", |_, r| {
        r.fetch_add(100, Ordering::SeqCst);
    });
    let sibling = b.node("sibling", "render", |_, r| {
        r.fetch_add(1, Ordering::SeqCst);
    });
    b.edge(root, bad)
        .edge(bad, after_bad)
        .edge(after_bad, after_after);
    b.edge(root, sibling);
    let mut g = b.build(&lanes).unwrap();
    let err = g.run(&lanes, &ran).unwrap_err();
    match err {
        GraphError::NodePanicked(p) => {
            assert_eq!(p.job, "bad");
            assert_eq!(p.message, "boom at step 7");
            assert_eq!(p.skipped, 2);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(
        ran.load(Ordering::SeqCst),
        2,
        "root and sibling ran, dependants did not"
    );
    // The lanes keep working: a healthy graph runs afterwards.
    let mut b = GraphBuilder::<AtomicUsize>::new("ok");
    b.node("ok", "physics", |_, r| {
        r.fetch_add(1, Ordering::SeqCst);
    });
    let mut ok = b.build(&lanes).unwrap();
    let n = AtomicUsize::new(0);
    for _ in 0..10 {
        ok.run(&lanes, &n).unwrap();
    }
    assert_eq!(n.load(Ordering::SeqCst), 10);
}

#[test]
fn a_graph_refuses_other_lanes() {
    let lanes = common::lanes(1, 1, 1);
    let other = common::lanes(1, 1, 1);
    let mut b = GraphBuilder::<()>::new("g");
    b.node("a", "physics", |_, _| {});
    let mut g = b.build(&lanes).unwrap();
    assert!(matches!(g.run(&other, &()), Err(GraphError::WrongLanes(_))));
}

#[test]
fn a_long_chain_runs_in_order() {
    let lanes = common::lanes(2, 1, 1);
    let mut b = GraphBuilder::<Mutex<Vec<usize>>>::new("chain").record_timing(false);
    let mut prev = None;
    for i in 0..1000 {
        let n = b.node(&format!("n{i}"), "physics", move |_, v| {
            v.lock().unwrap().push(i)
        });
        if let Some(p) = prev {
            b.edge(p, n);
        }
        prev = Some(n);
    }
    let mut g = b.build(&lanes).unwrap();
    let v = Mutex::new(Vec::new());
    g.run(&lanes, &v).unwrap();
    assert_eq!(v.into_inner().unwrap(), (0..1000).collect::<Vec<_>>());
}

#[test]
fn nodes_can_run_nested_parallel_work_on_their_lane() {
    let lanes = common::lanes(2, 1, 1);
    let mut b = GraphBuilder::<AtomicUsize>::new("nested");
    b.node("par", "physics", |c, sum| {
        c.lanes()
            .parallel_for(c.lane(), 0..1000, 10, |_, r| {
                sum.fetch_add(r.len(), Ordering::Relaxed);
            })
            .unwrap();
    });
    let mut g = b.build(&lanes).unwrap();
    let sum = AtomicUsize::new(0);
    for _ in 0..20 {
        g.run(&lanes, &sum).unwrap();
    }
    assert_eq!(sum.load(Ordering::Relaxed), 20_000);
}

#[test]
fn a_graph_never_mistakes_new_lanes_for_the_dropped_ones_it_was_built_for() {
    // A dropped runtime's address can be reused by the next one: identity is an id, not an
    // address (found in review: running against reused memory would index missing lanes).
    let mut graphs = Vec::new();
    for _ in 0..20 {
        let lanes = common::lanes(1, 1, 1);
        let mut b = GraphBuilder::<()>::new("g");
        b.node("a", "asset", |_, _| {});
        graphs.push(b.build(&lanes).unwrap());
    }
    let small = {
        let plan = lanegraph_jobs::LanePlan::empty(&[0])
            .with_lane(
                "physics",
                lanegraph_jobs::LaneKind::FrameCritical,
                vec![None],
            )
            .unwrap();
        lanegraph_jobs::Lanes::start(plan).unwrap()
    };
    for g in &mut graphs {
        assert!(matches!(g.run(&small, &()), Err(GraphError::WrongLanes(_))));
    }
}

struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("the payload's destructor panics too");
    }
}

#[test]
fn a_panic_payload_whose_drop_panics_neither_kills_the_lane_nor_hangs() {
    let lanes = common::lanes(1, 1, 1);
    let mut b = GraphBuilder::<()>::new("g");
    b.node("hostile", "physics", |_, _| {
        std::panic::panic_any(PanicsOnDrop)
    });
    let mut g = b.build(&lanes).unwrap();
    for _ in 0..3 {
        match g.run(&lanes, &()) {
            Err(GraphError::NodePanicked(p)) => assert_eq!(p.job, "hostile"),
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// A node that ran in one run and was skipped in the next reports `ran: false` for the second,
/// not the first run's stamps.
#[test]
fn a_node_skipped_after_running_reports_no_stale_timing() {
    let lanes = common::lanes(1, 1, 1);
    // The context says whether `gate` panics this run.
    let mut b = GraphBuilder::<std::sync::atomic::AtomicBool>::new("g");
    let gate = b.node("gate", "physics", |_, fail| {
        if fail.load(Ordering::SeqCst) {
            panic!("gate closed");
        }
    });
    let after = b.node("after", "physics", |_, _| {});
    b.edge(gate, after);
    let mut g = b.build(&lanes).unwrap();
    let open = std::sync::atomic::AtomicBool::new(false);
    let t = g.run(&lanes, &open).unwrap();
    assert!(t[after.index()].ran && t[after.index()].end >= t[after.index()].start);
    let closed = std::sync::atomic::AtomicBool::new(true);
    assert!(g.run(&lanes, &closed).is_err());
    let t = g.last_timings();
    assert!(t[gate.index()].ran, "the panicking node ran");
    assert!(
        !t[after.index()].ran,
        "skipped this run: {:?}",
        t[after.index()]
    );
    assert_eq!(t[after.index()].end, t[after.index()].start);
}

/// One clock read per node: in a chain run inline on one thread, each node's start
/// stamp is its predecessor's end stamp (the next node starts where the last one's read left
/// off), and every node still covers its own body (a 200 us body measures at least 200 us).
#[test]
fn a_chain_on_one_thread_shares_stamps_one_read_per_node() {
    let lanes = common::lanes(1, 1, 1);
    let mut b = GraphBuilder::<()>::new("chain");
    let mut prev = None;
    for k in 0..6 {
        let n = b.node(&format!("n{k}"), "physics", |_, _| {
            let t = std::time::Instant::now();
            while t.elapsed() < std::time::Duration::from_micros(200) {
                std::hint::spin_loop();
            }
        });
        if let Some(p) = prev {
            b.edge(p, n);
        }
        prev = Some(n);
    }
    let mut g = b.build(&lanes).unwrap();
    let t = g.run(&lanes, &()).unwrap().to_vec();
    for w in t.windows(2) {
        if w[0].thread == w[1].thread {
            assert_eq!(w[1].start, w[0].end, "{:?} then {:?}", w[0], w[1]);
        }
    }
    let chained = t.windows(2).filter(|w| w[0].thread == w[1].thread).count();
    assert!(chained >= 1, "the chain never ran inline: {t:?}");
    for x in &t {
        let ns = x.end.ns_since(x.start);
        assert!(x.ran && ns >= 200_000, "{x:?}: {ns} ns");
    }
}

/// A graph on a lane of two workers must count its joins with atomic read-modify-writes: its
/// plain-counter path is for one thread only (`Core::one_thread`). Eight fan-outs of eight nodes
/// each feed a join, 2,000 runs; every node runs exactly once a run. With plain counters two
/// workers lose a decrement (a join never readied: the run hangs, caught by the deadline) or
/// double one (a node runs twice).
#[test]
fn joins_on_a_two_worker_lane_run_once_each_however_the_workers_race() {
    use lanegraph_jobs::plan::{machine_cores, LaneKind};
    use lanegraph_jobs::{LanePlan, Lanes};
    const STAGES: usize = 8;
    const FAN: usize = 8;
    const RUNS: usize = 2_000;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let plan = LanePlan::empty(&machine_cores())
            .with_lane("work", LaneKind::FrameCritical, vec![None, None])
            .unwrap();
        let lanes = Lanes::start(plan).unwrap();
        let nodes = STAGES * (FAN + 1) + 1;
        let counts: Vec<AtomicUsize> = (0..nodes).map(|_| AtomicUsize::new(0)).collect();
        let mut b = GraphBuilder::<Vec<AtomicUsize>>::new("joins");
        let mut id = 0usize;
        let mut node = |b: &mut GraphBuilder<Vec<AtomicUsize>>| {
            let me = id;
            id += 1;
            b.node(&format!("n{me}"), "work", move |_, c: &Vec<AtomicUsize>| {
                c[me].fetch_add(1, Ordering::Relaxed);
            })
        };
        let mut join = node(&mut b);
        for _ in 0..STAGES {
            let fan: Vec<_> = (0..FAN).map(|_| node(&mut b)).collect();
            for &f in &fan {
                b.edge(join, f);
            }
            let next = node(&mut b);
            b.edges_from(&fan, next);
            join = next;
        }
        let mut g = b.build(&lanes).unwrap();
        for run in 1..=RUNS {
            g.run(&lanes, &counts).unwrap();
            if let Some(n) = counts.iter().position(|c| c.load(Ordering::Relaxed) != run) {
                let _ = tx.send(Err(format!(
                    "run {run}: node n{n} ran {} times",
                    counts[n].load(Ordering::Relaxed)
                )));
                return;
            }
        }
        let _ = tx.send(Ok(()));
    });
    match rx.recv_timeout(std::time::Duration::from_secs(120)) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => panic!("{e}"),
        Err(_) => panic!("a run never finished: a join lost a decrement"),
    }
}
