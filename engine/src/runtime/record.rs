//! The run record every engine keeps: what a summary or a report needs, in bounded memory,
//! however long the run.
//!
//! Owns: [`RunRecorder`] (a ring of the last frames plus whole-run aggregates: frame-time and
//! per-system percentiles, lane busy means), the frame's figures it is fed ([`FrameFigures`],
//! lent by the engine at the end of each frame) and the exported [`FrameRow`]. Must never: grow
//! with the number of frames, allocate in steady state (a new system allocates its entry once;
//! after the ring is full, nothing allocates), or reach the engine (it sees the figures and the
//! world, read-only).

use lanegraph_telemetry::quantiles::LogHistogram;

use crate::world::World;

/// What one frame measured (the fields the record keeps), lent to the run record at the end of [`crate::Engine::frame`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct FrameFigures<'a> {
    /// Frame number (1-based).
    pub(crate) frame: u64,
    /// Owner-thread wall time of the frame, ms.
    pub(crate) frame_ms: f64,
    /// The controller's frame-time target after this frame, ms.
    pub(crate) target_ms: f64,
    /// Fixed steps run.
    pub(crate) steps: u32,
    /// Time in the physics hook, ms.
    pub(crate) physics_ms: f64,
    /// Live heap bytes after the frame (0 without the tracking allocator).
    pub(crate) memory_bytes: i64,
    /// The budget controller's multiplier.
    pub(crate) multiplier: f64,
    /// The frame budget, ms (`1000 / target_fps`).
    pub(crate) budget_ms: f64,
    /// True when this frame's tick changed a strategy.
    pub(crate) decided: bool,
    /// Busy share of each lane over the frame, 0..1, in lane-plan order.
    pub(crate) lane_busy: &'a [f64],
    /// The world after the frame: its system table (each system's runs and last time).
    pub(crate) world: &'a World,
}

/// One frame's figures, as the recorder exports them.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FrameRow {
    /// Frame number (1-based).
    pub frame: u64,
    /// Owner-thread wall time of `frame()`, ms.
    pub frame_ms: f64,
    /// The controller's frame-time target, ms.
    pub target_ms: f64,
    /// Fixed steps run.
    pub steps: u32,
    /// Time in the physics hook, ms.
    pub physics_ms: f64,
    /// Live heap bytes after the frame (0 without the tracking allocator).
    pub memory_bytes: i64,
    /// Busy share of each lane over the frame, 0..1, in plan order.
    pub lane_busy: Vec<f64>,
    /// The budget multiplier.
    pub multiplier: f64,
}

/// A frame in the ring (its lane busy shares live in the ring's flat array).
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    frame: u64,
    frame_ms: f64,
    target_ms: f64,
    steps: u32,
    physics_ms: f64,
    memory_bytes: i64,
    multiplier: f64,
}

/// Whole-run figures of one system.
#[derive(Debug, Clone)]
pub struct SystemRecord {
    /// The system's name.
    pub name: String,
    /// Its budget, ms.
    pub budget_ms: f64,
    /// Runs over the whole run.
    pub runs: u64,
    /// Frames in which it ran, and the time of its last run in each (ns): percentiles over the
    /// whole run.
    pub time_ns: LogHistogram,
    /// Frames whose sampled run exceeded the budget.
    pub over_budget: u64,
}

/// Frame times are resolved to 0.1 µs (see [`LogHistogram`]).
const FRAME_MS_UNIT: f64 = 1e-4;

/// The bounded run record an engine keeps (`EngineConfig::record_frames` frames whole; read by
/// [`RunSummary::from_engine`](super::RunSummary::from_engine), the report, and through
/// [`EngineHooks::run_record`](crate::hooks::EngineHooks::run_record)).
///
/// Keeps the last `capacity` frames whole ([`RunRecorderHooks::recent`]) and, over every frame of
/// the run, frame-time percentiles, mean lane busy and per-system timing percentiles (within
/// [`LogHistogram::RELATIVE_ERROR`] of exact).
#[derive(Debug, Clone)]
pub struct RunRecorder {
    capacity: usize,
    lanes: usize,
    slots: Vec<Slot>,
    busy: Vec<f64>,
    /// Index of the oldest frame in `slots`.
    start: usize,
    len: usize,
    frames: u64,
    frame_ms: LogHistogram,
    /// The controller's target after the last frame, ms (0 before the first).
    last_target_ms: f64,
    /// Frames whose time was over the controller's target in force for them.
    over_target: u64,
    /// The latest frame whose tick changed a strategy.
    last_decision: Option<u64>,
    /// Frames over the budget within `AFTER_A_DECISION_FRAMES` after such a frame.
    over_budget_after_decision: u64,
    busy_sum: Vec<f64>,
    systems: Vec<SystemRecord>,
    /// `runs` of each system at the previous frame (index = system id).
    seen_runs: Vec<u64>,
}

impl RunRecorder {
    /// A recorder keeping the last `capacity` frames (at least one) whole.
    pub(crate) fn new(capacity: usize) -> RunRecorder {
        let capacity = capacity.max(1);
        RunRecorder {
            capacity,
            lanes: 0,
            slots: Vec::with_capacity(capacity),
            busy: Vec::new(),
            start: 0,
            len: 0,
            frames: 0,
            frame_ms: LogHistogram::new(FRAME_MS_UNIT),
            last_target_ms: 0.0,
            over_target: 0,
            last_decision: None,
            over_budget_after_decision: 0,
            busy_sum: Vec::new(),
            systems: Vec::new(),
            seen_runs: Vec::new(),
        }
    }

    /// The controller's target after the last frame, ms (0 before the first).
    pub(crate) fn last_target_ms(&self) -> f64 {
        self.last_target_ms
    }

    /// Reads the world's system table directly (index = system id; no id checks or stats
    /// struct per system: this runs every frame for every system).
    fn record_systems(&mut self, f: &FrameFigures<'_>) {
        for (i, rec) in f.world.systems.records.iter().enumerate() {
            if i >= self.systems.len() {
                // A new system: its entry is made once (the only allocation after warm-up).
                self.systems.push(SystemRecord {
                    name: rec.name.to_string(),
                    budget_ms: rec.budget.as_nanos() as f64 / 1e6,
                    runs: 0,
                    time_ns: LogHistogram::new(1.0),
                    over_budget: 0,
                });
                self.seen_runs.push(0);
            }
            if rec.runs > self.seen_runs[i] {
                self.seen_runs[i] = rec.runs;
                let s = &mut self.systems[i];
                s.runs = rec.runs;
                s.time_ns.record(rec.last_ns as f64);
                if rec.last_ns as f64 / 1e6 > s.budget_ms {
                    s.over_budget += 1;
                }
            }
        }
    }
}

/// The run record's figures for the runtime's summary, report and tests (a game reads
/// [`RunSummary`](super::RunSummary), built from them).
pub trait RunRecorderHooks {
    /// Frames recorded over the whole run.
    fn frames(&self) -> u64;
    /// Frame times (ms) over the whole run.
    fn frame_ms(&self) -> &LogHistogram;
    /// Frames over the controller's target (each against the target of its own tick).
    fn frames_over_target(&self) -> u64;
    /// Frames over the frame budget within 5 frames after a frame whose tick changed a
    /// strategy.
    fn frames_over_budget_after_a_decision(&self) -> u64;
    /// Mean busy share of lane `i` (plan order) over the whole run.
    fn mean_lane_busy(&self, i: usize) -> Option<f64>;
    /// The last frames held (at most the capacity), oldest first.
    fn recent(&self) -> Vec<FrameRow>;
    /// Every system seen, in registration order.
    fn systems(&self) -> &[SystemRecord];
}

impl RunRecorderHooks for RunRecorder {
    fn frames(&self) -> u64 {
        self.frames
    }

    fn frame_ms(&self) -> &LogHistogram {
        &self.frame_ms
    }

    fn frames_over_target(&self) -> u64 {
        self.over_target
    }

    fn frames_over_budget_after_a_decision(&self) -> u64 {
        self.over_budget_after_decision
    }

    fn mean_lane_busy(&self, i: usize) -> Option<f64> {
        let sum = self.busy_sum.get(i)?;
        (self.frames > 0).then(|| sum / self.frames as f64)
    }

    fn recent(&self) -> Vec<FrameRow> {
        (0..self.len)
            .map(|k| {
                let i = (self.start + k) % self.capacity;
                let s = self.slots[i];
                FrameRow {
                    frame: s.frame,
                    frame_ms: s.frame_ms,
                    target_ms: s.target_ms,
                    steps: s.steps,
                    physics_ms: s.physics_ms,
                    memory_bytes: s.memory_bytes,
                    lane_busy: self.busy[i * self.lanes..(i + 1) * self.lanes].to_vec(),
                    multiplier: s.multiplier,
                }
            })
            .collect()
    }

    fn systems(&self) -> &[SystemRecord] {
        &self.systems
    }
}

impl RunRecorder {
    /// Records one frame (the engine calls it at the end of `frame`, owner thread).
    pub(crate) fn record(&mut self, f: &FrameFigures<'_>) {
        if self.frames == 0 || self.lanes != f.lane_busy.len() {
            // First frame (or a new plan): size the flat arrays once.
            self.lanes = f.lane_busy.len();
            self.busy = vec![0.0; self.capacity * self.lanes];
            self.busy_sum = vec![0.0; self.lanes];
            self.slots.clear();
            self.start = 0;
            self.len = 0;
        }
        if f.frame_ms > f.target_ms {
            self.over_target += 1;
        }
        let after = self.last_decision.is_some_and(|d| {
            f.frame > d && f.frame - d <= super::adaptation::AFTER_A_DECISION_FRAMES
        });
        if after && f.frame_ms > f.budget_ms {
            self.over_budget_after_decision += 1;
        }
        if f.decided {
            self.last_decision = Some(f.frame);
        }
        let slot = Slot {
            frame: f.frame,
            frame_ms: f.frame_ms,
            target_ms: f.target_ms,
            steps: f.steps,
            physics_ms: f.physics_ms,
            memory_bytes: f.memory_bytes,
            multiplier: f.multiplier,
        };
        let i = if self.len < self.capacity {
            self.slots.push(slot);
            self.len += 1;
            self.len - 1
        } else {
            let i = self.start;
            self.slots[i] = slot;
            self.start = (self.start + 1) % self.capacity;
            i
        };
        self.busy[i * self.lanes..(i + 1) * self.lanes].copy_from_slice(f.lane_busy);
        for (sum, b) in self.busy_sum.iter_mut().zip(f.lane_busy) {
            *sum += b;
        }
        self.frames += 1;
        self.frame_ms.record(f.frame_ms);
        self.last_target_ms = f.target_ms;
        self.record_systems(f);
    }
}
