//! The `dispatch` bench suite: lanes and job graphs against rayon, in one process, interleaved.
//!
//! Owns: the dispatch workloads (shared with the criterion bench `benches/benches/dispatch.rs`)
//! and the quick suite. Must never: assert on timing.
//!
//! Cases (see `docs/benchmarks.md`): `layered_dag`, `chain`, `round_trip`, `frame_allocs`,
//! `idle_cpu`, `idle_frame_60hz`, `frame_wake`, `tick_wake`, `lane_isolation`, and the scaling cases `dag_efficiency_{2us,20us}` and
//! `parallel_for_1mi`, run at 1, 2 and every core of the machine. Each runs ours and the rayon baseline alternately after a
//! warm-up and reports medians (and p99 where asked) with the ratio.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lanegraph_jobs::clock;
use lanegraph_jobs::{Graph, GraphBuilder, LaneKind, LaneOptions, LanePlan, Lanes};

use super::stats::percentile;
use super::{busy, BenchError, BenchOptions, Figure};

const SUITE: &str = "dispatch";

/// A DAG as successor lists, the shape both runtimes execute.
#[derive(Debug, Clone)]
pub struct Dag {
    /// Successors of each node.
    pub succs: Vec<Vec<u32>>,
    /// Predecessor count of each node.
    pub preds: Vec<u32>,
}

impl Dag {
    /// `layers` layers of `width` nodes; each node after the first layer depends on `fan_in`
    /// nodes of the layer before, spread across it.
    pub fn layered(layers: usize, width: usize, fan_in: usize) -> Dag {
        let n = layers * width;
        let mut succs = vec![Vec::new(); n];
        let mut preds = vec![0u32; n];
        let stride = (width / fan_in.max(1)).max(1);
        for l in 1..layers {
            for i in 0..width {
                let me = l * width + i;
                for k in 0..fan_in.min(width) {
                    let p = (l - 1) * width + (i + k * stride) % width;
                    if !succs[p].contains(&(me as u32)) {
                        succs[p].push(me as u32);
                        preds[me] += 1;
                    }
                }
            }
        }
        Dag { succs, preds }
    }

    /// A chain of `n` nodes.
    pub fn chain(n: usize) -> Dag {
        let succs = (0..n)
            .map(|i| {
                if i + 1 < n {
                    vec![i as u32 + 1]
                } else {
                    vec![]
                }
            })
            .collect();
        let preds = (0..n).map(|i| u32::from(i > 0)).collect();
        Dag { succs, preds }
    }

    /// Node count.
    pub fn len(&self) -> usize {
        self.preds.len()
    }

    /// Whether the DAG has no nodes.
    pub fn is_empty(&self) -> bool {
        self.preds.is_empty()
    }

    /// The DAG as a lanegraph graph on `lane`, with empty bodies.
    pub fn to_graph(&self, lanes: &Lanes, lane: &str, timing: bool) -> Graph<()> {
        self.graph_of(lanes, lane, "bench", timing, || std::hint::black_box(()))
    }

    /// The DAG as a lanegraph graph on `lane` whose nodes each busy-work `work_ns`.
    pub fn to_graph_with_work(&self, lanes: &Lanes, lane: &str, work_ns: u64) -> Graph<()> {
        self.graph_of(lanes, lane, "bench-work", false, move || busy(work_ns))
    }

    /// The DAG as graph `name` on `lane`, every node running `body`.
    fn graph_of(
        &self,
        lanes: &Lanes,
        lane: &str,
        name: &str,
        timing: bool,
        body: impl Fn() + Copy + Send + Sync + 'static,
    ) -> Graph<()> {
        let mut b = GraphBuilder::<()>::new(name).record_timing(timing);
        let ids: Vec<_> = (0..self.len())
            .map(|i| b.node(&format!("n{i}"), lane, move |_, _| body()))
            .collect();
        for (from, succs) in self.succs.iter().enumerate() {
            for &to in succs {
                b.edge(ids[from], ids[to as usize]);
            }
        }
        b.build(lanes)
            .expect("bench DAGs are valid by construction")
    }
}

/// The rayon baseline for a DAG: atomic pending counters, ready nodes spawned into a
/// `rayon::scope` (the idiomatic way to run a dependency graph on rayon).
#[derive(Debug)]
pub struct RayonDag {
    dag: Dag,
    pending: Vec<AtomicU32>,
    roots: Vec<u32>,
    /// Busy work per node, ns (0: empty nodes).
    work_ns: u64,
}

impl RayonDag {
    /// Prepares `dag` for rayon runs.
    pub fn new(dag: Dag) -> RayonDag {
        let pending = dag.preds.iter().map(|&p| AtomicU32::new(p)).collect();
        let roots = (0..dag.len() as u32)
            .filter(|&i| dag.preds[i as usize] == 0)
            .collect();
        RayonDag {
            dag,
            pending,
            roots,
            work_ns: 0,
        }
    }

    /// Prepares `dag` for rayon runs whose nodes each busy-work `work_ns`.
    pub fn with_work(dag: Dag, work_ns: u64) -> RayonDag {
        RayonDag {
            work_ns,
            ..RayonDag::new(dag)
        }
    }

    /// Runs every node once on `pool`, from outside it.
    pub fn run(&self, pool: &rayon::ThreadPool) {
        for (p, &n) in self.pending.iter().zip(&self.dag.preds) {
            p.store(n, Ordering::Relaxed);
        }
        pool.install(|| {
            rayon::scope(|s| {
                for &r in &self.roots {
                    s.spawn(move |s| self.node(s, r));
                }
            })
        });
    }

    fn node<'s>(&'s self, s: &rayon::Scope<'s>, i: u32) {
        std::hint::black_box(i);
        if self.work_ns > 0 {
            busy(self.work_ns);
        }
        for &n in &self.dag.succs[i as usize] {
            if self.pending[n as usize].fetch_sub(1, Ordering::AcqRel) == 1 {
                s.spawn(move |s| self.node(s, n));
            }
        }
    }
}

/// Lanes with a single frame-critical `physics` lane of `workers` unpinned workers, like the
/// rayon pool they are compared with (rayon does not pin).
pub fn physics_lanes_unpinned(workers: usize) -> Lanes {
    let plan = LanePlan::empty(&lanegraph_jobs::plan::machine_cores())
        .with_lane("physics", LaneKind::FrameCritical, vec![None; workers])
        .expect("unpinned lanes need no cores");
    Lanes::start(plan).expect("bench lanes start")
}

/// Lanes with a single frame-critical `physics` lane of `workers` workers, pinned to the
/// machine's cores round-robin after the owner's (unpinned when the machine has one core).
pub fn physics_lanes(workers: usize) -> Lanes {
    let cores = lanegraph_jobs::plan::machine_cores();
    Lanes::start(physics_plan(&cores, workers)).expect("bench lanes start")
}

fn physics_plan(cores: &[lanegraph_jobs::plan::CoreIndex], workers: usize) -> LanePlan {
    let cores_for = |w: usize| {
        if cores.len() < 2 {
            None
        } else {
            Some(cores[(1 + w) % cores.len()])
        }
    };
    LanePlan::empty(cores)
        .with_lane(
            "physics",
            LaneKind::FrameCritical,
            (0..workers).map(cores_for).collect(),
        )
        .expect("cores come from the machine")
}

/// [`physics_lanes`] with the owner thread serving the physics lane: whoever waits on physics
/// work from outside the lanes runs physics jobs meanwhile (the engine's plan does this).
pub fn physics_lanes_owner_helps(workers: usize) -> Lanes {
    let cores = lanegraph_jobs::plan::machine_cores();
    let plan = physics_plan(&cores, workers)
        .with_owner_lane("physics")
        .expect("the plan has a physics lane");
    let lanes = Lanes::start(plan).expect("bench lanes start");
    // The calling thread runs the benchmark: it is the owner that serves physics.
    lanes.register_owner();
    lanes
}

/// A rayon pool of `threads` threads.
pub fn rayon_pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("rayon pool builds")
}

fn fail(why: impl Into<String>) -> BenchError {
    BenchError::failed(SUITE, why)
}

/// Runs of one side back to back before the other side takes over. Alternating per run would
/// let each runtime's workers fall asleep while the other runs, so every sample would include a
/// futex wake-up whose cost depends on the other runtime's idle policy; blocks measure each
/// side's steady state while still interleaving them in time (machine noise hits both).
/// Wake-up cost is measured on its own by `round_trip` and `idle_cpu`.
const BLOCK: usize = 10;

/// Interleaves `ours` and `theirs` in blocks of [`BLOCK`] runs, `samples` runs each after
/// `warmup` blocks; returns the per-run nanosecond samples of both.
fn interleave(
    warmup: usize,
    samples: usize,
    mut ours: impl FnMut(),
    mut theirs: impl FnMut(),
) -> (Vec<f64>, Vec<f64>) {
    for _ in 0..warmup.div_ceil(BLOCK) {
        for _ in 0..BLOCK {
            ours();
        }
        for _ in 0..BLOCK {
            theirs();
        }
    }
    let mut a = Vec::with_capacity(samples);
    let mut b = Vec::with_capacity(samples);
    while a.len() < samples {
        for _ in 0..BLOCK {
            let t = clock::now();
            ours();
            a.push(clock::now().ns_since(t) as f64);
        }
        for _ in 0..BLOCK {
            let t = clock::now();
            theirs();
            b.push(clock::now().ns_since(t) as f64);
        }
    }
    (a, b)
}

/// Runs the suite.
pub fn run(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    clock::init();
    // `LANEGRAPH_BENCH_CASE=chain` runs one case (for profiling it alone).
    let only = std::env::var("LANEGRAPH_BENCH_CASE").ok();
    let want = |case: &str| only.as_deref().is_none_or(|o| o == case);
    let mut out = Vec::new();
    if want("layered_dag") {
        out.extend(layered_dag(opts)?);
    }
    if want("chain") {
        out.extend(chain(opts)?);
    }
    if want("round_trip") {
        out.extend(round_trip(opts)?);
    }
    if want("frame_allocs") {
        out.extend(frame_allocs(opts)?);
    }
    if want("idle_cpu") {
        out.extend(idle_cpu(opts)?);
    }
    if want("idle_frame_60hz") {
        out.extend(idle_frame_60hz(opts)?);
    }
    if want("frame_wake") {
        out.extend(frame_wake(opts)?);
    }
    if want("tick_wake") {
        out.extend(tick_wake(opts)?);
    }
    if want("lane_isolation") {
        out.extend(lane_isolation(opts)?);
    }
    if want("dag_efficiency") {
        out.extend(dag_efficiency(opts)?);
    }
    if want("parallel_for") {
        out.extend(parallel_for_1mi(opts)?);
    }
    Ok(out)
}

/// Thread counts the scaling cases run at: 1, 2 and every core of this machine.
fn scaling_threads() -> Vec<usize> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut t = vec![1, 2, cores];
    t.sort_unstable();
    t.dedup();
    t
}

/// `dag_efficiency`: a layered DAG (10 x 32, fan-in 4) whose nodes each busy-work 2 us or
/// 20 us; parallel efficiency = sum of node work / (threads x wall), ours against rayon's,
/// at every thread count of [`scaling_threads`].
fn dag_efficiency(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    let dag = Dag::layered(10, 32, 4);
    let mut out = Vec::new();
    for (label, work_ns, samples) in [("2us", 2_000u64, 40usize), ("20us", 20_000, 10)] {
        let samples = if opts.quick { samples } else { samples * 5 };
        for threads in scaling_threads() {
            let lanes = physics_lanes_unpinned(threads);
            let pool = rayon_pool(threads);
            let rayon_dag = RayonDag::with_work(dag.clone(), work_ns);
            let mut g = dag.to_graph_with_work(&lanes, "physics", work_ns);
            let (mut a, mut b) = interleave(
                samples / 5,
                samples,
                || {
                    g.run(&lanes, &()).expect("bench graph runs");
                },
                || rayon_dag.run(&pool),
            );
            let work = (dag.len() as u64 * work_ns) as f64;
            let eff = |wall: f64| work / (threads as f64 * wall);
            out.push(
                Figure::new(
                    SUITE,
                    format!("dag_efficiency_{label}"),
                    threads,
                    "efficiency",
                    "ratio",
                    eff(percentile(&mut a, 50.0)),
                )
                .with_baseline(
                    "rayon scope + atomic counters",
                    eff(percentile(&mut b, 50.0)),
                ),
            );
        }
    }
    Ok(out)
}

/// `parallel_for`: `x = x * a + b` over 1 Mi `f32` in chunks (`Lanes::parallel_chunks_mut`,
/// about four chunks per thread) against `par_iter_mut` on a rayon pool of the same size,
/// ns per element, at every thread count of [`scaling_threads`].
fn parallel_for_1mi(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    let n = 1 << 20;
    let samples = if opts.quick { 60 } else { 300 };
    let mut out = Vec::new();
    for threads in scaling_threads() {
        let lanes = physics_lanes_unpinned(threads);
        let physics = lanes
            .lane("physics")
            .ok_or_else(|| fail("no physics lane"))?;
        let pool = rayon_pool(threads);
        let (mut ours, mut theirs) = (vec![1.0f32; n], vec![1.0f32; n]);
        let chunk = n.div_ceil(threads * 4);
        let (a, b) = (0.999f32, 0.001f32);
        let (mut ta, mut tb) = interleave(
            samples / 5,
            samples,
            || {
                lanes
                    .parallel_chunks_mut(physics, &mut ours, chunk, |_, c| {
                        for x in c {
                            *x = *x * a + b;
                        }
                    })
                    .expect("the parallel-for runs");
            },
            || {
                use rayon::prelude::*;
                pool.install(|| theirs.par_iter_mut().for_each(|x| *x = *x * a + b));
            },
        );
        if ours
            .iter()
            .zip(&theirs)
            .any(|(x, y)| x.to_bits() != y.to_bits())
        {
            return Err(fail("the parallel-for and rayon ended in other bits"));
        }
        out.push(
            Figure::new(
                SUITE,
                "parallel_for_1mi",
                threads,
                "ns_per_element",
                "ns",
                percentile(&mut ta, 50.0) / n as f64,
            )
            .with_baseline("rayon par_iter_mut", percentile(&mut tb, 50.0) / n as f64),
        );
    }
    Ok(out)
}

fn layered_dag(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    let dag = Dag::layered(10, 100, 4);
    let n = dag.len() as f64;
    let samples = if opts.quick { 300 } else { 2000 };
    let mut out = Vec::new();
    for threads in [1usize, 2] {
        let lanes = physics_lanes_unpinned(threads);
        let pool = rayon_pool(threads);
        let rayon_dag = RayonDag::new(dag.clone());
        for (metric, timing) in [("ns_per_node", false), ("ns_per_node_timed", true)] {
            let (mut a, mut b) = graph_vs_rayon(&dag, &lanes, timing, &rayon_dag, &pool, samples);
            out.push(
                Figure::new(
                    SUITE,
                    "layered_dag",
                    threads,
                    metric,
                    "ns",
                    percentile(&mut a, 50.0) / n,
                )
                .with_baseline(
                    "rayon scope + atomic counters",
                    percentile(&mut b, 50.0) / n,
                ),
            );
            if !timing {
                out.push(
                    Figure::new(
                        SUITE,
                        "layered_dag",
                        threads,
                        "p99_ns_per_node",
                        "ns",
                        percentile(&mut a, 99.0) / n,
                    )
                    .with_baseline(
                        "rayon scope + atomic counters",
                        percentile(&mut b, 99.0) / n,
                    ),
                );
            }
        }
    }
    Ok(out)
}

/// `dag` as a graph on the physics lane (per-node timing on or off) against the same DAG on
/// `pool`, interleaved after a warm-up of a tenth of `samples`: each run's ns, ours and rayon's.
fn graph_vs_rayon(
    dag: &Dag,
    lanes: &Lanes,
    timing: bool,
    rayon_dag: &RayonDag,
    pool: &rayon::ThreadPool,
    samples: usize,
) -> (Vec<f64>, Vec<f64>) {
    let mut g = dag.to_graph(lanes, "physics", timing);
    interleave(
        samples / 10,
        samples,
        || {
            g.run(lanes, &()).expect("bench graph runs");
        },
        || rayon_dag.run(pool),
    )
}

fn chain(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    let dag = Dag::chain(1000);
    let n = dag.len() as f64;
    let samples = if opts.quick { 300 } else { 2000 };
    let lanes = physics_lanes_unpinned(1);
    let pool = rayon_pool(1);
    let rayon_dag = RayonDag::new(dag.clone());
    let mut out = Vec::new();
    for (metric, timing) in [("ns_per_link", false), ("ns_per_link_timed", true)] {
        let (mut a, mut b) = graph_vs_rayon(&dag, &lanes, timing, &rayon_dag, &pool, samples);
        out.push(
            Figure::new(
                SUITE,
                "chain",
                1,
                metric,
                "ns",
                percentile(&mut a, 50.0) / n,
            )
            .with_baseline("rayon spawn chain", percentile(&mut b, 50.0) / n),
        );
    }
    // The timed chain's goal is one clock read plus 10 ns per link on the machine at hand:
    // the read's cost, measured here (median of rounds of 1,000 reads).
    let reads = 1_000u32;
    let mut per_read: Vec<f64> = (0..samples / 10)
        .map(|_| {
            let t0 = clock::now();
            for _ in 0..reads {
                std::hint::black_box(clock::now());
            }
            clock::now().ns_since(t0) as f64 / f64::from(reads)
        })
        .collect();
    out.push(Figure::new(
        SUITE,
        "clock_read",
        1,
        "ns_per_read",
        "ns",
        percentile(&mut per_read, 50.0),
    ));
    Ok(out)
}

/// Runs `f` on a thread pinned to the first core (the owner's core in every plan).
fn on_owner_core<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|s| {
        s.spawn(|| {
            if let Some(&c) = lanegraph_jobs::plan::machine_cores().first() {
                let _pinned: bool = lanegraph_jobs::lanes::pin_thread_to(c);
            }
            f()
        })
        .join()
        .expect("bench thread")
    })
}

fn round_trip(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    let samples = if opts.quick { 20_000 } else { 100_000 };
    on_owner_core(|| {
        let lanes = physics_lanes(1);
        let pool = rayon_pool(1);
        let mut b = GraphBuilder::<()>::new("rt").record_timing(false);
        b.node("one", "physics", |_, _| {
            std::hint::black_box(());
        });
        let mut g = b.build(&lanes).map_err(|e| fail(e.to_string()))?;
        // Not interleaved per call: alternating would let each side's workers fall asleep
        // while the other runs, and "awake" is the case measured. Blocks of 1000 alternate.
        let mut ours = Vec::with_capacity(samples);
        let mut theirs = Vec::with_capacity(samples);
        for block in 0..(samples / 1000 + 1) {
            let warm = block == 0;
            for _ in 0..1000 {
                let t = clock::now();
                g.run(&lanes, &()).map_err(|e| fail(e.to_string()))?;
                if !warm {
                    ours.push(clock::now().ns_since(t) as f64 / 1000.0);
                }
            }
            for _ in 0..1000 {
                let t = clock::now();
                pool.install(|| std::hint::black_box(()));
                if !warm {
                    theirs.push(clock::now().ns_since(t) as f64 / 1000.0);
                }
            }
        }
        let cores = lanegraph_jobs::plan::machine_cores().len();
        let threads = 1;
        let note = if cores < 2 { "_shared_core" } else { "" };
        Ok(vec![
            Figure::new(
                SUITE,
                "round_trip",
                threads,
                format!("p50_us{note}"),
                "us",
                percentile(&mut ours, 50.0),
            )
            .with_baseline("rayon install from outside", percentile(&mut theirs, 50.0)),
            Figure::new(
                SUITE,
                "round_trip",
                threads,
                format!("p99_us{note}"),
                "us",
                percentile(&mut ours, 99.0),
            )
            .with_baseline("rayon install from outside", percentile(&mut theirs, 99.0)),
        ])
    })
}

/// The steady-state frame: the layered DAG plus one parallel-for node.
fn frame_graph(lanes: &Lanes) -> Graph<AtomicUsize> {
    let dag = Dag::layered(10, 100, 4);
    let mut b = GraphBuilder::<AtomicUsize>::new("frame");
    let ids: Vec<_> = (0..dag.len())
        .map(|i| {
            b.node(&format!("n{i}"), "physics", |_, c| {
                c.fetch_add(1, Ordering::Relaxed);
            })
        })
        .collect();
    for (from, succs) in dag.succs.iter().enumerate() {
        for &to in succs {
            b.edge(ids[from], ids[to as usize]);
        }
    }
    let par = b.node("parallel_for", "physics", |ctx, c| {
        ctx.lanes()
            .parallel_for(ctx.lane(), 0..16_384, 256, |_, r| {
                c.fetch_add(r.len(), Ordering::Relaxed);
            })
            .expect("parallel-for runs");
    });
    for id in &ids[ids.len() - 100..] {
        b.edge(*id, par);
    }
    b.build(lanes).expect("frame graph is valid")
}

fn frame_allocs(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    if !lanegraph::hooks::telemetry::alloc::is_installed() {
        // The criterion harness and library users may not install the tracking allocator.
        return Ok(Vec::new());
    }
    let frames = if opts.quick { 500 } else { 5000 };
    let lanes = physics_lanes(2);
    let pool = rayon_pool(2);
    let mut g = frame_graph(&lanes);
    let rayon_dag = RayonDag::new(Dag::layered(10, 100, 4));
    let count = AtomicUsize::new(0);
    let rayon_frame = || {
        rayon_dag.run(&pool);
        pool.install(|| {
            use rayon::prelude::*;
            (0..16_384usize)
                .into_par_iter()
                .with_min_len(256)
                .for_each(|i| {
                    std::hint::black_box(i);
                })
        });
    };
    for _ in 0..50 {
        g.run(&lanes, &count).map_err(|e| fail(e.to_string()))?;
        rayon_frame();
    }
    let a0 = lanegraph::hooks::telemetry::memory_stats().allocations;
    for _ in 0..frames {
        g.run(&lanes, &count).map_err(|e| fail(e.to_string()))?;
    }
    let a1 = lanegraph::hooks::telemetry::memory_stats().allocations;
    for _ in 0..frames {
        rayon_frame();
    }
    let a2 = lanegraph::hooks::telemetry::memory_stats().allocations;
    Ok(vec![Figure::new(
        SUITE,
        "frame_allocs",
        2,
        "allocs_per_frame",
        "count",
        (a1 - a0) as f64 / frames as f64,
    )
    .with_baseline(
        "rayon scope + par_iter",
        (a2 - a1) as f64 / frames as f64,
    )])
}

/// CPU ns burnt per wall second while a lane is ticked at `hz` with a trivial job.
fn idle_cpu_of(mut tick: impl FnMut(), seconds: f64, hz: f64) -> f64 {
    let period = Duration::from_secs_f64(1.0 / hz);
    // Warm up: let workers reach their steady idle behaviour.
    for _ in 0..20 {
        tick();
        std::thread::sleep(period);
    }
    let start = Instant::now();
    let cpu0 = clock::process_cpu_ns().unwrap_or(0);
    let mut next = start + period;
    while start.elapsed().as_secs_f64() < seconds {
        tick();
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        }
        next += period;
    }
    let cpu = clock::process_cpu_ns().unwrap_or(0) - cpu0;
    cpu as f64 / start.elapsed().as_secs_f64()
}

fn idle_cpu(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    if clock::process_cpu_ns().is_none() {
        return Ok(Vec::new());
    }
    // The tick loop itself (sleeping 1 ms and waking) costs CPU in every configuration; each is
    // measured in short blocks interleaved with the bare loop and reported net of it, so the
    // figure is what the lane adds. Rows: the engine's plan shape (the owner serves physics),
    // a plan without an owner lane (every tick wakes the worker), and that lane told its tick
    // (`Lanes::set_tick`: timed parks).
    let tick_graph = |lanes: &Lanes| -> Result<Graph<()>, BenchError> {
        let mut b = GraphBuilder::<()>::new("tick").record_timing(false);
        b.node("tick", "physics", |_, _| {
            std::hint::black_box(());
        });
        b.build(lanes).map_err(|e| fail(e.to_string()))
    };
    let engine_lanes = physics_lanes_owner_helps(1);
    let worker_lanes = physics_lanes(1);
    let ticked_lanes = physics_lanes(1);
    let physics = ticked_lanes
        .lane("physics")
        .ok_or_else(|| fail("no physics lane"))?;
    ticked_lanes
        .set_tick(physics, Some(Duration::from_millis(1)))
        .map_err(|e| fail(e.to_string()))?;
    let mut engine_graph = tick_graph(&engine_lanes)?;
    let mut worker_graph = tick_graph(&worker_lanes)?;
    let mut ticked_graph = tick_graph(&ticked_lanes)?;
    let pool = rayon_pool(1);
    let mut configs: [Box<dyn FnMut() + '_>; 5] = [
        Box::new(|| std::hint::black_box(())),
        Box::new(|| {
            let _ = engine_graph.run(&engine_lanes, &());
        }),
        Box::new(|| {
            let _ = worker_graph.run(&worker_lanes, &());
        }),
        Box::new(|| {
            let _ = ticked_graph.run(&ticked_lanes, &());
        }),
        Box::new(|| pool.install(|| std::hint::black_box(()))),
    ];
    let rounds = if opts.quick { 48 } else { 240 };
    let nets = interleaved_frame_cpu(&mut configs, rounds, 1000.0);
    let [_, engine_plan, worker, ticked, theirs] = nets.map(|mut v| percentile(&mut v, 50.0));
    // ms of CPU per second of wall time = thousandths of a core.
    let row = |metric: &'static str, value: f64| {
        Figure::new(SUITE, "idle_cpu", 1, metric, "ms", value)
            .with_baseline("rayon install at 1 kHz", theirs)
    };
    Ok(vec![
        row("cpu_ms_per_s_at_1khz_net_of_tick_loop", engine_plan),
        row("cpu_ms_per_s_at_1khz_net_no_owner_lane", worker),
        row("cpu_ms_per_s_at_1khz_net_ticked_lane", ticked),
    ])
}

/// `idle_frame_60hz`: a frame loop at 60 Hz whose lane work is almost nothing (one trivial
/// graph node on the physics lane, then `Lanes::rest` as the engine calls it at a frame's end),
/// against rayon driven the same way (one trivial `install`): the whole process's CPU time per
/// second, net of the loop's own sleeping. The first row is the engine's plan shape (the owner
/// serves the physics lane, as `EngineBuilder` sets up); the second a plan without an owner
/// lane (the node must wake a worker). Noisy: a frame's sleep costs this VM 25-45 us of CPU,
/// the lane's share a few us.
fn idle_frame_60hz(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    if clock::process_cpu_ns().is_none() {
        return Ok(Vec::new());
    }
    let frame_graph = |lanes: &Lanes| -> Result<Graph<()>, BenchError> {
        let mut b = GraphBuilder::<()>::new("frame").record_timing(false);
        b.node("work", "physics", |_, _| {
            std::hint::black_box(());
        });
        b.build(lanes).map_err(|e| fail(e.to_string()))
    };
    let engine_lanes = physics_lanes_owner_helps(1);
    let worker_lanes = physics_lanes(1);
    let mut engine_graph = frame_graph(&engine_lanes)?;
    let mut worker_graph = frame_graph(&worker_lanes)?;
    let pool = rayon_pool(1);
    // The bare loop first: every other figure is net of it.
    let mut configs: [Box<dyn FnMut() + '_>; 4] = [
        Box::new(|| std::hint::black_box(())),
        Box::new(|| {
            let _ = engine_graph.run(&engine_lanes, &());
            engine_lanes.rest();
        }),
        Box::new(|| {
            let _ = worker_graph.run(&worker_lanes, &());
            worker_lanes.rest();
        }),
        Box::new(|| pool.install(|| std::hint::black_box(()))),
    ];
    let rounds = if opts.quick { 24 } else { 96 };
    let nets = interleaved_frame_cpu(&mut configs, rounds, 60.0);
    let [_, engine_plan, rested, theirs] = nets.map(|mut v| percentile(&mut v, 50.0));
    let row = |metric: &'static str, value: f64| {
        Figure::new(SUITE, "idle_frame_60hz", 1, metric, "ms", value)
            .with_baseline("rayon install at 60 Hz", theirs)
    };
    Ok(vec![
        row("cpu_ms_per_s_net_of_frame_loop", engine_plan),
        row("cpu_ms_per_s_net_no_owner_lane", rested),
    ])
}

/// Drives a frame loop at `hz` through `configs` in turn, in blocks of `FRAME_BLOCK` frames
/// after two unmeasured frames (which absorbs the previous block's trailing work: a rayon worker
/// still yielding, a lane still spinning), for `rounds` rounds. Returns, per configuration, the
/// whole process's CPU ms per wall second of each round, net of `configs[0]` (the bare loop) in
/// the same round. Interleaving in short blocks keeps a drift of this VM's sleep cost out of
/// the differences.
fn interleaved_frame_cpu<const N: usize>(
    configs: &mut [Box<dyn FnMut() + '_>; N],
    rounds: usize,
    hz: f64,
) -> [Vec<f64>; N] {
    const FRAME_BLOCK: u32 = 8;
    let period = Duration::from_secs_f64(1.0 / hz);
    let mut next = Instant::now() + period;
    let mut frame = |f: &mut Box<dyn FnMut() + '_>| {
        f();
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
        next += period;
    };
    // Warm-up: every configuration reaches its steady idle behaviour.
    for f in configs.iter_mut() {
        for _ in 0..10 {
            frame(f);
        }
    }
    let mut out: [Vec<f64>; N] = std::array::from_fn(|_| Vec::with_capacity(rounds));
    let wall_s = f64::from(FRAME_BLOCK) / hz;
    for _ in 0..rounds {
        let mut cpu = [0u64; N];
        for (f, c) in configs.iter_mut().zip(cpu.iter_mut()) {
            frame(f);
            frame(f);
            let c0 = clock::process_cpu_ns().unwrap_or(0);
            for _ in 0..FRAME_BLOCK {
                frame(f);
            }
            *c = clock::process_cpu_ns().unwrap_or(0).saturating_sub(c0);
        }
        for (o, c) in out.iter_mut().zip(cpu) {
            o.push((c as f64 - cpu[0] as f64) / 1e6 / wall_s);
        }
    }
    out
}

/// `tick_wake`: a one-node graph run at 1 kHz on a lane told it is ticked at 1 kHz
/// ([`Lanes::set_tick`]: timed parks) against the same lane untold (spin briefly, then park
/// until a push wakes it): how long from the push to the node's start, and the CPU it costs.
fn tick_wake(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    timed_wake(
        opts,
        "tick_wake",
        1000.0,
        "untold lane",
        |lanes, physics, hz| {
            lanes
                .set_tick(physics, Some(Duration::from_secs_f64(1.0 / hz)))
                .map_err(|e| fail(e.to_string()))
        },
    )
}

/// `frame_wake`: a one-node frame at 60 Hz on a worker's lane, `Lanes::rest` after each, with
/// the frame wake-up lead on ([`Lanes::set_frame_lead`]: the worker learns the frame period and
/// wakes on its own just before the next frame) against it off (it sleeps until the frame's
/// push wakes it): push to the node's start, and the CPU it costs.
fn frame_wake(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    timed_wake(opts, "frame_wake", 60.0, "lead off", |lanes, physics, _| {
        lanes
            .set_frame_lead(physics, true)
            .map_err(|e| fail(e.to_string()))
    })
}

/// A one-node graph run at `hz` on a one-worker physics lane (then `Lanes::rest`), with the
/// lane set up by `timed` against the lane as it starts: the push-to-start p50 and p99, and the
/// CPU per second net of the loop.
fn timed_wake(
    opts: BenchOptions,
    case: &'static str,
    hz: f64,
    baseline: &'static str,
    timed: impl Fn(&Lanes, lanegraph_jobs::LaneId, f64) -> Result<(), BenchError>,
) -> Result<Vec<Figure>, BenchError> {
    if clock::process_cpu_ns().is_none() {
        return Ok(Vec::new());
    }
    // At least 60 arrivals, so a 60 Hz case has its percentiles too.
    let seconds = f64::max(if opts.quick { 1.0 } else { 5.0 }, 60.0 / hz);
    let bare = idle_cpu_of(|| std::hint::black_box(()), seconds, hz);
    let measure = |told: bool| -> Result<(Vec<f64>, f64), BenchError> {
        let lanes = physics_lanes(1);
        let physics = lanes
            .lane("physics")
            .ok_or_else(|| fail("no physics lane"))?;
        if told {
            timed(&lanes, physics, hz)?;
        }
        let mut b = GraphBuilder::<AtomicU64>::new("tick").record_timing(false);
        b.node("tick", "physics", |_, started| {
            started.store(clock::now().0, Ordering::Relaxed);
        });
        let mut g = b.build(&lanes).map_err(|e| fail(e.to_string()))?;
        let started = AtomicU64::new(0);
        let mut wake_us = Vec::with_capacity((seconds * hz) as usize + 64);
        let cpu = idle_cpu_of(
            || {
                let t = clock::now();
                let _ = g.run(&lanes, &started);
                lanes.rest();
                let s = clock::Stamp(started.load(Ordering::Relaxed));
                wake_us.push(s.ns_since(t) as f64 / 1000.0);
            },
            seconds,
            hz,
        );
        Ok((wake_us, (cpu - bare).max(0.0) / 1e6))
    };
    let (mut untold, untold_cpu) = measure(false)?;
    let (mut told, told_cpu) = measure(true)?;
    let row = |metric: &'static str, unit: &'static str, ours: f64, theirs: f64| {
        Figure::new(SUITE, case, 1, metric, unit, ours).with_baseline(baseline, theirs)
    };
    Ok(vec![
        row(
            "p50_push_to_start_us",
            "us",
            percentile(&mut told, 50.0),
            percentile(&mut untold, 50.0),
        ),
        row(
            "p99_push_to_start_us",
            "us",
            percentile(&mut told, 99.0),
            percentile(&mut untold, 99.0),
        ),
        row("cpu_ms_per_s_net_of_loop", "ms", told_cpu, untold_cpu),
    ])
}

fn lane_isolation(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    let runs = if opts.quick { 300 } else { 2000 };
    let lanes = Lanes::start_with(LanePlan::auto(), LaneOptions::default())
        .map_err(|e| fail(e.to_string()))?;
    let asset = lanes
        .lane("asset")
        .ok_or_else(|| fail("auto plan has no asset lane"))?;
    // The render graph: a fan of 8 nodes of 20 us each, then a join.
    let mut b = GraphBuilder::<()>::new("render").record_timing(false);
    let join = b.node("submit", "render", |_, _| busy(5_000));
    for i in 0..8 {
        let n = b.node(&format!("record{i}"), "render", |_, _| busy(20_000));
        b.edge(n, join);
    }
    let mut g = b.build(&lanes).map_err(|e| fail(e.to_string()))?;
    let measure = |g: &mut Graph<()>| -> Result<Vec<f64>, BenchError> {
        let mut v = Vec::with_capacity(runs);
        for i in 0..runs + runs / 10 {
            let t = clock::now();
            g.run(&lanes, &()).map_err(|e| fail(e.to_string()))?;
            if i >= runs / 10 {
                v.push(clock::now().ns_since(t) as f64 / 1000.0);
            }
        }
        Ok(v)
    };
    let mut unloaded = measure(&mut g)?;
    // Flood the asset lane: enough 200 us jobs to outlast the loaded measurement.
    let stop = Arc::new(AtomicBool::new(false));
    let per_run_us = percentile(&mut unloaded.clone(), 50.0);
    let jobs = ((runs as f64 * 1.2 * per_run_us) / 200.0) as usize + 64;
    for _ in 0..jobs {
        let stop = Arc::clone(&stop);
        lanes
            .spawn_detached(asset, move || {
                if !stop.load(Ordering::Relaxed) {
                    busy(200_000);
                }
            })
            .map_err(|e| fail(e.to_string()))?;
    }
    let mut loaded = measure(&mut g)?;
    stop.store(true, Ordering::Relaxed);
    let cores = lanes.plan().machine_cores().len();
    let u99 = percentile(&mut unloaded, 99.0);
    let l99 = percentile(&mut loaded, 99.0);
    Ok(vec![Figure::new(
        SUITE,
        "lane_isolation",
        cores,
        "render_p99_us_under_asset_flood",
        "us",
        l99,
    )
    .with_baseline("same graph, asset lane idle", u99)])
}
