//! What a game's render pass implements and reports: the [`RenderPass`] trait the render lane
//! calls, and the figures a pass hands back after each draw ([`DrawOutput`], with the window's
//! [`PresentFigures`]) and at the end of a run ([`RenderDevice`]).
//!
//! Owns: the contract between the game's pass and the render lane. Must never: hold lane
//! plumbing (the mailbox and the render job are `render`'s).

use lanegraph_telemetry::GpuFrame;

use super::agents::RenderSettings;
use super::loaders::DecodedImage;

/// What a [`RenderPass`] reports of its draws. Kept by the render lane between draws: a pass
/// updates it in place.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DrawOutput {
    /// Set by the render lane before each draw: the engine frame this draw renders (the frame
    /// that published its view; a view unchanged since an earlier frame is drawn again for
    /// this one). A pass that reads its GPU timings back later tags them with the `frame` of
    /// the draw that recorded them ([`GpuFrame::frame`]).
    pub frame: u64,
    /// Instances the last draw drew (its workload, for the render agent's cost model).
    pub instances: u64,
    /// The newest GPU timings the pass read, when it draws on a GPU, tagged with the `frame`
    /// of the draw they measure.
    pub gpu: Option<GpuFrame>,
    /// The window's present figures, when the pass presents to one.
    pub present: Option<PresentFigures>,
    /// The GPU memory monitor's latest reading, when the pass reads one (every few frames:
    /// bump its `reading` each time).
    pub gpu_memory: Option<super::gpu_memory::GpuMemoryFigures>,
}

/// How a pass that presents to a window is paced (updated by the pass after each draw).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PresentFigures {
    /// Images presented so far.
    pub presented: u64,
    /// Draws that presented nothing because the window was minimised.
    pub skipped_minimised: u64,
    /// Swapchains rebuilt (resize, out of date, suboptimal).
    pub recreated: u64,
    /// `OUT_OF_DATE` and `SUBOPTIMAL` results the driver gave (acquire or present).
    pub stale_results: u64,
    /// How long the last acquire blocked, ns (FIFO paces the lane here).
    pub acquire_wait_ns: u64,
    /// Between the last two presents, ns (0 before the second).
    pub interval_ns: u64,
    /// GPU frames submitted and not yet finished, right after the last submit.
    pub frames_in_flight: u32,
    /// The swapchain's images' size.
    pub extent: (u32, u32),
    /// The present mode in use (`fifo`, `mailbox`, `immediate`).
    pub mode: &'static str,
    /// The display's refresh period, ns (0: the platform does not say).
    pub refresh_ns: u64,
    /// The last acquire's start and end, `CLOCK_MONOTONIC` ns (`(0, 0)`: none); the render
    /// lane places it on the trace's `present` track.
    pub acquire_mono_ns: (u64, u64),
    /// The last present call's start and end, `CLOCK_MONOTONIC` ns (`(0, 0)`: none).
    pub present_mono_ns: (u64, u64),
}

/// The device a pass draws on: its name, or why there is none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RenderDevice {
    /// The device's name, when the pass draws on a GPU.
    pub name: Option<String>,
    /// Why there is no GPU, when there is none.
    pub unavailable: Option<String>,
    /// Validation-layer messages so far (`None`: no device, or validation off).
    pub validation_messages: Option<u64>,
}

/// Draws the game's views on the render lane. The game supplies it with its view type `V`
/// ([`crate::runtime::EngineBuilder::render`]); the runtime supplies the mailbox, the lane, the
/// render agent's settings and the statistics.
///
/// Every method runs on the render lane (or, for `device`, on the owner at build and at the
/// end of a run), never concurrently with another.
pub trait RenderPass<V>: Send + 'static {
    /// Draws `view` as `settings` ask (the render strategy in force). Reports the instances
    /// drawn and, on a GPU, the newest pass timings in `out` (updated in place). An error is
    /// counted in the lane's statistics; the lane goes on drawing later views.
    fn draw(
        &mut self,
        view: &V,
        settings: &RenderSettings,
        out: &mut DrawOutput,
    ) -> Result<(), String>;

    /// Takes a decoded image from the asset pipeline (its upload node runs on the render lane).
    /// Returns whether it went to the GPU. The runtime keeps no copy: keep what you need.
    fn upload(&mut self, image: &DecodedImage) -> Result<bool, String> {
        let _ = image;
        Ok(false)
    }

    /// Draws `view` once more and returns the picture as PNG bytes (end of a run); `None` when
    /// the pass cannot.
    fn capture_png(&mut self, view: &V) -> Option<Vec<u8>> {
        let _ = view;
        None
    }

    /// The device it draws on.
    fn device(&self) -> RenderDevice {
        RenderDevice::default()
    }
}
