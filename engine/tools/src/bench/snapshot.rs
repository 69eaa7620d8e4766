//! `lanegraph bench snapshot`: World snapshots against copying the same bytes.
//!
//! Owns: the snapshot suite's cases. Must never: assert on a figure, or report a round trip
//! whose restored world differs from the captured one (the suite fails instead).
//!
//! - `snapshot_restore_10k_x4`: `World::snapshot_into` then `World::restore` of 10,000
//!   entities with four components, 100 bytes per entity (a 4x4 matrix and three 3-vectors of
//!   `f32`), into a warm snapshot, with every domain marked changed before each so both copy
//!   every column; baseline: copying the same 1,000,000 component bytes into a
//!   buffer and back (`copy_from_slice`, the floor of any snapshot). Microseconds, medians of
//!   interleaved samples.
//! - `snapshot_allocs`: allocations per warm capture + restore (goal 0).
//! - `state_hash_gb_per_s`, `state_hash_unchanged_10k_x4`: the state hash of the same world
//!   (`snapshot_hash`).
//! - `snapshot_one_column_in_ten`: a capture with one column in ten changed against one with
//!   every column changed (`snapshot_incremental`).
//! - `snapshot_restore_10k_x4_vs_hecs`: the same capture + restore against hecs 0.11's column
//!   serializer through bincode 1.3, serialize then deserialize, of the same entities (goal
//!   <= 0.1x; the only whole-world save hecs offers).
//! - `savegame_write_10k_x4` / `savegame_read_10k_x4`: `SaveSchema::save` (CBOR) and
//!   `SaveSchema::load_into` of the same world, against hecs's bincode serialize and
//!   deserialize; `savegame_{write,read}_mb_per_s`: the file's bytes over those times.
//! - `rollback_8_steps_demo_10k`: the demo's world at 10,000 particles (its systems and its
//!   physics step on a two-worker physics lane): restore the snapshot of 8 steps back, then 8
//!   steps each followed by a capture into a 9-slot ring, as a rollback session does; baseline:
//!   the same 8 steps without snapshots. Goal: under a 16.7 ms frame.
//! - `rollback_8_steps_demo_100k`: the same at 100,000 particles. Goal: under a 16.7 ms frame
//!   and <= 1.15x the 8 steps alone.
//! - `synctest_step_demo_10k`: `SyncTest::new(8).step` (one step plus the re-simulation of the
//!   last 8 with per-system checksums) against one plain step of the demo world's systems.

use std::hint::black_box;

use lanegraph::hooks::WorldHooks;
use lanegraph::world::{Component, DomainSet, SaveSchema, Snapshot, StateHash, World};
use lanegraph_jobs::clock;
use serde::{Deserialize, Serialize};

use super::snapshot_hecs;

use super::stats::median;
use super::{BenchError, BenchOptions, Figure};

const SUITE: &str = "snapshot";
const ENTITIES: usize = 10_000;

#[derive(Clone, Copy, Component, StateHash, Serialize, Deserialize)]
struct Transform([f32; 16]);
#[derive(Clone, Copy, Component, StateHash, Serialize, Deserialize)]
struct Position([f32; 3]);
#[derive(Clone, Copy, Component, StateHash, Serialize, Deserialize)]
struct Rotation([f32; 3]);
#[derive(Clone, Copy, Component, StateHash, Serialize, Deserialize)]
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
    let mut snap = Snapshot::default();
    w.snapshot_into(&mut snap).map_err(fail)?;
    let hash = w.state_hash();
    let (mut ours, mut floor, mut peer) = (Vec::new(), Vec::new(), Vec::new());
    let peer_world = snapshot_hecs::world(ENTITIES);
    let peer_sum = snapshot_hecs::checksum(&peer_world);
    let mut peer_bytes = Vec::new();
    let mut peer_back = None;
    let mut failed = None;
    for _ in 0..samples {
        let t0 = clock::now();
        snapshot_hecs::save(&peer_world, &mut peer_bytes).map_err(fail)?;
        peer_back = Some(snapshot_hecs::load(&peer_bytes).map_err(fail)?);
        peer.push(clock::now().ns_since(t0) as f64 / 1e3);
        // Every domain marked changed before the capture and between it and the restore, so
        // both copy every column: a capture or restore of unchanged columns copies nothing
        // (`snapshot_one_column_in_ten` measures that side).
        w.mark_changed(DomainSet::ALL);
        let t0 = clock::now();
        let r = w.snapshot_into(&mut snap).and_then(|_| {
            w.mark_changed(DomainSet::ALL);
            w.restore(&snap)
        });
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
    if peer_back.as_ref().map(snapshot_hecs::checksum) != Some(peer_sum) {
        return Err(fail("hecs's round trip lost values"));
    }
    let ours_median = median(&mut ours);
    let mut figures = vec![
        Figure::new(
            SUITE,
            "snapshot_restore_10k_x4",
            1,
            "us_per_capture_and_restore",
            "us",
            ours_median,
        )
        .with_baseline(
            "copy_from_slice of the 1 MB there and back",
            median(&mut floor),
        ),
        Figure::new(
            SUITE,
            "snapshot_restore_10k_x4_vs_hecs",
            1,
            "us_per_capture_and_restore",
            "us",
            ours_median,
        )
        .with_baseline(
            "hecs column serialize + deserialize through bincode",
            median(&mut peer),
        ),
    ];
    figures.extend(super::snapshot_hash::rows(&mut w, bytes, samples));
    figures.push(super::snapshot_incremental::row(samples)?);
    figures.extend(savegame(&mut w, &peer_world, samples.min(15))?);
    figures.extend(rollback(samples.min(21))?);
    if lanegraph::hooks::telemetry::alloc::is_installed() {
        let before = lanegraph::hooks::telemetry::memory_stats().allocations;
        w.snapshot_into(&mut snap).map_err(fail)?;
        w.restore(&snap).map_err(fail)?;
        let allocs = lanegraph::hooks::telemetry::memory_stats().allocations - before;
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

/// Savegame write and read of the suite's world against hecs's bincode round trip halves.
fn savegame(w: &mut World, peer: &hecs::World, samples: usize) -> Result<Vec<Figure>, BenchError> {
    let schema = SaveSchema::default()
        .component::<Transform>()
        .component::<Position>()
        .component::<Rotation>()
        .component::<Velocity>();
    let hash = w.state_hash();
    let (mut file, mut peer_bytes) = (Vec::new(), Vec::new());
    let mut loaded = World::new();
    let (mut write, mut read, mut peer_write, mut peer_read) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..samples {
        file.clear();
        let t0 = clock::now();
        schema.save(w, &mut file).map_err(fail)?;
        write.push(clock::now().ns_since(t0) as f64 / 1e3);
        let t0 = clock::now();
        schema.load_into(&mut loaded, &file[..]).map_err(fail)?;
        read.push(clock::now().ns_since(t0) as f64 / 1e3);
        let t0 = clock::now();
        snapshot_hecs::save(peer, &mut peer_bytes).map_err(fail)?;
        peer_write.push(clock::now().ns_since(t0) as f64 / 1e3);
        let t0 = clock::now();
        black_box(snapshot_hecs::load(&peer_bytes).map_err(fail)?);
        peer_read.push(clock::now().ns_since(t0) as f64 / 1e3);
    }
    if loaded.state_hash() != hash {
        return Err(fail(
            "the loaded save's state hash differs from the saved world's",
        ));
    }
    let (write, read) = (median(&mut write), median(&mut read));
    let (peer_write, peer_read) = (median(&mut peer_write), median(&mut peer_read));
    let mb = file.len() as f64 / 1e6;
    let peer_mb = peer_bytes.len() as f64 / 1e6;
    eprintln!(
        "# snapshot: savegame {:.2} MB (CBOR), hecs bincode {:.2} MB",
        mb, peer_mb
    );
    Ok(vec![
        Figure::new(
            SUITE,
            "savegame_write_10k_x4",
            1,
            "us_per_save",
            "us",
            write,
        )
        .with_baseline("hecs column serialize through bincode", peer_write),
        Figure::new(SUITE, "savegame_read_10k_x4", 1, "us_per_load", "us", read)
            .with_baseline("hecs column deserialize through bincode", peer_read),
        Figure::new(
            SUITE,
            "savegame_write_mb_per_s",
            1,
            "mb_per_s",
            "MB/s",
            mb / (write / 1e6),
        )
        .with_baseline("hecs bincode serialize", peer_mb / (peer_write / 1e6)),
        Figure::new(
            SUITE,
            "savegame_read_mb_per_s",
            1,
            "mb_per_s",
            "MB/s",
            mb / (read / 1e6),
        )
        .with_baseline("hecs bincode deserialize", peer_mb / (peer_read / 1e6)),
    ])
}

/// The demo's world at 10,000 particles and one of its fixed steps (systems, then physics on
/// the lane), as the engine runs it.
struct DemoSim {
    world: World,
    physics: lanegraph_demo::physics::DemoPhysics,
    lanes: std::sync::Arc<lanegraph::jobs::Lanes>,
    lane: lanegraph::jobs::LaneId,
}

impl DemoSim {
    fn new(entities: usize) -> Result<DemoSim, BenchError> {
        let lanes = super::ecs_suite::lane(2)?;
        let lane = lanes
            .lane("physics")
            .ok_or_else(|| fail("no physics lane"))?;
        let mut world = World::new();
        lanegraph_demo::world::setup(&mut world, entities, 7).map_err(fail)?;
        // As in the engine: the world's parallel lane is the physics lane.
        world.set_parallel_lane(&lanes, lane);
        Ok(DemoSim {
            world,
            physics: Default::default(),
            lanes,
            lane,
        })
    }

    fn step(&mut self) {
        self.world.run_systems();
        let step = lanegraph::runtime::PhysicsStep {
            lanes: &self.lanes,
            lane: Some(self.lane),
            dt: 1.0 / 60.0,
            tick: self.world.tick(),
            settings: lanegraph::runtime::PhysicsSettings::FULL,
        };
        self.physics.step(&mut self.world, &step);
    }
}

const BACK: usize = 8;

/// An 8-step rollback of the demo's world at 10,000 and 100,000 particles, and a SyncTest
/// step, each against plain steps.
fn rollback(samples: usize) -> Result<Vec<Figure>, BenchError> {
    let mut figures = vec![
        rollback_at(10_000, "rollback_8_steps_demo_10k", samples)?,
        rollback_at(100_000, "rollback_8_steps_demo_100k", samples.min(9))?,
    ];
    figures.push(synctest(samples)?);
    Ok(figures)
}

/// An 8-step rollback of the demo's world at `entities` particles against the 8 steps alone.
fn rollback_at(entities: usize, case: &str, samples: usize) -> Result<Figure, BenchError> {
    let mut sim = DemoSim::new(entities)?;
    let mut ring = lanegraph::world::SnapshotRing::new(BACK + 1);
    for _ in 0..60 {
        sim.step();
        ring.save(&sim.world).map_err(fail)?;
    }
    let (mut ours, mut plain) = (Vec::new(), Vec::new());
    for _ in 0..samples {
        // The confirmed step, as a session saves every step.
        sim.step();
        ring.save(&sim.world).map_err(fail)?;
        let now = sim.world.tick();
        let t0 = clock::now();
        let back = ring
            .at_tick(now - BACK as u64)
            .ok_or_else(|| fail("the ring lost the step 8 back"))?;
        sim.world.restore(back).map_err(fail)?;
        for _ in 0..BACK {
            sim.step();
            ring.save(&sim.world).map_err(fail)?;
        }
        ours.push(clock::now().ns_since(t0) as f64 / 1e3);
        if sim.world.tick() != now {
            return Err(fail("the rollback did not come back to the same step"));
        }
        // The same work without the rollback: 8 steps, each timed alone (the captures that keep
        // the ring whole for the next sample are outside the timing).
        let mut steps_ns = 0;
        for _ in 0..BACK {
            let t0 = clock::now();
            sim.step();
            steps_ns += clock::now().ns_since(t0);
            ring.save(&sim.world).map_err(fail)?;
        }
        plain.push(steps_ns as f64 / 1e3);
    }
    Ok(
        Figure::new(SUITE, case, 2, "us_per_rollback", "us", median(&mut ours)).with_baseline(
            "the same 8 steps without restore or captures",
            median(&mut plain),
        ),
    )
}

/// A SyncTest step of the demo's systems at 10,000 particles against one plain step.
fn synctest(samples: usize) -> Result<Figure, BenchError> {
    // Two worlds: a SyncTest re-simulates the steps it ran, so the plain steps run apart.
    let (mut world, mut plain_world) = (World::new(), World::new());
    lanegraph_demo::world::setup(&mut world, 10_000, 7).map_err(fail)?;
    lanegraph_demo::world::setup(&mut plain_world, 10_000, 7).map_err(fail)?;
    let mut sync = lanegraph::world::SyncTest::new(BACK);
    for _ in 0..BACK * 2 {
        sync.step(&mut world).map_err(fail)?;
        plain_world.run_systems();
    }
    let (mut tested, mut alone) = (Vec::new(), Vec::new());
    for _ in 0..samples {
        let t0 = clock::now();
        sync.step(&mut world).map_err(fail)?;
        tested.push(clock::now().ns_since(t0) as f64 / 1e3);
        let t0 = clock::now();
        plain_world.run_systems();
        alone.push(clock::now().ns_since(t0) as f64 / 1e3);
    }
    if world.state_hash() != plain_world.state_hash() {
        return Err(fail("the SyncTest world and the plain one ended apart"));
    }
    Ok(Figure::new(
        SUITE,
        "synctest_step_demo_10k",
        1,
        "us_per_step",
        "us",
        median(&mut tested),
    )
    .with_baseline("one plain step of the same systems", median(&mut alone)))
}
