//! The profiler's CPU-cost rig, shared by `lanegraph bench gpu` and the criterion bench.
//!
//! Owns: a frame ring and a profiler with N empty passes, and one frame of profiling with only
//! the profiler's own calls timed. Must never: time anything but profiler calls (ring waits and
//! submits are outside the window), or choose the clock (the caller passes its own: this leaf
//! cannot know the engine's).

use crate::context::Gpu;
use crate::error::GpuError;
use crate::frames::FrameRing;
use crate::profiler::{GpuProfiler, PassId, ReadPath};

/// A ring and a profiler with `passes` empty passes (begin/end timestamps back to back).
pub struct ProfilerRig {
    ring: FrameRing,
    profiler: GpuProfiler,
    passes: Vec<PassId>,
}

impl ProfilerRig {
    /// Two frames in flight, `passes` passes (at most [`crate::profiler::MAX_PASSES`]),
    /// results read through `read_path`.
    pub fn new(gpu: &Gpu, passes: usize, read_path: ReadPath) -> Result<ProfilerRig, GpuError> {
        let ring = FrameRing::new(gpu, 2)?;
        let mut profiler = GpuProfiler::with_read_path(gpu, 2, read_path)?;
        let passes = (0..passes)
            .map(|i| profiler.register_pass(&format!("pass{i}")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ProfilerRig {
            ring,
            profiler,
            passes,
        })
    }

    /// One frame. Returns the `now()` ticks spent inside profiler calls: `collect` (reading
    /// frame n - 2), `begin_frame`, a `begin_pass` / `end_pass` pair per pass and `end_frame`.
    /// `now` is the caller's clock (raw ticks); two reads of it are inside the window.
    pub fn frame(&mut self, now: impl Fn() -> u64) -> Result<u64, GpuError> {
        let rec = self.ring.begin()?;
        let ring = &self.ring;
        let t0 = now();
        self.profiler
            .collect(rec.frame(), |s| ring.is_complete(s))?;
        self.profiler.begin_frame(&rec);
        for &p in &self.passes {
            let t = self.profiler.begin_pass(&rec, p);
            self.profiler.end_pass(&rec, t);
        }
        self.profiler.end_frame(&rec);
        let t1 = now();
        self.ring.submit(rec)?;
        Ok(t1.saturating_sub(t0))
    }

    /// The profiler (stats, latest figures).
    pub fn profiler(&self) -> &GpuProfiler {
        &self.profiler
    }

    /// Waits for every frame in flight.
    pub fn finish(&mut self) -> Result<(), GpuError> {
        self.ring.finish()
    }
}
