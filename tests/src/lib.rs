//! lanegraph's cross-crate tests: the integration suite (`tests/it`, one test binary), the
//! stress harness behind `lanegraph stress` ([`stress`], from `lanegraph-tools`), and what the tests share: allocation
//! counting ([`count_allocs`]), running a test alone in its own process ([`isolated`]), and every
//! Rust block of the README and `docs/` compiled as a doctest ([`docs`]).
//!
//! Owns: tests that need more than one crate, and the tools they share. Must never: be a
//! dependency of the runtime.

#![deny(unreachable_pub, missing_docs)]

pub mod display;
pub mod docs;
/// The stress harness behind `lanegraph stress` (it lives in `lanegraph-tools`).
pub use lanegraph_tools::stress;

use lanegraph::hooks::telemetry::{alloc, thread_memory_stats};

/// A controller's decisions as text, one per line: what a failing budget test prints.
pub fn decision_lines(decisions: &[lanegraph::hooks::budget::Decision]) -> String {
    decisions
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Allocation calls `f` made on the calling thread, exact whatever other threads do. Needs the
/// test binary to install `lanegraph::hooks::telemetry::TrackingAllocator` (the integration suite
/// does); panics with that fix otherwise, so a missing allocator cannot pass as "no
/// allocations".
pub fn count_allocs<R>(f: impl FnOnce() -> R) -> (R, u64) {
    // Make sure the thread owns its slot before the first reading (the first allocation of a
    // thread claims it).
    drop(std::hint::black_box(Box::new(0u8)));
    let before = thread_allocations();
    let r = f();
    let after = thread_allocations();
    (r, after - before)
}

fn thread_allocations() -> u64 {
    assert!(
        alloc::is_installed(),
        "count_allocs needs the TrackingAllocator installed as the global allocator"
    );
    thread_memory_stats()
        .expect("this thread has a slot of its own in the tracking allocator")
        .allocations
}

/// The environment variable that tells a re-executed test binary which test runs alone.
const ISOLATED_ENV: &str = "LANEGRAPH_ISOLATED_TEST";

/// Runs `body` alone in a fresh process of this test binary, for tests that read process-wide
/// figures (live heap, allocation totals) that the suite's other tests would disturb.
///
/// `name` is the test's full path as the harness lists it (`module::test_fn`). In the parent
/// process this re-executes the binary with `--exact name --test-threads=1` and fails when the
/// child fails; in the child it runs `body`.
pub fn isolated(name: &str, body: impl FnOnce()) {
    isolated_with_env(name, &[], body)
}

/// As [`isolated`], with `env` set in the child (e.g. `DISPLAY` for a window on a virtual
/// display). The child is the only process that sees it.
pub fn isolated_with_env(name: &str, env: &[(&str, &str)], body: impl FnOnce()) {
    if std::env::var(ISOLATED_ENV).as_deref() == Ok(name) {
        body();
        return;
    }
    let exe = std::env::current_exe().expect("the test binary's own path");
    let out = std::process::Command::new(exe)
        .args([name, "--exact", "--test-threads=1", "--nocapture"])
        .env(ISOLATED_ENV, name)
        .envs(env.iter().copied())
        .output()
        .expect("the test binary re-executes itself");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "isolated test {name} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains("1 passed"),
        "isolated test {name} did not run (wrong name?):\n{stdout}\n{stderr}"
    );
}

/// A lockstep engine on one worker per lane (`physics=1,render=1,asset=1`), keeping
/// `trace_frames` frames of spans, whose render lane draws `pass` with a view of the tick
/// number: what the telemetry tests run a small game on.
pub fn engine_with_pass(
    pass: impl lanegraph::runtime::RenderPass<Vec<f32>> + 'static,
    trace_frames: usize,
) -> lanegraph::Engine {
    use lanegraph::world::{Domain, DomainSet};
    lanegraph::Engine::builder()
        .lanes_spec("physics=1,render=1,asset=1")
        // A game that draws opts into the render agent (resolution and instance cap).
        .builtin_agents(lanegraph::runtime::BuiltinAgents {
            render: Some(lanegraph_demo::agents::RENDER_LADDER.to_vec()),
            ..Default::default()
        })
        .lockstep(true)
        .telemetry(true, trace_frames)
        .render(
            DomainSet::of(Domain::STRUCTURE),
            |w, v: &mut Vec<f32>| {
                v.clear();
                v.push(w.tick() as f32);
            },
            pass,
        )
        .build()
        .expect("the test engine builds")
}

/// A render pass that draws nothing and reports the view's length as its instances.
#[derive(Debug, Default)]
pub struct NullPass;

impl lanegraph::runtime::RenderPass<Vec<f32>> for NullPass {
    fn draw(
        &mut self,
        v: &Vec<f32>,
        _: &lanegraph::runtime::RenderSettings,
        out: &mut lanegraph::runtime::DrawOutput,
    ) -> Result<(), String> {
        out.instances = v.len() as u64;
        Ok(())
    }
}
