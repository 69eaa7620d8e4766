//! GPU timings as the runtime reports them: per pass and per frame, in milliseconds.
//!
//! Owns: [`GpuPass`] and [`GpuFrame`], the one shape of GPU figures everywhere above the Vulkan
//! backend (the render lane's statistics, the per-frame JSON summary, the demo's summary and
//! report). Must never: hold raw profiler ticks (`lanegraph-vk`'s `PassTiming` does, in ns).

/// One GPU pass's time, as read by the profiler (`lanegraph::budget::GPU_READ_LAG_FRAMES` late).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GpuPass {
    /// The pass (`cull`, `draw`, ...: the game's pass names).
    pub name: String,
    /// Its time in the frame read, ms.
    pub raw_ms: f64,
    /// EMA-smoothed, ms.
    pub ema_ms: f64,
    /// Where the pass ran on the CPU's `CLOCK_MONOTONIC` (begin, end), ns, as the GPU profiler's
    /// calibration places it (`lanegraph-vk`'s `PassTiming::begin_cpu_ns` / `end_cpu_ns`);
    /// `(0, 0)` when unknown. The render lane puts the pass on the trace's `gpu graphics` track
    /// from it, pairing that clock with the engine's itself. Not part of the JSON summary.
    #[serde(skip)]
    pub cpu_mono_ns: (u64, u64),
}

/// The GPU figures of one frame.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct GpuFrame {
    /// The engine frame the measured draw rendered: the `frame` the render lane gave that draw
    /// (`lanegraph::runtime::DrawOutput`). The budget controller pairs the GPU time with that
    /// frame's strategies and workload.
    pub frame: u64,
    /// Whole GPU frame, ms.
    pub total_ms: f64,
    /// Per pass.
    pub passes: Vec<GpuPass>,
}

impl GpuFrame {
    /// Sets pass `i` in place (reusing its name's buffer: a steady frame allocates nothing):
    /// its name, its time and smoothed time (ms), and where it ran on the CPU's
    /// `CLOCK_MONOTONIC` (ns; `(0, 0)` when unknown: the pass is then not traced).
    pub fn set_pass(
        &mut self,
        i: usize,
        name: &str,
        raw_ms: f64,
        ema_ms: f64,
        cpu_mono_ns: (u64, u64),
    ) {
        match self.passes.get_mut(i) {
            Some(p) => {
                if p.name != name {
                    p.name.clear();
                    p.name.push_str(name);
                }
                p.raw_ms = raw_ms;
                p.ema_ms = ema_ms;
                p.cpu_mono_ns = cpu_mono_ns;
            }
            None => self.passes.push(GpuPass {
                name: name.to_string(),
                raw_ms,
                ema_ms,
                cpu_mono_ns,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_pass_updates_in_place_and_grows() {
        let mut f = GpuFrame::default();
        f.set_pass(0, "cull", 1.0, 1.0, (0, 0));
        f.set_pass(1, "draw", 2.0, 2.0, (0, 0));
        let name_ptr = f.passes[0].name.as_ptr();
        f.set_pass(0, "cull", 3.0, 1.5, (10, 20));
        assert_eq!(f.passes[0].name.as_ptr(), name_ptr, "the name was reused");
        assert_eq!((f.passes[0].raw_ms, f.passes[0].ema_ms), (3.0, 1.5));
        f.set_pass(1, "blit", 4.0, 4.0, (0, 0));
        assert_eq!(f.passes[1].name, "blit");
        assert_eq!(f.passes.len(), 2);
    }
}
