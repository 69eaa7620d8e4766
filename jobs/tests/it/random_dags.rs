//! Property: on random DAGs of up to a few hundred nodes over several lanes, every node runs
//! exactly once, after all its predecessors, on its lane; the result is the same for 1..N
//! workers per lane.

use crate::common;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use lanegraph_jobs::{Graph, GraphBuilder, Lanes};
use proptest::prelude::*;

struct Ctx {
    /// Completion sequence number per node (0: not run).
    done_at: Vec<AtomicU64>,
    runs: Vec<AtomicUsize>,
    clock: AtomicU64,
    /// Lane each node actually ran on.
    lane_seen: Vec<AtomicUsize>,
    /// A value folded along edges: node value = own index + sum of predecessors' values.
    value: Vec<AtomicU64>,
}

const LANES: [&str; 3] = ["physics", "render", "asset"];

fn dag() -> impl Strategy<Value = (usize, Vec<(usize, usize)>, Vec<usize>)> {
    (2usize..300).prop_flat_map(|n| {
        let edges = proptest::collection::vec((0..n, 0..n), 0..n * 3);
        let lanes = proptest::collection::vec(0usize..3, n);
        (Just(n), edges, lanes)
    })
}

fn run_once(n: usize, edges: &[(usize, usize)], lane_of: &[usize], workers: usize) -> Vec<u64> {
    let lanes = common::lanes(workers, workers, workers);
    // Orient every edge from lower to higher index: always acyclic.
    let edges: Vec<(usize, usize)> = edges
        .iter()
        .filter(|(a, b)| a != b)
        .map(|&(a, b)| (a.min(b), a.max(b)))
        .collect();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in &edges {
        if !preds[b].contains(&a) {
            preds[b].push(a);
        }
    }
    let mut builder = GraphBuilder::<Ctx>::new("random");
    let mut ids = Vec::new();
    for i in 0..n {
        let my_preds = preds[i].clone();
        ids.push(
            builder.node(&format!("n{i}"), LANES[lane_of[i]], move |c, ctx| {
                for &p in &my_preds {
                    assert!(
                        ctx.done_at[p].load(Ordering::SeqCst) > 0,
                        "n{i} before n{p}"
                    );
                }
                let v = i as u64
                    + my_preds
                        .iter()
                        .map(|&p| ctx.value[p].load(Ordering::SeqCst))
                        .fold(0u64, u64::wrapping_add);
                ctx.value[i].store(v, Ordering::SeqCst);
                ctx.lane_seen[i].store(c.lane().index(), Ordering::SeqCst);
                ctx.runs[i].fetch_add(1, Ordering::SeqCst);
                let t = ctx.clock.fetch_add(1, Ordering::SeqCst) + 1;
                ctx.done_at[i].store(t, Ordering::SeqCst);
            }),
        );
    }
    for &(a, b) in &edges {
        builder.edge(ids[a], ids[b]);
    }
    let mut g = builder.build(&lanes).unwrap();
    // Three runs of the same graph: the counters each run re-arms must be right for the next.
    let mut values = Vec::new();
    for _ in 0..3 {
        values = run_checked(&mut g, &lanes, n, lane_of);
    }
    values
}

fn run_checked(g: &mut Graph<Ctx>, lanes: &Lanes, n: usize, lane_of: &[usize]) -> Vec<u64> {
    let ctx = Ctx {
        done_at: (0..n).map(|_| AtomicU64::new(0)).collect(),
        runs: (0..n).map(|_| AtomicUsize::new(0)).collect(),
        clock: AtomicU64::new(0),
        lane_seen: (0..n).map(|_| AtomicUsize::new(usize::MAX)).collect(),
        value: (0..n).map(|_| AtomicU64::new(0)).collect(),
    };
    g.run(lanes, &ctx).unwrap();
    for i in 0..n {
        assert_eq!(
            ctx.runs[i].load(Ordering::SeqCst),
            1,
            "n{i} ran wrong number of times"
        );
        let expect = lanes.lane(LANES[lane_of[i]]).unwrap().index();
        assert_eq!(
            ctx.lane_seen[i].load(Ordering::SeqCst),
            expect,
            "n{i} off its lane"
        );
    }
    ctx.value.iter().map(|v| v.load(Ordering::SeqCst)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_dags_run_correctly_for_any_worker_count((n, edges, lane_of) in dag()) {
        let one = run_once(n, &edges, &lane_of, 1);
        for workers in [2, 3] {
            let many = run_once(n, &edges, &lane_of, workers);
            prop_assert_eq!(&one, &many);
        }
    }

    /// Every node on one lane: with one worker and no helper the graph counts its predecessors
    /// without atomic read-modify-writes (`Core::one_thread`); the same graph on two workers
    /// takes the atomic path. Both must agree, run after run.
    #[test]
    fn one_lane_dags_run_correctly_on_one_worker_and_on_two((n, edges, _) in dag()) {
        let lane_of = vec![0; n];
        let one = run_once(n, &edges, &lane_of, 1);
        let two = run_once(n, &edges, &lane_of, 2);
        prop_assert_eq!(&one, &two);
    }
}
