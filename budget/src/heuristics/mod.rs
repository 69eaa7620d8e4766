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
//!
//! | file | idea |
//! |------|------|
//! | `findings` | What each heuristic found, with its figures (`Finding`), and the provider verdicts |
//! | `tests` | The heuristics' unit tests |

mod findings;
#[cfg(test)]
mod tests;

pub(crate) use findings::Finding;
#[cfg(test)]
pub(crate) use findings::HeuristicKind;
use findings::{battery_cap, memory_cap, thermal_verdict, Verdict};

use super::providers::Readings;
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

    /// Reads one tick's signals and collapses the findings (module docs): each heuristic
    /// proposes a target or a cap in precedence order; the lowest of each is kept with who
    /// proposed it.
    pub(crate) fn assess(&mut self, s: &Signals) -> Assessment {
        let measured = s.gpu_ms.map_or(s.cpu_ms, |g| g.max(s.cpu_ms));
        let evicted = self.record(measured);
        let base = self.budget_ms * (1.0 - self.headroom);
        let mut target = TargetPick {
            target: base,
            by: Finding::FrameTime {
                budget_ms: self.budget_ms,
                target_ms: base,
            },
            floor: self.budget_ms * MIN_TARGET_FRACTION,
        };
        if let Some((t, by)) = self.trend(base, measured, target.floor) {
            target.propose(t, by);
        }
        if let Some((t, by)) = self.stutter(evicted, target.floor) {
            target.propose(t, by);
        }
        let mut caps = CapPick {
            cap: 1.0,
            by: None,
            critical: false,
        };
        if self.spiral(s.step_clamped) {
            caps.with(
                self.min_multiplier,
                true,
                Finding::DeathSpiral {
                    clamped_frames: self.clamped_run.max(SPIRAL_ENTER),
                },
            );
        }
        reading_verdicts(s.readings, base, &mut target, &mut caps);
        let t = target.target;
        let pressure = |measured_ms: Option<f64>, gpu: bool| {
            measured_ms
                .filter(|&m| m > t)
                .map(|measured_ms| Finding::Pressure {
                    gpu,
                    measured_ms,
                    target_ms: t,
                })
        };
        Assessment {
            target_ms: t,
            target_by: target.by,
            cap: caps.cap,
            cap_by: caps.by,
            critical: caps.critical,
            pressure: [pressure(Some(s.cpu_ms), false), pressure(s.gpu_ms, true)],
        }
    }

    /// Puts this frame's time in the history; returns the oldest frame it overwrote (the
    /// changes that leave with it are taken out of the stutter windows).
    fn record(&mut self, measured: f64) -> f64 {
        let evicted = self.history[self.head];
        self.history[self.head] = measured;
        self.head = (self.head + 1) % STUTTER_WINDOW;
        self.len = (self.len + 1).min(STUTTER_WINDOW);
        evicted
    }

    /// The trend heuristic: four blocks of `TREND_WINDOW / 4` frames; a trend is a steady rise
    /// (every block above the previous by at least a quarter of the average rise), so a load
    /// *step* (one jump between two blocks) is not mistaken for a trend: the cost model sees
    /// steps. Proposes `base - slope * TREND_LOOKAHEAD` (at most 20 % off).
    fn trend(&self, base: f64, measured: f64, floor: f64) -> Option<(f64, Finding)> {
        const B: usize = TREND_WINDOW / 4;
        if self.len >= TREND_WINDOW && measured > 0.8 * base {
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
                let by = Finding::Trend {
                    slope_ms: slope,
                    target_ms: t.max(floor),
                };
                return Some((t, by));
            }
        }
        None
    }

    /// The stutter heuristic: the 95th percentile of the frame-to-frame change, estimated
    /// robustly as `STUTTER_P95_PER_MEDIAN * median |change|` over the window (for Gaussian
    /// jitter the two agree). Successive changes, not the spread of levels, and a median, not
    /// a raw percentile: a load step and the few frames that settle it change little.
    ///
    /// Periodic work is not stutter: a game whose collisions run every other step, or a fixed
    /// step at half the frame rate, makes frames alternate by its own rhythm, and a lower
    /// target cannot smooth that out (it only pushes every agent to its cheapest). So the
    /// change is taken at lags 1..=STUTTER_MAX_PERIOD and the *smallest* estimate wins: a
    /// pattern of period k has (near) zero change at lag k, while random jitter has the same
    /// change at every lag. Proposes `budget - jitter` when the jitter exceeds the headroom.
    fn stutter(&mut self, evicted: f64, floor: f64) -> Option<(f64, Finding)> {
        if self.len != STUTTER_WINDOW {
            return None;
        }
        let mut raw = f64::INFINITY;
        let (history, head) = (&self.history, self.head);
        let recent = |age: usize| history[(head + STUTTER_WINDOW - 1 - age) % STUTTER_WINDOW];
        for lag in 1..=STUTTER_MAX_PERIOD {
            let entering = (recent(0) - recent(lag)).abs();
            let w = &mut self.stutter_changes[lag - 1];
            // The change that leaves pairs the evicted frame with the one `lag` newer, now at
            // age `STUTTER_WINDOW - lag`: newer minus older, exactly as it entered, so the
            // window finds it bit for bit. `stutter_ready` means the window was full before
            // this frame (it never shrinks), so `evicted` was in it.
            let leaving = (recent(STUTTER_WINDOW - lag) - evicted).abs();
            let slid = self.stutter_ready && w.remove(leaving) && w.insert(entering);
            if !slid {
                // First full window (or a leaving change not found, which `stutter_rebuilds`
                // counts and a test asserts never happens): every change at this lag, anew.
                self.stutter_rebuilds += 1;
                w.clear();
                for age in 0..STUTTER_WINDOW - lag {
                    w.insert((recent(age) - recent(age + lag)).abs());
                }
            }
            raw = raw.min(STUTTER_P95_PER_MEDIAN * w.median());
        }
        self.stutter_ready = true;
        // Smoothed: stutter is a lasting property of the frame, and a target that wanders with
        // each window's sampling noise would re-arbitrate for nothing.
        let jitter = match self.jitter {
            Some(j) => j + STUTTER_SMOOTHING * (raw - j),
            None => raw,
        };
        self.jitter = Some(jitter);
        (jitter > self.budget_ms * self.headroom).then(|| {
            let t = self.budget_ms - jitter;
            let by = Finding::Stutter {
                jitter_ms: jitter,
                target_ms: t.max(floor),
            };
            (t, by)
        })
    }

    /// The death-spiral detector: entered after `SPIRAL_ENTER` clamped frames in a row, left
    /// after `SPIRAL_EXIT` unclamped ones. Returns whether it holds.
    fn spiral(&mut self, clamped: bool) -> bool {
        if clamped {
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
        self.in_spiral
    }
}

/// The target being collapsed: the lowest proposed so far, never below the floor, and who
/// proposed it.
struct TargetPick {
    target: f64,
    by: Finding,
    floor: f64,
}

impl TargetPick {
    fn propose(&mut self, t: f64, by: Finding) {
        let t = t.max(self.floor);
        if t < self.target {
            self.target = t;
            self.by = by;
        }
    }
}

/// The cap being collapsed: the lowest proposed (the earliest keeps a tie), who proposed it,
/// and whether any proposal was critical.
struct CapPick {
    cap: f64,
    by: Option<Finding>,
    critical: bool,
}

impl CapPick {
    fn with(&mut self, c: f64, critical: bool, by: Finding) {
        self.critical |= critical;
        if c < self.cap {
            self.cap = c;
            self.by = Some(by);
        }
    }
}

/// The providers' heuristics, in precedence order: thermal (a cap, or a lower target when
/// fair), battery (not charging), memory, GPU memory.
fn reading_verdicts(r: Readings, base: f64, target: &mut TargetPick, caps: &mut CapPick) {
    match thermal_verdict(r.thermal) {
        (Some(Verdict::Cap(c)), crit) => caps.with(c, crit, Finding::Thermal { state: r.thermal }),
        (Some(Verdict::TargetScale(k)), _) => {
            target.propose(base * k, Finding::Thermal { state: r.thermal })
        }
        (None, _) => {}
    }
    if let Some(b) = r.battery.filter(|b| !b.charging) {
        if let Some((c, crit)) = battery_cap(b.level) {
            caps.with(c, crit, Finding::Battery { level: b.level });
        }
    }
    if let Some(m) = r.memory {
        if let Some((c, crit)) = memory_cap(m.fraction()) {
            caps.with(
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
            caps.with(
                c,
                crit,
                Finding::GpuMemory {
                    fraction: m.fraction(),
                },
            );
        }
    }
}
