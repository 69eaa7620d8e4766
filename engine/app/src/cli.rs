//! The `lanegraph` command line: `demo`, `plan`, `bench`, `stress`.
//!
//! Owns: argument parsing and dispatch to the library. Must never: hold engine logic of its own.

use std::process::ExitCode;

// The command's own lines, written so that a reader that stops early (`lanegraph demo | head`)
// cannot turn them into a panic: by the time they are printed the outputs are on disk, and the
// exit status must still say how the run went.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}
macro_rules! say_raw {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}
macro_rules! say_err {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

use clap::{Parser, Subcommand};

use lanegraph::hooks::RunSummaryHooks;
use lanegraph_tools::bench::{self as bench, BenchOptions};

/// The `lanegraph` command line.
#[derive(Debug, Parser)]
#[command(
    name = "lanegraph",
    version,
    about = "lanegraph engine runtime: demo, benches, stress"
)]
pub struct Cli {
    /// What to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the demo game: 100,000 boids on every lane, exports into --out.
    Demo(DemoArgs),
    /// Flood every lane, inject panicking jobs and corrupt assets, check nothing hung, leaked
    /// or was lost (exit status 1 if something did).
    Stress {
        /// How long to run, seconds.
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
        /// A lane spec overriding the automatic plan (e.g. physics=2,render=1,asset=1).
        #[arg(long)]
        lanes: Option<String>,
    },
    /// Re-run a lockstep demo run from its summary.json with its recorded decisions instead of
    /// the live controller, and check the world hash is the same bit for bit (exit 0 when it
    /// is, 1 when it is not).
    Replay {
        /// The recorded run's summary.json.
        summary: std::path::PathBuf,
        /// A lane spec for the replay (any plan must give the same hash).
        #[arg(long)]
        lanes: Option<String>,
        /// Output folder for the replay's own outputs.
        #[arg(long, default_value = "lanegraph-replay")]
        out: std::path::PathBuf,
        /// Do not use Vulkan even when a driver is present.
        #[arg(long)]
        no_gpu: bool,
    },
    /// Print the lane plan derived for this machine.
    Plan,
    /// Run a benchmark suite: dispatch, timing, telemetry, budget, simd, gpu, lanes, ecs or all.
    Bench {
        /// The suite.
        suite: String,
        /// Short runs (each suite under two minutes on 2 cores).
        #[arg(long)]
        quick: bool,
        /// One JSON object per line per figure.
        #[arg(long)]
        json: bool,
    },
}

/// Parses the process arguments and runs the command.
pub(crate) fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Demo(args) => run_demo(args),
        Command::Stress { seconds, lanes } => run_stress(seconds, lanes),
        Command::Replay {
            summary,
            lanes,
            out,
            no_gpu,
        } => run_replay(&summary, lanes, out, no_gpu),
        Command::Plan => {
            let plan = lanegraph::jobs::LanePlan::auto();
            say!("{plan}");
            ExitCode::SUCCESS
        }
        Command::Bench { suite, quick, json } => run_bench(&suite, BenchOptions { quick }, json),
    }
}

/// The demo's flags.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Lockstep frames to run, one fixed step each; default 600. The world_hash is a function of
    /// (seed, frames, decision log): `lanegraph replay` reproduces it.
    #[arg(long)]
    pub frames: Option<u64>,
    /// Run this many seconds on the real clock instead (steps follow the clock: not replayable).
    #[arg(long)]
    pub seconds: Option<f64>,
    /// Frame-rate target (default 60, or the config file's).
    #[arg(long)]
    pub target_fps: Option<f64>,
    /// Output folder for report.html, trace.json, metrics.prom, summary.json, frame.png.
    #[arg(long, default_value = "lanegraph-out")]
    pub out: std::path::PathBuf,
    /// Do not use Vulkan even when a driver is present.
    #[arg(long)]
    pub no_gpu: bool,
    /// Enable the Vulkan validation layers (summary.json counts their messages).
    #[arg(long)]
    pub validation: bool,
    /// Seed of the world.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Lane spec overriding the automatic plan, e.g. physics=2,render=1,asset=1.
    #[arg(long)]
    pub lanes: Option<String>,
    /// Particles at the start.
    #[arg(long, default_value_t = lanegraph_demo::DEFAULT_ENTITIES)]
    pub entities: usize,
    /// Engine configuration file (TOML; see docs/quickstart.md).
    #[arg(long)]
    pub config: Option<std::path::PathBuf>,
    /// Do not sleep to the frame target (run as fast as possible).
    #[arg(long)]
    pub no_pace: bool,
    /// Serve OpenMetrics on this address while running, e.g. 127.0.0.1:9464 (loopback only
    /// unless --metrics-remote).
    #[arg(long)]
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// Allow --metrics-addr to be a non-loopback address (exposes metrics to the network).
    #[arg(long)]
    pub metrics_remote: bool,
    /// Stream the profiler live over puffin's protocol on this loopback address, e.g.
    /// 127.0.0.1:8585 (`puffin_viewer --url 127.0.0.1:8585` connects).
    #[arg(long)]
    pub puffin_addr: Option<std::net::SocketAddr>,
    /// Show the particles in a window (X11; under a virtual display: `xvfb-run -a`). Space
    /// fires a burst of particles; closing the window ends the run and writes the outputs.
    #[arg(long)]
    pub window: bool,
    /// With --window: fifo (vsync, the default), mailbox or immediate (those two fall back to
    /// fifo where the display lacks them).
    #[arg(long, value_parser = parse_present_mode)]
    pub present_mode: Option<lanegraph::vk::PresentMode>,
    /// A budget gate for CI: exit 4 when the frame p99 is over the frame budget, or a system
    /// ran at 3x its budget or more more than --max-system-errors times (each named).
    #[arg(long)]
    pub fail_on_budget: bool,
    /// Pin an agent to a strategy: AGENT=STRATEGY, or AGENT=STRATEGY@FRAME to pin it after
    /// that many frames (repeatable). Logged as a decision: `lanegraph replay` reproduces it.
    #[arg(long = "pin", value_parser = parse_pin)]
    pub pins: Vec<lanegraph_demo::Pin>,
    /// With --fail-on-budget: how many error-level runs (>= 3x budget) a system may have.
    #[arg(long, default_value_t = 0)]
    pub max_system_errors: u64,
    /// Record a cost trace to FILE: every agent visits every rung in turn (a rung every 2
    /// frames) and each rung's measured cost is written, frame by frame, for `lanegraph bench
    /// budget` to replay (with --frames; no --pin).
    #[arg(long, value_name = "FILE")]
    pub record_costs: Option<std::path::PathBuf>,
}

fn parse_present_mode(s: &str) -> Result<lanegraph::vk::PresentMode, String> {
    s.parse()
}

/// Exit status of a run that finished over its budget under `--fail-on-budget`.
const EXIT_OVER_BUDGET: u8 = 4;

/// Exit status of a usage or configuration error (a flag, a config key, an `--out` folder).
const EXIT_USAGE: u8 = 2;
/// `lanegraph replay`: the run log was refused (unreadable, not a regular file, too large, or
/// not a log this version writes).
const EXIT_REFUSED_LOG: u8 = 3;

fn usage_error(e: impl std::fmt::Display) -> ExitCode {
    say_err!("error: {e}");
    ExitCode::from(EXIT_USAGE)
}

fn run_demo(args: DemoArgs) -> ExitCode {
    let config = match &args.config {
        Some(p) => match lanegraph::runtime::EngineConfig::from_file(p) {
            Ok(c) => c,
            Err(e) => return usage_error(e),
        },
        None => lanegraph::runtime::EngineConfig::default(),
    };
    let cores = lanegraph::jobs::plan::machine_cores();
    for (what, spec) in [
        ("--lanes", &args.lanes),
        ("config engine.lanes", &config.lanes),
    ] {
        if let Some(spec) = spec {
            if let Err(e) = lanegraph::jobs::LanePlan::from_spec(spec, &cores) {
                return usage_error(format!("{what}: {e}"));
            }
        }
    }
    let opts = lanegraph_demo::DemoOptions {
        frames: args.frames,
        seconds: args.seconds,
        target_fps: args.target_fps,
        out: Some(args.out.clone()),
        no_gpu: args.no_gpu,
        validation: args.validation,
        seed: args.seed,
        lanes: args.lanes,
        entities: args.entities,
        config,
        progress: true,
        pace: !args.no_pace,
        metrics_addr: args.metrics_addr,
        metrics_remote: args.metrics_remote,
        puffin_addr: args.puffin_addr,
        replay: None,
        stop: None,
        window: args.window,
        present_mode: args.present_mode,
        pins: args.pins,
        record_costs: args.record_costs,
    };
    if opts.present_mode.is_some() && !opts.window {
        return usage_error(
            "--present-mode without --window: only a window presents; fix: add --window",
        );
    }
    // Usage errors first, before anything starts: every flag, and a writable --out.
    if let Err(e) = opts.validate() {
        return usage_error(e);
    }
    if let Err(e) = lanegraph_demo::outputs::check_out_dir(&args.out) {
        return usage_error(e);
    }
    if let Some(addr) = opts.metrics_addr {
        if !addr.ip().is_loopback() && !opts.metrics_remote {
            return usage_error(lanegraph::telemetry::EndpointError::NotLoopback { addr });
        }
    }
    if let Some(addr) = opts.puffin_addr {
        if !addr.ip().is_loopback() {
            say_err!(
                "error: --puffin-addr {addr} is not a loopback address: the live view has no \
                 access control; fix: use 127.0.0.1:PORT (and an SSH tunnel to view it remotely)"
            );
            return ExitCode::from(2);
        }
    }
    let (signals, opts) = match StopOnSignal::install_for(opts) {
        Ok(both) => both,
        Err(code) => return code,
    };
    match lanegraph_demo::run(&opts) {
        Ok(run) => {
            if run.interrupted {
                say!(
                    "lanegraph demo stopped by {} after {} frames; outputs cover those frames:",
                    signals.name(),
                    run.summary.run.frames
                );
            } else if run.closed {
                say!(
                    "lanegraph demo: window closed after {} frames; outputs cover those frames:",
                    run.summary.run.frames
                );
            } else {
                say!("lanegraph demo finished:");
            }
            say_raw!("{}", run.summary.table());
            say!("  wrote:");
            for f in &run.files {
                say!("    {}", f.display());
            }
            if run.interrupted {
                return ExitCode::from(signals.exit_code());
            }
            if args.fail_on_budget {
                let breaches = run.summary.run.budget_breaches(args.max_system_errors);
                if !breaches.is_empty() {
                    for b in &breaches {
                        say_err!("over budget: {}", b.message);
                    }
                    return ExitCode::from(EXIT_OVER_BUDGET);
                }
                say!("  within budget (--fail-on-budget)");
            }
            ExitCode::SUCCESS
        }
        Err(e @ lanegraph_demo::DemoError::BadOption { .. }) => usage_error(e),
        // No display is an environment problem the user fixes by how they start the run.
        Err(e @ lanegraph_demo::DemoError::Window(_)) => usage_error(e),
        Err(e) => {
            say_err!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// SIGINT and SIGTERM stop the run at the next frame boundary (the outputs are written for the
/// frames run, the exit status is 128 + the signal); a second one exits at once with that
/// status.
struct StopOnSignal {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    which: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl StopOnSignal {
    /// Installs the handlers and hands `opts` the flag they set; on failure, says so and gives
    /// the exit status to return.
    fn install_for(
        opts: lanegraph_demo::DemoOptions,
    ) -> Result<(StopOnSignal, lanegraph_demo::DemoOptions), ExitCode> {
        match StopOnSignal::install() {
            Ok(signals) => {
                let opts = lanegraph_demo::DemoOptions {
                    stop: Some(signals.flag()),
                    ..opts
                };
                Ok((signals, opts))
            }
            Err(e) => {
                say_err!("error: could not install the SIGINT/SIGTERM handlers: {e}");
                Err(ExitCode::FAILURE)
            }
        }
    }

    fn install() -> std::io::Result<StopOnSignal> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        use std::sync::atomic::{AtomicBool, AtomicUsize};
        use std::sync::Arc;
        let stop = Arc::new(AtomicBool::new(false));
        let which = Arc::new(AtomicUsize::new(0));
        for sig in [SIGINT, SIGTERM] {
            // In this order: on the first signal the shutdown finds the flag still clear and
            // does nothing, then the flag is set; on the second it finds it set and exits.
            signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&stop))?;
            signal_hook::flag::register_usize(sig, Arc::clone(&which), sig as usize)?;
            signal_hook::flag::register(sig, Arc::clone(&stop))?;
        }
        Ok(StopOnSignal { stop, which })
    }

    fn flag(&self) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
        std::sync::Arc::clone(&self.stop)
    }

    fn signal(&self) -> i32 {
        self.which.load(std::sync::atomic::Ordering::Relaxed) as i32
    }

    fn name(&self) -> &'static str {
        match self.signal() {
            signal_hook::consts::SIGINT => "SIGINT",
            signal_hook::consts::SIGTERM => "SIGTERM",
            _ => "a signal",
        }
    }

    /// 128 + the signal: 130 for SIGINT, 143 for SIGTERM.
    fn exit_code(&self) -> u8 {
        (128 + self.signal()).clamp(0, 255) as u8
    }
}

fn run_replay(
    summary: &std::path::Path,
    lanes: Option<String>,
    out: std::path::PathBuf,
    no_gpu: bool,
) -> ExitCode {
    let text = match read_run_log(summary) {
        Ok(t) => t,
        Err(why) => {
            return refused_log(format!(
                "replay: {:?} {why}; fix: pass the summary.json of a demo run",
                // At most 80 characters of the path, control characters escaped.
                summary
                    .display()
                    .to_string()
                    .chars()
                    .take(80)
                    .collect::<String>()
            ));
        }
    };
    let recorded = match lanegraph_demo::replay_of(&text) {
        Ok(r) => r,
        Err(e) => return refused_log(e),
    };
    if let Some(spec) = &lanes {
        if let Err(e) =
            lanegraph::jobs::LanePlan::from_spec(spec, &lanegraph::jobs::plan::machine_cores())
        {
            return usage_error(format!("--lanes: {e}"));
        }
    }
    let opts = lanegraph_demo::DemoOptions {
        lanes,
        out: Some(out),
        no_gpu,
        pace: false,
        ..recorded.options
    };
    // The flags alone first (a lane plan without a physics lane is the flag's fault, exit 2);
    // what fails after that came from the log (its frames, its entities).
    let flags_only = lanegraph_demo::DemoOptions {
        lanes: opts.lanes.clone(),
        no_gpu,
        ..lanegraph_demo::DemoOptions::default()
    };
    if let Err(e) = flags_only.validate() {
        return usage_error(e);
    }
    if let Err(e) = opts.validate() {
        return refused_log(e);
    }
    // As the demo: SIGINT/SIGTERM stop at a frame boundary, outputs written, 128 + signal.
    let (signals, opts) = match StopOnSignal::install_for(opts) {
        Ok(both) => both,
        Err(code) => return code,
    };
    match lanegraph_demo::run(&opts) {
        Ok(run) if run.interrupted => {
            say!(
                "lanegraph replay stopped by {} after {} frames; no verdict on the hash; outputs:",
                signals.name(),
                run.summary.run.frames
            );
            for f in &run.files {
                say!("    {}", f.display());
            }
            ExitCode::from(signals.exit_code())
        }
        Ok(run) if run.summary.run.world_hash_format != recorded.world_hash_format => {
            refused_log(format!(
                "replay of {} frames: world_hash {} is state-hash format {}, the recorded {} is format {}: the two are different functions of the world and cannot be compared; fix: record the run again with this build",
                run.summary.run.frames,
                run.summary.run.world_hash,
                run.summary.run.world_hash_format,
                recorded.world_hash,
                recorded.world_hash_format
            ))
        }
        Ok(run) => {
            let same = run.summary.run.world_hash == recorded.world_hash;
            say!(
                "replay of {} frames with {} recorded decisions and {} inputs: world_hash {} ({} the recorded {})",
                run.summary.run.frames,
                opts.replay.as_ref().map_or(0, |log| log.decisions.len()),
                opts.replay.as_ref().map_or(0, |log| log.inputs.len()),
                run.summary.run.world_hash,
                if same { "equal to" } else { "DIFFERS from" },
                recorded.world_hash
            );
            if same {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e @ lanegraph_demo::DemoError::Replay(_)) => refused_log(e),
        Err(e) => {
            say_err!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A run log `lanegraph replay` refuses: exit [`EXIT_REFUSED_LOG`], distinct from 1 (the
/// replay ran and its hash differs).
fn refused_log(e: impl std::fmt::Display) -> ExitCode {
    say_err!("error: {e}");
    ExitCode::from(EXIT_REFUSED_LOG)
}

/// The run log's text: a regular file (a FIFO, a device or a folder would block or fail
/// late) of at most `MAX_RUN_LOG_BYTES`, checked before it is read. The check reads the open
/// handle, and a FIFO opens without waiting for a writer (`O_NONBLOCK`), so a path swapped
/// for a FIFO after a check cannot block the replay.
fn read_run_log(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    let limit = lanegraph_demo::MAX_RUN_LOG_BYTES;
    let unreadable = |e: std::io::Error| format!("cannot be read: {e}");
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).map_err(unreadable)?;
    let meta = file.metadata().map_err(unreadable)?;
    if !meta.is_file() {
        return Err("is not a regular file".into());
    }
    if meta.len() > limit {
        return Err(format!(
            "is {} bytes, over the {limit}-byte limit",
            meta.len()
        ));
    }
    let mut text = String::new();
    file.take(limit + 1)
        .read_to_string(&mut text)
        .map_err(unreadable)?;
    if text.len() as u64 > limit {
        return Err(format!("grew past the {limit}-byte limit while read"));
    }
    Ok(text)
}

fn run_stress(seconds: f64, lanes: Option<String>) -> ExitCode {
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= lanegraph_demo::MAX_SECONDS) {
        return usage_error(format!(
            "--seconds {seconds}: not a positive, finite number of seconds up to a week; fix: give a number in (0, {}]",
            lanegraph_demo::MAX_SECONDS
        ));
    }
    if let Some(spec) = &lanes {
        if let Err(e) =
            lanegraph::jobs::LanePlan::from_spec(spec, &lanegraph::jobs::plan::machine_cores())
        {
            return usage_error(format!("--lanes: {e}"));
        }
    }
    let opts = lanegraph_tools::stress::StressOptions {
        seconds,
        lanes,
        ..Default::default()
    };
    match lanegraph_tools::stress::run(&opts) {
        Ok(report) => {
            say_raw!("{report}");
            if report.passed() {
                say!("stress: PASS");
                ExitCode::SUCCESS
            } else {
                say!("stress: FAIL");
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            say_err!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_bench(suite: &str, opts: BenchOptions, json: bool) -> ExitCode {
    let names: Vec<&str> = if suite == "all" {
        bench::SUITES.to_vec()
    } else {
        vec![suite]
    };
    say_err!("{}", bench::machine_line());
    let mut failed = false;
    for name in names {
        match bench::run_suite(name, opts) {
            None => {
                say_err!(
                    "error: unknown bench suite `{name}` (expected one of: {}, all)",
                    bench::SUITES.join(", ")
                );
                return ExitCode::from(2);
            }
            Some(Ok(figures)) => {
                for f in figures {
                    if json {
                        say!("{}", f.to_json());
                    } else {
                        say!("{f}");
                    }
                }
            }
            Some(Err(e)) => {
                say_err!("error: {e}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn parse_pin(s: &str) -> Result<lanegraph_demo::Pin, String> {
    s.parse()
}
