//! The controller's configuration and its per-frame inputs, with their validation.
//!
//! Owns: [`ControllerConfig`] (every tuning constant, named, with its reason), the plain input
//! types the engine fills each frame, and the errors for bad configuration or bad input.
//! Must never: depend on the engine's World, telemetry or GPU modules (the engine converts its
//! measurements into these types; the controller stays testable on its own).

use super::agent::AgentId;
use super::pid::PidConfig;

/// GPU figures arrive this many frames after the frame they measure: the GPU profiler reads
/// frame `n`'s timestamps while recording frame `n + 2` (two frames in flight). The engine tags
/// GPU samples with it, the controller ages them by it, the renderer keeps this many frames in
/// flight, and the simulator delays its GPU readings by it.
pub const GPU_READ_LAG_FRAMES: u64 = 2;

/// Re-arbitrate when the multiplier moved by more than this.
pub(crate) const RENEGOTIATE_DELTA: f64 = 0.05;

/// Tuning of one controller. `Default` is a 60 Hz game with 10 % headroom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ControllerConfig {
    /// The frame budget, ms (16.667 at 60 Hz): a frame longer than this is a missed frame.
    pub frame_budget_ms: f64,
    /// Fraction of the budget kept free (0.10: the base target is 90 % of the budget, so
    /// frame-to-frame noise stays under the deadline).
    pub headroom: f64,
    /// The PID driving the multiplier (error normalised by the target). Small gains: the
    /// calibrated costs react to load within two samples; the PID only corrects what the cost
    /// model misses, and must not over-degrade on a one-frame spike.
    pub pid: PidConfig,
    /// Re-arbitrate when the multiplier (or the target, as a fraction) moved by more than this.
    pub renegotiate_delta: f64,
    /// An upgrade must fit with this fraction of its cost to spare (0.10: the hysteresis band
    /// above the noise a frame shows).
    pub upgrade_margin: f64,
    /// The current strategy is kept until its cost exceeds the capacity by this fraction
    /// (0.03: the lower edge of the band; the headroom still keeps frames under budget).
    pub keep_tolerance: f64,
    /// Frames after a change during which the agent may not upgrade (120: two seconds at 60 Hz;
    /// downgrades are never held back).
    pub dwell_frames: u64,
    /// Re-arbitrate when a pool's calibrated cost moved by more than this fraction of its
    /// capacity since the last arbitration (the cost-side dead band).
    pub cost_move_fraction: f64,
    /// Decisions kept in the log.
    pub log_capacity: usize,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            frame_budget_ms: 1000.0 / 60.0,
            headroom: 0.10,
            pid: PidConfig {
                kp: 0.02,
                ki: 0.01,
                kd: 0.0,
                bias: 1.0,
                min: 0.25,
                max: 1.0,
            },
            renegotiate_delta: RENEGOTIATE_DELTA,
            upgrade_margin: 0.10,
            keep_tolerance: 0.03,
            dwell_frames: 120,
            cost_move_fraction: 0.05,
            log_capacity: super::log::DEFAULT_LOG_CAPACITY,
        }
    }
}

/// A configuration value out of range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("budget config: `{field}` = {value} is out of range ({why}) (fix: {fix})")]
pub struct ConfigError {
    /// The field.
    pub field: &'static str,
    /// Its value.
    pub value: f64,
    /// What the range is.
    pub why: &'static str,
    /// How to fix it.
    pub fix: &'static str,
}

impl ControllerConfig {
    /// Checks every field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let check = |field, value: f64, ok: bool, why, fix| {
            if ok && value.is_finite() {
                Ok(())
            } else {
                Err(ConfigError {
                    field,
                    value,
                    why,
                    fix,
                })
            }
        };
        let c = self;
        check(
            "frame_budget_ms",
            c.frame_budget_ms,
            c.frame_budget_ms > 0.0 && c.frame_budget_ms <= 250.0,
            "must be in (0, 250] ms",
            "use 1000 / target Hz",
        )?;
        check(
            "headroom",
            c.headroom,
            (0.0..0.5).contains(&c.headroom),
            "must be in [0, 0.5)",
            "0.1 keeps 10 % of the budget free",
        )?;
        check(
            "pid.min",
            c.pid.min,
            c.pid.min > 0.0 && c.pid.min <= c.pid.max && c.pid.max <= 1.0,
            "need 0 < min <= max <= 1",
            "0.25 ..= 1.0",
        )?;
        for (field, v) in [
            ("pid.kp", c.pid.kp),
            ("pid.ki", c.pid.ki),
            ("pid.kd", c.pid.kd),
        ] {
            check(field, v, v >= 0.0, "gains must be >= 0", "use the defaults")?;
        }
        check(
            "renegotiate_delta",
            c.renegotiate_delta,
            c.renegotiate_delta > 0.0 && c.renegotiate_delta < 1.0,
            "must be in (0, 1)",
            "0.05",
        )?;
        check(
            "upgrade_margin",
            c.upgrade_margin,
            (0.0..1.0).contains(&c.upgrade_margin),
            "must be in [0, 1)",
            "0.10",
        )?;
        check(
            "keep_tolerance",
            c.keep_tolerance,
            (0.0..0.5).contains(&c.keep_tolerance),
            "must be in [0, 0.5)",
            "0.03",
        )?;
        check(
            "cost_move_fraction",
            c.cost_move_fraction,
            c.cost_move_fraction > 0.0,
            "must be > 0",
            "0.05",
        )?;
        Ok(())
    }

    /// The base frame-time target: budget less headroom, ms.
    pub(crate) fn base_target_ms(&self) -> f64 {
        self.frame_budget_ms * (1.0 - self.headroom)
    }
}

/// One agent's measured cost for one frame (the telemetry's agent-cost event).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AgentSample {
    /// Whose cost.
    pub agent: AgentId,
    /// The frame it was measured in (GPU agents' samples arrive two frames late).
    pub frame: u64,
    /// The agent's own workload size that frame (its domain: bodies, draw items, bytes).
    pub n: u64,
    /// Milliseconds.
    pub ms: f64,
}

/// The GPU frame time the profiler read this frame (for an earlier frame).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuTiming {
    /// The frame it measures (typically the current frame minus two).
    pub frame: u64,
    /// GPU frame time, ms.
    pub ms: f64,
}

/// What the fixed-step accumulator did this frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StepReport {
    /// Fixed steps run.
    pub steps: u32,
    /// True when steps were capped (or real dt clamped) and time was dropped.
    pub clamped: bool,
}

/// Everything the controller reads for one frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameInput<'a> {
    /// This frame's number; strictly increasing across ticks.
    pub frame: u64,
    /// CPU frame time, ms.
    pub cpu_ms: f64,
    /// The GPU profiler's reading, when one arrived this frame.
    pub gpu: Option<GpuTiming>,
    /// Agent costs that arrived this frame.
    pub samples: &'a [AgentSample],
    /// The fixed-step accumulator's report, when a fixed-step loop runs.
    pub step: Option<StepReport>,
}

/// A frame's input the controller refused (nothing of it was applied).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InputError {
    /// A time is NaN, infinite or negative.
    #[error("budget input, frame {frame}: {what} = {value} ms is not a finite non-negative time (fix: pass measured milliseconds)")]
    BadTime {
        /// The frame.
        frame: u64,
        /// Which time (`cpu_ms`, `gpu.ms`, `sample of physics`).
        what: String,
        /// The value.
        value: f64,
    },
    /// Frames must increase.
    #[error("budget input: frame {frame} after frame {last} (fix: tick once per frame, in order)")]
    FrameOrder {
        /// The frame given.
        frame: u64,
        /// The last frame ticked.
        last: u64,
    },
    /// A sample names an agent this controller does not have.
    #[error("budget input, frame {frame}: sample for unknown {agent} (fix: use the id `register` returned)")]
    UnknownAgent {
        /// The frame.
        frame: u64,
        /// The id.
        agent: AgentId,
    },
    /// A sample or GPU reading claims a frame not yet run.
    #[error("budget input, frame {frame}: a measurement claims future frame {claimed} (fix: tag measurements with the frame they measured)")]
    FutureFrame {
        /// The frame ticked.
        frame: u64,
        /// The frame claimed.
        claimed: u64,
    },
}

impl FrameInput<'_> {
    /// Checks times and frames; `known_agents` is the number of registered agents.
    pub(crate) fn validate(
        &self,
        last: Option<u64>,
        known_agents: usize,
    ) -> Result<(), InputError> {
        let frame = self.frame;
        if let Some(last) = last {
            if frame <= last {
                return Err(InputError::FrameOrder { frame, last });
            }
        }
        let time = |what: &dyn Fn() -> String, value: f64| {
            if value.is_finite() && value >= 0.0 {
                Ok(())
            } else {
                Err(InputError::BadTime {
                    frame,
                    what: what(),
                    value,
                })
            }
        };
        time(&|| "cpu_ms".into(), self.cpu_ms)?;
        if let Some(g) = self.gpu {
            time(&|| "gpu.ms".into(), g.ms)?;
            if g.frame > frame {
                return Err(InputError::FutureFrame {
                    frame,
                    claimed: g.frame,
                });
            }
        }
        for s in self.samples {
            if s.agent.index() >= known_agents {
                return Err(InputError::UnknownAgent {
                    frame,
                    agent: s.agent,
                });
            }
            time(&|| format!("sample of {}", s.agent), s.ms)?;
            if s.frame > frame {
                return Err(InputError::FutureFrame {
                    frame,
                    claimed: s.frame,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_config_is_valid_and_bad_fields_are_named() {
        ControllerConfig::default().validate().unwrap();
        let c = ControllerConfig {
            headroom: 0.9,
            ..ControllerConfig::default()
        };
        let e = c.validate().unwrap_err();
        assert_eq!(e.field, "headroom");
        assert!(e.to_string().contains("fix:"));
        let c = ControllerConfig {
            frame_budget_ms: f64::NAN,
            ..ControllerConfig::default()
        };
        assert_eq!(c.validate().unwrap_err().field, "frame_budget_ms");
    }

    #[test]
    fn bad_inputs_are_refused() {
        let ok = FrameInput {
            frame: 5,
            cpu_ms: 3.0,
            gpu: None,
            samples: &[],
            step: None,
        };
        assert!(ok.validate(Some(4), 0).is_ok());
        assert!(matches!(
            ok.validate(Some(5), 0),
            Err(InputError::FrameOrder { .. })
        ));
        let nan = FrameInput {
            cpu_ms: f64::NAN,
            ..ok
        };
        assert!(matches!(
            nan.validate(None, 0),
            Err(InputError::BadTime { .. })
        ));
        let s = [AgentSample {
            agent: AgentId(3),
            frame: 5,
            n: 1,
            ms: 1.0,
        }];
        let unknown = FrameInput { samples: &s, ..ok };
        assert!(matches!(
            unknown.validate(None, 2),
            Err(InputError::UnknownAgent { .. })
        ));
        let g = FrameInput {
            gpu: Some(GpuTiming { frame: 9, ms: 1.0 }),
            ..ok
        };
        assert!(matches!(
            g.validate(None, 0),
            Err(InputError::FutureFrame { .. })
        ));
    }
}
