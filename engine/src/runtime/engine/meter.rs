//! The meter: the metrics registry and the engine's own series, the lane meter, the trace history, the live view and the run record.
//!
//! Owns: the fields below, each documented with who writes it and who reads it (the frame's
//! steps are numbered as in the `engine` module docs). Must never: be reached from outside the
//! engine (its fields are the engine's parts, not a surface).

use lanegraph_jobs::LaneId;
#[cfg(feature = "puffin")]
use lanegraph_telemetry as telemetry;
use lanegraph_telemetry::{Gauge, Registry, TraceHistory};

use super::super::record::RunRecorder;
use super::metrics::{Metrics, SystemSeries};

/// The meter: the metrics registry and the engine's own series, the lane meter, the trace history, the live view and the run record.
pub(super) struct Meter {
    /// The registry every engine metric is in (the render lane's gauges too). Writer: `assemble`;
    /// `update_system_metrics` and `update_agent_metrics` register new series (step 4).
    /// Reader: `Engine::metrics` (exporters).
    pub(super) registry: Registry,
    /// The engine's own metric handles. Writer: `assemble`; updated by `pump_assets`,
    /// `update_lane_busy`, `gather_samples`, `record_frame` (owner thread). Reader: the registry's
    /// exporters (`Engine::metrics`).
    pub(super) metrics: Metrics,
    /// The last `trace_frames` frames of spans. Writer: `frame` (owner thread, step 4:
    /// `collect_frame`). Readers: `Engine::chrome_trace`, `EngineHooks::trace`.
    pub(super) history: TraceHistory,
    /// The live view, when started ([`Engine::serve_puffin`]).
    /// Writer: `serve_puffin` (between frames). Reader: `frame` (step 4: publishes the spans).
    #[cfg(feature = "puffin")]
    pub(super) puffin: Option<telemetry::PuffinServer>,
    /// The run record. Writer: `record_frame` (owner thread, step 4: the frame's figures, while
    /// `recording`). Readers: `RunSummary::from_engine`, the report (`EngineHooks::run_record`).
    pub(super) record: RunRecorder,
    /// Whether frames are recorded (true; `EngineHooks::set_recording` lets the timing bench
    /// measure the frame without the record). Writer: `set_recording` (between frames).
    /// Reader: `record_frame`.
    pub(super) recording: bool,
    /// Per system (schedule order), its labelled series; `None` when the registry refused the
    /// system's name as a label value (over 256 bytes).
    /// Writer and reader: `update_system_metrics` (step 4, every `SYSTEM_METRICS_EVERY` frames).
    pub(super) system_series: Vec<Option<SystemSeries>>,
    /// Per agent (id order), its `budget.strategy{agent}` gauge (`None`: name refused).
    /// Writer and reader: `update_agent_metrics` (owner thread, step 4).
    pub(super) agent_series: Vec<Option<Gauge>>,
    /// Each plan lane's figures between frames, for the per-frame busy share and counters.
    pub(super) lane: LaneMeter,
}

/// Each plan lane's figures between frames (plan order).
pub(super) struct LaneMeter {
    /// Each plan lane's id, in plan order (looked up once, not per frame).
    /// Writer: `assemble`. Reader: `update_lane_busy` (owner thread, step 4).
    pub(super) ids: Vec<Option<LaneId>>,
    /// Each plan lane's worker count.
    /// Writer: `assemble` (at least 1). Reader: `update_lane_busy` (step 4: the share's divisor).
    pub(super) workers: Vec<f64>,
    /// The last frame's busy share per lane (lent to the run record).
    /// Writer: `update_lane_busy` (owner thread, step 4). Readers: `record_frame`,
    /// `Engine::lane_busy`.
    pub(super) busy_now: Vec<f64>,
    /// Each lane's `LaneStats::busy_ns` at the last frame's end, for the frame's difference.
    /// Writer: `assemble` (zeros), `update_lane_busy` (step 4). Reader: `update_lane_busy`.
    pub(super) busy_prev: Vec<u64>,
    /// Each lane's `LaneStats::jobs` at the last frame's end, for the `lane.jobs` difference.
    /// Writer: `assemble` (zeros), `update_lane_busy` (step 4). Reader: `update_lane_busy`.
    pub(super) jobs_prev: Vec<u64>,
    /// Each lane's `LaneStats::detached_panics` at the last frame's end, for the `lane.panics`
    /// difference. Writer: `assemble` (zeros), `update_lane_busy` (step 4). Reader: the same.
    pub(super) panics_prev: Vec<u64>,
}
