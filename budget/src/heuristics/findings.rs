//! What each heuristic found, with the figures that drove it ([`Finding`], formatted into
//! reasons on demand), and the providers' verdicts (thermal, battery, memory).

use std::fmt;

use super::le_or_gt;
use crate::providers::ThermalState;

#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum HeuristicKind {
    /// Sustained fixed-step clamping.
    DeathSpiral,
    /// Thermal provider.
    Thermal,
    /// Battery provider.
    Battery,
    /// Memory provider.
    Memory,
    /// GPU memory provider.
    GpuMemory,
    /// Frame-time jitter.
    Stutter,
    /// Rising frame time.
    Trend,
    /// The base target.
    FrameTime,
    /// The CPU pool is over the target.
    CpuPressure,
    /// The GPU pool is over the target.
    GpuPressure,
}

/// A heuristic's finding, with the figures that drove it (formatted into reasons on demand).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Finding {
    /// Base target from the budget and headroom.
    FrameTime {
        /// Frame budget, ms.
        budget_ms: f64,
        /// The target, ms.
        target_ms: f64,
    },
    /// Jitter eats the headroom.
    Stutter {
        /// p95 - p50 over the window, ms.
        jitter_ms: f64,
        /// The target, ms.
        target_ms: f64,
    },
    /// Frame time rising.
    Trend {
        /// Slope, ms per frame.
        slope_ms: f64,
        /// The target, ms.
        target_ms: f64,
    },
    /// A pool over the target.
    Pressure {
        /// Which pool.
        gpu: bool,
        /// The pool's measured ms.
        measured_ms: f64,
        /// The target, ms.
        target_ms: f64,
    },
    /// Thermal state.
    Thermal {
        /// The state.
        state: ThermalState,
    },
    /// Battery low.
    Battery {
        /// Charge level 0..1.
        level: f64,
    },
    /// Memory near its budget.
    Memory {
        /// Used / budget.
        fraction: f64,
    },
    /// GPU memory near its budget.
    GpuMemory {
        /// Used / budget (the fullest heap).
        fraction: f64,
    },
    /// Death spiral.
    DeathSpiral {
        /// Consecutive clamped frames seen.
        clamped_frames: u32,
    },
}

#[cfg(test)]
impl Finding {
    /// Which heuristic this is.
    pub(crate) fn kind(&self) -> HeuristicKind {
        match self {
            Finding::FrameTime { .. } => HeuristicKind::FrameTime,
            Finding::Stutter { .. } => HeuristicKind::Stutter,
            Finding::Trend { .. } => HeuristicKind::Trend,
            Finding::Pressure { gpu: false, .. } => HeuristicKind::CpuPressure,
            Finding::Pressure { gpu: true, .. } => HeuristicKind::GpuPressure,
            Finding::Thermal { .. } => HeuristicKind::Thermal,
            Finding::Battery { .. } => HeuristicKind::Battery,
            Finding::Memory { .. } => HeuristicKind::Memory,
            Finding::GpuMemory { .. } => HeuristicKind::GpuMemory,
            Finding::DeathSpiral { .. } => HeuristicKind::DeathSpiral,
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Finding::FrameTime {
                budget_ms,
                target_ms,
            } => write!(
                f,
                "frame time: target {target_ms:.1} ms (budget {budget_ms:.1} ms less headroom)"
            ),
            Finding::Stutter {
                jitter_ms,
                target_ms,
            } => write!(
                f,
                "stutter: jitter {jitter_ms:.1} ms (p95 frame-to-frame) lowers target to {target_ms:.1} ms"
            ),
            Finding::Trend {
                slope_ms,
                target_ms,
            } => write!(
                f,
                "trend: frame time rising {slope_ms:.2} ms/frame lowers target to {target_ms:.1} ms"
            ),
            Finding::Pressure {
                gpu,
                measured_ms,
                target_ms,
            } => {
                let (label, pool) = if gpu { ("GPU", "gpu") } else { ("CPU", "cpu") };
                write!(
                    f,
                    "{label} pressure: {pool} {measured_ms:.1} ms {} target {target_ms:.1} ms",
                    le_or_gt(measured_ms, target_ms)
                )
            }
            Finding::Thermal { state } => {
                let (cap, crit) = thermal_verdict(state);
                write!(f, "thermal: {state:?}")?;
                match cap {
                    Some(Verdict::Cap(c)) => write!(
                        f,
                        " caps multiplier at {c:.2}{}",
                        if crit { " (critical)" } else { "" }
                    ),
                    Some(Verdict::TargetScale(s)) => write!(f, " scales target by {s:.2}"),
                    None => Ok(()),
                }
            }
            Finding::Battery { level } => write!(
                f,
                "battery: {:.0} % left caps multiplier at {:.2}",
                level * 100.0,
                battery_cap(level).map(|(c, _)| c).unwrap_or(1.0)
            ),
            Finding::Memory { fraction } => write!(
                f,
                "memory: {:.0} % of budget caps multiplier at {:.2}",
                fraction * 100.0,
                memory_cap(fraction).map(|(c, _)| c).unwrap_or(1.0)
            ),
            Finding::GpuMemory { fraction } => write!(
                f,
                "GPU memory: {:.0} % of budget caps multiplier at {:.2}",
                fraction * 100.0,
                memory_cap(fraction).map(|(c, _)| c).unwrap_or(1.0)
            ),
            Finding::DeathSpiral { clamped_frames } => write!(
                f,
                "death spiral: fixed step clamped {clamped_frames} frames in a row — degrading to cheapest strategies"
            ),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Verdict {
    Cap(f64),
    TargetScale(f64),
}

pub(super) fn thermal_verdict(s: ThermalState) -> (Option<Verdict>, bool) {
    match s {
        ThermalState::Nominal => (None, false),
        ThermalState::Fair => (Some(Verdict::TargetScale(0.9)), false),
        ThermalState::Serious => (Some(Verdict::Cap(0.75)), false),
        ThermalState::Critical => (Some(Verdict::Cap(0.5)), true),
    }
}

pub(super) fn battery_cap(level: f64) -> Option<(f64, bool)> {
    if level <= 0.05 {
        Some((0.5, true))
    } else if level <= 0.20 {
        Some((0.8, false))
    } else {
        None
    }
}

pub(super) fn memory_cap(fraction: f64) -> Option<(f64, bool)> {
    if fraction >= 0.95 {
        Some((0.5, true))
    } else if fraction >= 0.85 {
        Some((0.8, false))
    } else {
        None
    }
}
