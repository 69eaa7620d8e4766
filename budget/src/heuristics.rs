//! Heuristics: each reads the signals and says what the frame-time target should be, or caps
//! the budget multiplier; the collapse rule turns their findings into one target and one cap.
//!
//! Owns: the frame-time history the heuristics read, the death-spiral detector, the findings
//! and the collapse rule. Must never: choose strategies, or allocate per tick (findings are
//! plain numbers; reason text is formatted only when a decision is logged).
//!
//! # The heuristics (in precedence order: on equal values, the earlier one is named)
//! | heuristic    | verdict | when |
//! |--------------|---------|------|
//! | death spiral | critical cap `multiplier_min` | the fixed step clamped for [`SPIRAL_ENTER`] frames in a row; held until [`SPIRAL_EXIT`] unclamped frames in a row |
//! | thermal      | `Fair`: target x0.9; `Serious`: cap 0.75; `Critical`: critical cap 0.5 | provider |
//! | battery      | level <= 20 %: cap 0.8; <= 5 %: critical cap 0.5 | provider, not charging |
//! | memory       | >= 85 % of budget: cap 0.8; >= 95 %: critical cap 0.5 | provider |
//! | GPU memory   | >= 85 % of budget: cap 0.8; >= 95 %: critical cap 0.5 | provider (the engine's: its render pass's GPU memory monitor) |
//! | stutter      | target `budget - jitter` | jitter (p95 of the frame-to-frame change over the last 64 frames, from its median; the least over lags 1-4, so a periodic pattern is not stutter) above the headroom |
//! | trend        | target `base - slope * 10 frames` (at most 20 % off) | a steady rise over the last 32 frames (four 8-frame blocks, each higher than the last) above 0.05 ms/frame while the frame is past 80 % of the target |
//! | frame time   | target `budget * (1 - headroom)` | always (the base target) |
//!
//! CPU pressure and GPU pressure are per-pool: the frame is the worse of the CPU and GPU
//! frames, so the one frame target applies to each pool, and these two do not move it. They
//! say which pool is over it and by how much, and that finding is the reason given for the
//! downgrades in that pool ("GPU pressure: gpu 14.2 ms > target 12.5 ms").
//!
//! # Collapse rule
//! target = the lowest proposed target, never below [`MIN_TARGET_FRACTION`] of the budget;
//! cap = the lowest proposed cap (1.0 when none); critical = any critical cap. The finding that
//! set each is kept for the reasons.

use std::fmt;

use super::providers::{Readings, ThermalState};
use super::sorted_window::SortedWindow;

/// Frames of history for the stutter heuristic.
pub(crate) const STUTTER_WINDOW: usize = 64;
/// p95 / median of `|N(0, s)|`: 1.960 / 0.674 (the normal distribution's quantiles).
pub(crate) const STUTTER_P95_PER_MEDIAN: f64 = 2.908;
/// Longest frame pattern the stutter heuristic treats as the game's own rhythm, not stutter
/// (a strategy working every 2nd, 3rd or 4th step).
pub(crate) const STUTTER_MAX_PERIOD: usize = 4;
/// EMA weight of each frame's jitter estimate (0.05: about 20 frames of memory on top of the
/// 64-frame window).
pub(crate) const STUTTER_SMOOTHING: f64 = 0.05;
/// Frames of history for the trend heuristic.
pub(crate) const TREND_WINDOW: usize = 32;
/// A rising slope above this is a trend (ms per frame: 3 ms per second at 60 Hz).
pub(crate) const TREND_MIN_SLOPE: f64 = 0.05;
/// How many frames ahead the trend heuristic anticipates.
pub(crate) const TREND_LOOKAHEAD: f64 = 10.0;
/// Consecutive clamped frames that mean a death spiral (8 frames: past one hitch, short
/// enough that the loop never runs slow-motion for long).
pub(crate) const SPIRAL_ENTER: u32 = 8;
/// Consecutive unclamped frames that end it (one second at 60 Hz).
pub(crate) const SPIRAL_EXIT: u32 = 60;
/// The target never goes below this fraction of the frame budget.
pub(crate) const MIN_TARGET_FRACTION: f64 = 0.5;

/// Which heuristic a finding came from (the tests' way to name a finding).
/// The comparison `a` to `b` as printed with one decimal: `<=` or `>`, chosen from the printed
/// figures, so a reason's inequality always agrees with its own numbers.
pub(crate) fn le_or_gt(a: f64, b: f64) -> &'static str {
    if (a * 10.0).round() <= (b * 10.0).round() {
        "<="
    } else {
        ">"
    }
}

/// The budget's one median: the element at index `len / 2` of the sorted order (the upper of
/// the two middles for an even count), found without a full sort (O(n), the same value a sort
/// would put there); `values` is reordered. An empty slice is 0.
pub(crate) fn median_in_place(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mid = values.len() / 2;
    *values.select_nth_unstable_by(mid, f64::total_cmp).1
}

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
enum Verdict {
    Cap(f64),
    TargetScale(f64),
}

fn thermal_verdict(s: ThermalState) -> (Option<Verdict>, bool) {
    match s {
        ThermalState::Nominal => (None, false),
        ThermalState::Fair => (Some(Verdict::TargetScale(0.9)), false),
        ThermalState::Serious => (Some(Verdict::Cap(0.75)), false),
        ThermalState::Critical => (Some(Verdict::Cap(0.5)), true),
    }
}

fn battery_cap(level: f64) -> Option<(f64, bool)> {
    if level <= 0.05 {
        Some((0.5, true))
    } else if level <= 0.20 {
        Some((0.8, false))
    } else {
        None
    }
}

fn memory_cap(fraction: f64) -> Option<(f64, bool)> {
    if fraction >= 0.95 {
        Some((0.5, true))
    } else if fraction >= 0.85 {
        Some((0.8, false))
    } else {
        None
    }
}

/// The collapsed result of one tick's heuristics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Assessment {
    /// The frame-time target, ms.
    pub target_ms: f64,
    /// The finding that set the target.
    pub target_by: Finding,
    /// The ceiling on the budget multiplier (1.0 when none).
    pub cap: f64,
    /// The finding that set the cap, when there is one.
    pub cap_by: Option<Finding>,
    /// True when a critical signal (thermal, battery, memory, death spiral) set a cap.
    pub critical: bool,
    /// Per-pool pressure ([`Pool::index`](super::Pool::index) order), when the pool is over
    /// the target.
    pub pressure: [Option<Finding>; 2],
}

/// One tick's signals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Signals {
    /// CPU frame, ms (this frame).
    pub cpu_ms: f64,
    /// Latest GPU frame, ms (two frames old), when a GPU profiler reports.
    pub gpu_ms: Option<f64>,
    /// True when the fixed-step accumulator clamped this frame.
    pub step_clamped: bool,
    /// Provider readings.
    pub readings: Readings,
}

/// The heuristics' state: frame history and the death-spiral detector.
#[derive(Debug, Clone)]
pub(crate) struct Heuristics {
    budget_ms: f64,
    headroom: f64,
    min_multiplier: f64,
    history: [f64; STUTTER_WINDOW],
    len: usize,
    head: usize,
    /// The frame-to-frame changes at each lag `1..=STUTTER_MAX_PERIOD` over the full window,
    /// sorted: each frame one change enters and one leaves, so the stutter median slides
    /// instead of being selected anew (about 1.4 us a frame at four lags of 60-odd values).
    /// Built when the window first fills (`stutter_ready`).
    stutter_changes: [SortedWindow<{ STUTTER_WINDOW - 1 }>; STUTTER_MAX_PERIOD],
    stutter_ready: bool,
    /// Lags whose sorted window was built anew: one each when the window first fills; any
    /// more means a leaving change was not found (tests assert it stays at one per lag).
    stutter_rebuilds: u64,
    clamped_run: u32,
    unclamped_run: u32,
    in_spiral: bool,
    jitter: Option<f64>,
}

impl Heuristics {
    /// Heuristics for a frame budget (ms), a headroom fraction and the multiplier floor the
    /// death spiral caps to.
    pub(crate) fn new(budget_ms: f64, headroom: f64, min_multiplier: f64) -> Self {
        Heuristics {
            budget_ms,
            headroom,
            min_multiplier,
            history: [0.0; STUTTER_WINDOW],
            len: 0,
            head: 0,
            stutter_changes: [const { SortedWindow::new() }; STUTTER_MAX_PERIOD],
            stutter_ready: false,
            stutter_rebuilds: 0,
            clamped_run: 0,
            unclamped_run: 0,
            in_spiral: false,
            jitter: None,
        }
    }

    /// True while the death spiral holds.
    pub(crate) fn in_death_spiral(&self) -> bool {
        self.in_spiral
    }

    fn recent(&self, age: usize) -> f64 {
        self.history[(self.head + STUTTER_WINDOW - 1 - age) % STUTTER_WINDOW]
    }

    /// Reads one tick's signals and collapses the findings (module docs).
    ///
    /// One function (about 190 lines) on purpose: every heuristic reads the same tick's signals
    /// and proposes a target through one `propose` closure that keeps the lowest and who
    /// proposed it; the collapse into one target and cap needs all of them in one place.
    pub(crate) fn assess(&mut self, s: &Signals) -> Assessment {
        let measured = s.gpu_ms.map_or(s.cpu_ms, |g| g.max(s.cpu_ms));
        // The oldest frame, about to be overwritten: the changes that leave with it are
        // recomputed from it in the stutter block below.
        let evicted = self.history[self.head];
        self.history[self.head] = measured;
        self.head = (self.head + 1) % STUTTER_WINDOW;
        self.len = (self.len + 1).min(STUTTER_WINDOW);

        let base = self.budget_ms * (1.0 - self.headroom);
        let floor = self.budget_ms * MIN_TARGET_FRACTION;
        let mut target = base;
        let mut target_by = Finding::FrameTime {
            budget_ms: self.budget_ms,
            target_ms: base,
        };
        let propose = |t: f64, by: Finding, target: &mut f64, target_by: &mut Finding| {
            let t = t.max(floor);
            if t < *target {
                *target = t;
                *target_by = by;
            }
        };

        // Trend: four blocks of TREND_WINDOW / 4 frames; a trend is a steady rise (every block
        // above the previous by at least a quarter of the average rise), so a load *step*
        // (one jump between two blocks) is not mistaken for a trend: the cost model sees steps.
        if self.len >= TREND_WINDOW && measured > 0.8 * base {
            const B: usize = TREND_WINDOW / 4;
            let mut blocks = [0.0f64; 4];
            for (k, block) in blocks.iter_mut().enumerate() {
                // Block 0 is the oldest.
                let mut sum = 0.0;
                for age in (3 - k) * B..(4 - k) * B {
                    sum += self.recent(age);
                }
                *block = sum / B as f64;
            }
            let slope = (blocks[3] - blocks[0]) / (3 * B) as f64;
            let min_rise = 0.25 * (blocks[3] - blocks[0]) / 3.0;
            let steady = blocks.windows(2).all(|w| w[1] - w[0] >= min_rise);
            if slope > TREND_MIN_SLOPE && steady {
                let t = base - (slope * TREND_LOOKAHEAD).min(0.2 * base);
                propose(
                    t,
                    Finding::Trend {
                        slope_ms: slope,
                        target_ms: t.max(floor),
                    },
                    &mut target,
                    &mut target_by,
                );
            }
        }

        // Stutter: the 95th percentile of the frame-to-frame change, estimated robustly as
        // `STUTTER_P95_PER_MEDIAN * median |change|` over the window (for Gaussian jitter the
        // two agree). Successive changes, not the spread of levels, and a median, not a raw
        // percentile: a load step and the few frames that settle it change little.
        // Periodic work is not stutter: a game whose collisions run every other step, or a
        // fixed step at half the frame rate, makes frames alternate by its own rhythm, and a
        // lower target cannot smooth that out (it only pushes every agent to its cheapest).
        // So the change is taken at lags 1..=STUTTER_MAX_PERIOD and the *smallest* estimate
        // wins: a pattern of period k has (near) zero change at lag k, while random jitter has
        // the same change at every lag.
        if self.len == STUTTER_WINDOW {
            let mut raw = f64::INFINITY;
            let (history, head) = (&self.history, self.head);
            let recent = |age: usize| history[(head + STUTTER_WINDOW - 1 - age) % STUTTER_WINDOW];
            for lag in 1..=STUTTER_MAX_PERIOD {
                let entering = (recent(0) - recent(lag)).abs();
                let w = &mut self.stutter_changes[lag - 1];
                // The change that leaves pairs the evicted frame with the one `lag` newer, now
                // at age `STUTTER_WINDOW - lag`: newer minus older, exactly as it entered, so
                // the window finds it bit for bit. `stutter_ready` means the window was full
                // before this frame (it never shrinks), so `evicted` was in it.
                let leaving = (recent(STUTTER_WINDOW - lag) - evicted).abs();
                let slid = self.stutter_ready && w.remove(leaving) && w.insert(entering);
                if !slid {
                    // First full window (or a leaving change not found, which
                    // `stutter_rebuilds` counts and a test asserts never happens): every
                    // change at this lag, anew.
                    self.stutter_rebuilds += 1;
                    w.clear();
                    for age in 0..STUTTER_WINDOW - lag {
                        w.insert((recent(age) - recent(age + lag)).abs());
                    }
                }
                raw = raw.min(STUTTER_P95_PER_MEDIAN * w.median());
            }
            self.stutter_ready = true;
            // Smoothed: stutter is a lasting property of the frame, and a target that wanders
            // with each window's sampling noise would re-arbitrate for nothing.
            self.jitter = Some(match self.jitter {
                Some(j) => j + STUTTER_SMOOTHING * (raw - j),
                None => raw,
            });
            let jitter = self.jitter.unwrap_or(raw);
            if jitter > self.budget_ms * self.headroom {
                let t = self.budget_ms - jitter;
                propose(
                    t,
                    Finding::Stutter {
                        jitter_ms: jitter,
                        target_ms: t.max(floor),
                    },
                    &mut target,
                    &mut target_by,
                );
            }
        }

        // Caps, in precedence order (the earliest keeps a tie).
        let mut cap = 1.0;
        let mut cap_by = None;
        let mut critical = false;
        let mut cap_with = |c: f64, crit: bool, by: Finding| {
            critical |= crit;
            if c < cap {
                cap = c;
                cap_by = Some(by);
            }
        };

        // Death spiral.
        if s.step_clamped {
            self.clamped_run = self.clamped_run.saturating_add(1);
            self.unclamped_run = 0;
        } else {
            self.unclamped_run = self.unclamped_run.saturating_add(1);
            self.clamped_run = 0;
        }
        if self.clamped_run >= SPIRAL_ENTER {
            self.in_spiral = true;
        } else if self.unclamped_run >= SPIRAL_EXIT {
            self.in_spiral = false;
        }
        if self.in_spiral {
            cap_with(
                self.min_multiplier,
                true,
                Finding::DeathSpiral {
                    clamped_frames: self.clamped_run.max(SPIRAL_ENTER),
                },
            );
        }

        let r = s.readings;
        match thermal_verdict(r.thermal) {
            (Some(Verdict::Cap(c)), crit) => {
                cap_with(c, crit, Finding::Thermal { state: r.thermal })
            }
            (Some(Verdict::TargetScale(k)), _) => propose(
                base * k,
                Finding::Thermal { state: r.thermal },
                &mut target,
                &mut target_by,
            ),
            (None, _) => {}
        }
        if let Some(b) = r.battery.filter(|b| !b.charging) {
            if let Some((c, crit)) = battery_cap(b.level) {
                cap_with(c, crit, Finding::Battery { level: b.level });
            }
        }
        if let Some(m) = r.memory {
            if let Some((c, crit)) = memory_cap(m.fraction()) {
                cap_with(
                    c,
                    crit,
                    Finding::Memory {
                        fraction: m.fraction(),
                    },
                );
            }
        }

        if let Some(m) = r.gpu_memory {
            if let Some((c, crit)) = memory_cap(m.fraction()) {
                cap_with(
                    c,
                    crit,
                    Finding::GpuMemory {
                        fraction: m.fraction(),
                    },
                );
            }
        }

        let pressure = |measured_ms: Option<f64>, gpu: bool| {
            measured_ms
                .filter(|&m| m > target)
                .map(|measured_ms| Finding::Pressure {
                    gpu,
                    measured_ms,
                    target_ms: target,
                })
        };
        Assessment {
            target_ms: target,
            target_by,
            cap,
            cap_by,
            critical,
            pressure: [pressure(Some(s.cpu_ms), false), pressure(s.gpu_ms, true)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_of_the_sorted_order_the_upper_one_for_an_even_count() {
        assert_eq!(median_in_place(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_in_place(&mut [4.0, 1.0, 3.0, 2.0]), 3.0);
        assert_eq!(
            median_in_place(&mut [f64::NAN, 1.0, 5.0]),
            5.0,
            "NaN sorts last"
        );
        assert_eq!(median_in_place(&mut []), 0.0);
    }
    use crate::providers::{BatteryState, MemoryState};

    fn sig(cpu: f64) -> Signals {
        Signals {
            cpu_ms: cpu,
            gpu_ms: None,
            step_clamped: false,
            readings: Readings::default(),
        }
    }

    /// The sliding stutter medians equal a selection over every change in the window, frame
    /// after frame (repeats and a GPU time included), so sliding them changed no decision.
    #[test]
    fn the_sliding_stutter_medians_equal_the_whole_window_selection_every_frame() {
        let mut h = Heuristics::new(16.0, 0.1, 0.25);
        let mut x = 12345u64;
        for frame in 0..600 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mut s = sig(8.0 + (x >> 40) as f64 / (1u64 << 24) as f64 * 3.0);
            if frame % 7 == 0 {
                s.cpu_ms = 9.5; // repeats
            }
            if frame % 5 == 0 {
                s.gpu_ms = Some(10.0 + (frame % 3) as f64);
            }
            h.assess(&s);
            if h.len < STUTTER_WINDOW {
                continue;
            }
            for lag in 1..=STUTTER_MAX_PERIOD {
                let mut diffs: Vec<f64> = (0..STUTTER_WINDOW - lag)
                    .map(|age| (h.recent(age) - h.recent(age + lag)).abs())
                    .collect();
                let want = median_in_place(&mut diffs);
                let got = h.stutter_changes[lag - 1].median();
                assert_eq!(got.to_bits(), want.to_bits(), "frame {frame}, lag {lag}");
            }
            // Each lag was built once, when the window filled, and slid ever since.
            assert_eq!(
                h.stutter_rebuilds, STUTTER_MAX_PERIOD as u64,
                "frame {frame}"
            );
        }
    }

    #[test]
    fn base_target_is_budget_less_headroom() {
        let mut h = Heuristics::new(16.0, 0.1, 0.25);
        let a = h.assess(&sig(10.0));
        assert!((a.target_ms - 14.4).abs() < 1e-12);
        assert_eq!(a.target_by.kind(), HeuristicKind::FrameTime);
        assert_eq!(a.cap, 1.0);
        assert!(a.pressure[0].is_none());
    }

    #[test]
    fn gpu_pressure_is_named_with_figures() {
        let mut h = Heuristics::new(13.9, 0.1, 0.25);
        let mut s = sig(5.0);
        s.gpu_ms = Some(14.2);
        let a = h.assess(&s);
        let p = a.pressure[1].expect("gpu over target");
        assert_eq!(p.to_string(), "GPU pressure: gpu 14.2 ms > target 12.5 ms");
    }

    #[test]
    fn random_stutter_lowers_the_target() {
        let mut h = Heuristics::new(16.0, 0.1, 0.25);
        let mut a = h.assess(&sig(8.0));
        // Seeded uniform noise in 8..11 ms: no period, so every lag sees the same change
        // (median |change| ~0.88 ms, jitter ~2.6 ms, above the 1.6 ms headroom).
        let mut seed = 0x2545f4914f6cdd1du64;
        for _ in 0..400 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            a = h.assess(&sig(8.0 + 3.0 * (seed >> 11) as f64 / (1u64 << 53) as f64));
        }
        assert_eq!(a.target_by.kind(), HeuristicKind::Stutter, "{a:?}");
        assert!(a.target_ms < 16.0 * 0.9 - 0.2, "{a:?}");
    }

    #[test]
    fn periodic_work_is_not_stutter() {
        // A game whose collisions run every other step (or every third, or fourth): its frames
        // alternate by its own rhythm. Without the periodic test this read as 4.4 ms (period 2)
        // to 36 ms of jitter and cascaded the target to its floor.
        for period in 2..=STUTTER_MAX_PERIOD {
            let mut h = Heuristics::new(16.0, 0.1, 0.25);
            let mut a = h.assess(&sig(8.0));
            for i in 0..300 {
                a = h.assess(&sig(if i % period == 0 { 14.0 } else { 4.0 }));
            }
            assert_eq!(
                a.target_by.kind(),
                HeuristicKind::FrameTime,
                "period {period}: {a:?}"
            );
        }
    }

    #[test]
    fn a_load_step_is_neither_stutter_nor_trend() {
        let mut h = Heuristics::new(16.0, 0.1, 0.25);
        for i in 0..200 {
            let ms = match i {
                0..=99 => 8.0,
                100 => 30.0,
                101 => 40.0,
                102 => 25.0,
                _ => 12.0,
            };
            let a = h.assess(&sig(ms));
            assert_eq!(
                a.target_by.kind(),
                HeuristicKind::FrameTime,
                "frame {i}: {a:?}"
            );
        }
    }

    #[test]
    fn rising_trend_lowers_the_target() {
        let mut h = Heuristics::new(16.0, 0.1, 0.25);
        let mut a = h.assess(&sig(8.0));
        for i in 0..40 {
            a = h.assess(&sig(8.0 + 0.2 * i as f64));
        }
        assert_eq!(a.target_by.kind(), HeuristicKind::Trend, "{a:?}");
    }

    #[test]
    fn critical_signals_cap_and_say_so() {
        let mut h = Heuristics::new(16.0, 0.1, 0.25);
        let mut s = sig(8.0);
        s.readings.thermal = ThermalState::Critical;
        let a = h.assess(&s);
        assert!(a.critical);
        assert_eq!(a.cap, 0.5);
        s.readings.thermal = ThermalState::Nominal;
        s.readings.battery = Some(BatteryState {
            level: 0.15,
            charging: false,
        });
        s.readings.memory = Some(MemoryState {
            used_bytes: 96,
            budget_bytes: 100,
        });
        let a = h.assess(&s);
        assert!(a.critical);
        assert_eq!(a.cap, 0.5);
        assert_eq!(a.cap_by.unwrap().kind(), HeuristicKind::Memory);
        s.readings.battery = Some(BatteryState {
            level: 0.15,
            charging: true,
        });
        s.readings.memory = None;
        assert_eq!(h.assess(&s).cap, 1.0);
        // GPU memory near its budget caps the same way, and says it is the GPU's.
        s.readings.gpu_memory = Some(MemoryState {
            used_bytes: 88,
            budget_bytes: 100,
        });
        let a = h.assess(&s);
        assert!(!a.critical);
        assert_eq!(a.cap, 0.8);
        assert_eq!(a.cap_by.unwrap().kind(), HeuristicKind::GpuMemory);
        assert!(a
            .cap_by
            .unwrap()
            .to_string()
            .starts_with("GPU memory: 88 %"));
        s.readings.gpu_memory = Some(MemoryState {
            used_bytes: 97,
            budget_bytes: 100,
        });
        assert!(h.assess(&s).critical);
    }

    #[test]
    fn death_spiral_enters_after_sustained_clamping_and_leaves_with_hysteresis() {
        let mut h = Heuristics::new(16.0, 0.1, 0.25);
        let mut s = sig(40.0);
        s.step_clamped = true;
        for i in 0..SPIRAL_ENTER {
            let a = h.assess(&s);
            assert_eq!(a.critical, i + 1 >= SPIRAL_ENTER);
        }
        let a = h.assess(&s);
        assert_eq!(a.cap, 0.25);
        assert!(a.cap_by.unwrap().to_string().contains("death spiral"));
        s.step_clamped = false;
        for _ in 0..SPIRAL_EXIT - 1 {
            assert!(h.assess(&s).critical);
        }
        assert!(!h.assess(&s).critical);
    }
}
