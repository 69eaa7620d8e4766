//! A custom render pass: the game's own Vulkan work on the render lane, timed on the GPU by the
//! profiler and reported to the engine, headless. Each view the engine derives from the world
//! is "drawn" by filling a GPU buffer with the view's value (a stand-in for real draws).
//!
//! `cargo run -p lanegraph --features vulkan --example render_pass [FRAMES]` (default 60).
//! Prints the pass's GPU time; without a Vulkan driver it says why and exits 0. Exits 1 if no
//! timing came back, the pass is not on the trace's GPU track, or validation spoke.
#![allow(unsafe_code)] // one raw `ash` command, with its SAFETY note

use lanegraph::prelude::*;
use lanegraph::runtime::{DrawOutput, GpuFrame, RenderDevice, RenderPass, RenderSettings};
use lanegraph::vk::ash::vk;
use lanegraph::vk::memory::GpuBuffer;
use lanegraph::vk::{FrameRing, Gpu, GpuConfig, GpuProfiler, MemoryLocation, PassId};
use lanegraph::world::DomainSet;

/// What the render lane draws: derived from the world when its TRANSFORM domain changed.
#[derive(Default)]
struct View {
    value: u32,
}

/// The pass: its device, frames in flight, profiler and the buffer it fills.
struct FillPass {
    gpu: Gpu,
    ring: FrameRing,
    profiler: GpuProfiler,
    pass: PassId,
    target: GpuBuffer,
}

impl FillPass {
    fn new() -> Result<FillPass, lanegraph::vk::GpuError> {
        let gpu = Gpu::new(&GpuConfig {
            validation: true,
            ..GpuConfig::default()
        })?;
        let mut profiler = GpuProfiler::new(&gpu, 2)?;
        let usage = vk::BufferUsageFlags::TRANSFER_DST;
        Ok(FillPass {
            ring: FrameRing::new(&gpu, 2)?,
            pass: profiler.register_pass("fill")?,
            target: GpuBuffer::new(&gpu, "fill target", 4 << 20, usage, MemoryLocation::GpuOnly)?,
            profiler,
            gpu,
        })
    }
}

impl RenderPass<View> for FillPass {
    fn draw(
        &mut self,
        view: &View,
        _: &RenderSettings,
        out: &mut DrawOutput,
    ) -> Result<(), String> {
        let err = |e: lanegraph::vk::GpuError| e.to_string();
        // Frame N reads the GPU times of frame N-2 (never waits for the GPU).
        let ring = &self.ring;
        let now = ring.next_frame();
        self.profiler
            .collect(now, |s| ring.is_complete(s))
            .map_err(err)?;
        let rec = self.ring.begin().map_err(err)?;
        self.profiler.begin_frame(&rec);
        // The timings read back frames later carry the engine frame this draw renders.
        self.profiler.tag_frame(&rec, out.frame);
        let t = self.profiler.begin_pass(&rec, self.pass);
        let (cmd, buffer) = (rec.cmd(), self.target.raw());
        // SAFETY: the command buffer is recording (begun above, submitted below); the buffer
        // belongs to this device, was made with TRANSFER_DST, and the fill covers it whole; the
        // ring waited for this slot's previous frame, so no GPU work still uses the buffer.
        unsafe {
            self.gpu
                .device()
                .cmd_fill_buffer(cmd, buffer, 0, vk::WHOLE_SIZE, view.value)
        };
        self.profiler.end_pass(&rec, t);
        self.profiler.end_frame(&rec);
        self.ring.submit(rec).map_err(err)?;
        out.instances = 1;
        if let Some(t) = self.profiler.latest() {
            let g = out.gpu.get_or_insert_with(GpuFrame::default);
            g.frame = t.tag;
            g.total_ms = t.total_ns / 1e6;
            for (i, p) in t.passes().iter().enumerate() {
                // Where it ran on the CPU clock: the engine puts it on the trace's GPU track.
                let placed = (p.begin_cpu_ns, p.end_cpu_ns);
                let name = self.profiler.pass_name(p.pass);
                g.set_pass(i, name, p.raw_ns / 1e6, p.ema_ns / 1e6, placed);
            }
        }
        Ok(())
    }

    fn device(&self) -> RenderDevice {
        RenderDevice {
            name: Some(self.gpu.info().name.clone()),
            unavailable: None,
            validation_messages: Some(self.gpu.validation_counts().total()),
        }
    }
}

impl Drop for FillPass {
    fn drop(&mut self) {
        let _ = self.ring.finish(); // the GPU is done with the buffer before it is freed
    }
}

/// What the game changes every step (a resource in the TRANSFORM domain).
#[derive(Debug, Resource, StateHash)]
#[resource(domains(TRANSFORM))]
struct Spin(u32);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let frames: u64 = std::env::args().nth(1).map_or(Ok(60), |a| a.parse())?;
    let Some(pass) = FillPass::new()
        .map_err(|e| println!("GPU unavailable: {e}"))
        .ok()
    else {
        return Ok(()); // a game would run on without drawing
    };
    // The view is re-derived on the owner whenever the TRANSFORM domain moved.
    let derive = |w: &World, v: &mut View| v.value = w.resource::<Spin>().map_or(0, |s| s.0);
    let mut engine = Engine::builder()
        .render(DomainSet::of(Domain::TRANSFORM), derive, pass)
        .build()?;
    let w = engine.world_mut();
    w.insert_resource(Spin(0))?;
    w.register_system(SystemDef::new("spin", 0.1, |w: &mut World, _| {
        let _ = w.resource_mut::<Spin>().map(|s| s.0 += 1);
    }))?;
    // Paced at 60 frames a second, as a game is: the render lane draws each frame's view.
    let period = std::time::Duration::from_secs_f64(1.0 / 60.0);
    for _ in 0..frames {
        let started = std::time::Instant::now();
        engine.frame()?;
        std::thread::sleep(period.saturating_sub(started.elapsed()));
    }
    let (stats, device) = (engine.render_stats(), engine.render_device());
    let passes = stats.gpu.map(|g| g.passes).unwrap_or_default();
    let fill = passes.iter().find(|p| p.name == "fill");
    // The engine put the pass on the trace's GPU track itself, from the profiler's clock.
    let traced = engine.chrome_trace().contains("gpu graphics");
    let clean = device.validation_messages == Some(0) && stats.errors.is_empty();
    println!(
        "device {:?}: {} views drawn, clean: {clean}",
        device.name, stats.drawn
    );
    println!("GPU pass `fill`: {fill:?}; on the trace: {traced}");
    if fill.is_none() || !traced || !clean {
        std::process::exit(1);
    }
    Ok(())
}
