//! The `lanegraph` binary: the demo game, the lane plan, the benches and the stress runs.

fn main() -> std::process::ExitCode {
    lanegraph::cli::main()
}
