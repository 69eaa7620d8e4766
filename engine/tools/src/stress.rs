//! `lanegraph stress`: floods every lane, injects panicking jobs and corrupt assets, and checks
//! at the end that nothing hung, leaked or was lost.
//!
//! Owns: the stress run and its verdict. Must never: pass a run it could not check (a check
//! that could not be made is a failure, with the reason), or hang itself (a watchdog ends a
//! stuck run with a failure).
//!
//! # The run
//! 1. Warm-up: the same run for [`WARM_UP_SECONDS`], so per-thread and process-wide caches
//!    (scope slot pools, span rings, trace tracks, clock calibration) exist before the heap
//!    baseline is read.
//! 2. Baseline: live heap bytes (tracking allocator).
//! 3. First [`UNLOADED_FRAMES`] frames with no flood, for the baseline frame p99. Then for
//!    `seconds`: the demo world runs frame after frame on the real clock; every frame also
//!    - floods the physics lane with a scope of small jobs, one of which panics every
//!      [`PANIC_EVERY`] frames (the scope must return that panic, the lane must keep working);
//!    - floods the render and asset lanes with detached busy jobs (up to [`FLOOD_BACKLOG`]
//!      behind), some of which panic (each must run or be counted as a panic: spawned = ran +
//!      panicked);
//!    - keeps [`ASSET_BACKLOG`] asset requests outstanding: good PNGs, a corrupt one, a missing
//!      one, and one whose decode job panics (every request must complete exactly once, the
//!      bad ones as errors).
//! 4. Drain: waits until every detached job and asset request has completed (bounded wait).
//! 5. Drop the engine (joins every worker) and read the heap again: growth above
//!    [`LEAK_TOLERANCE_BYTES`] is a leak. Growth of the span-ring pool is not counted: it is
//!    a per-process pool sized by the most threads recording at once (see
//!    `lanegraph::hooks::telemetry::spans::ring_pool_bytes`).
//! 6. The verdict also checks that every injected panic was counted on its lane (physics,
//!    render and asset), that resident memory grew by at most [`RSS_GROWTH_CEILING_BYTES`],
//!    that the loaded frame p99 stays within [`P99_FACTOR`] of the unloaded one, and that the
//!    temporary asset folder is gone.

use std::fmt;

use lanegraph::hooks::telemetry::quantiles;
use lanegraph::hooks::EngineHooks;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lanegraph::runtime::{BuildError, Engine, FrameError};
use lanegraph_demo::{physics::DemoPhysics, render, textures::TextureFolder, world};

/// Asset requests kept outstanding.
pub const ASSET_BACKLOG: u64 = 32;
/// Detached flood jobs a lane may be behind before the flood waits for it.
pub const FLOOD_BACKLOG: u64 = 256;
/// Frames between injected physics-lane panics.
pub const PANIC_EVERY: u64 = 25;
/// Detached flood jobs per lane per frame.
pub const FLOOD_JOBS: u64 = 8;
/// Live-heap growth tolerated after the engine is dropped, bytes: the trace-track names of the
/// run's new threads stay for the process' life (measured: ~300 bytes after a warm-up run).
pub const LEAK_TOLERANCE_BYTES: i64 = 64 << 10;
/// Length of the warm-up run, seconds.
pub const WARM_UP_SECONDS: f64 = 0.5;
/// A frame that has not finished after this long means the run hung.
pub const HANG_AFTER: Duration = Duration::from_secs(20);
/// Resident memory may grow by at most this much over the run (the floods are bounded, the
/// world and every buffer are sized at the start).
pub const RSS_GROWTH_CEILING_BYTES: u64 = 256 << 20;
/// The loaded run's frame p99 may be at most this many times the unloaded run's (floored at
/// [`P99_FLOOR_MS`]): the floods share the machine's cores, so frames get slower, but a lane
/// that starves the owner (or a frame that waits on a flooded lane) shows as far more.
pub const P99_FACTOR: f64 = 50.0;
/// The unloaded p99 the factor applies to is at least this, ms (a sub-millisecond unloaded
/// frame would make the bound noise).
pub const P99_FLOOR_MS: f64 = 5.0;
/// Frames of the unloaded phase that measures the baseline p99.
pub const UNLOADED_FRAMES: u64 = 60;

/// How to stress.
#[derive(Debug, Clone, PartialEq)]
pub struct StressOptions {
    /// How long, seconds.
    pub seconds: f64,
    /// Lane spec overriding the automatic plan.
    pub lanes: Option<String>,
    /// Particles in the world.
    pub entities: usize,
    /// Draw the demo's picture on the render lane (through Vulkan when a driver is present).
    pub gpu: bool,
    /// End the process with status 3 when the watchdog sees a hang (the CLI); otherwise the
    /// run is reported hung when it finally returns.
    pub exit_on_hang: bool,
    /// Fault injection for testing the verdict: leak this many bytes during the run.
    pub inject_leak_bytes: usize,
}

impl Default for StressOptions {
    fn default() -> Self {
        StressOptions {
            seconds: 10.0,
            lanes: None,
            entities: 20_000,
            gpu: false,
            exit_on_hang: true,
            inject_leak_bytes: 0,
        }
    }
}

/// The stress run could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum StressError {
    /// The engine could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A frame failed.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// The world could not be set up.
    #[error(transparent)]
    Register(#[from] lanegraph::systems::RegisterError),
    /// The asset files could not be written.
    #[error("stress: cannot write the asset files: {0}; fix: make the temporary folder writable")]
    Io(#[from] std::io::Error),
}

/// Detached jobs of one lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flood {
    /// Spawned.
    pub spawned: u64,
    /// Panics injected into spawned jobs.
    pub injected: u64,
    /// Ran to the end.
    pub ran: u64,
    /// Panicked (counted by the lane).
    pub panicked: u64,
}

/// What the run found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StressReport {
    /// Frames run.
    pub frames: u64,
    /// Physics-lane panics injected.
    pub physics_panics_injected: u64,
    /// Physics-lane panics the scopes returned.
    pub physics_panics_caught: u64,
    /// Render-lane flood.
    pub render: Flood,
    /// Asset-lane flood.
    pub asset: Flood,
    /// Asset requests made.
    pub assets_requested: u64,
    /// Asset requests that loaded.
    pub assets_loaded: u64,
    /// Asset requests that failed (corrupt, missing, panicking decoders).
    pub assets_failed: u64,
    /// Asset requests expected to fail.
    pub assets_expected_failures: u64,
    /// Worst frame, ms.
    pub worst_frame_ms: f64,
    /// Frame p99 with no flood (the first [`UNLOADED_FRAMES`] frames), ms.
    pub unloaded_p99_ms: f64,
    /// Frame p99 under the floods, ms.
    pub loaded_p99_ms: f64,
    /// Resident memory at the start and its peak over the run, bytes (`None`: not measurable
    /// on this OS).
    pub resident_bytes: Option<(u64, u64)>,
    /// The temporary asset folder was still there after the run.
    pub temp_left: bool,
    /// Whether a frame or the drain exceeded its time limit.
    pub hung: bool,
    /// Live heap growth after the engine was dropped, bytes (`None`: not measurable, no
    /// tracking allocator installed).
    pub heap_growth_bytes: Option<i64>,
}

impl StressReport {
    /// Everything checked out.
    pub fn passed(&self) -> bool {
        self.failures().is_empty()
    }

    /// What did not check out.
    pub fn failures(&self) -> Vec<String> {
        let mut f = Vec::new();
        if self.physics_panics_injected == 0
            || self.render.panicked == 0
            || self.asset.panicked == 0
        {
            f.push(format!(
                "too short: {} frames injected no fault on some lane (one physics panic every {PANIC_EVERY} frames, one detached panic every 8); run longer",
                self.frames
            ));
        }
        if self.hung {
            f.push(format!(
                "hung: a frame or the drain took longer than {HANG_AFTER:?}"
            ));
        }
        if self.physics_panics_caught != self.physics_panics_injected {
            f.push(format!(
                "physics panics: {} injected, {} returned by their scopes",
                self.physics_panics_injected, self.physics_panics_caught
            ));
        }
        for (lane, fl) in [("render", self.render), ("asset", self.asset)] {
            if fl.ran + fl.panicked != fl.spawned {
                f.push(format!(
                    "{lane} lane lost jobs: {} spawned, {} ran, {} panicked",
                    fl.spawned, fl.ran, fl.panicked
                ));
            }
            if fl.panicked != fl.injected {
                f.push(format!(
                    "{lane} lane panics: {} injected, {} counted by the lane",
                    fl.injected, fl.panicked
                ));
            }
        }
        let bound = P99_FACTOR * self.unloaded_p99_ms.max(P99_FLOOR_MS);
        if self.loaded_p99_ms > bound {
            f.push(format!(
                "frame p99 under load {:.1} ms, over {P99_FACTOR} x the unloaded {:.1} ms (floored at {P99_FLOOR_MS} ms)",
                self.loaded_p99_ms, self.unloaded_p99_ms
            ));
        }
        match self.resident_bytes {
            None => {
                f.push("resident memory not measurable on this OS (no /proc/self/status)".into())
            }
            Some((start, peak)) if peak.saturating_sub(start) > RSS_GROWTH_CEILING_BYTES => {
                f.push(format!(
                    "resident memory grew by {} MiB over the run (ceiling {} MiB)",
                    (peak - start) >> 20,
                    RSS_GROWTH_CEILING_BYTES >> 20
                ))
            }
            Some(_) => {}
        }
        if self.temp_left {
            f.push("the temporary asset folder was left behind".into());
        }
        if self.assets_loaded + self.assets_failed != self.assets_requested {
            f.push(format!(
                "assets lost: {} requested, {} loaded, {} failed",
                self.assets_requested, self.assets_loaded, self.assets_failed
            ));
        }
        if self.assets_failed != self.assets_expected_failures {
            f.push(format!(
                "asset failures: {} expected, {} reported",
                self.assets_expected_failures, self.assets_failed
            ));
        }
        match self.heap_growth_bytes {
            None => f.push(
                "leak check impossible: no TrackingAllocator is installed in this binary".into(),
            ),
            Some(b) if b > LEAK_TOLERANCE_BYTES => f.push(format!(
                "leak: live heap grew by {b} bytes (tolerance {LEAK_TOLERANCE_BYTES})"
            )),
            Some(_) => {}
        }
        f
    }
}

impl fmt::Display for StressReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "stress report:")?;
        writeln!(
            f,
            "  frames                 {} (worst {:.2} ms; p99 {:.2} ms loaded, {:.2} ms unloaded)",
            self.frames, self.worst_frame_ms, self.loaded_p99_ms, self.unloaded_p99_ms
        )?;
        writeln!(
            f,
            "  resident memory        {}",
            self.resident_bytes
                .map_or("not measurable".into(), |(a, b)| format!(
                    "{} MiB at start, {} MiB peak",
                    a >> 20,
                    b >> 20
                ))
        )?;
        writeln!(
            f,
            "  physics panics         {} injected, {} caught",
            self.physics_panics_injected, self.physics_panics_caught
        )?;
        for (lane, fl) in [("render", self.render), ("asset", self.asset)] {
            writeln!(
                f,
                "  {lane:<6} lane flood      {} spawned, {} ran, {} panicked ({} injected)",
                fl.spawned, fl.ran, fl.panicked, fl.injected
            )?;
        }
        writeln!(
            f,
            "  assets                 {} requested, {} loaded, {} failed ({} expected)",
            self.assets_requested,
            self.assets_loaded,
            self.assets_failed,
            self.assets_expected_failures
        )?;
        writeln!(
            f,
            "  heap growth            {}",
            self.heap_growth_bytes
                .map_or("not measurable".into(), |b| format!("{b} bytes"))
        )?;
        for x in self.failures() {
            writeln!(f, "  FAIL: {x}")?;
        }
        Ok(())
    }
}

fn build(opts: &StressOptions) -> Result<Engine, BuildError> {
    let mut b = Engine::builder().telemetry(true, 4);
    if opts.gpu {
        // The demo's picture on the render lane, drawn through Vulkan when a driver is there.
        b = b.render(
            render::VIEW_DOMAINS,
            render::derive_view,
            render::ParticleRenderer::new(true, false),
        );
    }
    if let Some(spec) = &opts.lanes {
        b = b.lanes_spec(spec);
    }
    b.build()
}

/// Runs the stress test (see the module docs).
pub fn run(opts: &StressOptions) -> Result<StressReport, StressError> {
    let hook = QuietInjectedPanics::install();
    // 1. Warm-up: the same run, short, so per-thread caches (scope slot pools, span rings,
    //    trace tracks) reach their size before the baseline.
    let warm = StressOptions {
        seconds: opts.seconds.min(WARM_UP_SECONDS),
        ..opts.clone()
    };
    if let Err(e) = run_engine(&warm) {
        hook.restore();
        return Err(e);
    }
    // 2. Baseline.
    let tracking = lanegraph::hooks::telemetry::alloc::is_installed();
    let before = lanegraph::hooks::telemetry::memory_stats().current_bytes;
    let rings_before = lanegraph::hooks::telemetry::spans::ring_pool_bytes();
    let report = run_engine(opts);
    if opts.inject_leak_bytes > 0 {
        std::mem::forget(vec![1u8; opts.inject_leak_bytes]);
    }
    hook.restore();
    let mut report = report?;
    // 5. The engine is dropped inside `run_engine`.
    let after = lanegraph::hooks::telemetry::memory_stats().current_bytes;
    // The span rings are a pool that grows with the most threads recording at once (a worker
    // of the warm-up engine still exiting while the next engine's start): not a leak.
    let rings_grew = lanegraph::hooks::telemetry::spans::ring_pool_bytes() - rings_before;
    report.heap_growth_bytes = tracking.then_some(after - before - rings_grew as i64);
    Ok(report)
}

fn run_engine(opts: &StressOptions) -> Result<StressReport, StressError> {
    let mut engine = build(opts)?;
    world::setup(engine.world_mut(), opts.entities, 11)?;
    let mut phys = DemoPhysics::default();
    engine.set_physics(move |w, s| phys.step(w, s));
    lanegraph::hooks::inject_asset_panics(&mut engine, "panic_");
    let files = TextureFolder::generate(3)?;
    // Copy a good file to a name whose decode job panics.
    let panicky = files.dir().join("panic_decoder.png");
    std::fs::copy(&files.requests[0], &panicky)?;

    let heartbeat = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let hung = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let (hb, stop, hung, exit) = (
            heartbeat.clone(),
            stop.clone(),
            hung.clone(),
            opts.exit_on_hang,
        );
        std::thread::Builder::new()
            .name("lg-stress-watchdog".into())
            .spawn(move || {
                let mut last = (hb.load(Ordering::Relaxed), Instant::now());
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    let now = hb.load(Ordering::Relaxed);
                    if now != last.0 {
                        last = (now, Instant::now());
                    } else if last.1.elapsed() > HANG_AFTER {
                        hung.store(true, Ordering::Relaxed);
                        eprintln!("stress: FAIL: no progress for {HANG_AFTER:?} (hung)");
                        if exit {
                            std::process::exit(3);
                        }
                        return;
                    }
                }
            })
            .expect("spawn the watchdog")
    };

    let lanes_of = |e: &Engine| {
        (
            e.lanes().lane("physics"),
            e.lanes().lane("render"),
            e.lanes().lane("asset"),
        )
    };
    let (physics, render, asset) = lanes_of(&engine);
    let ran = [Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0))];
    let mut r = StressReport::default();
    // 3a. Unloaded: the same engine and world, no flood, for the baseline frame p99.
    let mut unloaded_ms = Vec::with_capacity(UNLOADED_FRAMES as usize);
    for _ in 0..UNLOADED_FRAMES {
        unloaded_ms.push(engine.frame()?.frame_ms);
        heartbeat.fetch_add(1, Ordering::Relaxed);
    }
    r.unloaded_p99_ms = quantiles::percentile(&unloaded_ms, 99.0).unwrap_or(0.0);
    r.resident_bytes = resident_bytes().map(|b| (b, b));
    let mut loaded_ms = Vec::new();
    // 3b. Loaded.
    let started = Instant::now();
    let mut expected_fail = 0u64;
    let mut next_asset = 0u64;
    // Every 8th frame arms one injected panic per flood lane; the lane's next flood carries it
    // (a lane that is behind on that frame gets it later, so a loaded machine still injects).
    let mut panic_armed = [false; 2];
    while started.elapsed().as_secs_f64() < opts.seconds {
        let frame = engine.frames() + 1;
        // Assets: keep ASSET_BACKLOG requests outstanding (a full queue, never an unbounded
        // one): eight good files, then the corrupt one, the missing one, the panicking decoder.
        let t = engine.asset_report().0;
        let pending = t.requested - t.loaded - t.failed;
        for _ in pending..ASSET_BACKLOG {
            let kind = next_asset % 11;
            next_asset += 1;
            let path = match kind {
                0..=7 => files.requests[kind as usize].clone(),
                8 => files.requests[8].clone(),
                9 => files.requests[9].clone(),
                _ => panicky.clone(),
            };
            expected_fail += u64::from(kind >= 8);
            engine.request_asset(path);
            r.assets_requested += 1;
        }
        for (k, lane) in [render, asset].into_iter().enumerate() {
            let Some(lane) = lane else { continue };
            let fl = if k == 0 { &mut r.render } else { &mut r.asset };
            let panicked = engine
                .lanes()
                .stats(lane)
                .map_or(0, |st| st.detached_panics);
            let outstanding = fl.spawned - ran[k].load(Ordering::Relaxed).min(fl.spawned);
            panic_armed[k] |= frame % 8 == 0;
            if outstanding.saturating_sub(panicked) >= FLOOD_BACKLOG {
                // The lane is FLOOD_BACKLOG jobs behind: a flood, not an unbounded queue.
                continue;
            }
            let arm = std::mem::take(&mut panic_armed[k]);
            for j in 0..FLOOD_JOBS {
                let counter = ran[k].clone();
                let boom = j == 0 && arm;
                let spawned = engine
                    .lanes()
                    .spawn_detached(lane, move || {
                        let _s = lanegraph::hooks::telemetry::spans::span("stress.flood");
                        if boom {
                            panic!("stress: injected detached panic");
                        }
                        busy(20_000);
                        counter.fetch_add(1, Ordering::Relaxed);
                    })
                    .is_ok();
                if spawned {
                    fl.spawned += 1;
                    fl.injected += u64::from(boom);
                }
            }
        }
        // Physics-lane fork-join flood with an injected panic.
        if let Some(lane) = physics {
            let inject = frame % PANIC_EVERY == 0;
            let res = engine.lanes().scope(|s| {
                for j in 0..16u32 {
                    let _ = s.spawn(lane, move || {
                        if inject && j == 7 {
                            panic!("stress: injected physics panic");
                        }
                        busy(5_000);
                    });
                }
            });
            r.physics_panics_injected += u64::from(inject);
            r.physics_panics_caught += u64::from(res.is_err());
        }
        let out = engine.frame()?;
        r.worst_frame_ms = r.worst_frame_ms.max(out.frame_ms);
        loaded_ms.push(out.frame_ms);
        if frame % 64 == 0 {
            if let (Some((_, peak)), Some(now)) = (r.resident_bytes.as_mut(), resident_bytes()) {
                *peak = (*peak).max(now);
            }
        }
        heartbeat.fetch_add(1, Ordering::Relaxed);
    }
    r.loaded_p99_ms = quantiles::percentile(&loaded_ms, 99.0).unwrap_or(0.0);
    // 4. Drain.
    let deadline = Instant::now() + HANG_AFTER;
    loop {
        let (t, _) = engine.asset_report();
        let flood_done = [render, asset].iter().enumerate().all(|(k, lane)| {
            let fl = if k == 0 { r.render } else { r.asset };
            let panicked = lane
                .and_then(|l| engine.lanes().stats(l))
                .map_or(0, |s| s.detached_panics);
            ran[k].load(Ordering::Relaxed) + panicked >= fl.spawned
        });
        if (t.loaded + t.failed >= r.assets_requested && flood_done) || Instant::now() > deadline {
            break;
        }
        engine.frame()?;
        heartbeat.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(2));
    }
    engine.finish_render();
    let (t, _) = engine.asset_report();
    r.assets_loaded = t.loaded;
    r.assets_failed = t.failed;
    r.assets_expected_failures = expected_fail;
    r.frames = engine.frames();
    for (k, lane) in [render, asset].into_iter().enumerate() {
        let panicked = lane
            .and_then(|l| engine.lanes().stats(l))
            .map_or(0, |s| s.detached_panics);
        let fl = if k == 0 { &mut r.render } else { &mut r.asset };
        fl.ran = ran[k].load(Ordering::Relaxed);
        // The lane counts every detached panic on it: the flood's and nothing else's (asset
        // decode panics are caught inside their job and become failed completions).
        fl.panicked = panicked;
    }
    let _ = engine.lanes().take_detached_panics();
    drop(engine);
    let temp_dir = files.dir().to_path_buf();
    drop(files);
    r.temp_left = temp_dir.exists();
    stop.store(true, Ordering::Relaxed);
    let _ = watchdog.join();
    r.hung = hung.load(Ordering::Relaxed) || Instant::now() > deadline;
    Ok(r)
}

type PanicHook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Send + Sync + 'static>;

/// Keeps the injected panics (hundreds per run) out of stderr; every other panic still reaches
/// the previous hook. Installed for the run only.
struct QuietInjectedPanics(Arc<PanicHook>);

impl QuietInjectedPanics {
    fn install() -> Self {
        let prev: Arc<PanicHook> = Arc::new(std::panic::take_hook());
        let forward = Arc::clone(&prev);
        std::panic::set_hook(Box::new(move |info| {
            let msg = lanegraph_jobs::error::panic_message(info.payload());
            if !msg.contains("injected") {
                forward(info);
            }
        }));
        QuietInjectedPanics(prev)
    }

    fn restore(self) {
        let _ = std::panic::take_hook();
        let prev = self.0;
        std::panic::set_hook(Box::new(move |info| prev(info)));
    }
}

/// Spins for about `ns` nanoseconds of work.
fn busy(ns: u64) {
    let t0 = lanegraph_jobs::clock::now();
    let mut x = 0u64;
    while lanegraph_jobs::clock::now().ns_since(t0) < ns {
        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
    }
}

/// This process's resident memory, bytes (Linux: `VmRSS` of `/proc/self/status`).
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
