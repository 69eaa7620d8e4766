//! The machine-readable frame summary: one JSON document per frame (or per run) that the HTML
//! report and the CLI both read.
//!
//! Owns: the summary's schema ([`SUMMARY_SCHEMA`]) and the derivations it makes from spans (lane
//! activity). Must never: be built on a hot path (it allocates), or change a field's meaning
//! without bumping the schema.
//!
//! Every time is in milliseconds (`*_ms`), every size a plain count; `null` means "not measured
//! this frame" (no GPU, no tracking allocator, no budget controller yet), never zero.

use std::collections::BTreeMap;

use super::alloc::MemoryStats;
use super::cost::AgentCostEvent;
use super::registry::MetricSnapshot;
use super::spans::{SpanRecord, TrackInfo, TrackKind};
use super::SummaryError;

/// The schema version this build writes and reads.
pub const SUMMARY_SCHEMA: u32 = 1;

/// One system's timing (the per-system 64-sample window's statistics).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SystemTiming {
    /// The system's name.
    pub name: String,
    /// Its last run.
    pub last_ms: f64,
    /// Nearest-rank p50 over its window.
    pub p50_ms: f64,
    /// Nearest-rank p99 over its window.
    pub p99_ms: f64,
    /// Its budget, if it has one.
    pub budget_ms: Option<f64>,
    /// Runs strictly above budget, ever.
    pub over_budget_runs: u64,
}

/// What one lane did in the frame, derived from its workers' spans.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LaneActivity {
    /// The lane's name.
    pub lane: String,
    /// Workers that recorded at least one span.
    pub workers: u32,
    /// Top-level spans (jobs) on its workers.
    pub jobs: u64,
    /// Sum of the top-level spans' durations over all workers.
    pub busy_ms: f64,
    /// Sum of the jobs' workload sizes, where they carry one.
    pub workload_n: u64,
}

/// One strategy switch by the budget controller.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BudgetDecision {
    /// The agent that switched.
    pub agent: String,
    /// Strategy before.
    pub from: String,
    /// Strategy after.
    pub to: String,
    /// Why (the controller's logged reason).
    pub reason: String,
}

/// The budget controller's state at the frame's end.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BudgetState {
    /// The PID's global budget multiplier.
    pub multiplier: f64,
    /// The frame-time target.
    pub target_ms: f64,
    /// Switches made this frame.
    pub decisions: Vec<BudgetDecision>,
}

/// Span bookkeeping for the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct SpanCounts {
    /// Spans collected.
    pub recorded: u64,
    /// Spans lost to overwriting (the trace has holes when non-zero).
    pub dropped: u64,
}

/// Everything measured about one frame.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FrameSummary {
    /// Always `SUMMARY_SCHEMA` when written by this build.
    pub schema: u32,
    /// The frame's index.
    pub frame: u64,
    /// Its start on the clock's common timeline (`Stamp::as_ns`).
    pub start_ns: u64,
    /// Its wall time on the owner thread.
    pub frame_time_ms: f64,
    /// The frame-time target it was held to, if any.
    pub target_ms: Option<f64>,
    /// Fixed simulation steps taken.
    pub sim_steps: u32,
    /// Leftover of the fixed-step accumulator, 0..1.
    pub interpolation_alpha: f64,
    /// Per-system timing.
    pub systems: Vec<SystemTiming>,
    /// Per-lane activity.
    pub lanes: Vec<LaneActivity>,
    /// Per-pass GPU timing (empty without a GPU).
    pub gpu_passes: Vec<super::GpuPass>,
    /// Agent cost events of the frame.
    pub agents: Vec<AgentCostEvent>,
    /// The budget controller's state.
    pub budget: Option<BudgetState>,
    /// Heap totals (absent without the tracking allocator).
    pub memory: Option<MemoryStats>,
    /// Span bookkeeping.
    pub spans: SpanCounts,
    /// Every registered metric's value (empty unless asked for: it is large).
    pub metrics: Vec<MetricSnapshot>,
}

impl FrameSummary {
    /// An empty summary of frame `frame`; the caller fills what it measured.
    pub fn new(frame: u64) -> Self {
        FrameSummary {
            schema: SUMMARY_SCHEMA,
            frame,
            start_ns: 0,
            frame_time_ms: 0.0,
            target_ms: None,
            sim_steps: 0,
            interpolation_alpha: 0.0,
            systems: Vec::new(),
            lanes: Vec::new(),
            gpu_passes: Vec::new(),
            agents: Vec::new(),
            budget: None,
            memory: super::alloc::is_installed().then(super::alloc::memory_stats),
            spans: SpanCounts::default(),
            metrics: Vec::new(),
        }
    }

    /// Fills [`Self::lanes`] and [`Self::spans`] from the frame's spans.
    pub fn with_spans(mut self, spans: &[SpanRecord], dropped: u64, tracks: &[TrackInfo]) -> Self {
        self.lanes = lane_activity(spans, tracks);
        self.spans = SpanCounts {
            recorded: spans.len() as u64,
            dropped,
        };
        self
    }

    /// One line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a summary always serialises")
    }

    /// Indented JSON, for files people read.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("a summary always serialises")
    }

    /// Parses a summary, refusing other schema versions.
    pub fn from_json(text: &str) -> Result<Self, SummaryError> {
        #[derive(serde::Deserialize)]
        struct Version {
            schema: u32,
        }
        let v: Version = serde_json::from_str(text)?;
        if v.schema != SUMMARY_SCHEMA {
            return Err(SummaryError::Schema {
                found: v.schema,
                expected: SUMMARY_SCHEMA,
            });
        }
        Ok(serde_json::from_str(text)?)
    }
}

/// Per-lane jobs and busy time from spans on lane-worker tracks. Only top-level spans count
/// (a span contained in an earlier one on the same track is part of that job).
pub fn lane_activity(spans: &[SpanRecord], tracks: &[TrackInfo]) -> Vec<LaneActivity> {
    let lane_of: BTreeMap<u32, &str> = tracks
        .iter()
        .filter_map(|t| match &t.kind {
            TrackKind::LaneWorker { lane, .. } => Some((t.id.0, lane.as_str())),
            _ => None,
        })
        .collect();
    let mut sorted: Vec<&SpanRecord> = spans
        .iter()
        .filter(|s| lane_of.contains_key(&s.track.0))
        .collect();
    sorted.sort_by(|a, b| {
        a.track
            .cmp(&b.track)
            .then(a.start.cmp(&b.start))
            .then(b.end.cmp(&a.end))
    });
    let mut lanes: BTreeMap<&str, (std::collections::BTreeSet<u32>, u64, u64, u64)> =
        BTreeMap::new();
    let mut covered_until = None;
    for s in sorted {
        let nested =
            matches!(covered_until, Some((track, end)) if track == s.track && s.end <= end);
        if nested {
            continue;
        }
        covered_until = Some((s.track, s.end));
        let e = lanes.entry(lane_of[&s.track.0]).or_default();
        e.0.insert(s.track.0);
        e.1 += 1;
        e.2 += s.duration_ns();
        e.3 += s.n.unwrap_or(0);
    }
    lanes
        .into_iter()
        .map(|(lane, (workers, jobs, ns, n))| LaneActivity {
            lane: lane.to_string(),
            workers: workers.len() as u32,
            jobs,
            busy_ms: ns as f64 * 1e-6,
            workload_n: n,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::spans::TrackId;
    use super::*;
    use lanegraph_jobs::clock::Stamp;

    fn lane_track(id: u32, lane: &str, index: u32) -> TrackInfo {
        TrackInfo {
            id: TrackId(id),
            name: format!("{lane} {index}"),
            kind: TrackKind::LaneWorker {
                lane: lane.into(),
                index,
            },
        }
    }

    #[test]
    fn lane_activity_counts_top_level_jobs_only() {
        let tracks = vec![
            lane_track(1, "physics", 0),
            lane_track(2, "physics", 1),
            lane_track(3, "asset", 0),
        ];
        let sp = |t: u32, a: u64, b: u64, n: Option<u64>| SpanRecord {
            name: "job",
            track: TrackId(t),
            start: Stamp(a),
            end: Stamp(b),
            n,
        };
        let spans = vec![
            sp(1, 0, 100, Some(10)),
            sp(1, 10, 20, Some(99)),
            sp(2, 0, 50, None),
            sp(3, 5, 6, Some(1)),
            sp(9, 0, 9, None),
        ];
        let lanes = lane_activity(&spans, &tracks);
        assert_eq!(lanes.len(), 2);
        let physics = lanes.iter().find(|l| l.lane == "physics").unwrap();
        assert_eq!(
            (physics.workers, physics.jobs, physics.workload_n),
            (2, 2, 10)
        );
        let asset = lanes.iter().find(|l| l.lane == "asset").unwrap();
        assert_eq!((asset.workers, asset.jobs), (1, 1));
    }

    #[test]
    fn round_trips_and_refuses_other_schemas() {
        let mut s = FrameSummary::new(42);
        s.frame_time_ms = 16.4;
        s.target_ms = Some(16.67);
        s.systems.push(SystemTiming {
            name: "move_ships".into(),
            last_ms: 0.4,
            p50_ms: 0.38,
            p99_ms: 0.9,
            budget_ms: Some(1.0),
            over_budget_runs: 0,
        });
        let back = FrameSummary::from_json(&s.to_json()).unwrap();
        assert_eq!(back, s);
        let v2 = s.to_json().replace("\"schema\":1", "\"schema\":2");
        assert!(matches!(
            FrameSummary::from_json(&v2),
            Err(SummaryError::Schema { found: 2, .. })
        ));
        assert!(matches!(
            FrameSummary::from_json("{}"),
            Err(SummaryError::Parse(_))
        ));
    }
}
