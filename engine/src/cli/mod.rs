//! The `lanegraph` command line: `demo`, `plan`, `bench`, `stress`.
//!
//! Owns: argument parsing and dispatch to the library. Must never: hold engine logic of its own.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::bench::{self, BenchOptions};

/// The `lanegraph` command line.
#[derive(Debug, Parser)]
#[command(name = "lanegraph", version, about = "lanegraph engine runtime: demo, benches, stress")]
pub struct Cli {
    /// What to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the demo game (until it lands: print this machine's lane plan).
    Demo,
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
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Demo | Command::Plan => {
            let plan = lanegraph_jobs::LanePlan::auto();
            println!("{plan}");
            ExitCode::SUCCESS
        }
        Command::Bench { suite, quick, json } => run_bench(&suite, BenchOptions { quick }, json),
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
