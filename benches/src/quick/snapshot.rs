//! `lanegraph bench snapshot`: World snapshots (issue 28) against copying the same bytes.
//!
//! Owns: the snapshot suite's cases. Must never: assert on a figure, or report a round trip
//! whose restored world differs from the captured one (the suite fails instead).
//!
//! - `snapshot_restore_10k_x4`: `World::snapshot_into` then `World::restore` of 10,000
//!   entities with four components, 100 bytes per entity (a 4x4 matrix and three 3-vectors of
//!   `f32`), into a warm snapshot; baseline: copying the same 1,000,000 component bytes into a
//!   buffer and back (`copy_from_slice`, the floor of any snapshot). Microseconds, medians of
//!   interleaved samples.
//! - `snapshot_allocs`: allocations per warm capture + restore (goal 0).

use std::hint::black_box;

use lanegraph::world::{Component, Snapshot, StateHash, World};
use lanegraph_jobs::clock;

use super::stats::median;
use super::{BenchError, BenchOptions, Figure};

const SUITE: &str = "snapshot";
const ENTITIES: usize = 10_000;

#[derive(Clone, Copy, Component, StateHash)]
struct Transform([f32; 16]);
#[derive(Clone, Copy, Component, StateHash)]
struct Position([f32; 3]);
#[derive(Clone, Copy, Component, StateHash)]
struct Rotation([f32; 3]);
#[derive(Clone, Copy, Component, StateHash)]
struct Velocity([f32; 3]);

fn fail(why: impl std::fmt::Display) -> BenchError {
    BenchError::failed(SUITE, why.to_string())
}

/// Runs the suite's cases.
pub fn run(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    let samples = if opts.quick { 51 } else { 201 };
    let mut w = World::new();
    w.spawn_batch((0..ENTITIES).map(|i| {
        (
            Transform([i as f32; 16]),
            Position([i as f32, 1.0, 2.0]),
            Rotation([0.0, 1.0, 0.0]),
            Velocity([1.0, 0.0, 0.0]),
        )
    }))
    .map_err(fail)?;
    let bytes = ENTITIES * (64 + 3 * 12);
    let source = vec![7u8; bytes];
    let mut copy = vec![0u8; bytes];
    let mut back = vec![0u8; bytes];
    let mut snap = Snapshot::new();
    w.snapshot_into(&mut snap).map_err(fail)?;
    let hash = w.state_hash();
    let (mut ours, mut floor) = (Vec::new(), Vec::new());
    let mut failed = None;
    for _ in 0..samples {
        let t0 = clock::now();
        let r = w.snapshot_into(&mut snap).and_then(|_| w.restore(&snap));
        ours.push(clock::now().ns_since(t0) as f64 / 1e3);
        if let Err(e) = r {
            failed = Some(e);
        }
        let t0 = clock::now();
        copy.copy_from_slice(black_box(&source));
        back.copy_from_slice(black_box(&copy));
        black_box(&back);
        floor.push(clock::now().ns_since(t0) as f64 / 1e3);
    }
    if let Some(e) = failed {
        return Err(fail(e));
    }
    if w.state_hash() != hash {
        return Err(fail(
            "the restored world's state hash differs from the captured one",
        ));
    }
    let mut figures = vec![Figure::new(
        SUITE,
        "snapshot_restore_10k_x4",
        1,
        "us_per_capture_and_restore",
        "us",
        median(&mut ours),
    )
    .with_baseline(
        "copy_from_slice of the 1 MB there and back",
        median(&mut floor),
    )];
    if lanegraph::telemetry::alloc::is_installed() {
        let before = lanegraph::telemetry::memory_stats().allocations;
        w.snapshot_into(&mut snap).map_err(fail)?;
        w.restore(&snap).map_err(fail)?;
        let allocs = lanegraph::telemetry::memory_stats().allocations - before;
        figures.push(Figure::new(
            SUITE,
            "snapshot_allocs",
            1,
            "allocs_per_capture_and_restore",
            "allocs",
            allocs as f64,
        ));
    } else {
        eprintln!("# snapshot: snapshot_allocs skipped: no tracking allocator installed");
    }
    Ok(figures)
}
