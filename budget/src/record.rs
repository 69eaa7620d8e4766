//! Recording and replay of the controller's inputs.
//!
//! Owns: the owned copy of each tick's [`FrameInput`] and provider [`Readings`]. Must never:
//! record anything the controller did not read (a replay must see exactly what the run saw).

use super::config::{AgentSample, FrameInput, GpuTiming, StepReport};
use super::providers::Readings;

/// One tick's input, owned.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedFrame {
    /// Frame number.
    pub frame: u64,
    /// CPU frame time, ms.
    pub cpu_ms: f64,
    /// GPU reading.
    pub gpu: Option<GpuTiming>,
    /// Agent samples.
    pub samples: Vec<AgentSample>,
    /// Fixed-step report.
    pub step: Option<StepReport>,
    /// Provider readings polled that tick.
    pub readings: Readings,
}

impl RecordedFrame {
    /// Copies one tick's input.
    pub fn new(input: &FrameInput<'_>, readings: Readings) -> Self {
        RecordedFrame {
            frame: input.frame,
            cpu_ms: input.cpu_ms,
            gpu: input.gpu,
            samples: input.samples.to_vec(),
            step: input.step,
            readings,
        }
    }

    /// Borrows it back as an input.
    pub fn input(&self) -> FrameInput<'_> {
        FrameInput {
            frame: self.frame,
            cpu_ms: self.cpu_ms,
            gpu: self.gpu,
            samples: &self.samples,
            step: self.step,
        }
    }
}

/// Every tick's input since recording started.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recording {
    /// The ticks, in order.
    pub frames: Vec<RecordedFrame>,
}
