//! The render lane: a mailbox of the game's latest view, drawn one frame behind the owner by the
//! game's [`RenderPass`].
//!
//! Owns: the mailbox, the render job that drains it on the render lane, the hand-over of decoded
//! images to the pass, the lane's statistics, and the per-frame figures the owner reads
//! ([`RenderPulse`]). Must never: know what a view holds or how it is drawn (the game's pass
//! does; the demo's draws particles through `lanegraph::vk`), keep images after handing them to
//! the pass, block the owner (see below), or touch the world (it only sees views).
//!
//! # Protocol
//! 1. The owner puts the new view in the mailbox (replacing an undrawn one: `skipped += 1`).
//! 2. If `in_flight` was false it sets it and spawns the render job on the render lane (built
//!    once at start; spawning it again allocates nothing).
//! 3. The job draws the mailbox's view. If a newer one is already there, it queues itself
//!    again behind whatever else waits on the lane (asset uploads, captures) and returns: a
//!    pass slower than the frame never keeps the lane to itself. Otherwise it clears
//!    `in_flight` and looks once more: a view published between its last look and the clear
//!    would otherwise wait a frame; if there is one and it wins `in_flight` back, it queues
//!    itself again.
//! 4. `finish` waits (owner, end of run) until `in_flight` is false.
//!
//! # The owner never waits on the render lane
//! The render job holds `inner` (the pass, the statistics) while it draws, which may block on
//! the GPU (a frame slot, a resize). The owner's per-frame calls never take `inner`:
//! - publishing swaps the mailbox (a pointer swap under its own lock);
//! - new settings go through `try_lock` on their own cell; when the render job holds it, the
//!   owner keeps them pending, retries next frame and counts a deferral;
//! - the per-frame figures ([`RenderPulse`]) are read with `try_lock`; when the render job is
//!   writing them, the owner uses the previous reading and counts a skip.
//!
//! Only end-of-run calls (`finish`, `stats`, `device`, `capture_png`) wait.

use std::any::Any;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use lanegraph_jobs::{clock, LaneId, Lanes, RepeatableJob};
use lanegraph_telemetry::hooks::BucketsHooks;
use lanegraph_telemetry::{Gauge, GpuFrame, Registry, Unit};

use super::agents::RenderSettings;
use super::loaders::DecodedImage;
use super::render_trace::{trace_gpu_pass, trace_present};

pub use super::render_pass::{DrawOutput, PresentFigures, RenderDevice, RenderPass};

/// What the render lane has done so far (a snapshot).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RenderStats {
    /// Views drawn.
    pub drawn: u64,
    /// Views replaced in the mailbox before the lane drew them.
    pub skipped: u64,
    /// The last drawn view's frame and the CPU time the render job spent on it, ns.
    pub last: Option<(u64, u64)>,
    /// Instances in the last drawn view, as the pass reported.
    pub last_instances: u64,
    /// Decoded images handed to the pass.
    pub textures: u64,
    /// Bytes of those images.
    pub texture_bytes: u64,
    /// Images the pass uploaded to the GPU.
    pub gpu_textures: u64,
    /// The newest GPU timings the pass read.
    pub gpu: Option<GpuFrame>,
    /// The window's present figures, when the pass presents to one.
    pub present: Option<PresentFigures>,
    /// The run's present-to-present intervals, ms: nearest-rank p50, p99 and the max (`None`
    /// before two presents).
    pub present_interval_ms: Option<[f64; 3]>,
    /// The pass's latest GPU memory reading.
    pub gpu_memory: Option<super::gpu_memory::GpuMemoryFigures>,
    /// What the GPU memory monitor found: peak churn, readings over the threshold, alerts.
    pub gpu_memory_churn: super::gpu_memory::ChurnFigures,
    /// Errors the pass reported (and its panics); the first [`MAX_RENDER_ERRORS`] are kept.
    pub errors: Vec<String>,
    /// Draws that panicked in the game's pass (each cost that frame's draw; the lane went on).
    pub panics: u64,
    /// Frames the owner read the previous [`RenderPulse`] because the render job was writing it.
    pub pulse_skips: u64,
    /// Times the owner could not hand new settings over because the render job was reading
    /// them (handed over at a later frame boundary).
    pub settings_deferrals: u64,
}

/// Render errors kept in [`RenderStats::errors`].
pub const MAX_RENDER_ERRORS: usize = 64;

/// The render lane's per-frame figures: what the owner reads every frame, without waiting.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RenderPulse {
    /// Views drawn.
    pub drawn: u64,
    /// The last drawn view's frame and the CPU time the render job spent on it, ns.
    pub last: Option<(u64, u64)>,
    /// Instances in the last drawn view.
    pub last_instances: u64,
    /// The newest GPU reading: the engine frame whose draw it measures (as the pass tagged it:
    /// `GpuFrame::frame`) and the GPU frame time, ms.
    pub gpu: Option<(u64, f64)>,
    /// Instances drawn in the draw the newest GPU reading measures (`None` when that draw is
    /// older than the lane keeps, or the pass's tag names no draw).
    pub gpu_instances: Option<u64>,
}

/// A view as published: the frame it was derived in, and the game's view behind a type-erased
/// pointer (the pass casts it back).
#[derive(Clone)]
pub(crate) struct Published {
    pub(crate) frame: u64,
    /// The engine frame that published it: the frame this draw renders (a cached view is
    /// published again, by later frames). Writer: `Engine::publish_view` (owner). Reader:
    /// `draw` (render lane: `DrawOutput::frame`, the draw ring).
    pub(crate) for_frame: u64,
    pub(crate) view: Arc<dyn Any + Send + Sync>,
}

/// A [`RenderPass`] with its view type erased, as the lane holds it.
pub(crate) trait HeldPass: Send {
    fn draw(
        &mut self,
        view: &(dyn Any + Send + Sync),
        settings: &RenderSettings,
        out: &mut DrawOutput,
    ) -> Result<(), String>;
    fn upload(&mut self, image: &DecodedImage) -> Result<bool, String>;
    fn capture_png(&mut self, view: &(dyn Any + Send + Sync)) -> Option<Vec<u8>>;
    fn device(&self) -> RenderDevice;
}

/// A pass for views of type `V`.
pub(crate) struct TypedPass<V, P> {
    pass: P,
    _view: PhantomData<fn(&V)>,
}

impl<V, P> TypedPass<V, P> {
    pub(crate) fn new(pass: P) -> Self {
        TypedPass {
            pass,
            _view: PhantomData,
        }
    }
}

/// Published views always come from the view source built with the same `V` as the pass (one
/// builder call sets both); a mismatch would be a runtime bug, reported as a draw error.
const VIEW_TYPE_MISMATCH: &str = "the published view is not the pass's view type (a bug)";

impl<V: Send + Sync + 'static, P: RenderPass<V>> HeldPass for TypedPass<V, P> {
    fn draw(
        &mut self,
        view: &(dyn Any + Send + Sync),
        settings: &RenderSettings,
        out: &mut DrawOutput,
    ) -> Result<(), String> {
        let view = view
            .downcast_ref::<V>()
            .ok_or_else(|| VIEW_TYPE_MISMATCH.to_string())?;
        self.pass.draw(view, settings, out)
    }
    fn upload(&mut self, image: &DecodedImage) -> Result<bool, String> {
        self.pass.upload(image)
    }
    fn capture_png(&mut self, view: &(dyn Any + Send + Sync)) -> Option<Vec<u8>> {
        self.pass.capture_png(view.downcast_ref::<V>()?)
    }
    fn device(&self) -> RenderDevice {
        self.pass.device()
    }
}

struct Inner {
    /// The game's pass, view type erased (`None`: views are counted as drawn, nothing is drawn).
    /// Writers: `draw`, the texture sink (`upload`), `capture_png`'s job (render lane).
    /// Reader: `device` (owner, waits for a draw in progress).
    pass: Option<Box<dyn HeldPass>>,
    /// What the lane has done (draws, textures, errors, panics). Writers: `draw`, `render_job`
    /// (panics), the texture sink (render lane). Readers: `draw` (the pulse), `stats` (owner).
    stats: RenderStats,
    /// What the pass reported at its last draw (instances, GPU timings, presents, GPU memory).
    /// Writer: the pass, in `draw` (render lane). Readers: `draw`, `stats` (owner, end of run).
    out: DrawOutput,
    /// Per GPU pass name (interned once: the trace's span name too), its `gpu.pass.time{pass}`
    /// gauge (`None`: the name was refused as a label value). Registered the first time a pass
    /// reports; a handful of passes. Writer and reader: `draw` (render lane).
    pass_gauges: Vec<(&'static str, Option<Gauge>)>,
    /// Where the pass gauges are registered (the engine's registry).
    /// Writer: `RenderLane::new`. Reader: `draw` (render lane: pass and present metrics).
    registry: Registry,
    /// The `present.*` metrics, registered the first time the pass reports present figures.
    /// Writer: `draw` (render lane). Readers: `stats`, `present_intervals_ms` (owner, end of run).
    present: Option<PresentMetrics>,
    /// Acts on the pass's GPU memory readings.
    /// Writer: `draw` (render lane). Readers: `stats` (its figures), `gpu_memory_pressure` (build).
    gpu_memory: super::gpu_memory::GpuMemoryMonitor,
    /// The GPU frame whose passes were last put on the trace (written and read by the render
    /// job after each draw: a frame read once is traced once).
    traced_gpu_frame: Option<u64>,
    /// The last draws' frames (`DrawOutput::frame`) and instances, newest at
    /// `drawn % DRAWS_KEPT`: a GPU reading arrives draws later, tagged with its draw's frame,
    /// and is paired with that draw's instances here. Writer and reader: `draw` (render lane).
    recent_draws: [(u64, u64); DRAWS_KEPT],
}

/// Draws whose instances are kept to pair a late GPU reading with its workload: more than any
/// pass keeps frames in flight.
const DRAWS_KEPT: usize = 8;

/// The present-pacing metrics (docs/telemetry.md), set by the render job after each draw.
struct PresentMetrics {
    /// `present.frames` (`None`: the registry refused it). Writer: `update` (render lane, after a
    /// draw). Reader: the registry's exporters (`Engine::metrics`).
    frames: Option<lanegraph_telemetry::Counter>,
    /// `present.acquire_wait`, seconds (`None`: refused). Writer: `update` (render lane, after a
    /// draw). Reader: the registry's exporters (`Engine::metrics`).
    acquire_wait: Option<Gauge>,
    /// `present.interval`, seconds (`None`: refused). Writer: `update` (render lane, after a draw).
    /// Reader: the registry's exporters (`Engine::metrics`).
    interval: Option<lanegraph_telemetry::Histogram>,
    /// `present.frames_in_flight` (`None`: refused). Writer: `update` (render lane, after a draw).
    /// Reader: the registry's exporters (`Engine::metrics`).
    in_flight: Option<Gauge>,
    /// Presents already counted.
    /// Writer and reader: `update` (render lane): only new presents are added.
    counted: u64,
    /// Every present interval of the run, ns (the first [`MAX_PRESENT_INTERVALS`]), for the
    /// percentiles in [`RenderStats::present_interval_ms`].
    /// Writer: `update` (render lane). Readers: `stats`, `present_intervals_ms` (owner, run's end).
    intervals: Vec<u64>,
}

/// Present intervals kept for the run's percentiles (about 18 minutes at 60 Hz; 512 KiB).
pub(crate) const MAX_PRESENT_INTERVALS: usize = 1 << 16;

impl PresentMetrics {
    fn register(r: &Registry) -> PresentMetrics {
        PresentMetrics {
            frames: r
                .register_counter(
                    "present.frames",
                    &[],
                    Unit::None,
                    "Images presented to the window.",
                )
                .ok(),
            acquire_wait: r
                .register_gauge(
                    "present.acquire_wait",
                    &[],
                    Unit::Seconds,
                    "How long the last swapchain acquire blocked (FIFO paces here).",
                )
                .ok(),
            interval: r
                .register_histogram(
                    "present.interval",
                    &[],
                    Unit::Seconds,
                    "Time between consecutive presents.",
                    lanegraph_telemetry::Buckets::frame_time_seconds(),
                )
                .ok(),
            in_flight: r
                .register_gauge(
                    "present.frames_in_flight",
                    &[],
                    Unit::None,
                    "GPU frames submitted and not finished, after the last submit.",
                )
                .ok(),
            counted: 0,
            // Reserved once (512 KiB) when a pass first presents: no growth on the render lane
            // while frames are drawn.
            intervals: Vec::with_capacity(MAX_PRESENT_INTERVALS),
        }
    }

    fn update(&mut self, p: &PresentFigures) {
        let new = p.presented.saturating_sub(self.counted);
        if new == 0 {
            return;
        }
        self.counted = p.presented;
        if let Some(c) = &self.frames {
            c.add(new);
        }
        if let Some(g) = &self.acquire_wait {
            g.set(p.acquire_wait_ns as f64 / 1e9);
        }
        trace_present(p);
        if p.interval_ns > 0 {
            if let Some(h) = &self.interval {
                h.observe(p.interval_ns as f64 / 1e9);
            }
            if self.intervals.len() < MAX_PRESENT_INTERVALS {
                self.intervals.push(p.interval_ns);
            }
        }
        if let Some(g) = &self.in_flight {
            g.set(f64::from(p.frames_in_flight));
        }
    }
}

struct Shared {
    /// The newest published view not yet drawn. Writer: `publish` (owner thread, step 1: replaces).
    /// Reader: `render_job` (render lane, step 3: takes it, then looks for a newer one).
    mailbox: Mutex<Option<Published>>,
    /// Held by the render lane while it draws (never by the owner during a frame).
    /// Writers: `draw`, `render_job`, the texture sink, `capture_png`'s job (render lane). Readers:
    /// those, and the owner's waiting calls (`stats`, `device`, `present_intervals_ms`, ...).
    inner: Mutex<Inner>,
    /// The settings in force: the render job copies them at the start of a draw.
    /// Writer: `set_settings` (owner thread, `try_lock`). Reader: `draw` (render lane).
    settings: Mutex<RenderSettings>,
    /// Written by the render job after each draw; read by the owner with `try_lock`.
    pulse: Mutex<RenderPulse>,
    /// The render job itself, so it can queue its own continuation (step 3).
    /// Writer: `RenderLane::new` (once). Reader: `requeue` (render lane).
    job: std::sync::OnceLock<RepeatableJob>,
    /// Writers: the owner (set, step 2) and the render job (clear, step 3), both `AcqRel` so
    /// the mailbox writes before them are seen by whoever sees the flag.
    /// Readers: the same (`swap`), and `finish` (owner, end of run; acquire).
    in_flight: AtomicBool,
    /// Views replaced in the mailbox undrawn, or dropped for want of a render job. Writer:
    /// `publish` (owner thread, relaxed add). Reader: `stats` (relaxed).
    skipped: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The owner's handle to the render lane.
pub(crate) struct RenderLane {
    /// The state shared with the render job (a weak handle) and the texture sink. Writer: `new`.
    /// Readers: every method (owner thread); `render_job`, `draw` and the sink on the render lane.
    shared: Arc<Shared>,
    /// The render lane (`None`: the plan has none). Writer: `new`. Readers: `capture_png`, `Debug`.
    lane: Option<LaneId>,
    /// The drain job (step 3), built once: spawning it again allocates nothing.
    /// Writer: `new`. Reader: `publish` (owner thread, step 2: spawns it).
    job: Option<RepeatableJob>,
    /// The owner's last reading of the pulse (used when the render job holds it).
    /// Writer and reader: `pulse` (owner thread, once per frame).
    pulse: RenderPulse,
    /// Times `pulse` found the render job writing the pulse and used the last reading.
    /// Writer: `pulse` (owner thread). Reader: `stats`.
    pulse_skips: u64,
    /// Times the owner could not hand settings over (the render job was reading them); the
    /// engine hands them over again at the next frame boundary (`Engine::apply_strategies`).
    /// Writer: `set_settings` (owner thread). Reader: `stats`.
    settings_deferrals: u64,
}

impl std::fmt::Debug for RenderLane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderLane")
            .field("lane", &self.lane)
            .finish_non_exhaustive()
    }
}

impl RenderLane {
    /// A render lane drawing on `lane` with `pass` (`None` lane: views are accepted and counted
    /// as skipped; `None` pass: views are taken and counted as drawn, nothing is drawn).
    pub(crate) fn new(
        lanes: &Lanes,
        lane: Option<LaneId>,
        pass: Option<Box<dyn HeldPass>>,
        settings: RenderSettings,
        registry: Registry,
        churn_alert_per_second: f64,
    ) -> Self {
        let shared = Arc::new(Shared {
            mailbox: Mutex::new(None),
            inner: Mutex::new(Inner {
                pass,
                stats: RenderStats::default(),
                out: DrawOutput::default(),
                pass_gauges: Vec::new(),
                gpu_memory: super::gpu_memory::GpuMemoryMonitor::new(
                    registry.clone(),
                    churn_alert_per_second,
                ),
                registry,
                present: None,
                traced_gpu_frame: None,
                recent_draws: [(0, 0); DRAWS_KEPT],
            }),
            settings: Mutex::new(settings),
            pulse: Mutex::new(RenderPulse::default()),
            job: std::sync::OnceLock::new(),
            in_flight: AtomicBool::new(false),
            skipped: AtomicU64::new(0),
        });
        let job = lane.and_then(|lane| {
            // The job holds a weak handle: the lane's `Shared` holds the job, and a strong one
            // would keep both alive forever.
            let weak = Arc::downgrade(&shared);
            lanes
                .repeatable(lane, move || {
                    if let Some(shared) = weak.upgrade() {
                        render_job(&shared);
                    }
                })
                .ok()
        });
        if let Some(j) = &job {
            let _ = shared.job.set(j.clone());
        }
        RenderLane {
            lane,
            job,
            pulse: RenderPulse::default(),
            pulse_skips: 0,
            settings_deferrals: 0,
            shared,
        }
    }

    /// Where the asset graph's `upload` nodes (running on the render lane) hand decoded images:
    /// each goes to the pass at once, on the calling thread, and is not kept.
    pub(crate) fn texture_sink(&self) -> super::assets::TextureSink {
        let shared = Arc::clone(&self.shared);
        Arc::new(move |img: Arc<DecodedImage>| {
            let mut inner = lock(&shared.inner);
            let Inner { pass, stats, .. } = &mut *inner;
            stats.textures += 1;
            stats.texture_bytes += img.rgba.len() as u64;
            if let Some(pass) = pass.as_mut() {
                match pass.upload(&img) {
                    Ok(true) => stats.gpu_textures += 1,
                    Ok(false) => {}
                    Err(e) => push_error(stats, format!("texture `{}`: {e}", img.path.display())),
                }
            }
        })
    }

    /// Sets the render strategy's settings (applied from the next view drawn). Never waits:
    /// when the render job is reading the settings, the call is counted as a deferral and the
    /// caller's next call (the engine's, at every frame boundary) hands them over.
    pub(crate) fn set_settings(&mut self, settings: RenderSettings) {
        match self.shared.settings.try_lock() {
            Ok(mut s) => *s = settings,
            Err(TryLockError::Poisoned(p)) => *p.into_inner() = settings,
            Err(TryLockError::WouldBlock) => self.settings_deferrals += 1,
        }
    }

    /// The render lane's per-frame figures. Never waits: when the render job is writing them,
    /// the previous reading is returned and the skip counted.
    pub(crate) fn pulse(&mut self) -> RenderPulse {
        match self.shared.pulse.try_lock() {
            Ok(p) => self.pulse = *p,
            Err(TryLockError::Poisoned(p)) => self.pulse = *p.into_inner(),
            Err(TryLockError::WouldBlock) => self.pulse_skips += 1,
        }
        self.pulse
    }

    /// Steps 1-2: publishes `view` for drawing.
    pub(crate) fn publish(&self, lanes: &Lanes, view: Published) {
        if lock(&self.shared.mailbox).replace(view).is_some() {
            self.shared.skipped.fetch_add(1, Ordering::Relaxed);
        }
        let Some(job) = &self.job else {
            lock(&self.shared.mailbox).take();
            self.shared.skipped.fetch_add(1, Ordering::Relaxed);
            return;
        };
        if !self.shared.in_flight.swap(true, Ordering::AcqRel)
            && lanes.spawn_repeatable(job).is_err()
        {
            self.shared.in_flight.store(false, Ordering::Release);
        }
    }

    /// Step 4: waits until the render lane has drawn everything published.
    pub(crate) fn finish(&self) {
        let t0 = std::time::Instant::now();
        while self.shared.in_flight.load(Ordering::Acquire) {
            if t0.elapsed() > std::time::Duration::from_secs(30) {
                tracing::warn!("render lane did not finish within 30 s");
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    /// A snapshot of the lane's statistics. Waits for a draw in progress: for the end of a
    /// run, not for every frame (that is [`RenderLane::pulse`]).
    pub(crate) fn stats(&self) -> RenderStats {
        let inner = lock(&self.shared.inner);
        let mut s = inner.stats.clone();
        s.gpu = inner.out.gpu.clone();
        s.present = inner.out.present;
        s.gpu_memory = inner.out.gpu_memory.clone();
        s.gpu_memory_churn = inner.gpu_memory.figures;
        s.present_interval_ms = inner.present.as_ref().and_then(|p| {
            let mut v = p.intervals.clone();
            v.sort_unstable();
            let rank = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
            (!v.is_empty()).then(|| [rank(0.5), rank(0.99), rank(1.0)].map(|ns| ns as f64 / 1e6))
        });
        s.skipped = self.shared.skipped.load(Ordering::Relaxed);
        s.pulse_skips = self.pulse_skips;
        s.settings_deferrals = self.settings_deferrals;
        s
    }

    /// Every present-to-present interval of the run so far, ms (the first
    /// [`MAX_PRESENT_INTERVALS`]; waits for a draw in progress: for the end of a run).
    pub(crate) fn present_intervals_ms(&self) -> Vec<f64> {
        lock(&self.shared.inner)
            .present
            .as_ref()
            .map(|p| p.intervals.iter().map(|&ns| ns as f64 / 1e6).collect())
            .unwrap_or_default()
    }

    /// The GPU memory pressure cell, for the controller's provider (at build).
    pub(crate) fn gpu_memory_pressure(&self) -> Arc<super::gpu_memory::PressureCell> {
        lock(&self.shared.inner).gpu_memory.pressure.clone()
    }

    /// The pass's device (waits for a draw in progress: not for every frame).
    pub(crate) fn device(&self) -> RenderDevice {
        lock(&self.shared.inner)
            .pass
            .as_ref()
            .map(|p| p.device())
            .unwrap_or_default()
    }

    /// Captures `view` as a PNG on the render lane and waits for it (end of run; `None` when
    /// the pass cannot).
    pub(crate) fn capture_png(&self, lanes: &Lanes, view: Published) -> Option<Vec<u8>> {
        self.finish();
        let lane = self.lane?;
        let (tx, rx) = crossbeam_channel::bounded(1);
        let shared = Arc::clone(&self.shared);
        lanes
            .spawn_detached(lane, move || {
                let mut inner = lock(&shared.inner);
                let png = inner.pass.as_mut().and_then(|p| p.capture_png(&*view.view));
                let _ = tx.send(png);
            })
            .ok()?;
        rx.recv_timeout(std::time::Duration::from_secs(60))
            .ok()
            .flatten()
    }
}

/// Step 3.
fn render_job(shared: &Shared) {
    // Its own statement: the mailbox guard is dropped before drawing. (In a `while let`
    // scrutinee the guard would live through the loop body, and the owner's publish would wait
    // for the draw.)
    let next = lock(&shared.mailbox).take();
    if let Some(view) = next {
        // A panic in the game's pass costs this frame's draw, not the run: it is caught here,
        // counted as a render error, and the job goes on to clear `in_flight` (left set, no
        // view would ever be queued again and `finish` would wait its 30 s). The locks it held
        // are poisoned; every lock here takes the data back (`lock`).
        let drew = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| draw(shared, &view)));
        if let Err(payload) = drew {
            // The jobs crate's reader: a hostile payload's own drop cannot unwind out of here.
            let why = lanegraph_jobs::error::take_panic_message(payload);
            let mut inner = lock(&shared.inner);
            inner.stats.panics += 1;
            push_error(
                &mut inner.stats,
                format!("render pass panicked drawing frame {}: {why}", view.frame),
            );
        }
        if lock(&shared.mailbox).is_some() {
            // A newer view: queue again behind what waits on the lane; `in_flight` stays set.
            requeue(shared);
            return;
        }
    }
    shared.in_flight.store(false, Ordering::Release);
    let more = lock(&shared.mailbox).is_some();
    if more && !shared.in_flight.swap(true, Ordering::AcqRel) {
        requeue(shared);
    }
}

/// Queues the render job again (`in_flight` is set and stays set until it runs).
fn requeue(shared: &Shared) {
    match shared.job.get() {
        Some(job) => job.spawn(),
        // Unreachable: the job is set before the first publish can spawn it.
        None => shared.in_flight.store(false, Ordering::Release),
    }
}

/// Keeps a render error, up to [`MAX_RENDER_ERRORS`].
fn push_error(stats: &mut RenderStats, e: String) {
    if stats.errors.len() < MAX_RENDER_ERRORS {
        stats.errors.push(e);
    }
}

fn draw(shared: &Shared, view: &Published) {
    let _span = crate::span!("render.frame");
    let t0 = clock::now();
    let settings = *lock(&shared.settings);
    let mut inner = lock(&shared.inner);
    let Inner {
        pass,
        stats,
        out,
        pass_gauges,
        registry,
        present,
        gpu_memory,
        traced_gpu_frame,
        recent_draws,
    } = &mut *inner;
    out.frame = view.for_frame;
    if let Some(pass) = pass.as_mut() {
        if let Err(e) = pass.draw(&*view.view, &settings, out) {
            push_error(stats, e);
        }
    }
    if let Some(gpu) = &out.gpu {
        // A frame read once is traced once (the pass repeats its latest reading between reads).
        let new_frame = traced_gpu_frame.replace(gpu.frame) != Some(gpu.frame);
        for p in &gpu.passes {
            let i = match pass_gauges.iter().position(|(n, _)| *n == p.name) {
                Some(i) => i,
                None => {
                    let g = registry
                        .register_gauge(
                            "gpu.pass.time",
                            &[("pass", &p.name)],
                            Unit::Seconds,
                            "GPU time of one pass (EMA-smoothed).",
                        )
                        .ok();
                    pass_gauges.push((lanegraph_telemetry::hooks::intern_name(&p.name), g));
                    pass_gauges.len() - 1
                }
            };
            let (name, gauge) = &pass_gauges[i];
            if let Some(g) = gauge {
                g.set(p.ema_ms / 1000.0);
            }
            if new_frame {
                trace_gpu_pass(name, p.cpu_mono_ns);
            }
        }
    }
    match &out.gpu_memory {
        Some(g) => gpu_memory.update(g),
        // The pass stopped reporting (its GPU is gone): its last reading no longer holds.
        None => gpu_memory.pressure.clear(),
    }
    if let Some(p) = &out.present {
        present
            .get_or_insert_with(|| PresentMetrics::register(registry))
            .update(p);
    }
    recent_draws[(stats.drawn % DRAWS_KEPT as u64) as usize] = (view.for_frame, out.instances);
    stats.drawn += 1;
    stats.last_instances = out.instances;
    stats.last = Some((view.frame, clock::now().ns_since(t0)));
    let pulse = RenderPulse {
        drawn: stats.drawn,
        last: stats.last,
        last_instances: stats.last_instances,
        gpu: out.gpu.as_ref().map(|g| (g.frame, g.total_ms)),
        gpu_instances: out.gpu.as_ref().and_then(|g| {
            recent_draws
                .iter()
                .find(|&&(f, _)| f == g.frame && f != 0)
                .map(|&(_, n)| n)
        }),
    };
    drop(inner);
    *lock(&shared.pulse) = pulse;
}
