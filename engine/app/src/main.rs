//! The `lanegraph` binary: the demo game, the lane plan, the benches and the stress runs.
//!
//! Owns: the process (allocator, CPU check, exit status). Must never: hold engine or game logic
//! (the runtime is `lanegraph`, the demo `lanegraph-demo`, the suites `lanegraph-benches`).

mod cli;
mod logging;

/// Heap tracking for `memory.*` metrics and allocation-count benches (one line, as any game
/// binary would install it).
#[global_allocator]
static ALLOC: lanegraph::telemetry::TrackingAllocator =
    lanegraph::telemetry::TrackingAllocator::new();

fn main() -> std::process::ExitCode {
    // A build for x86-64-v3 (AVX2, FMA) would fault on an older CPU: refuse with a clear message.
    if let Err(e) = lanegraph::simd::check_cpu() {
        eprintln!("error: {e}");
        return std::process::ExitCode::from(2);
    }
    logging::install();
    // Read the core list before anything pins a thread (core_affinity reports the caller's mask).
    let _cores = lanegraph::jobs::plan::machine_cores();
    cli::main()
}
