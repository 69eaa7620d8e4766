//! The `lanegraph` command line: `demo`, `plan`, `bench`, `stress`.
//!
//! Owns: argument parsing and dispatch to the library. Must never: hold engine logic of its own.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use lanegraph_benches::quick::{self as bench, BenchOptions};

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
    /// Print the lane plan derived for this machine.
    Plan,
    /// Run a benchmark suite: dispatch, timing, telemetry, budget, simd, gpu, lanes or all.
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
        Command::Plan => {
            let plan = lanegraph::jobs::LanePlan::auto();
            println!("{plan}");
            ExitCode::SUCCESS
        }
        Command::Bench { suite, quick, json } => run_bench(&suite, BenchOptions { quick }, json),
    }
}

/// The demo's flags.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Lockstep frames to run (reproducible world_hash); default 600.
    #[arg(long)]
    pub frames: Option<u64>,
    /// Run this many seconds on the real clock instead (every agent adaptive).
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
}

fn run_demo(args: DemoArgs) -> ExitCode {
    let config = match &args.config {
        Some(p) => match lanegraph::runtime::EngineConfig::from_file(p) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        None => lanegraph::runtime::EngineConfig::default(),
    };
    if let Some(spec) = &args.lanes {
        if let Err(e) =
            lanegraph::jobs::LanePlan::from_spec(spec, &lanegraph::jobs::plan::machine_cores())
        {
            eprintln!("error: --lanes: {e}");
            return ExitCode::from(2);
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
    };
    match lanegraph_demo::run(&opts) {
        Ok(run) => {
            println!("lanegraph demo finished:");
            print!("{}", run.summary.table());
            println!("  wrote:");
            for f in &run.files {
                println!("    {}", f.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_stress(seconds: f64, lanes: Option<String>) -> ExitCode {
    let opts = lanegraph_tests::stress::StressOptions {
        seconds,
        lanes,
        ..Default::default()
    };
    match lanegraph_tests::stress::run(&opts) {
        Ok(report) => {
            print!("{report}");
            if report.passed() {
                println!("stress: PASS");
                ExitCode::SUCCESS
            } else {
                println!("stress: FAIL");
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
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
    eprintln!("{}", bench::machine_line());
    let mut failed = false;
    for name in names {
        match bench::run_suite(name, opts) {
            None => {
                eprintln!(
                    "error: unknown bench suite `{name}` (expected one of: {}, all)",
                    bench::SUITES.join(", ")
                );
                return ExitCode::from(2);
            }
            Some(Ok(figures)) => {
                for f in figures {
                    if json {
                        println!("{}", f.to_json());
                    } else {
                        println!("{f}");
                    }
                }
            }
            Some(Err(e)) => {
                eprintln!("error: {e}");
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
