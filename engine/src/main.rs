//! The `lanegraph` binary: the demo game, the lane plan, the benches and the stress runs.

/// Heap tracking for `memory.*` metrics and allocation-count benches (one line, as any game
/// binary would install it).
#[global_allocator]
static ALLOC: lanegraph::telemetry::TrackingAllocator =
    lanegraph::telemetry::TrackingAllocator::new();

fn main() -> std::process::ExitCode {
    lanegraph::cli::main()
}
