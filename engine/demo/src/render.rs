//! The demo's picture: its view ([`ParticleFrame`]) and the pass that draws it
//! ([`ParticleRenderer`]: Vulkan through `lanegraph::vk`, a cull compute pass and instanced
//! particles into an offscreen target, timed by the GPU profiler).
//!
//! Owns: what the demo draws and how, the Vulkan device it brings up (or why it has none),
//! and the CPU copies of its textures (needed to upload them again when a resolution change
//! rebuilds the renderer), up to [`TEXTURE_CPU_BUDGET_BYTES`]. Must never: block the owner (it
//! runs on the render lane), or stop the game over a GPU error (the pass reports it and goes
//! on without the GPU).

use crate::gpu;
use lanegraph::runtime::{
    DecodedImage, DrawOutput, GpuFrame, GpuHeap, GpuMemoryFigures, PresentFigures, RenderDevice,
    RenderPass, RenderSettings,
};
use lanegraph::vk;
use lanegraph::world::{Domain, DomainSet, World};

use crate::world::{Position, ARENA};

/// The world domains the view reads: it is derived again only when one of them changed.
pub const VIEW_DOMAINS: DomainSet = DomainSet::of(Domain::TRANSFORM).with(Domain::STRUCTURE);

/// Derives the view: every particle's position, the whole arena.
pub fn derive_view(w: &World, v: &mut ParticleFrame) {
    v.xs.clear();
    v.ys.clear();
    if let Ok(Some(cols)) = w.soa_columns::<Position>() {
        if let (Ok(x), Ok(y)) = (cols.table().field("x"), cols.table().field("y")) {
            v.xs.extend_from_slice(x);
            v.ys.extend_from_slice(y);
        }
    }
    v.center = [0.0, 0.0];
    v.half_extent = [ARENA, ARENA];
    v.radius = ARENA / 256.0;
    v.color = [0.35, 0.75, 1.0, 1.0];
}

/// What the demo draws in one frame: every particle's position and the camera.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParticleFrame {
    /// X of every instance (world units).
    pub xs: Vec<f32>,
    /// Y of every instance; same length as `xs`.
    pub ys: Vec<f32>,
    /// World point at the centre of the picture.
    pub center: [f32; 2],
    /// World half width and half height shown (> 0).
    pub half_extent: [f32; 2],
    /// Instance radius, world units (> 0).
    pub radius: f32,
    /// Instance colour, linear RGBA.
    pub color: [f32; 4],
}

impl ParticleFrame {
    /// Instances in the view.
    pub fn len(&self) -> usize {
        self.xs.len()
    }

    /// Whether the view draws nothing.
    pub fn is_empty(&self) -> bool {
        self.xs.is_empty()
    }

    /// The first `n` instances as the Vulkan renderer's input; `None` when there is nothing
    /// to draw (an empty world, or a view the game left unset).
    fn as_vk(&self, n: usize) -> Option<gpu::ParticleView<'_>> {
        let n = n.min(self.len());
        if n == 0 || self.half_extent[0] <= 0.0 || self.half_extent[1] <= 0.0 || self.radius <= 0.0
        {
            return None;
        }
        Some(gpu::ParticleView {
            xs: &self.xs[..n],
            ys: &self.ys[..n],
            center: self.center,
            half_extent: self.half_extent,
            radius: self.radius,
            color: self.color,
        })
    }
}

/// The window side of the pass: its swapchain and what the window says of its size.
struct Presenter {
    swapchain: vk::Swapchain,
    state: std::sync::Arc<lanegraph::window::SurfaceState>,
    /// The window's resize count last acted on.
    seen_resizes: u64,
    /// Views not drawn because the window was minimised.
    skipped_minimised: u64,
    /// The display's refresh period, ns (0: unknown).
    refresh_ns: u64,
    /// Pass the window's resize events on to the swapchain (test seam: off, only the driver's
    /// `OUT_OF_DATE` / `SUBOPTIMAL` results rebuild it).
    resize_hints: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// The monitor's reading as the runtime takes it (buffers reused: no allocation once grown).
fn fill_memory(r: &vk::GpuMemoryReport, g: &mut GpuMemoryFigures) {
    g.reading += 1;
    g.source = r.source.name();
    g.heaps.clear();
    g.heaps.extend(r.heaps.iter().map(|h| GpuHeap {
        heap: h.heap,
        device_local: h.device_local,
        usage: h.usage,
        budget: h.budget,
    }));
    g.live_bytes = r.live_bytes;
    g.events = r.events;
    g.by_name.clear();
    g.by_name.extend_from_slice(&r.by_name);
    // The pressure signal: the fullest heap with the driver's figures, else the live bytes
    // against the device-local heaps (the report's own rule, as bytes).
    let fullest = r
        .heaps
        .iter()
        .filter(|h| h.budget > 0 && h.usage.is_some())
        .max_by(|a, b| {
            let f = |h: &&vk::HeapUsage| h.usage.unwrap_or(0) as f64 / h.budget as f64;
            f(a).total_cmp(&f(b))
        });
    (g.used_bytes, g.budget_bytes) = match fullest {
        Some(h) => (h.usage.unwrap_or(0), h.budget),
        None => (
            r.live_bytes,
            r.heaps
                .iter()
                .filter(|h| h.device_local)
                .map(|h| h.budget)
                .sum(),
        ),
    };
}

/// Target size of the demo's picture at resolution scale 1, pixels.
pub const TARGET_SIZE: (u32, u32) = (512, 512);

/// Instances the renderer has room for.
pub const CAPACITY: u32 = 1 << 18;

/// CPU copies of textures kept for re-upload after a resolution change, bytes at most; a
/// texture beyond it is uploaded once and, after a rebuild, reported lost.
pub const TEXTURE_CPU_BUDGET_BYTES: usize = 64 << 20;

/// The demo's render pass: the Vulkan particle renderer when a device came up, or nothing
/// (with the reason) when none did.
pub struct ParticleRenderer {
    device: RenderDevice,
    /// The window's swapchain, when the demo runs in a window. Before `gpu`: it goes first.
    present: Option<Presenter>,
    /// Renderer first: a tuple drops in field order, and lanegraph-vk's passes hold a bare
    /// `ash::Device` (not the device's `Arc`), so the renderer must go before the `Gpu`.
    gpu: Option<(gpu::Renderer, vk::Gpu)>,
    scale: f32,
    textures: Vec<DecodedImage>,
    texture_bytes: usize,
    textures_dropped: u64,
    /// The GPU memory monitor's last reading (buffers reused), and draws since the first.
    memory: vk::GpuMemoryReport,
    draws: u64,
    /// The GPU was lost: the next draw withdraws its GPU figures (memory pressure, present).
    lost: bool,
}

/// Draws between two GPU memory readings (each is a driver query).
pub const MEMORY_READ_EVERY: u64 = 30;

impl std::fmt::Debug for ParticleRenderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParticleRenderer")
            .field("device", &self.device)
            .finish_non_exhaustive()
    }
}

fn renderer_config(size: (u32, u32)) -> gpu::RendererConfig {
    gpu::RendererConfig {
        width: size.0.max(8),
        height: size.1.max(8),
        capacity: CAPACITY,
        frames_in_flight: lanegraph::budget::GPU_READ_LAG_FRAMES as u32,
        clear: [0.02, 0.02, 0.05, 1.0],
    }
}

impl ParticleRenderer {
    /// Brings up Vulkan when `want` (with validation layers when `validation`); otherwise, or
    /// when that fails, a pass that draws nothing and says why.
    pub fn new(want: bool, validation: bool) -> ParticleRenderer {
        if !want {
            return ParticleRenderer::without_gpu("disabled (--no-gpu or `vulkan = false`)".into());
        }
        let cfg = vk::GpuConfig {
            validation,
            ..Default::default()
        };
        let made = vk::Gpu::new(&cfg).and_then(|gpu| {
            let r = gpu::Renderer::new(&gpu, renderer_config(TARGET_SIZE))?;
            Ok((r, gpu))
        });
        match made {
            Ok((r, gpu)) => ParticleRenderer::with(Some((r, gpu)), None),
            Err(e) => ParticleRenderer::without_gpu(e.to_string()),
        }
    }

    /// As [`new`](Self::new), presenting every drawn frame to `window` (the demo's `--window`)
    /// in `mode`. Fails (rather than falling back to headless) when the device cannot present:
    /// the player asked for a window.
    pub fn windowed(
        window: std::sync::Arc<lanegraph::window::winit::window::Window>,
        state: std::sync::Arc<lanegraph::window::SurfaceState>,
        mode: vk::PresentMode,
        validation: bool,
    ) -> Result<ParticleRenderer, vk::GpuError> {
        let cfg = vk::GpuConfig {
            validation,
            ..Default::default()
        };
        let (gpu, surface) = vk::Gpu::with_window(&cfg, window.clone())?;
        let refresh_ns = window
            .current_monitor()
            .and_then(|m| m.refresh_rate_millihertz())
            .filter(|&mhz| mhz > 0)
            .map_or(0, |mhz| 1_000_000_000_000 / u64::from(mhz));
        let rc = renderer_config(TARGET_SIZE);
        let renderer = gpu::Renderer::new(&gpu, rc)?;
        let swapchain = vk::Swapchain::new(
            surface,
            vk::SwapchainConfig {
                mode,
                frames_in_flight: rc.frames_in_flight,
                extent: state.size(),
            },
        )?;
        Ok(ParticleRenderer::with(
            Some((renderer, gpu)),
            Some(Presenter {
                swapchain,
                seen_resizes: state.resizes(),
                state,
                skipped_minimised: 0,
                refresh_ns,
                resize_hints: std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true)),
            }),
        ))
    }

    /// Test seam: a switch that, cleared, stops passing the window's resize events to the
    /// swapchain, so that only the driver's `OUT_OF_DATE` / `SUBOPTIMAL` rebuild it (`None`
    /// headless).
    #[doc(hidden)]
    pub fn resize_hints_switch(&self) -> Option<std::sync::Arc<std::sync::atomic::AtomicBool>> {
        self.present.as_ref().map(|p| p.resize_hints.clone())
    }

    fn without_gpu(why: String) -> ParticleRenderer {
        let mut r = ParticleRenderer::with(None, None);
        r.device.unavailable = Some(why);
        r
    }

    /// A pass on `gpu` (its device named), presenting through `present` when given.
    fn with(gpu: Option<(gpu::Renderer, vk::Gpu)>, present: Option<Presenter>) -> Self {
        ParticleRenderer {
            device: RenderDevice {
                name: gpu.as_ref().map(|(_, g)| g.info().name.clone()),
                unavailable: None,
                validation_messages: None,
            },
            present,
            gpu,
            scale: 1.0,
            textures: Vec::new(),
            texture_bytes: 0,
            textures_dropped: 0,
            memory: vk::GpuMemoryReport::default(),
            draws: 0,
            lost: false,
        }
    }

    /// Test seam: the next draw's GPU submit fails, as an out-of-memory or lost device's does.
    #[doc(hidden)]
    pub fn fail_next_submit(&mut self) {
        if let Some((renderer, _)) = self.gpu.as_mut() {
            renderer.fail_next_submit();
        }
    }

    /// Textures whose CPU copy did not fit [`TEXTURE_CPU_BUDGET_BYTES`].
    pub fn textures_dropped(&self) -> u64 {
        self.textures_dropped
    }

    /// A resolution change rebuilds the target (cold path: only on a strategy switch) and
    /// uploads the kept textures again.
    fn resize(&mut self, scale: f32) -> Result<(), String> {
        let Some((renderer, device)) = self.gpu.as_mut() else {
            return Ok(());
        };
        let size = (
            (TARGET_SIZE.0 as f32 * scale) as u32,
            (TARGET_SIZE.1 as f32 * scale) as u32,
        );
        let r = gpu::Renderer::new(device, renderer_config(size))
            .map_err(|e| format!("resize: {e}"))?;
        *renderer = r;
        self.scale = scale;
        for img in &self.textures {
            renderer
                .upload_texture(img.width, img.height, &img.rgba)
                .map_err(|e| format!("texture `{}`: {e}", img.path.display()))?;
        }
        Ok(())
    }

    /// Gives up the GPU after an error, saying why.
    fn lose_gpu(&mut self, e: &str) {
        self.present = None;
        self.lost = true;
        let name = self.device.name.take().unwrap_or_else(|| "the GPU".into());
        self.device.unavailable = Some(format!("{name} lost during the run: {e}"));
        self.gpu = None;
    }
}

impl RenderPass<ParticleFrame> for ParticleRenderer {
    fn draw(
        &mut self,
        view: &ParticleFrame,
        settings: &RenderSettings,
        out: &mut DrawOutput,
    ) -> Result<(), String> {
        let cap = ((view.len() as f32) * settings.instance_fraction).ceil() as usize;
        out.instances = cap.min(view.len()) as u64;
        if std::mem::take(&mut self.lost) {
            // Readings of a device that is gone must not keep steering the controller.
            out.gpu_memory = None;
            out.present = None;
        }
        if self.gpu.is_none() {
            return Ok(());
        }
        if (settings.resolution_scale - self.scale).abs() > f32::EPSILON {
            self.resize(settings.resolution_scale)?;
        }
        let Some((renderer, _)) = self.gpu.as_mut() else {
            return Ok(());
        };
        // Applied every frame: a resize above builds a new renderer with the default (cull on).
        renderer.set_cull(settings.gpu_cull);
        let n = (out.instances as usize).min(renderer.config().capacity as usize);
        let Some(pv) = view.as_vk(n) else {
            return Ok(());
        };
        let present = match self.present.as_mut() {
            Some(p) => {
                let resizes = p.state.resizes();
                if resizes != p.seen_resizes
                    && p.resize_hints.load(std::sync::atomic::Ordering::Relaxed)
                {
                    p.seen_resizes = resizes;
                    let (w, h) = p.state.size();
                    p.swapchain.resized(w, h);
                }
                if p.state.minimised() {
                    // Nothing to show: no GPU frame at all (the window presents nothing and
                    // the lane does not spin: it waits for the next view like any other).
                    p.skipped_minimised += 1;
                    if let Some(f) = out.present.as_mut() {
                        f.skipped_minimised += 1;
                    }
                    return Ok(());
                }
                Some(&mut p.swapchain)
            }
            None => None,
        };
        // The profiler carries the engine frame back with the timings it reads frames later.
        renderer.tag_frames(out.frame);
        if let Err(e) = renderer.render_to(&pv, present) {
            let e = e.to_string();
            self.lose_gpu(&e);
            return Err(e);
        }
        if self.draws % MEMORY_READ_EVERY == 0 {
            renderer.gpu().memory_report_into(&mut self.memory);
            fill_memory(
                &self.memory,
                out.gpu_memory.get_or_insert_with(Default::default),
            );
        }
        self.draws += 1;
        if let Some(p) = &self.present {
            let st = p.swapchain.stats();
            out.present = Some(PresentFigures {
                presented: st.presented,
                skipped_minimised: st.skipped_minimised + p.skipped_minimised,
                recreated: st.recreated,
                stale_results: st.out_of_date + st.suboptimal,
                acquire_wait_ns: st.last_acquire_wait_ns,
                interval_ns: st.last_interval_ns,
                frames_in_flight: renderer.frames_in_flight_now(),
                extent: st.extent,
                mode: st.mode.name(),
                refresh_ns: p.refresh_ns,
                acquire_mono_ns: (
                    st.last_acquire_start_ns,
                    st.last_acquire_start_ns + st.last_acquire_wait_ns,
                ),
                present_mono_ns: (st.last_present_start_ns, st.last_present_ns),
            });
        }
        if let Some(p) = renderer.profiler() {
            if let Some(t) = p.latest() {
                // Tagged with the engine frame whose draw it measured.
                let g = out.gpu.get_or_insert_with(GpuFrame::default);
                if g.frame != t.tag || g.passes.is_empty() {
                    g.frame = t.tag;
                    g.total_ms = t.total_ns / 1e6;
                    for (i, pt) in t.passes().iter().enumerate() {
                        g.set_pass(
                            i,
                            p.pass_name(pt.pass),
                            pt.raw_ns / 1e6,
                            pt.ema_ns / 1e6,
                            (pt.begin_cpu_ns, pt.end_cpu_ns),
                        );
                    }
                    g.passes.truncate(t.passes().len());
                }
            }
        }
        Ok(())
    }

    fn upload(&mut self, image: &DecodedImage) -> Result<bool, String> {
        let Some((renderer, _)) = self.gpu.as_mut() else {
            return Ok(false);
        };
        renderer
            .upload_texture(image.width, image.height, &image.rgba)
            .map_err(|e| e.to_string())?;
        if self.texture_bytes + image.rgba.len() <= TEXTURE_CPU_BUDGET_BYTES {
            self.texture_bytes += image.rgba.len();
            self.textures.push(image.clone());
        } else {
            self.textures_dropped += 1;
        }
        Ok(true)
    }

    fn capture_png(&mut self, view: &ParticleFrame) -> Option<Vec<u8>> {
        let (renderer, _) = self.gpu.as_mut()?;
        let n = view.len().min(renderer.config().capacity as usize);
        let pv = view.as_vk(n)?;
        let rb = renderer.capture(&pv).ok()?;
        let mut out = Vec::new();
        rb.encode_png(&mut out).ok()?;
        Some(out)
    }

    fn device(&self) -> RenderDevice {
        let mut d = self.device.clone();
        if let Some((_, gpu)) = &self.gpu {
            d.validation_messages = gpu
                .validation_enabled()
                .then(|| gpu.validation_counts().total());
        }
        d
    }
}
