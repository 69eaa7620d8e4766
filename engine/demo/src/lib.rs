//! The demo game: a particle / boids world on the whole runtime.
//!
//! Owns: the demo's options, its run loop (progress, pacing, the end-of-run exports) and its
//! game (in [`world`], [`physics`], [`textures`]). Must never: reach into engine internals (it
//! is a game like any other: it uses the public `Engine` API only).
//!
//! - 100,000 particles by default, positions and velocities field-SoA, moved by the `f32x8`
//!   kernels in parallel chunks on the physics lane ([`physics`]).
//! - Gameplay systems on the owner thread: spawn waves, the player's bursts (Space in `--window`), the sink that despawns, scoring
//!   ([`world`]).
//! - The render lane draws every frame through Vulkan when there is a device.
//! - The asset lane decodes generated PNG files, one corrupt and one missing ([`textures`]).
//! - At exit: `summary.json`, `trace.json`, `metrics.prom`, `report.html`, `frame.png`.
//!
//! `--frames N` runs lockstep (one fixed step per frame), every agent adaptive: the
//! `world_hash` is a function of the seed, the frame count and the decision log, and
//! [`replay_of`] + [`run`] reproduce it from a run's `summary.json` on any machine and lane
//! plan; `--seconds N` runs on the real clock (the step count then depends on time).

#![deny(unreachable_pub, missing_docs)]

// A progress line on stderr that a reader which stops early (`lanegraph demo 2>&1 | head`)
// cannot turn into a panic that loses the run: the line is dropped, the run goes on.
macro_rules! progress_line {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

pub mod agents;
pub mod cost_recording;
pub mod gpu;
pub mod outputs;
pub mod physics;
pub mod render;
/// The HTML report (`lanegraph-report`), re-exported for the demo's callers.
pub use lanegraph_report as report;
pub mod summary;
pub mod textures;
pub mod world;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lanegraph::runtime::{BuildError, Engine, EngineConfig, FrameError};
pub use summary::DemoSummary;

/// Default particle count.
pub const DEFAULT_ENTITIES: usize = 100_000;
/// Frames run when neither `--frames` nor `--seconds` is given (ten seconds at 60 fps).
pub const DEFAULT_FRAMES: u64 = 600;

/// How to run the demo (the CLI's flags).
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// Lockstep frames to run (`None` with `seconds`: real time).
    pub frames: Option<u64>,
    /// Seconds to run on the real clock (wins over `frames` when both are set).
    pub seconds: Option<f64>,
    /// Frame-rate target (also paces the run unless `pace` is off).
    pub target_fps: Option<f64>,
    /// Where the exports go (`None`: write nothing).
    pub out: Option<PathBuf>,
    /// Do not try Vulkan.
    pub no_gpu: bool,
    /// Vulkan validation layers on.
    pub validation: bool,
    /// The seed.
    pub seed: u64,
    /// A lane spec overriding the plan.
    pub lanes: Option<String>,
    /// Particles at the start.
    pub entities: usize,
    /// Engine configuration (e.g. from `--config`), under the flags above.
    pub config: EngineConfig,
    /// Show the live progress line.
    pub progress: bool,
    /// Sleep to the frame target (off in tests and stress runs).
    pub pace: bool,
    /// Serve the engine's metrics in the OpenMetrics text format on this address while the
    /// demo runs (`--metrics-addr 127.0.0.1:9464`); loopback only unless `metrics_remote`.
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// Allow `metrics_addr` to be a non-loopback address (exposes metrics to the network).
    pub metrics_remote: bool,
    /// Stream the profiler live over puffin's wire protocol on this loopback address
    /// (`--puffin-addr 127.0.0.1:8585`; `puffin_viewer --url 127.0.0.1:8585` connects).
    pub puffin_addr: Option<std::net::SocketAddr>,
    /// A run log to replay instead of the live controller and live input (a lockstep run's
    /// `summary.json` `decisions` and `inputs`: see [`replay_of`]).
    pub replay: Option<lanegraph::runtime::RunLog>,
    /// Set (by a signal handler, or any thread) to stop the run at the next frame boundary; the
    /// outputs are then written for the frames run and [`DemoRun::interrupted`] is true.
    pub stop: Option<Arc<AtomicBool>>,
    /// Show the particles in a window (`--window`) instead of drawing offscreen only. Closing
    /// the window ends the run, which then writes its outputs as any other end does.
    pub window: bool,
    /// The window's present mode (`--present-mode`; `None`: the config's `window.present_mode`).
    pub present_mode: Option<lanegraph::vk::PresentMode>,
    /// Manual pins (`--pin AGENT=STRATEGY[@FRAME]`), each made after `frame` frames have run
    /// (0: before the first): logged as decisions, so a replay reproduces them.
    pub pins: Vec<Pin>,
    /// Record a cost trace to this file (`--record-costs FILE`): every agent visits every
    /// rung in turn ([`cost_recording`]), and each rung's measured cost, frame by frame, is
    /// written for the `budget` bench to replay. A lockstep run (`--frames`) with no pins and
    /// no replay: the sweep decides.
    pub record_costs: Option<PathBuf>,
}

/// A manual pin: `agent` pinned to `strategy` after `frame` frames have run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// Frames run before the pin is made (0: before the first frame).
    pub frame: u64,
    /// The agent's name (`physics`, `render`, `asset`).
    pub agent: String,
    /// The strategy's name.
    pub strategy: String,
}

impl std::str::FromStr for Pin {
    type Err = String;
    /// `AGENT=STRATEGY` or `AGENT=STRATEGY@FRAME`.
    fn from_str(s: &str) -> Result<Pin, String> {
        let (pin, frame) = match s.split_once('@') {
            Some((p, f)) => (
                p,
                f.parse::<u64>().map_err(|_| {
                    format!("`{f}` is not a frame number (fix: AGENT=STRATEGY@120)")
                })?,
            ),
            None => (s, 0),
        };
        let (agent, strategy) = pin
            .split_once('=')
            .filter(|(a, st)| !a.is_empty() && !st.is_empty())
            .ok_or_else(|| {
                format!("`{s}` is not AGENT=STRATEGY[@FRAME] (fix: physics=detail_4_8@120)")
            })?;
        Ok(Pin {
            frame,
            agent: agent.to_string(),
            strategy: strategy.to_string(),
        })
    }
}

impl Default for DemoOptions {
    fn default() -> Self {
        DemoOptions {
            frames: None,
            seconds: None,
            target_fps: None,
            out: Some(PathBuf::from("lanegraph-out")),
            no_gpu: false,
            validation: false,
            seed: 1,
            lanes: None,
            entities: DEFAULT_ENTITIES,
            config: EngineConfig::default(),
            progress: true,
            pace: true,
            metrics_addr: None,
            metrics_remote: false,
            puffin_addr: None,
            replay: None,
            stop: None,
            window: false,
            present_mode: None,
            pins: Vec::new(),
            record_costs: None,
        }
    }
}

/// The most particles a run may start with (each costs about 100 bytes across the columns
/// and the grid; 10 million is about a gigabyte).
pub const MAX_ENTITIES: usize = 10_000_000;

/// The longest `--seconds` run: a week.
pub const MAX_SECONDS: f64 = 7.0 * 24.0 * 3600.0;

/// The most `--frames` a run takes: a week of frames at 1,000 fps (a replayed log asking for
/// more is refused, not run for ever).
pub const MAX_FRAMES: u64 = 7 * 24 * 3600 * 1000;

/// The largest run log (`summary.json`) `lanegraph replay` reads: 128 MiB, checked before it
/// is read (a full decision log and a million input events fit several times over).
pub const MAX_RUN_LOG_BYTES: u64 = 128 << 20;

/// The most decisions and input events a run log holds: what a run writes at most (the
/// controller's log keeps 1,024 decisions; the input log a million events).
const MAX_LOG_DECISIONS: usize = 1_024;
const MAX_LOG_INPUTS: usize = 1_000_000;

impl DemoOptions {
    /// Checks every option against its range, before anything runs.
    pub fn validate(&self) -> Result<(), DemoError> {
        let bad = |flag, value: String, why, fix: String| {
            Err(DemoError::BadOption {
                flag,
                value,
                why,
                fix,
            })
        };
        if self.window && (self.no_gpu || !self.config.vulkan) {
            return bad(
                "--window",
                "with --no-gpu (or `vulkan = false`)".into(),
                "a window is drawn by the GPU",
                "drop --no-gpu to see the particles, or drop --window to run headless".into(),
            );
        }
        if let Some(frames) = self.frames {
            if frames == 0 || frames > MAX_FRAMES {
                return bad(
                    "--frames",
                    frames.to_string(),
                    "a run needs at least one frame, and at most a week of frames at 1,000 fps",
                    format!("give 1 to {MAX_FRAMES}"),
                );
            }
        }
        if let Some(s) = self.seconds {
            if !(s.is_finite() && s > 0.0 && s <= MAX_SECONDS) {
                return bad(
                    "--seconds",
                    s.to_string(),
                    "not a positive, finite number of seconds up to a week",
                    format!("give a number in (0, {MAX_SECONDS}]"),
                );
            }
        }
        if self.entities == 0 || self.entities > MAX_ENTITIES {
            return bad(
                "--entities",
                self.entities.to_string(),
                "out of range",
                format!("give 1 to {MAX_ENTITIES}"),
            );
        }
        if let Some(fps) = self.target_fps {
            let mut c = self.config.clone();
            c.target_fps = fps;
            if c.validate().is_err() {
                return bad(
                    "--target-fps",
                    fps.to_string(),
                    "out of range",
                    "give a frame rate from 4 to 1000".into(),
                );
            }
        }
        if let Some(path) = &self.record_costs {
            if self.seconds.is_some() || self.replay.is_some() || !self.pins.is_empty() {
                return bad(
                    "--record-costs",
                    path.display().to_string(),
                    "a cost recording sweeps every rung itself, frame by frame",
                    "record a lockstep run (--frames) without --seconds, --pin or a replay".into(),
                );
            }
        }
        if let Some(spec) = self.lanes.as_ref().or(self.config.lanes.as_ref()) {
            let has_physics = spec
                .split(',')
                .filter_map(|p| p.trim().split_once('='))
                .any(|(name, _)| name.trim() == lanegraph::jobs::plan::names::PHYSICS);
            if !has_physics {
                return bad(
                    "--lanes",
                    spec.clone(),
                    "the demo's physics runs on the `physics` lane, and this plan has none (the world would never move)",
                    format!("add one, e.g. physics=1,{spec}"),
                );
            }
        }
        Ok(())
    }
}

/// The demo failed.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The engine could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A frame failed.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// A system could not be registered.
    #[error(transparent)]
    Register(#[from] lanegraph::systems::RegisterError),
    /// The metrics scrape endpoint or the puffin live view could not start.
    #[error(transparent)]
    Endpoint(#[from] lanegraph::telemetry::EndpointError),
    /// An option is out of its range (the CLI's flags and the config file's keys).
    #[error("{flag} {value}: {why}; fix: {fix}")]
    BadOption {
        /// The flag (or config key) as the user wrote it.
        flag: &'static str,
        /// The value given.
        value: String,
        /// What is wrong with it.
        why: &'static str,
        /// What to give instead.
        fix: String,
    },
    /// A decision log could not be replayed (another game's, or another version's).
    #[error("replay: {0}")]
    Replay(String),
    /// An output could not be written (the previous output is left as it was).
    #[error(transparent)]
    Output(#[from] outputs::OutputError),
    /// `--window` could not open its window.
    #[error(transparent)]
    Window(#[from] lanegraph::window::WindowError),
    /// `--window` opened its window but the GPU cannot present to it.
    #[error("demo --window: {0}")]
    Present(lanegraph::vk::GpuError),
    /// Writing the textures failed.
    #[error("demo: {what} `{path}`: {source}; fix: check that the folder is writable")]
    Io {
        /// What was written.
        what: &'static str,
        /// Where.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct DemoRun {
    /// The summary (also in `summary.json` when there is an output folder).
    pub summary: DemoSummary,
    /// Files written, the manifest last.
    pub files: Vec<PathBuf>,
    /// The run was stopped early through [`DemoOptions::stop`] (the outputs cover the frames
    /// it ran).
    pub interrupted: bool,
    /// The run ended because the player closed the window (the outputs cover the frames it
    /// ran).
    pub closed: bool,
}

/// Runs the demo end to end.
pub fn run(opts: &DemoOptions) -> Result<DemoRun, DemoError> {
    opts.validate()?;
    if let Some(dir) = &opts.out {
        // Before the first frame: a bad --out costs nothing.
        outputs::check_out_dir(dir)?;
    }
    let lockstep = opts.seconds.is_none();
    let frames = opts.frames.unwrap_or(DEFAULT_FRAMES);
    let mut config = opts.config.clone();
    if let Some(fps) = opts.target_fps {
        config.target_fps = fps;
    }
    if opts.lanes.is_some() {
        config.lanes = opts.lanes.clone();
    }
    if opts.no_gpu {
        config.vulkan = false;
    }
    let mut window = None;
    let renderer = if opts.window {
        let w = lanegraph::window::GameWindow::open(&lanegraph::window::WindowConfig {
            title: "lanegraph demo (Space: a burst of particles)".into(),
            size: (960, 720),
            resizable: true,
        })?;
        let mode = match opts.present_mode {
            Some(m) => m,
            None => config
                .present_mode
                .parse()
                .map_err(|why: String| DemoError::BadOption {
                    flag: "window.present_mode",
                    value: config.present_mode.clone(),
                    why: "not a present mode",
                    fix: why,
                })?,
        };
        let r = render::ParticleRenderer::windowed(
            w.window().clone(),
            w.surface_state(),
            mode,
            opts.validation,
        )
        .map_err(DemoError::Present)?;
        window = Some(w);
        r
    } else {
        render::ParticleRenderer::new(config.vulkan, opts.validation)
    };
    // The demo adapts all three built-in agents on its own ladders (a game installs only
    // those it wants).
    let mut engine = Engine::builder()
        .config(config)
        .builtin_agents(agents::all())
        .lockstep(lockstep)
        .render(render::VIEW_DOMAINS, render::derive_view, renderer)
        .build()?;
    // Stops (and frees the port) when dropped at the end of the run.
    let _endpoint = match opts.metrics_addr {
        Some(addr) => {
            let ep = lanegraph::telemetry::MetricsEndpoint::start(
                addr,
                engine.metrics().clone(),
                lanegraph::telemetry::EndpointOptions {
                    allow_non_loopback: opts.metrics_remote,
                    ..Default::default()
                },
            )?;
            if opts.progress {
                progress_line!("serving metrics on http://{}/metrics", ep.local_addr());
            }
            Some(ep)
        }
        None => None,
    };
    if let Some(addr) = opts.puffin_addr {
        engine.serve_puffin(&addr.to_string())?;
        if opts.progress {
            progress_line!("live view on {addr}: puffin_viewer --url {addr}");
        }
    }
    // Every agent adapts, physics included: a lockstep run's world hash is a function of the
    // seed, the frames, the decision log and the input log (`summary.json`'s `decisions` and
    // `inputs`), which `replay` feeds back instead of the live controller and live input.
    if let Some(log) = &opts.replay {
        engine
            .replay(log)
            .map_err(|e| DemoError::Replay(e.to_string()))?;
    }
    // Pins name agents and strategies this engine has (checked before anything runs).
    for p in &opts.pins {
        let known = engine
            .controller()
            .agent_id(&p.agent)
            .and_then(|id| engine.controller().strategies(id));
        let ok = known.is_some_and(|ss| ss.iter().any(|s| s.name == p.strategy));
        if !ok {
            let fix = match known {
                Some(ss) => format!(
                    "one of {}",
                    ss.iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => "an agent of physics, render, asset".into(),
            };
            return Err(DemoError::BadOption {
                flag: "--pin",
                value: format!("{}={}@{}", p.agent, p.strategy, p.frame),
                why: "no such agent or strategy",
                fix,
            });
        }
    }
    world::setup(engine.world_mut(), opts.entities, opts.seed)?;
    let mut phys = physics::DemoPhysics::default();
    let neighbours = Arc::new(AtomicU64::new(0));
    let seen = Arc::clone(&neighbours);
    engine.set_physics(move |w, step| {
        phys.step(w, step);
        seen.store(phys.mean_neighbours.to_bits(), Ordering::Relaxed);
    });
    let textures =
        textures::TextureFolder::generate(opts.seed).map_err(|source| DemoError::Io {
            what: "texture folder",
            path: std::env::temp_dir(),
            source,
        })?;
    for p in &textures.requests {
        engine.request_asset(p.clone());
    }
    if opts.progress {
        progress_line!(
            "lanegraph demo: loading {} textures on the asset lane, two broken on purpose (a \
             corrupt and a missing PNG): their warnings below show failures reported and skipped",
            textures.requests.len()
        );
    }
    let device = engine.render_device();
    match (&device.name, &device.unavailable) {
        (Some(d), _) => progress_line!("lanegraph demo: GPU: {d}"),
        (None, Some(w)) => {
            progress_line!("lanegraph demo: GPU unavailable ({w}); running without drawing")
        }
        _ => {}
    }
    progress_line!("lanegraph demo: lanes:\n{}", engine.lanes().plan());

    let mut costs = opts
        .record_costs
        .as_ref()
        .map(|_| cost_recording::CostRecorder::start(&mut engine));
    let bar = progress_bar(opts, frames);
    let started = Instant::now();
    let budget = engine.config().target_fps;
    let frame_budget = Duration::from_secs_f64(1.0 / budget);
    let mut n = 0u64;
    let mut interrupted = false;
    let mut closed = false;
    loop {
        if let Some(w) = window.as_mut() {
            // The pumped form (`lanegraph::window`): events become the next frame's input.
            if w.pump(&mut engine).close_requested {
                closed = true;
                break;
            }
        }
        if opts
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
        {
            interrupted = true;
            break;
        }
        let done = match opts.seconds {
            Some(s) => started.elapsed().as_secs_f64() >= s,
            None => n >= frames,
        };
        if done {
            break;
        }
        for p in opts.pins.iter().filter(|p| p.frame == n) {
            // Checked before the first frame: the agent and the strategy exist.
            if let Some(id) = engine.controller().agent_id(&p.agent) {
                let _ = engine.pin(id, &p.strategy);
            }
        }
        if let Some(r) = costs.as_mut() {
            r.before_frame(&mut engine, n);
        }
        let f0 = Instant::now();
        let out = engine.frame()?;
        n += 1;
        if let Some(b) = &bar {
            if n % 10 == 0 || n == 1 {
                b.set_position(if opts.seconds.is_some() {
                    started.elapsed().as_secs()
                } else {
                    n
                });
                b.set_message(progress_message(&engine, out.frame_ms, out.target_ms));
            }
        }
        if opts.pace {
            if let Some(rest) = frame_budget.checked_sub(f0.elapsed()) {
                std::thread::sleep(rest);
            }
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    // Let the asset lane finish what it started, so every request is accounted for.
    let drain_until = Instant::now() + Duration::from_secs(5);
    loop {
        let t = engine.asset_report().0;
        if t.loaded + t.failed >= t.requested || Instant::now() >= drain_until {
            break;
        }
        // Applies completions and issues what is queued, without simulating: the world (and
        // its hash) is exactly `frames` steps old.
        engine.pump_assets();
        std::thread::sleep(Duration::from_millis(1));
    }
    if let (Some(r), Some(path)) = (costs, &opts.record_costs) {
        let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
        let notes = vec![
            format!(
                "recorded by: lanegraph demo{} --frames {n} --entities {} --seed {} --record-costs FILE",
                if opts.no_gpu { " --no-gpu" } else { "" },
                opts.entities,
                opts.seed
            ),
            format!("cores: {cores} (std::thread::available_parallelism)"),
            format!(
                "sweep: every agent pinned to its next rung every {} frames",
                cost_recording::SWEEP_FRAMES
            ),
        ];
        r.finish(&mut engine, path, notes)
            .map_err(|source| DemoError::Io {
                what: "cost trace",
                path: path.clone(),
                source,
            })?;
    }
    let wall_s = started.elapsed().as_secs_f64();
    let score = engine
        .world()
        .resource::<world::Score>()
        .copied()
        .unwrap_or_default();
    let mut summary =
        DemoSummary::from_engine(&engine, opts.seed, opts.entities, lockstep, score, wall_s);
    summary.mean_neighbours = f64::from_bits(neighbours.load(Ordering::Relaxed));
    let files = match &opts.out {
        Some(dir) => write_outputs(&engine, &summary, dir)?,
        None => Vec::new(),
    };
    drop(textures);
    Ok(DemoRun {
        summary,
        files,
        interrupted,
        closed,
    })
}

fn write_outputs(
    engine: &Engine,
    summary: &DemoSummary,
    dir: &std::path::Path,
) -> Result<Vec<PathBuf>, DemoError> {
    // Atomic files, the manifest last (see `outputs`): never a mixed or cut-off set.
    let mut set = outputs::OutputSet::begin(dir, "lanegraph demo")?;
    let json = serde_json::to_string_pretty(summary).expect("the summary serialises");
    set.put("summary.json", "summary", json.as_bytes())?;
    set.put("trace.json", "trace", engine.chrome_trace().as_bytes())?;
    set.put(
        "metrics.prom",
        "metrics",
        engine.metrics().to_openmetrics().as_bytes(),
    )?;
    let data = crate::report::ReportData::from_engine(engine, "lanegraph demo", &summary.table());
    set.put(
        "report.html",
        "report",
        crate::report::render_html(&data).as_bytes(),
    )?;
    if let Some(png) = engine.capture_png() {
        set.put("frame.png", "frame picture", &png)?;
    }
    Ok(set.publish()?)
}

fn progress_bar(opts: &DemoOptions, frames: u64) -> Option<indicatif::ProgressBar> {
    if !opts.progress {
        return None;
    }
    let (len, unit) = match opts.seconds {
        Some(s) => (s.ceil() as u64, "s"),
        None => (frames, "frames"),
    };
    let bar = indicatif::ProgressBar::new(len);
    let style = indicatif::ProgressStyle::with_template(&format!(
        "{{bar:30}} {{pos}}/{{len}} {unit} | {{msg}}"
    ))
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    Some(bar)
}

fn progress_message(engine: &Engine, frame_ms: f64, target: f64) -> String {
    let busy = engine
        .lanes()
        .plan()
        .lanes()
        .iter()
        .zip(engine.lane_busy())
        .map(|(l, b)| format!("{} {:.0}%", l.name, b * 100.0))
        .collect::<Vec<_>>()
        .join(" ");
    let c = engine.controller();
    let strategies = engine
        .builtin_agents()
        .iter()
        .filter_map(|&id| {
            let cur = engine.strategy(id)?;
            Some(format!(
                "{}={}",
                c.agent_name(id)?,
                c.strategies(id)?[cur.get()].name
            ))
        })
        .collect::<Vec<_>>()
        .join(" ");
    format!("{frame_ms:.1} ms / {target:.1} ms | {busy} | {strategies}")
}

/// A recorded run to reproduce: its options and the world hash it must give.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The options that re-run it (seed, frames, entities, step rate, the decisions).
    pub options: DemoOptions,
    /// The world hash the recorded run ended with.
    pub world_hash: String,
    /// The state-hash format that made `world_hash` (1 for a summary that does not say).
    pub world_hash_format: u32,
}

/// Reads a demo run's `summary.json` into the options that reproduce it with its recorded
/// decisions instead of the live controller. Refuses a run that was not lockstep (its step
/// count depended on the wall clock) and a decision log that was cut (the controller keeps the
/// last 1,024 decisions).
pub fn replay_of(summary_json: &str) -> Result<Recorded, DemoError> {
    let bad = |why: String| DemoError::Replay(why);
    let v: serde_json::Value = serde_json::from_str(summary_json).map_err(|e| {
        bad(format!(
            "not a summary.json: {e}; fix: pass the summary.json a demo run wrote"
        ))
    })?;
    let field = |k: &str| {
        v.get(k)
            .cloned()
            .ok_or_else(|| bad(format!("summary.json has no `{k}`; fix: pass the summary.json a demo run of this version wrote")))
    };
    let num = |k: &str| {
        field(k).and_then(|x| {
            x.as_u64()
                .ok_or_else(|| bad(format!("`{k}` is not a whole number")))
        })
    };
    if field("deterministic")?.as_bool() != Some(true) {
        return Err(bad(
            "the run was on the real clock (--seconds): its steps depended on time; fix: record a lockstep run (--frames N) to replay it".into(),
        ));
    }
    if field("decisions_complete")?.as_bool() != Some(true) {
        return Err(bad(
            "the run's decision log was cut (over 1,024 decisions); fix: record a shorter run"
                .into(),
        ));
    }
    let decisions: Vec<lanegraph::runtime::DecisionEntry> =
        serde_json::from_value(field("decisions")?).map_err(|e| {
            bad(format!(
                "`decisions` is not a decision log: {e}; fix: pass the summary.json a demo run of this version wrote"
            ))
        })?;
    // A run without a window has no input; a summary written before inputs were logged has
    // no `inputs` key and none to replay.
    if v.get("inputs_complete").and_then(|c| c.as_bool()) == Some(false) {
        return Err(bad(
            "the run's input log was cut (over a million events); fix: record a shorter run".into(),
        ));
    }
    if decisions.len() > MAX_LOG_DECISIONS {
        return Err(bad(format!(
            "{} decisions, more than a run writes ({MAX_LOG_DECISIONS}); fix: pass the summary.json a demo run wrote",
            decisions.len()
        )));
    }
    let inputs: Vec<lanegraph::input::RecordedInput> = match v.get("inputs") {
        Some(i) => serde_json::from_value(i.clone())
            .map_err(|e| {
                bad(format!(
                    "`inputs` is not an input log: {e}; fix: pass the summary.json a demo run of this version wrote"
                ))
            })?,
        None => Vec::new(),
    };
    if inputs.len() > MAX_LOG_INPUTS {
        return Err(bad(format!(
            "{} input events, more than a run writes ({MAX_LOG_INPUTS}); fix: pass the summary.json a demo run wrote",
            inputs.len()
        )));
    }
    let config = EngineConfig {
        fixed_step_hz: u32::try_from(num("fixed_step_hz")?)
            .map_err(|_| bad("`fixed_step_hz` is out of range".into()))?,
        ..EngineConfig::default()
    };
    let options = DemoOptions {
        frames: Some(num("frames")?),
        seed: num("seed")?,
        entities: usize::try_from(num("entities_initial")?)
            .map_err(|_| bad("`entities_initial` is out of range".into()))?,
        config,
        replay: Some(lanegraph::runtime::RunLog { decisions, inputs }),
        ..DemoOptions::default()
    };
    let world_hash = field("world_hash")?
        .as_str()
        .ok_or_else(|| bad("`world_hash` is not text".into()))?
        .to_string();
    let world_hash_format = match v.get("world_hash_format") {
        None => 1,
        Some(f) => f
            .as_u64()
            .and_then(|f| u32::try_from(f).ok())
            .ok_or_else(|| bad("`world_hash_format` is not a small whole number".into()))?,
    };
    Ok(Recorded {
        options,
        world_hash,
        world_hash_format,
    })
}
