//! The render lane: a mailbox of the latest [`RenderView`], drawn one frame behind the owner.
//!
//! Owns: the mailbox, the render job that drains it on the render lane, texture uploads, the
//! Vulkan renderer when there is one (and why there is none when not), the GPU pass timings it
//! reads, and the last picture. Must never: block the owner (publishing is a swap; a view the
//! lane could not get to is replaced by the newer one and counted as skipped), or touch the
//! world (it only sees views).
//!
//! # Protocol
//! 1. The owner puts the new view in the mailbox (replacing an undrawn one: `skipped += 1`).
//! 2. If `in_flight` was false it sets it and spawns one render job on the render lane.
//! 3. The job draws mailbox views until the mailbox is empty, then clears `in_flight` and looks
//!    once more: a view published between its last look and the clear would otherwise wait a
//!    frame; if there is one and it wins `in_flight` back, it goes on drawing.
//! 4. `finish` waits (owner, end of run) until `in_flight` is false.
//!
//! # The owner never waits on the render lane
//! The render job holds `inner` (the GPU, the full statistics, the textures) while it draws,
//! which may block on the GPU. The owner's per-frame calls never take `inner`:
//! - publishing swaps the mailbox (a pointer swap under its own lock);
//! - new settings go through `try_lock` on their own cell; when the render job holds it, the
//!   owner keeps them pending, retries next frame and counts a deferral;
//! - the per-frame figures ([`RenderPulse`]) are read with `try_lock`; when the render job is
//!   writing them, the owner uses the previous reading and counts a skip.
//!
//! Only end-of-run calls (`finish`, `stats`, `gpu_status`, `capture_png`) wait.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use lanegraph_jobs::{clock, LaneId, Lanes};

use super::agents::RenderSettings;
use super::assets::DecodedImage;
use super::view::RenderView;

/// One GPU pass's time, as read by the profiler (two frames late).
#[derive(Debug, Clone, PartialEq)]
pub struct GpuPass {
    /// The pass (`cull`, `draw`, `readback`).
    pub name: String,
    /// Its time in the frame read, ms.
    pub raw_ms: f64,
    /// EMA-smoothed, ms.
    pub ema_ms: f64,
}

/// The GPU figures of one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuFrame {
    /// The render-lane frame they measure.
    pub frame: u64,
    /// Whole GPU frame, ms.
    pub total_ms: f64,
    /// Per pass.
    pub passes: Vec<GpuPass>,
}

/// What the render lane has done so far (a snapshot).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RenderStats {
    /// Views drawn.
    pub drawn: u64,
    /// Views replaced in the mailbox before the lane drew them.
    pub skipped: u64,
    /// The last drawn view's frame and the CPU time the render job spent on it, ns.
    pub last: Option<(u64, u64)>,
    /// Instances in the last drawn view, after the instance cap.
    pub last_instances: u64,
    /// Decoded textures the render lane took in (kept on the CPU as the source of GPU uploads).
    pub textures: u64,
    /// Bytes of those textures.
    pub texture_bytes: u64,
    /// Textures uploaded to the GPU (device-local images; re-uploaded after a resolution change
    /// rebuilds the renderer). 0 without a GPU.
    pub gpu_textures: u64,
    /// The newest GPU timings read.
    pub gpu: Option<GpuFrame>,
    /// Errors the GPU reported while drawing (the lane keeps going without it after one); the
    /// first [`MAX_RENDER_ERRORS`] are kept.
    pub errors: Vec<String>,
    /// Frames the owner read the previous [`RenderPulse`] because the render job was writing it.
    pub pulse_skips: u64,
    /// Frames the owner kept new settings pending because the render job was reading them.
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
    /// Instances in the last drawn view, after the instance cap.
    pub last_instances: u64,
    /// The newest GPU reading: the render-lane frame it measures and the GPU frame time, ms.
    pub gpu: Option<(u64, f64)>,
}

/// The GPU side: present or why not.
pub struct GpuState {
    /// The device's name, when a device came up.
    pub device: Option<String>,
    /// Why there is no GPU, when there is none.
    pub unavailable: Option<String>,
    /// Renderer first: a tuple drops in field order, and lanegraph-vk's passes hold a bare
    /// `ash::Device` (not the device's `Arc`), so the renderer must go before the `Gpu`.
    #[cfg(feature = "vulkan")]
    gpu: Option<(lanegraph_vk::Renderer, lanegraph_vk::Gpu)>,
    #[cfg(feature = "vulkan")]
    base: (u32, u32, u32),
    #[cfg(feature = "vulkan")]
    scale: f32,
}

impl std::fmt::Debug for GpuState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuState")
            .field("device", &self.device)
            .field("unavailable", &self.unavailable)
            .finish_non_exhaustive()
    }
}

/// Target size of the demo's picture at resolution scale 1, pixels.
pub const TARGET_SIZE: (u32, u32) = (512, 512);

impl GpuState {
    /// Brings up Vulkan when `want` (with validation layers when `validation`), sized for
    /// `capacity` instances; otherwise, or when that fails, a state saying why there is no GPU.
    pub fn new(want: bool, validation: bool, capacity: u32) -> GpuState {
        if !want {
            return GpuState::none("disabled (--no-gpu or `vulkan = false`)".into());
        }
        #[cfg(feature = "vulkan")]
        {
            let cfg = lanegraph_vk::GpuConfig {
                validation,
                ..Default::default()
            };
            let made = lanegraph_vk::Gpu::new(&cfg).and_then(|gpu| {
                let r = lanegraph_vk::Renderer::new(&gpu, renderer_config(TARGET_SIZE, capacity))?;
                Ok((r, gpu))
            });
            match made {
                Ok((r, gpu)) => GpuState {
                    device: Some(gpu.info().name.clone()),
                    unavailable: None,
                    gpu: Some((r, gpu)),
                    base: (TARGET_SIZE.0, TARGET_SIZE.1, capacity),
                    scale: 1.0,
                },
                Err(e) => GpuState::none(e.to_string()),
            }
        }
        #[cfg(not(feature = "vulkan"))]
        {
            let _ = (validation, capacity);
            GpuState::none("built without the `vulkan` feature".into())
        }
    }

    fn none(why: String) -> GpuState {
        GpuState {
            device: None,
            unavailable: Some(why),
            #[cfg(feature = "vulkan")]
            gpu: None,
            #[cfg(feature = "vulkan")]
            base: (1, 1, 1),
            #[cfg(feature = "vulkan")]
            scale: 1.0,
        }
    }

    /// Validation-layer messages so far (`None`: no device, or validation off).
    pub fn validation_messages(&self) -> Option<u64> {
        #[cfg(feature = "vulkan")]
        if let Some((_, gpu)) = &self.gpu {
            return gpu
                .validation_enabled()
                .then(|| gpu.validation_counts().total());
        }
        None
    }
}

#[cfg(feature = "vulkan")]
fn renderer_config(size: (u32, u32), capacity: u32) -> lanegraph_vk::RendererConfig {
    lanegraph_vk::RendererConfig {
        width: size.0.max(8),
        height: size.1.max(8),
        capacity: capacity.max(1),
        frames_in_flight: crate::budget::GPU_READ_LAG_FRAMES as u32,
        clear: [0.02, 0.02, 0.05, 1.0],
    }
}

struct Inner {
    gpu: GpuState,
    stats: RenderStats,
    textures: Vec<Arc<DecodedImage>>,
    last_png: Option<Vec<u8>>,
}

struct Shared {
    mailbox: Mutex<Option<Arc<RenderView>>>,
    /// Held by the render lane while it draws (never by the owner during a frame).
    inner: Mutex<Inner>,
    /// The settings in force: the render job copies them at the start of a draw.
    settings: Mutex<RenderSettings>,
    /// Written by the render job after each draw; read by the owner with `try_lock`.
    pulse: Mutex<RenderPulse>,
    /// Writers: the owner (set, step 2) and the render job (clear, step 3), both `AcqRel` so
    /// the mailbox writes before them are seen by whoever sees the flag.
    in_flight: AtomicBool,
    skipped: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The owner's handle to the render lane.
pub struct RenderLane {
    shared: Arc<Shared>,
    lane: Option<LaneId>,
    /// The owner's last reading of the pulse (used when the render job holds it).
    pulse: RenderPulse,
    pulse_skips: u64,
    /// Settings the owner could not hand over yet (the render job was reading them).
    pending: Option<RenderSettings>,
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
    /// A render lane drawing on `lane` (`None`: views are accepted and counted as skipped).
    pub fn new(lane: Option<LaneId>, gpu: GpuState, settings: RenderSettings) -> Self {
        RenderLane {
            lane,
            pulse: RenderPulse::default(),
            pulse_skips: 0,
            pending: None,
            settings_deferrals: 0,
            shared: Arc::new(Shared {
                mailbox: Mutex::new(None),
                inner: Mutex::new(Inner {
                    gpu,
                    stats: RenderStats::default(),
                    textures: Vec::new(),
                    last_png: None,
                }),
                settings: Mutex::new(settings),
                pulse: Mutex::new(RenderPulse::default()),
                in_flight: AtomicBool::new(false),
                skipped: AtomicU64::new(0),
            }),
        }
    }

    /// Where the asset graph's `upload` nodes (running on the render lane) hand decoded images:
    /// each is taken in and uploaded to the GPU at once, on the calling thread.
    pub fn texture_sink(&self) -> super::assets::TextureSink {
        let shared = Arc::clone(&self.shared);
        Arc::new(move |img: Arc<DecodedImage>| {
            let mut inner = lock(&shared.inner);
            take_texture(&mut inner, img);
        })
    }

    /// Sets the render strategy's settings (applied from the next view drawn). Never waits:
    /// when the render job is reading the settings, they stay pending until the next call.
    pub fn set_settings(&mut self, settings: RenderSettings) {
        // The newest settings win over any still pending.
        self.pending = None;
        let want = settings;
        match self.shared.settings.try_lock() {
            Ok(mut s) => *s = want,
            Err(std::sync::TryLockError::Poisoned(p)) => *p.into_inner() = want,
            Err(std::sync::TryLockError::WouldBlock) => {
                self.pending = Some(want);
                self.settings_deferrals += 1;
            }
        }
    }

    /// The render lane's per-frame figures. Never waits: when the render job is writing them,
    /// the previous reading is returned and the skip counted.
    pub fn pulse(&mut self) -> RenderPulse {
        match self.shared.pulse.try_lock() {
            Ok(p) => self.pulse = *p,
            Err(std::sync::TryLockError::Poisoned(p)) => self.pulse = *p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => self.pulse_skips += 1,
        }
        self.pulse
    }

    /// Steps 1-2: publishes `view` for drawing.
    pub fn publish(&self, lanes: &Lanes, view: Arc<RenderView>) {
        if lock(&self.shared.mailbox).replace(view).is_some() {
            self.shared.skipped.fetch_add(1, Ordering::Relaxed);
        }
        let Some(lane) = self.lane else {
            lock(&self.shared.mailbox).take();
            self.shared.skipped.fetch_add(1, Ordering::Relaxed);
            return;
        };
        if !self.shared.in_flight.swap(true, Ordering::AcqRel) {
            let shared = Arc::clone(&self.shared);
            if lanes
                .spawn_detached(lane, move || render_job(&shared))
                .is_err()
            {
                self.shared.in_flight.store(false, Ordering::Release);
            }
        }
    }

    /// Step 4: waits until the render lane has drawn everything published.
    pub fn finish(&self) {
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
    pub fn stats(&self) -> RenderStats {
        let mut s = lock(&self.shared.inner).stats.clone();
        s.skipped = self.shared.skipped.load(Ordering::Relaxed);
        s.pulse_skips = self.pulse_skips;
        s.settings_deferrals = self.settings_deferrals;
        s
    }

    /// The device name, or why there is no GPU.
    pub fn gpu_status(&self) -> (Option<String>, Option<String>, Option<u64>) {
        let inner = lock(&self.shared.inner);
        (
            inner.gpu.device.clone(),
            inner.gpu.unavailable.clone(),
            inner.gpu.validation_messages(),
        )
    }

    /// Captures `view` as a PNG on the render lane and waits for it (end of run; `None`
    /// without a GPU).
    pub fn capture_png(&self, lanes: &Lanes, view: Arc<RenderView>) -> Option<Vec<u8>> {
        self.finish();
        let lane = self.lane?;
        let (tx, rx) = crossbeam_channel::bounded(1);
        let shared = Arc::clone(&self.shared);
        lanes
            .spawn_detached(lane, move || {
                let mut inner = lock(&shared.inner);
                let png = capture(&mut inner, &view);
                inner.last_png = png.clone();
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
    crate::telemetry::name_lane_thread();
    loop {
        while let Some(view) = lock(&shared.mailbox).take() {
            draw(shared, &view);
        }
        shared.in_flight.store(false, Ordering::Release);
        let more = lock(&shared.mailbox).is_some();
        if !more || shared.in_flight.swap(true, Ordering::AcqRel) {
            return;
        }
    }
}

/// Keeps `img` as the CPU source of its texture and, with a GPU, queues its upload to a
/// device-local image (recorded into the next frame's command buffer). A texture the GPU refuses
/// (too large, out of memory) is an error in the stats; the game goes on.
fn take_texture(inner: &mut Inner, img: Arc<DecodedImage>) {
    inner.stats.textures += 1;
    inner.stats.texture_bytes += img.rgba.len() as u64;
    #[cfg(feature = "vulkan")]
    {
        let Inner { gpu, stats, .. } = &mut *inner;
        if let Some((renderer, _)) = gpu.gpu.as_mut() {
            if upload_texture(renderer, stats, &img) {
                stats.gpu_textures += 1;
            }
        }
    }
    inner.textures.push(img);
}

/// Queues `img` on `renderer`; a refusal goes to `stats.errors`. Returns whether it was queued.
#[cfg(feature = "vulkan")]
fn upload_texture(
    renderer: &mut lanegraph_vk::Renderer,
    stats: &mut RenderStats,
    img: &DecodedImage,
) -> bool {
    match renderer.upload_texture(img.width, img.height, &img.rgba) {
        Ok(_) => true,
        Err(e) => {
            push_error(stats, format!("texture `{}`: {e}", img.path.display()));
            false
        }
    }
}

fn draw(shared: &Shared, view: &RenderView) {
    let _span = crate::telemetry::span_n("render.frame", view.len() as u64);
    let t0 = clock::now();
    let settings = *lock(&shared.settings);
    let mut inner = lock(&shared.inner);
    let cap = ((view.len() as f32) * settings.instance_fraction).ceil() as usize;
    let n = cap.min(view.len());
    inner.stats.last_instances = n as u64;
    gpu_draw(&mut inner, &settings, view, n);
    inner.stats.drawn += 1;
    inner.stats.last = Some((view.frame, clock::now().ns_since(t0)));
    let st = &inner.stats;
    let pulse = RenderPulse {
        drawn: st.drawn,
        last: st.last,
        last_instances: st.last_instances,
        gpu: st.gpu.as_ref().map(|g| (g.frame, g.total_ms)),
    };
    drop(inner);
    *lock(&shared.pulse) = pulse;
}

/// Keeps a render error, up to [`MAX_RENDER_ERRORS`].
fn push_error(stats: &mut RenderStats, e: String) {
    if stats.errors.len() < MAX_RENDER_ERRORS {
        stats.errors.push(e);
    }
}

#[cfg(feature = "vulkan")]
fn gpu_draw(inner: &mut Inner, settings: &RenderSettings, view: &RenderView, n: usize) {
    let scale = settings.resolution_scale;
    let gpu_cull = settings.gpu_cull;
    let Inner {
        gpu,
        stats,
        textures: inner_textures,
        ..
    } = inner;
    let Some((renderer, device)) = gpu.gpu.as_mut() else {
        return;
    };
    if (scale - gpu.scale).abs() > f32::EPSILON {
        // A resolution change rebuilds the target (cold path: only on a strategy switch).
        let (w, h, cap) = gpu.base;
        let size = ((w as f32 * scale) as u32, (h as f32 * scale) as u32);
        match lanegraph_vk::Renderer::new(device, renderer_config(size, cap)) {
            Ok(r) => {
                *renderer = r;
                gpu.scale = scale;
                // The new renderer starts without textures: upload the CPU copies again.
                for img in inner_textures.iter() {
                    upload_texture(renderer, stats, img);
                }
            }
            Err(e) => push_error(stats, format!("resize: {e}")),
        }
    }
    // Applied every frame: a resize above builds a new renderer with the default (cull on).
    renderer.set_cull(gpu_cull);
    let n = n.min(renderer.config().capacity as usize);
    if n == 0 || view.half_extent[0] <= 0.0 || view.half_extent[1] <= 0.0 || view.radius <= 0.0 {
        // Nothing to draw (an empty world, or a view the game left unset).
        return;
    }
    let pv = lanegraph_vk::ParticleView {
        xs: &view.xs[..n],
        ys: &view.ys[..n],
        center: view.center,
        half_extent: view.half_extent,
        radius: view.radius,
        color: view.color,
    };
    if let Err(e) = renderer.render(&pv) {
        push_error(stats, e.to_string());
        gpu.unavailable = Some(format!("lost during the run: {e}"));
        gpu.gpu = None;
        return;
    }
    if let Some(p) = renderer.profiler() {
        if let Some(t) = p.latest() {
            let fresh = stats.gpu.as_ref().is_none_or(|g| g.frame != t.frame);
            if fresh {
                stats.gpu = Some(GpuFrame {
                    frame: t.frame,
                    total_ms: t.total_ns / 1e6,
                    passes: t
                        .passes()
                        .iter()
                        .map(|pt| GpuPass {
                            name: p.pass_name(pt.pass).to_string(),
                            raw_ms: pt.raw_ns / 1e6,
                            ema_ms: pt.ema_ns / 1e6,
                        })
                        .collect(),
                });
            }
        }
    }
}

#[cfg(not(feature = "vulkan"))]
fn gpu_draw(_inner: &mut Inner, _settings: &RenderSettings, _view: &RenderView, _n: usize) {}

#[cfg(feature = "vulkan")]
fn capture(inner: &mut Inner, view: &RenderView) -> Option<Vec<u8>> {
    let (renderer, _) = inner.gpu.gpu.as_mut()?;
    let n = view.len().min(renderer.config().capacity as usize);
    if n == 0 || view.half_extent[0] <= 0.0 || view.radius <= 0.0 {
        return None;
    }
    let pv = lanegraph_vk::ParticleView {
        xs: &view.xs[..n],
        ys: &view.ys[..n],
        center: view.center,
        half_extent: view.half_extent,
        radius: view.radius,
        color: view.color,
    };
    let rb = renderer.capture(&pv).ok()?;
    let mut out = Vec::new();
    rb.encode_png(&mut out).ok()?;
    Some(out)
}

#[cfg(not(feature = "vulkan"))]
fn capture(_inner: &mut Inner, _view: &RenderView) -> Option<Vec<u8>> {
    None
}
