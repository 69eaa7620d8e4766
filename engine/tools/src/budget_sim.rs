//! A deterministic simulator for the controller: a simulated clock, synthetic agents whose cost
//! follows a known law, GPU figures that arrive two frames late, and the game loop's own
//! fixed-step accumulator.
//!
//! Owns: scenarios, the simulated frame loop and the figures read off a run (settling frames,
//! missed frames, changes, multiplier excursion). Used by the integration tests and the
//! `budget` bench, so every figure is reproducible: same scenario, same seed, same trace.
//! Must never: read a real clock or the environment (everything comes from the scenario).
//!
//! # The simulated frame `N`
//! 1. Real dt = `max(frame N-1, budget)` (a vsync'd display never runs faster than its rate),
//!    clamped to 0.25 s; the game loop's [`Accumulator`] (step = the scenario's step divided
//!    by the smallest divisor any current strategy declares, [`finest_step_divisor`], as the
//!    engine takes it) runs its steps, capped at 5; capped or clamped frames are reported as
//!    clamped.
//! 2. Each agent's true cost = `load * truth[strategy] * law(n) * noise` (per step for
//!    per-step agents, times the steps run); a periodic strategy (`every(p)`) costs that on
//!    frames divisible by `p` and nothing on the others.
//! 3. CPU frame = CPU overhead (+ a hitch, rarely) + CPU agents; GPU frame = GPU overhead + GPU
//!    agents. The frame's true time is the worse of the two.
//! 4. The controller ticks with this frame's CPU time and CPU samples, and the GPU time and GPU
//!    samples of frame `N-2`. Its decisions run from frame `N+1`.

use lanegraph::game_loop::FixedStep;
use lanegraph::hooks::{divided_step, Accumulator, MAX_FRAME_DELTA, MAX_STEPS_PER_FRAME};
use lanegraph_budget::cost_trace::{CostTrace, TraceError};
use lanegraph_budget::hooks::Recording;
use lanegraph_budget::hooks::{AgentIdHooks, ControllerDriver, CostLawHooks};
use lanegraph_budget::{
    finest_step_divisor, Agent, AgentId, AgentSample, ControllerConfig, CostLaw, Decision,
    FrameInput, GpuTiming, Pool, Quote, Readings, StepReport, Strategy, StrategyIndex,
};
use lanegraph_budget::{AdaptationMode, Controller};

/// The accumulator's cap on steps per frame (the game loop's).
pub const MAX_STEPS: u32 = MAX_STEPS_PER_FRAME;
/// GPU readings arrive this many frames late.
pub const GPU_LAG: u64 = lanegraph_budget::GPU_READ_LAG_FRAMES;

/// A synthetic agent: declared strategies plus the truth the simulator charges.
#[derive(Debug, Clone, PartialEq)]
pub struct SimAgentSpec {
    /// Name.
    pub name: String,
    /// Pool.
    pub pool: Pool,
    /// Weight.
    pub weight: u16,
    /// Declared strategies (what the controller sees).
    pub strategies: Vec<Strategy>,
    /// The true law.
    pub law: CostLaw,
    /// True coefficient per strategy (ms per `law(n)`; per step when `per_step`).
    pub truth: Vec<f64>,
    /// Workload size.
    pub n: u64,
    /// Cost is charged per fixed step run (physics), not per frame.
    pub per_step: bool,
}

/// Index into the simulator's per-pool arrays.
fn pool_index(pool: Pool) -> usize {
    match pool {
        Pool::Cpu => 0,
        Pool::Gpu => 1,
    }
}

/// A pool's lower-case name (`cpu`, `gpu`).
fn pool_name(pool: Pool) -> &'static str {
    ["cpu", "gpu"][pool_index(pool)]
}

/// A piecewise-constant schedule: `(from frame, value)`, sorted by frame.
pub type Schedule<T> = Vec<(u64, T)>;

fn at<T: Copy>(s: &Schedule<T>, frame: u64, default: T) -> T {
    s.iter()
        .take_while(|(f, _)| *f <= frame)
        .last()
        .map_or(default, |&(_, v)| v)
}

/// A scenario: the scene, the load over time, noise, providers.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Controller configuration.
    pub config: ControllerConfig,
    /// Agents, in registration order.
    pub agents: Vec<SimAgentSpec>,
    /// Frames to run (numbered from 1).
    pub frames: u64,
    /// The configured fixed step, which strategies' step divisors divide (1/60 s in every
    /// constructor here).
    pub step: FixedStep,
    /// Noise seed.
    pub seed: u64,
    /// Relative noise on every cost (standard deviation, 0.05 = 5 %).
    pub noise: f64,
    /// Chance per frame of a CPU hitch.
    pub hitch_chance: f64,
    /// A hitch's extra CPU ms.
    pub hitch_ms: f64,
    /// Load factor over time (multiplies every agent's cost).
    pub load: Schedule<f64>,
    /// Extra load factor on CPU agents only (a CPU-bound scene).
    pub cpu_load: Schedule<f64>,
    /// Extra load factor on GPU agents only (a GPU-bound scene).
    pub gpu_load: Schedule<f64>,
    /// CPU time no agent owns, ms.
    pub cpu_overhead_ms: f64,
    /// GPU time no agent owns, ms.
    pub gpu_overhead_ms: f64,
    /// Provider readings over time.
    pub readings: Schedule<Readings>,
    /// A recorded run's costs (`None`: the agents' laws and `noise`). With a trace, agent `k`
    /// is the trace's agent `k`: each frame charges the rung in force what the run measured
    /// for it nearest in time, the overheads are the run's, and the frame steps in lockstep
    /// (one fixed step a frame, as the run recorded it); see [`traced`].
    pub cost_trace: Option<std::sync::Arc<CostTrace>>,
}

/// Who picks the strategies.
#[derive(Debug, Clone, Copy)]
pub enum Driver<'a> {
    /// The controller.
    Adaptive,
    /// A decision log, applied at the frames it names (the controller only observes).
    Replay(&'a [Decision]),
    /// Nobody: every agent stays on its best strategy (the no-controller baseline).
    Fixed,
}

/// One simulated frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameRecord {
    /// Frame number.
    pub frame: u64,
    /// True CPU frame, ms.
    pub cpu_ms: f64,
    /// True GPU frame, ms.
    pub gpu_ms: f64,
    /// The frame's true time, `max(cpu, gpu)`.
    pub frame_ms: f64,
    /// The controller's target after this frame's tick.
    pub target_ms: f64,
    /// The multiplier after this frame's tick.
    pub multiplier: f64,
    /// Fixed steps run.
    pub steps: u32,
    /// True when the accumulator clamped.
    pub clamped: bool,
    /// Sum of quality ranks run this frame.
    pub quality: u32,
}

/// A run's trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// Every frame.
    pub frames: Vec<FrameRecord>,
    /// Every decision, in order (the whole log, not just the kept ring).
    pub decisions: Vec<Decision>,
    /// The frame budget, ms.
    pub budget_ms: f64,
}

struct SimAgent {
    name: String,
    pool: Pool,
    weight: u16,
    strategies: Vec<Strategy>,
    n: u64,
}

impl Agent for SimAgent {
    fn name(&self) -> &str {
        &self.name
    }
    fn pool(&self) -> Pool {
        self.pool
    }
    fn weight(&self) -> u16 {
        self.weight
    }
    fn strategies(&self) -> Vec<Strategy> {
        self.strategies.clone()
    }
    fn initial_workload(&self) -> u64 {
        self.n
    }
}

/// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", 2014):
/// small, fast and the same on every platform.
#[derive(Debug, Clone)]
pub struct SplitMix(pub u64);

impl SplitMix {
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Approximately standard normal: the Irwin–Hall sum of 12 uniforms less 6 (no
    /// transcendental functions, so bit-identical everywhere).
    pub fn normal(&mut self) -> f64 {
        let mut s = 0.0;
        for _ in 0..12 {
            s += self.unit();
        }
        s - 6.0
    }
}

/// Fixed steps in one frame of `frame_ms` at `strategy`'s step (`base` divided by its
/// divisor), at least one (the peak frame).
pub fn peak_steps(base: FixedStep, strategy: &Strategy, frame_ms: f64) -> f64 {
    match strategy
        .step_divisor
        .and_then(|d| divided_step(base, d).ok())
    {
        Some(step) => (frame_ms / (step.as_secs_f64() * 1000.0)).round().max(1.0),
        None => 1.0,
    }
}

fn best_strategy(ss: &[Strategy]) -> StrategyIndex {
    let mut best = 0;
    for (i, s) in ss.iter().enumerate() {
        if s.quality > ss[best].quality {
            best = i;
        }
    }
    StrategyIndex(best as u8)
}

/// Runs a scenario. Panics only if the scenario's agents fail registration (a bug in the
/// scenario, named in the message).
pub fn run(sc: &Scenario, driver: Driver<'_>) -> Trace {
    run_with(sc, driver, |_, _| {})
}

/// [`run`], calling `inspect` after every frame with the controller and the frame's record.
pub fn run_with(
    sc: &Scenario,
    driver: Driver<'_>,
    inspect: impl FnMut(&Controller, &FrameRecord),
) -> Trace {
    run_inner(sc, driver, false, inspect).0
}

/// An adaptive [`run`] whose controller records every tick's input (samples and provider
/// readings included), for replay into a fresh controller.
pub fn run_recorded(sc: &Scenario) -> (Trace, Recording) {
    let (t, r) = run_inner(sc, Driver::Adaptive, true, |_, _| {});
    (t, r.expect("recording was started"))
}

/// A controller with the scenario's configuration and agents, registered in order (for
/// replaying a `Recording`).
pub fn controller_for(sc: &Scenario) -> Controller {
    let mut ctl = Controller::new(sc.config).expect("scenario config must be valid");
    for a in &sc.agents {
        ctl.register(Box::new(SimAgent {
            name: a.name.clone(),
            pool: a.pool,
            weight: a.weight,
            strategies: a.strategies.clone(),
            n: a.n,
        }))
        .unwrap_or_else(|e| panic!("scenario agent `{}` refused: {e}", a.name));
    }
    ctl
}

/// The simulator's frame loop: per frame the fixed steps, the agents' true costs, the GPU lag,
/// the controller's tick and the recorded or replayed decisions, in the order a real frame has
/// them. One function (about 180 lines) on purpose: the order of those steps is what the
/// simulator models, and every test and the `budget` bench depend on it being the engine's.
fn run_inner(
    sc: &Scenario,
    driver: Driver<'_>,
    record: bool,
    mut inspect: impl FnMut(&Controller, &FrameRecord),
) -> (Trace, Option<Recording>) {
    let mut ctl = Controller::new(sc.config).expect("scenario config must be valid");
    if record {
        ctl.start_recording();
    }
    let mut ids = Vec::new();
    for a in &sc.agents {
        let id = ctl
            .register(Box::new(SimAgent {
                name: a.name.clone(),
                pool: a.pool,
                weight: a.weight,
                strategies: a.strategies.clone(),
                n: a.n,
            }))
            .unwrap_or_else(|e| panic!("scenario agent `{}` refused: {e}", a.name));
        ids.push(id);
    }
    if !matches!(driver, Driver::Adaptive) {
        ctl.set_mode(AdaptationMode::Manual);
    }
    let mut current: Vec<StrategyIndex> = sc
        .agents
        .iter()
        .map(|a| best_strategy(&a.strategies))
        .collect();
    let mut rng = SplitMix(sc.seed);
    let budget_ns = (sc.config.frame_budget_ms * 1e6).round() as u64;
    let mut acc = Accumulator::new(sc.step, MAX_FRAME_DELTA, MAX_STEPS_PER_FRAME);
    let mut prev_frame_ms = sc.config.frame_budget_ms;
    // GPU frames and samples waiting to be read (frame, gpu ms, samples).
    let mut gpu_pending: std::collections::VecDeque<(u64, f64, Vec<AgentSample>)> =
        Default::default();
    let mut frames = Vec::with_capacity(sc.frames as usize);
    let mut decisions = Vec::new();
    let mut replay_at = 0usize;
    let mut samples = Vec::new();
    for frame in 1..=sc.frames {
        // 1. Fixed steps.
        let divisor = finest_step_divisor(
            current
                .iter()
                .zip(&sc.agents)
                .map(|(s, a)| &a.strategies[s.get()]),
        );
        acc.set_step(divisor.map_or(sc.step, |d| divided_step(sc.step, d).unwrap_or(sc.step)));
        let dt_ns = ((prev_frame_ms * 1e6).round() as u64).max(budget_ns);
        let plan = acc.advance(dt_ns);
        let mut steps = plan.steps;
        let mut clamped = plan.clamped_ns > 0 || plan.dropped_steps > 0;
        let traced = sc.cost_trace.as_deref().map(|t| (t, t.index_of(frame)));
        if traced.is_some() {
            (steps, clamped) = (1, false);
        }

        // 2-3. Costs.
        let load = at(&sc.load, frame, 1.0);
        let pool_load = [at(&sc.cpu_load, frame, 1.0), at(&sc.gpu_load, frame, 1.0)];
        let readings = at(&sc.readings, frame, Readings::default());
        let overhead = traced.map_or([sc.cpu_overhead_ms, sc.gpu_overhead_ms], |(t, i)| {
            t.overhead_ms(i)
        });
        let mut cpu = overhead[0];
        if sc.hitch_chance > 0.0 && rng.unit() < sc.hitch_chance {
            cpu += sc.hitch_ms;
        }
        let mut gpu = overhead[1];
        samples.clear();
        let mut gpu_samples = Vec::new();
        let mut quality = 0;
        for (k, a) in sc.agents.iter().enumerate() {
            let s = current[k].get();
            quality += a.strategies[s].quality as u32;
            // A periodic strategy works one frame in `period` and costs nothing in between.
            let period = u64::from(a.strategies[s].period.max(1));
            let works = if frame % period == 0 { 1.0 } else { 0.0 };
            let scale = works * load * pool_load[pool_index(a.pool)];
            let (n, unit) = match traced {
                // `traced` checked every rung of every agent has a measurement.
                Some((t, i)) => t
                    .rung_cost(k, s, i)
                    .map_or((a.n, 0.0), |(n, ms)| (n, scale * ms)),
                None => {
                    let noise = (1.0 + sc.noise * rng.normal()).max(0.1);
                    (a.n, scale * a.truth[s] * a.law.eval(a.n) * noise)
                }
            };
            let ms = if a.per_step {
                unit * steps as f64
            } else {
                unit
            };
            // A fixed-step agent reports its cost per display frame at its nominal rate (the
            // measured per-step cost times the steps a frame of the budget's length runs, at
            // least one: the peak frame), because how many steps one frame runs depends on the
            // previous frame's dt, not on the strategy. A frame that ran no step reports nothing.
            let reported = if a.per_step {
                (steps > 0).then(|| {
                    unit * peak_steps(sc.step, &a.strategies[s], sc.config.frame_budget_ms)
                })
            } else {
                Some(ms)
            };
            let sample = reported.map(|ms| AgentSample {
                agent: ids[k],
                frame,
                n,
                ms,
            });
            match a.pool {
                Pool::Cpu => {
                    cpu += ms;
                    samples.extend(sample);
                }
                Pool::Gpu => {
                    gpu += ms;
                    gpu_samples.extend(sample);
                }
            }
        }
        let has_gpu = sc.agents.iter().any(|a| a.pool == Pool::Gpu);
        gpu_pending.push_back((frame, gpu, gpu_samples));
        let mut gpu_timing = None;
        while gpu_pending
            .front()
            .is_some_and(|(f, _, _)| f + GPU_LAG <= frame)
        {
            let (f, ms, s) = gpu_pending.pop_front().expect("checked non-empty");
            if has_gpu {
                gpu_timing = Some(GpuTiming { frame: f, ms });
            }
            samples.extend(s);
        }
        let frame_ms = if has_gpu { cpu.max(gpu) } else { cpu };

        // 4. Tick.
        let input = FrameInput {
            frame,
            cpu_ms: cpu,
            gpu: gpu_timing,
            samples: &samples,
            step: Some(StepReport { steps, clamped }),
        };
        let before = ctl.log().total();
        let report = ctl
            .tick_with(&input, readings)
            .expect("simulated input is always valid");
        match driver {
            Driver::Adaptive => {
                let fresh = (ctl.log().total() - before) as usize;
                let log: Vec<&Decision> = ctl.log().iter().collect();
                for d in &log[log.len() - fresh..] {
                    current[d.agent.index()] = d.to;
                    decisions.push((*d).clone());
                }
            }
            Driver::Replay(log) => {
                while replay_at < log.len() && log[replay_at].frame == frame {
                    let d = &log[replay_at];
                    current[d.agent.index()] = d.to;
                    decisions.push(d.clone());
                    replay_at += 1;
                }
            }
            Driver::Fixed => {}
        }
        let record = FrameRecord {
            frame,
            cpu_ms: cpu,
            gpu_ms: if has_gpu { gpu } else { 0.0 },
            frame_ms,
            target_ms: report.target_ms,
            multiplier: report.multiplier,
            steps,
            clamped,
            quality,
        };
        inspect(&ctl, &record);
        frames.push(record);
        prev_frame_ms = frame_ms;
    }
    let trace = Trace {
        frames,
        decisions,
        budget_ms: sc.config.frame_budget_ms,
    };
    (trace, ctl.take_recording())
}

impl Trace {
    fn range(&self, from: u64, to: u64) -> impl Iterator<Item = &FrameRecord> {
        self.frames
            .iter()
            .filter(move |f| f.frame >= from && f.frame < to)
    }

    /// Frames in `[from, to)` whose true time exceeded the budget (missed deadlines).
    pub fn missed_frames(&self, from: u64, to: u64) -> usize {
        self.range(from, to)
            .filter(|f| f.frame_ms > self.budget_ms)
            .count()
    }

    /// Frames from `from` until the frame time is at or under the target and stays there for
    /// `hold` frames; `None` if it never does before the trace ends.
    pub fn settle_frames(&self, from: u64, hold: usize) -> Option<u64> {
        let after: Vec<&FrameRecord> = self.frames.iter().filter(|f| f.frame >= from).collect();
        let mut run = 0;
        for (i, f) in after.iter().enumerate() {
            if f.frame_ms <= f.target_ms {
                run += 1;
                if run >= hold {
                    return Some(after[i + 1 - hold].frame - from);
                }
            } else {
                run = 0;
            }
        }
        None
    }

    /// Strategy changes per agent (registration order) decided in `[from, to)`.
    pub fn changes_per_agent(&self, agents: usize, from: u64, to: u64) -> Vec<usize> {
        let mut out = vec![0; agents];
        for d in &self.decisions {
            if d.frame >= from && d.frame < to {
                out[d.agent.index()] += 1;
            }
        }
        out
    }

    /// The multiplier's largest excursion below its settled value in `[from, to)`, as a
    /// fraction of the settled value; the settled value is the mean over the last 100 frames
    /// of the range.
    pub fn multiplier_overshoot(&self, from: u64, to: u64) -> f64 {
        let tail: Vec<f64> = self
            .range(to.saturating_sub(100), to)
            .map(|f| f.multiplier)
            .collect();
        if tail.is_empty() {
            return 0.0;
        }
        let settled = tail.iter().sum::<f64>() / tail.len() as f64;
        let low = self
            .range(from, to)
            .map(|f| f.multiplier)
            .fold(f64::INFINITY, f64::min);
        ((settled - low) / settled).max(0.0)
    }

    /// Frames in `[from, to)` whose true time exceeded the controller's target.
    pub fn over_target_frames(&self, from: u64, to: u64) -> usize {
        self.range(from, to)
            .filter(|f| f.frame_ms > f.target_ms)
            .count()
    }
}

/// The standard scene: physics (CPU, fixed step, linear in bodies), ai (CPU, `n log n`), asset
/// streaming (CPU, constant) and render (GPU, linear in draw items), at 60 Hz. True costs
/// differ from the quotes (this machine is slower than quoted for some, faster for others), so
/// calibration has work to do. At load 1 everything runs at its best (CPU 10.9 ms, GPU
/// 10.3 ms); at load 3 the best set that fits is physics `step_60`, ai `reduced`, asset `slow`
/// (CPU 13.9 ms) and render `quarter` (GPU 9.8 ms).
pub fn standard_scene() -> Vec<SimAgentSpec> {
    use CostLaw::*;
    let s = |name: &str, q: u16, law: CostLaw, c: f64| Strategy::new(name, q, Quote::new(law, c));
    vec![
        SimAgentSpec {
            name: "physics".into(),
            pool: Pool::Cpu,
            weight: 2,
            strategies: vec![
                // Divisors of the scene's 120 Hz step ([`STANDARD_STEP_HZ`]).
                s("step_120", 3, Linear, 0.0024).with_step_divisor(divisor(1)),
                s("step_60", 2, Linear, 0.0012).with_step_divisor(divisor(2)),
                // At 60 Hz a 1/30 s step runs every other frame: its peak frame costs one step,
                // like 1/60 s. It only pays off below 30 Hz (or for average power).
                s("step_30", 1, Linear, 0.0012).with_step_divisor(divisor(4)),
            ],
            law: Linear,
            truth: vec![0.0011, 0.0011, 0.0011],
            n: 2000,
            per_step: true,
        },
        SimAgentSpec {
            name: "ai".into(),
            pool: Pool::Cpu,
            weight: 1,
            strategies: vec![
                s("full", 3, NLogN, 0.0010),
                s("reduced", 2, NLogN, 0.00042),
                s("minimal", 1, NLogN, 0.00018),
            ],
            law: NLogN,
            truth: vec![0.000901, 0.000386, 0.000161],
            n: 500,
            per_step: false,
        },
        SimAgentSpec {
            name: "asset".into(),
            pool: Pool::Cpu,
            weight: 1,
            strategies: vec![s("fast", 2, Constant, 1.5), s("slow", 1, Constant, 0.5)],
            law: Constant,
            truth: vec![1.65, 0.55],
            n: 1,
            per_step: false,
        },
        SimAgentSpec {
            name: "render".into(),
            pool: Pool::Gpu,
            weight: 1,
            strategies: vec![
                s("full", 3, Linear, 0.0016),
                s("half", 2, Linear, 0.0009),
                s("quarter", 1, Linear, 0.0005),
            ],
            law: Linear,
            truth: vec![0.00176, 0.00099, 0.00055],
            n: 5000,
            per_step: false,
        },
    ]
}

/// The standard scene's configured step rate, Hz: its physics strategies divide it by 1, 2
/// and 4.
pub const STANDARD_STEP_HZ: u32 = 120;

/// A step divisor from a literal (0 is taken as 1).
pub fn divisor(d: u32) -> std::num::NonZeroU32 {
    std::num::NonZeroU32::new(d).unwrap_or(std::num::NonZeroU32::MIN)
}

/// A scenario over the standard scene with the given load schedule and noise.
pub fn standard(frames: u64, load: Schedule<f64>, noise: f64, seed: u64) -> Scenario {
    Scenario {
        config: ControllerConfig::default(),
        agents: standard_scene(),
        frames,
        seed,
        step: FixedStep::from_hz(STANDARD_STEP_HZ).unwrap_or_default(),
        noise,
        hitch_chance: 0.0,
        hitch_ms: 0.0,
        load,
        cpu_load: Vec::new(),
        gpu_load: Vec::new(),
        cpu_overhead_ms: 2.0,
        gpu_overhead_ms: 1.5,
        readings: Vec::new(),
        cost_trace: None,
    }
}

/// The id of the `k`-th registered agent (sim agents are registered in scenario order; `k`
/// is below the controller's 256 agents).
pub fn agent_id(k: usize) -> AgentId {
    AgentId::from_index(k.min(u16::MAX as usize)).expect("an index within u16")
}

/// A ladder whose quote is wrong by an order of magnitude (the demo's physics on a slow
/// 2-vCPU machine): the quote says `full` costs 6.7x the cheapest rung, the truth is
/// 56x (28 ms in a 16.7 ms budget), and the middle rung (12 ms) fits. A controller that
/// rescales quotes by one factor predicts `full` at ~3 ms from the cheapest rung's
/// measurements and probes it every dwell; one that remembers each rung's own cost probes it
/// rarely and settles on the middle rung.
pub fn mispriced_ladder(frames: u64, seed: u64) -> Scenario {
    use CostLaw::*;
    let s = |name: &str, q: u16, c: f64| Strategy::new(name, q, Quote::new(Linear, c));
    let n = 10_000;
    Scenario::one_agent(
        SimAgentSpec {
            name: "physics".into(),
            pool: Pool::Cpu,
            weight: 3,
            strategies: vec![
                s("full", 3, 20e-6),
                s("detail_every_2", 2, 12e-6),
                s("no_detail", 1, 3e-6),
            ],
            law: Linear,
            truth: vec![28.0 / n as f64, 12.0 / n as f64, 0.5 / n as f64],
            n,
            per_step: false,
        },
        frames,
        seed,
    )
}

/// A scenario that replays a recorded run's costs ([`Scenario::cost_trace`]) for `frames`
/// frames, the trace run back and forth when it is shorter. `declared` is the game's agents as
/// it registers them: `(name, pool, strategies)`. An agent of the trace joins when the game
/// declares it with the same rungs in the same order and the run measured every one of them;
/// the time of an agent left out stays in the frame as overhead, as it was in the run. Returns
/// the scenario and the names of the agents left out, with why.
///
/// # Errors
/// A trace whose agents the game does not declare alike, or with no agent whose every rung was
/// measured (nothing to arbitrate).
pub fn traced(
    trace: &CostTrace,
    declared: &[(String, Pool, Vec<Strategy>)],
    frames: u64,
) -> Result<(Scenario, Vec<String>), TraceError> {
    let mut keep = Vec::new();
    let mut agents = Vec::new();
    let mut left_out = Vec::new();
    for (k, a) in trace.agents.iter().enumerate() {
        let Some((_, pool, strategies)) = declared.iter().find(|d| d.0 == a.name) else {
            left_out.push(format!("{}: the game declares no such agent", a.name));
            continue;
        };
        let names: Vec<&str> = strategies.iter().map(|s| s.name.as_str()).collect();
        if names != a.rungs || *pool != a.pool {
            return Err(TraceError {
                line: 0,
                what: format!(
                    "agent `{}` was recorded with rungs [{}] on the {} pool; the game declares [{}] on the {} pool",
                    a.name,
                    a.rungs.join(", "),
                    pool_name(a.pool),
                    names.join(", "),
                    pool_name(*pool)
                ),
                fix: "record the trace again with this build of the game",
            });
        }
        let never = trace.unmeasured(k);
        if !never.is_empty() {
            left_out.push(format!("{}: never measured {}", a.name, never.join(", ")));
            continue;
        }
        keep.push(k);
        agents.push(SimAgentSpec {
            name: a.name.clone(),
            pool: a.pool,
            weight: 1,
            strategies: strategies.clone(),
            law: CostLaw::Constant,
            truth: vec![0.0; strategies.len()],
            n: 1,
            per_step: false,
        });
    }
    if agents.is_empty() {
        return Err(TraceError {
            line: 0,
            what: format!("no agent has every rung measured ({})", left_out.join("; ")),
            fix: "record with `--record-costs`, which visits every rung of every agent",
        });
    }
    let config = ControllerConfig {
        frame_budget_ms: trace.budget_ms,
        ..ControllerConfig::default()
    };
    let sc = Scenario {
        config,
        agents,
        frames,
        seed: 0,
        step: FixedStep::default(),
        noise: 0.0,
        hitch_chance: 0.0,
        hitch_ms: 0.0,
        load: Vec::new(),
        cpu_load: Vec::new(),
        gpu_load: Vec::new(),
        cpu_overhead_ms: 0.0,
        gpu_overhead_ms: 0.0,
        readings: Vec::new(),
        cost_trace: Some(std::sync::Arc::new(trace.keep_agents(&keep))),
    };
    Ok((sc, left_out))
}

impl Scenario {
    /// One CPU agent at steady load: default configuration, 5 % noise, no hitches, 0.5 ms of
    /// CPU overhead, no GPU, no provider readings.
    pub fn one_agent(agent: SimAgentSpec, frames: u64, seed: u64) -> Scenario {
        Scenario {
            config: ControllerConfig::default(),
            agents: vec![agent],
            frames,
            seed,
            step: FixedStep::default(),
            noise: 0.05,
            hitch_chance: 0.0,
            hitch_ms: 0.0,
            load: Vec::new(),
            cpu_load: Vec::new(),
            gpu_load: Vec::new(),
            cpu_overhead_ms: 0.5,
            gpu_overhead_ms: 0.0,
            readings: Vec::new(),
            cost_trace: None,
        }
    }
}
