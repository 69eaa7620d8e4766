//! The headless renderer: the frame's particles culled on the GPU, drawn into an offscreen
//! target, timed pass by pass, read back to PNG on request.
//!
//! Owns: per-slot resources (upload columns, visible list, indirect args, colour target,
//! readback buffer), the frame's command recording, and wiring the profiler around the passes.
//! Must never: wait on the GPU inside [`Renderer::render`] except in the ring's wait for a free
//! slot, allocate per frame (readback frames excepted), or transpose the SoA input.
//!
//! # One frame (`render`)
//! 1. [`FrameRing::begin`]: wait for slot `n % F` (the only wait), open its command buffer.
//! 2. Harvest a readback that slot's previous frame made, if any (its fence was just waited).
//! 3. [`GpuProfiler::collect`]: read frame `n - 2`'s timestamps if its fence says done.
//! 4. Copy the `xs` and `ys` columns into the slot's mapped upload buffer (two `memcpy`s).
//! 5. Record: profiler frame begin; pass `cull` (compute), or with culling switched off
//!    ([`Renderer::set_cull`]) a copy of the identity index list and a CPU-written instance count
//!    (every particle drawn, the rasteriser clips what is off screen); pass `draw` (render
//!    pass); pass `readback` when requested (target -> buffer copy); profiler frame end.
//! 6. [`FrameRing::submit`] with the slot's fence.
//!
//! Presenting ([`Renderer::render_to`] with a swapchain): right after step 1 the swapchain
//! acquires an image for the slot (none while the window is minimised); step 5 ends with pass
//! `present`, the target blitted into that image; step 6 waits on the acquire and signals the
//! present, which follows the submit.

use ash::vk;
use gpu_allocator::MemoryLocation;

use super::passes::cull::CullPass;
use super::passes::particles::{ParticlePass, COLOR_FORMAT};
use super::passes::{PassLayout, ViewParams};
use lanegraph::vk::memory::{GpuBuffer, GpuImage};
use lanegraph::vk::Gpu;
use lanegraph::vk::GpuError;
use lanegraph::vk::Readback;
use lanegraph::vk::{AcquiredImage, Swapchain};
use lanegraph::vk::{FrameRing, Recording};
use lanegraph::vk::{GpuProfiler, PassId};
use lanegraph::vk::{TextureId, TextureStore};

/// Offset alignment of the `ys` column inside the upload buffer: 256 bytes, the largest
/// `minStorageBufferOffsetAlignment` the Vulkan spec allows, so it is valid on every device.
const COLUMN_ALIGN: u64 = 256;

/// How the renderer is built.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RendererConfig {
    /// Target width in pixels.
    pub width: u32,
    /// Target height in pixels.
    pub height: u32,
    /// Most particles a frame may hold (sizes the per-slot buffers).
    pub capacity: u32,
    /// Frames in flight, 2 or 3.
    pub frames_in_flight: u32,
    /// Background colour, linear RGBA.
    pub clear: [f32; 4],
}

impl Default for RendererConfig {
    fn default() -> Self {
        RendererConfig {
            width: 256,
            height: 256,
            capacity: 1 << 16,
            frames_in_flight: 2,
            clear: [0.0, 0.0, 0.0, 1.0],
        }
    }
}

/// What one frame draws: SoA position columns straight from the World, and the view.
#[derive(Debug, Clone, Copy)]
pub struct ParticleView<'a> {
    /// X of every particle (world units).
    pub xs: &'a [f32],
    /// Y of every particle (world units, up); same length as `xs`.
    pub ys: &'a [f32],
    /// World point at the target's centre.
    pub center: [f32; 2],
    /// World half width / half height the target shows (> 0).
    pub half_extent: [f32; 2],
    /// Particle radius, world units (> 0).
    pub radius: f32,
    /// Particle colour, linear RGBA 0..=1.
    pub color: [f32; 4],
}

/// What [`Renderer::render`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameReport {
    /// The frame just submitted.
    pub frame: u64,
    /// How long the render lane waited for a free slot, ns (0 when the GPU kept up).
    pub wait_ns: u64,
    /// The frame whose GPU timings were read now (`frame - 2`), if they were.
    pub gpu_frame_read: Option<u64>,
    /// The frame was presented to a window.
    pub presented: bool,
}

struct SlotResources {
    upload: GpuBuffer,
    visible: GpuBuffer,
    indirect: GpuBuffer,
    target: GpuImage,
    framebuffer: vk::Framebuffer,
    readback: GpuBuffer,
    readback_frame: Option<u64>,
}

/// The names the renderer registers its passes under.
pub const PASS_NAMES: [&str; 4] = ["cull", "draw", "readback", "present"];

/// The headless renderer (see the module docs for one frame).
pub struct Renderer {
    // Drop order matters: `Drop for Renderer` finishes the ring first, then destroys the
    // framebuffers; fields then drop in declaration order (ring, profiler, resources, passes,
    // layout).
    ring: FrameRing,
    profiler: Option<GpuProfiler>,
    profiler_unavailable: Option<GpuError>,
    slots: Vec<SlotResources>,
    /// `0, 1, .., capacity - 1` as `u32`: the visible list when culling is off.
    identity: GpuBuffer,
    textures: TextureStore,
    cull_enabled: bool,
    /// The profiler tag of the frames recorded next ([`Self::tag_frames`]; 0: untagged).
    frame_tag: u64,
    particles: ParticlePass,
    cull: CullPass,
    layout: PassLayout,
    pass_ids: [Option<PassId>; 4],
    config: RendererConfig,
    ys_offset: u64,
    readback_requested: bool,
    readback: Option<Readback>,
}

impl Renderer {
    /// Builds pipelines and per-slot resources for `config` on `gpu`. When the queue writes
    /// no timestamps the renderer still works and [`profiler_unavailable`](Self::profiler_unavailable)
    /// says why.
    pub fn new(gpu: &Gpu, config: RendererConfig) -> Result<Renderer, GpuError> {
        if config.capacity == 0 {
            return Err(GpuError::BadInput {
                what: "capacity",
                why: "0 particles: give the most particles a frame may hold".into(),
            });
        }
        if config.width == 0 || config.height == 0 {
            return Err(GpuError::BadInput {
                what: "RendererConfig",
                why: format!(
                    "a {}x{} target: both sides must be at least 1 pixel",
                    config.width, config.height
                ),
            });
        }
        let extent = vk::Extent2D {
            width: config.width,
            height: config.height,
        };
        let ring = FrameRing::new(gpu, config.frames_in_flight)?;
        let (mut profiler, profiler_unavailable) =
            match GpuProfiler::new(gpu, config.frames_in_flight) {
                Ok(p) => (Some(p), None),
                Err(e @ GpuError::NoTimestamps { .. }) => {
                    tracing::warn!(error = %e, "GPU profiler unavailable");
                    (None, Some(e))
                }
                Err(e) => return Err(e),
            };
        let mut pass_ids = [None; 4];
        if let Some(p) = profiler.as_mut() {
            for (id, name) in pass_ids.iter_mut().zip(PASS_NAMES) {
                *id = Some(p.register_pass(name)?);
            }
        }
        let layout = PassLayout::new(gpu, config.frames_in_flight)?;
        let cull = CullPass::new(gpu, &layout)?;
        let particles = ParticlePass::new(gpu, &layout, extent)?;
        let column = u64::from(config.capacity) * 4;
        let ys_offset = column.div_ceil(COLUMN_ALIGN) * COLUMN_ALIGN;
        let mut identity = GpuBuffer::new(
            gpu,
            "identity indices",
            column,
            vk::BufferUsageFlags::TRANSFER_SRC,
            MemoryLocation::CpuToGpu,
        )?;
        let Some(ids) = identity.mapped_mut() else {
            return Err(lanegraph::vk::error::unmapped());
        };
        for (i, d) in ids.chunks_exact_mut(4).enumerate() {
            d.copy_from_slice(&(i as u32).to_ne_bytes());
        }
        let mut me = Renderer {
            ring,
            profiler,
            profiler_unavailable,
            slots: Vec::with_capacity(config.frames_in_flight as usize),
            identity,
            textures: TextureStore::new(config.frames_in_flight as usize),
            cull_enabled: true,
            frame_tag: 0,
            particles,
            cull,
            layout,
            pass_ids,
            config,
            ys_offset,
            readback_requested: false,
            readback: None,
        };
        for slot in 0..config.frames_in_flight as usize {
            let upload = GpuBuffer::new(
                gpu,
                "particle columns",
                ys_offset + column,
                vk::BufferUsageFlags::STORAGE_BUFFER,
                MemoryLocation::CpuToGpu,
            )?;
            let visible = GpuBuffer::new(
                gpu,
                "visible indices",
                column,
                vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST,
                MemoryLocation::GpuOnly,
            )?;
            let indirect = GpuBuffer::new(
                gpu,
                "indirect draw",
                16,
                vk::BufferUsageFlags::STORAGE_BUFFER
                    | vk::BufferUsageFlags::INDIRECT_BUFFER
                    | vk::BufferUsageFlags::TRANSFER_DST,
                MemoryLocation::GpuOnly,
            )?;
            let target = GpuImage::new_color(
                gpu,
                "colour target",
                extent,
                COLOR_FORMAT,
                vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
            )?;
            let readback = GpuBuffer::new(
                gpu,
                "readback",
                u64::from(config.width) * u64::from(config.height) * 4,
                vk::BufferUsageFlags::TRANSFER_DST,
                MemoryLocation::GpuToCpu,
            )?;
            if upload.mapped().is_none() || readback.mapped().is_none() {
                return Err(lanegraph::vk::error::unmapped());
            }
            me.layout.write_set(
                slot,
                [
                    (upload.raw(), 0, column),
                    (upload.raw(), ys_offset, column),
                    (visible.raw(), 0, column),
                    (indirect.raw(), 0, 16),
                ],
            );
            let framebuffer = me.particles.framebuffer(&target)?;
            me.slots.push(SlotResources {
                upload,
                visible,
                indirect,
                target,
                framebuffer,
                readback,
                readback_frame: None,
            });
        }
        Ok(me)
    }

    /// Queues an RGBA8 image (row-major, `width * height * 4` bytes) for upload to a
    /// device-local GPU image. The copy is recorded into the next frame's command buffer (no
    /// wait, no extra submission); the texture is resident once that frame completes. Errors:
    /// [`GpuError::BadInput`] for an empty image, a side over
    /// [`MAX_TEXTURE_SIDE`](lanegraph::vk::MAX_TEXTURE_SIDE) or a wrong pixel count; a driver
    /// or allocator error.
    pub fn upload_texture(
        &mut self,
        width: u32,
        height: u32,
        rgba: &[u8],
    ) -> Result<TextureId, GpuError> {
        self.textures.queue(self.ring.gpu(), width, height, rgba)
    }

    /// The renderer's textures (counts, residency, bytes uploaded).
    pub fn textures(&self) -> &TextureStore {
        &self.textures
    }

    /// Copies texture `id` back from the GPU (blocking: tests and tools, never per frame). Any
    /// queued uploads are recorded first, so a texture just queued reads back too. Errors: an
    /// unknown texture id, or a driver error.
    pub fn read_texture(&mut self, id: TextureId) -> Result<Readback, GpuError> {
        let Some(extent) = self.textures.extent(id) else {
            return Err(GpuError::BadInput {
                what: "texture",
                why: format!("no texture {}: use an id from upload_texture", id.0),
            });
        };
        let len = u64::from(extent.width) * u64::from(extent.height) * 4;
        let gpu = self.ring.gpu().clone();
        let dst = GpuBuffer::new(
            &gpu,
            "texture readback",
            len,
            vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuToCpu,
        )?;
        let rec = self.ring.begin()?;
        let slot = rec.slot() as usize;
        self.harvest(slot);
        if let Some(p) = self.profiler.as_mut() {
            let ring = &self.ring;
            p.collect(rec.frame(), |s| ring.is_complete(s))?;
            p.begin_frame(&rec);
        }
        self.textures.record_uploads(&gpu, &rec, slot)?;
        self.textures.record_read(&gpu, &rec, id, &dst)?;
        if let Some(p) = self.profiler.as_mut() {
            p.end_frame(&rec);
        }
        let frame = rec.frame();
        self.ring.submit(rec)?;
        self.ring.finish()?;
        let rgba = dst
            .mapped()
            .map(|b| b[..len as usize].to_vec())
            .ok_or_else(lanegraph::vk::error::unmapped)?;
        Ok(Readback {
            frame,
            width: extent.width,
            height: extent.height,
            rgba,
        })
    }

    /// Switches the GPU cull pass on (the default) or off, from the next frame recorded. Off,
    /// the frame skips the compute dispatch and draws every particle: cheaper when most are on
    /// screen or the GPU's compute is the bottleneck, dearer when most are off screen (the
    /// rasteriser still clips them, so the picture is the same). The budget controller's render
    /// agent uses it as a strategy.
    pub fn set_cull(&mut self, on: bool) {
        self.cull_enabled = on;
    }

    /// Tags the frames recorded from now on with `tag` in the profiler (the engine frame they
    /// render): their timings come back with it (`FrameTimings::tag`), frames later.
    pub fn tag_frames(&mut self, tag: u64) {
        self.frame_tag = tag;
    }

    /// Whether the cull pass runs.
    pub fn cull_enabled(&self) -> bool {
        self.cull_enabled
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        self.ring.gpu()
    }

    /// The configuration.
    pub fn config(&self) -> &RendererConfig {
        &self.config
    }

    /// The profiler (`None` when the queue writes no timestamps).
    pub fn profiler(&self) -> Option<&GpuProfiler> {
        self.profiler.as_ref()
    }

    /// The profiler, mutable (to recalibrate, or to register passes of your own).
    pub fn profiler_mut(&mut self) -> Option<&mut GpuProfiler> {
        self.profiler.as_mut()
    }

    /// Why there is no profiler, when there is none.
    pub fn profiler_unavailable(&self) -> Option<&GpuError> {
        self.profiler_unavailable.as_ref()
    }

    /// The profiler ids of `cull`, `draw`, `readback`, `present` (`None` without a profiler).
    pub fn pass_ids(&self) -> [Option<PassId>; 4] {
        self.pass_ids
    }

    /// Asks for the next rendered frame to be copied back; collect it with
    /// [`take_readback`](Self::take_readback) once that frame's slot comes round again or after
    /// [`finish`](Self::finish).
    pub fn request_readback(&mut self) {
        self.readback_requested = true;
    }

    /// The latest harvested readback, if one is ready.
    pub fn take_readback(&mut self) -> Option<Readback> {
        self.readback.take()
    }

    /// Renders one frame (see the module docs). Errors: [`GpuError::BadInput`] for columns of
    /// different lengths, more particles than the capacity, or a degenerate view; a call
    /// error (device lost, out of memory) from the driver.
    pub fn render(&mut self, view: &ParticleView<'_>) -> Result<FrameReport, GpuError> {
        self.render_to(view, None)
    }

    /// As [`render`](Self::render), and then, when `present` is given and the window has an
    /// area, the picture is copied into a swapchain image (pass `present`, timed like the
    /// others) and presented. The swapchain must have been made for this renderer's frames in
    /// flight.
    pub fn render_to(
        &mut self,
        view: &ParticleView<'_>,
        present: Option<&mut Swapchain>,
    ) -> Result<FrameReport, GpuError> {
        let params = self.validate(view)?;
        let rec = self.ring.begin()?;
        let slot = rec.slot() as usize;
        // After the ring waited for this slot: the acquire reuses the slot's semaphore.
        let (mut present, acquired) = match present {
            Some(sc) => match sc.acquire(rec.slot()) {
                Ok(img) => (Some(sc), img),
                Err(e) => {
                    // The slot's buffer is open: close it with an empty submit so the ring
                    // stays consistent, then report the acquire's error (a submit error is
                    // logged: the acquire's says what went wrong first).
                    if let Err(s) = self.ring.submit(rec) {
                        tracing::warn!(error = %s, "closing the frame after a failed acquire");
                    }
                    return Err(e);
                }
            },
            None => (None, None),
        };
        let recorded = self.record_frame(&rec, slot, view, &params, present.as_deref(), acquired);
        let gpu_frame_read = match recorded {
            Ok(read) => read,
            Err(e) => {
                if let (Some(sc), Some(img)) = (present.as_deref_mut(), acquired.as_ref()) {
                    sc.abandon(img, false);
                }
                return Err(e);
            }
        };
        let report = FrameReport {
            frame: rec.frame(),
            wait_ns: self.ring.last_wait_ns(),
            gpu_frame_read,
            presented: acquired.is_some(),
        };
        match (present, acquired) {
            (Some(sc), Some(img)) => {
                let submitted = self.ring.submit_with(
                    rec,
                    Some((img.wait, vk::PipelineStageFlags::TRANSFER)),
                    Some(img.signal),
                );
                if let Err(e) = submitted {
                    // Nothing waits on the acquire semaphore now: give the image up.
                    sc.abandon(&img, false);
                    return Err(e);
                }
                // A present that fails to queue abandons its image itself.
                sc.present(&img)?;
            }
            _ => self.ring.submit(rec)?,
        }
        Ok(report)
    }

    /// Steps 2-5 of one frame: harvest, read the profiler, upload, record the passes (and the
    /// copy into the acquired image). Returns the frame whose GPU timings were read.
    fn record_frame(
        &mut self,
        rec: &Recording,
        slot: usize,
        view: &ParticleView<'_>,
        params: &ViewParams,
        present: Option<&Swapchain>,
        acquired: Option<AcquiredImage>,
    ) -> Result<Option<u64>, GpuError> {
        self.harvest(slot);
        let gpu_frame_read = match self.profiler.as_mut() {
            Some(p) => {
                let ring = &self.ring;
                let read = p.collect(rec.frame(), |s| ring.is_complete(s))?;
                read.map(|t| t.frame)
            }
            None => None,
        };
        self.upload(slot, view);
        self.textures.record_uploads(self.ring.gpu(), rec, slot)?;
        self.record(rec, slot, params, present.zip(acquired.as_ref()))?;
        Ok(gpu_frame_read)
    }

    /// GPU frames submitted and not finished, now (polls the fences, never waits).
    pub fn frames_in_flight_now(&self) -> u32 {
        self.ring.in_flight_now()
    }

    /// Test seam: the next frame's submit fails (see `FrameRing::fail_next_submit`).
    #[doc(hidden)]
    pub fn fail_next_submit(&mut self) {
        self.ring.fail_next_submit();
    }

    /// Waits for every frame in flight and harvests pending readbacks (shutdown, tests, the
    /// demo's picture; never per frame).
    pub fn finish(&mut self) -> Result<(), GpuError> {
        self.ring.finish()?;
        for slot in 0..self.slots.len() {
            self.harvest(slot);
        }
        Ok(())
    }

    /// Renders `view`, waits for it, and returns its pixels (blocking: for the demo and tests).
    pub fn capture(&mut self, view: &ParticleView<'_>) -> Result<Readback, GpuError> {
        self.request_readback();
        let frame = self.render(view)?.frame;
        self.finish()?;
        match self.take_readback() {
            Some(r) if r.frame == frame => Ok(r),
            _ => Err(GpuError::BadInput {
                what: "readback",
                why: format!("frame {frame} was rendered but its pixels did not come back"),
            }),
        }
    }

    fn validate(&self, v: &ParticleView<'_>) -> Result<ViewParams, GpuError> {
        let bad = |what, why: String| Err(GpuError::BadInput { what, why });
        if v.xs.len() != v.ys.len() {
            return bad(
                "ParticleView",
                format!(
                    "xs has {} values, ys {}: pass equal columns",
                    v.xs.len(),
                    v.ys.len()
                ),
            );
        }
        if v.xs.len() > self.config.capacity as usize {
            return bad(
                "ParticleView",
                format!(
                    "{} particles exceed the capacity {}: raise RendererConfig::capacity",
                    v.xs.len(),
                    self.config.capacity
                ),
            );
        }
        let positive = |x: f32| x.is_finite() && x > 0.0;
        if !(positive(v.half_extent[0]) && positive(v.half_extent[1]) && positive(v.radius)) {
            return bad(
                "ParticleView",
                format!(
                    "half_extent {:?} and radius {} must be finite and > 0",
                    v.half_extent, v.radius
                ),
            );
        }
        Ok(ViewParams {
            color: v.color,
            center: v.center,
            half_extent: v.half_extent,
            radius: v.radius,
            count: v.xs.len() as u32,
            _pad: [0; 2],
        })
    }

    fn upload(&mut self, slot: usize, view: &ParticleView<'_>) {
        let ys_offset = self.ys_offset as usize;
        let Some(bytes) = self.slots[slot].upload.mapped_mut() else {
            return;
        };
        let (xs_dst, rest) = bytes.split_at_mut(ys_offset);
        copy_column(view.xs, xs_dst);
        copy_column(view.ys, rest);
    }

    fn record(
        &mut self,
        rec: &Recording,
        slot: usize,
        params: &ViewParams,
        present: Option<(&Swapchain, &AcquiredImage)>,
    ) -> Result<(), GpuError> {
        // The copy's error, returned after the profiler's frame is closed.
        let mut result = Ok(());
        let [cull_id, draw_id, readback_id, _] = self.pass_ids;
        let s = &mut self.slots[slot];
        let set = self.layout.sets[slot];
        let mut prof = self.profiler.as_mut();
        if let Some(p) = prof.as_deref_mut() {
            p.begin_frame(rec);
            p.tag_frame(rec, self.frame_tag);
        }
        if self.cull_enabled {
            let t = begin(&mut prof, rec, cull_id);
            self.cull
                .record(rec, &self.layout, set, s.indirect.raw(), params);
            end(&mut prof, rec, t);
        } else {
            record_draw_all(
                self.ring.gpu(),
                rec,
                self.identity.raw(),
                s.visible.raw(),
                s.indirect.raw(),
                params.count,
            );
        }
        let t = begin(&mut prof, rec, draw_id);
        self.particles.record(
            rec,
            &self.layout,
            set,
            s.framebuffer,
            s.indirect.raw(),
            params,
            self.config.clear,
        );
        end(&mut prof, rec, t);
        if std::mem::take(&mut self.readback_requested) {
            let t = begin(&mut prof, rec, readback_id);
            record_readback(self.ring.gpu(), rec, s);
            end(&mut prof, rec, t);
            s.readback_frame = Some(rec.frame());
        }
        if let Some((sc, img)) = present {
            let t = begin(&mut prof, rec, self.pass_ids[3]);
            let extent = vk::Extent2D {
                width: self.config.width,
                height: self.config.height,
            };
            let copied = sc.record_copy_in(
                rec.cmd(),
                img,
                s.target.raw(),
                extent,
                COLOR_FORMAT,
                self.config.clear,
            );
            end(&mut prof, rec, t);
            result = copied;
        }
        if let Some(p) = prof {
            p.end_frame(rec);
        }
        // The visible list is only touched by the GPU; keep it referenced for clarity of
        // ownership (it lives as long as the slot).
        let _ = &s.visible;
        result
    }

    fn harvest(&mut self, slot: usize) {
        let s = &mut self.slots[slot];
        let Some(frame) = s.readback_frame.take() else {
            return;
        };
        if let Some(bytes) = s.readback.mapped() {
            self.readback = Some(Readback {
                frame,
                width: self.config.width,
                height: self.config.height,
                rgba: bytes.to_vec(),
            });
        }
    }
}

fn begin(
    prof: &mut Option<&mut GpuProfiler>,
    rec: &Recording,
    id: Option<PassId>,
) -> Option<lanegraph::vk::profiler::PassToken> {
    match (prof.as_deref_mut(), id) {
        (Some(p), Some(id)) => Some(p.begin_pass(rec, id)),
        _ => None,
    }
}

fn end(
    prof: &mut Option<&mut GpuProfiler>,
    rec: &Recording,
    t: Option<lanegraph::vk::profiler::PassToken>,
) {
    if let (Some(p), Some(t)) = (prof.as_deref_mut(), t) {
        p.end_pass(rec, t);
    }
}

/// Culling off: the visible list becomes `0..count` (a copy from the identity buffer) and the
/// indirect args say `count` instances, then a barrier hands both to the draw.
fn record_draw_all(
    gpu: &Gpu,
    rec: &Recording,
    identity: vk::Buffer,
    visible: vk::Buffer,
    indirect: vk::Buffer,
    count: u32,
) {
    let d = gpu.device();
    let cmd = rec.cmd();
    let args = super::passes::indirect_args(count);
    let to_draw = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::INDIRECT_COMMAND_READ | vk::AccessFlags::SHADER_READ);
    // SAFETY: `rec` is recording, outside a render pass. `identity` holds `capacity` indices and
    // `visible` has room for as many; `count <= capacity` (checked by `validate`), so the copy
    // stays inside both. The previous frame of this slot that read `visible` and `indirect`
    // finished (the ring waited its fence). 16 bytes at offset 0 fit the indirect buffer.
    unsafe {
        if count > 0 {
            let region = vk::BufferCopy::default().size(u64::from(count) * 4);
            d.cmd_copy_buffer(cmd, identity, visible, &[region]);
        }
        d.cmd_update_buffer(cmd, indirect, 0, &args);
        d.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::DRAW_INDIRECT | vk::PipelineStageFlags::VERTEX_SHADER,
            vk::DependencyFlags::empty(),
            &[to_draw],
            &[],
            &[],
        );
    }
}

/// Copies an f32 column into mapped memory as native-endian bytes (the GPU's endianness).
fn copy_column(src: &[f32], dst: &mut [u8]) {
    for (d, x) in dst.chunks_exact_mut(4).zip(src) {
        d.copy_from_slice(&x.to_ne_bytes());
    }
}

fn record_readback(gpu: &Gpu, rec: &Recording, s: &SlotResources) {
    let region = lanegraph::vk::textures::copy_region(0, s.target.extent());
    let to_host = vk::BufferMemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::HOST_READ)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .buffer(s.readback.raw())
        .offset(0)
        .size(vk::WHOLE_SIZE);
    let d = gpu.device();
    // SAFETY: `rec` is recording, outside a render pass; the target is in
    // TRANSFER_SRC_OPTIMAL (the render pass's final layout) with its writes made visible to
    // transfer by the pass's outgoing dependency; the buffer holds width * height * 4 bytes.
    unsafe {
        d.cmd_copy_image_to_buffer(
            rec.cmd(),
            s.target.raw(),
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            s.readback.raw(),
            &[region],
        );
        d.cmd_pipeline_barrier(
            rec.cmd(),
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &[],
            &[to_host],
            &[],
        );
    }
}

impl Drop for Renderer {
    fn drop(&mut self) {
        if let Err(e) = self.ring.finish() {
            tracing::warn!(error = %e, "waiting for frames at renderer teardown failed");
        }
        for s in &self.slots {
            self.particles.destroy_framebuffer(s.framebuffer);
        }
    }
}
