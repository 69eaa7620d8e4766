//! The meter: the metrics registry and the engine's own series, the lane meter, the trace history, the live view and the run record.
//!
//! Owns: the fields below, each documented with who writes it and who reads it (the frame's
//! steps are numbered as in the `engine` module docs). Must never: be reached from outside the
//! engine (its fields are the engine's parts, not a surface).

use lanegraph_budget::hooks::ControllerDriver;
use lanegraph_budget::{Controller, TickReport};
use lanegraph_jobs::{LaneId, Lanes};
use lanegraph_telemetry as telemetry;
#[cfg(feature = "puffin")]
use lanegraph_telemetry::hooks::PuffinHooks;
use lanegraph_telemetry::hooks::TraceHistoryHooks;
use lanegraph_telemetry::{Gauge, Registry, TraceHistory, Unit};

use super::super::record::{FrameFigures, RunRecorder};
use super::metrics::{Metrics, SystemSeries, SYSTEM_METRICS_EVERY};
use crate::game_loop::FrameReport;
use crate::world::World;

/// What the meter reads of a frame that ended (step 4).
pub(super) struct FrameEnd<'a> {
    pub(super) frame: u64,
    pub(super) frame_ms: f64,
    pub(super) physics_ns: u64,
    pub(super) report: &'a FrameReport,
    pub(super) tick: &'a TickReport,
    /// Asset loads still waiting.
    pub(super) asset_pending: u64,
    /// The frame budget, ms.
    pub(super) budget_ms: f64,
    pub(super) world: &'a World,
}

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

impl Meter {
    /// Step 4, before the controller ticks: the frame's spans into the trace history (and the
    /// live view), each lane's busy share, the systems' series every [`SYSTEM_METRICS_EVERY`]
    /// frames, and each agent's strategy gauge.
    pub(super) fn after_frame(
        &mut self,
        frame: u64,
        frame_ms: f64,
        lanes: &Lanes,
        world: &World,
        controller: &Controller,
    ) {
        let collected = self.history.collect_frame(frame);
        #[cfg(feature = "puffin")]
        if let Some(p) = self.puffin.as_mut() {
            p.publish(&collected, &telemetry::spans::tracks());
        }
        let _ = collected;
        self.update_lane_busy(lanes, frame_ms);
        if frame % SYSTEM_METRICS_EVERY == 0 {
            self.update_system_metrics(world);
        }
        self.update_agent_metrics(controller);
    }

    /// Step 4's figures once the controller has ticked: the engine's frame metrics, and the
    /// frame's figures lent to the run record.
    pub(super) fn record_frame(&mut self, f: &FrameEnd<'_>) {
        // OpenMetrics' base unit is the second; the engine reads milliseconds.
        let m = &self.metrics;
        m.frame_time.observe(f.frame_ms / 1000.0);
        m.alpha.set(f.report.alpha);
        m.completed.inc();
        m.steps.add(u64::from(f.report.steps));
        m.dropped.add(f.report.dropped_steps);
        m.target.set(f.tick.target_ms / 1000.0);
        if f.frame_ms > f.tick.target_ms {
            m.over_target.inc();
        }
        m.multiplier.set(f.tick.multiplier);
        m.switches.add(f.tick.decisions as u64);
        m.asset_pending.set(f.asset_pending as f64);
        if self.recording {
            let figures = FrameFigures {
                frame: f.frame,
                frame_ms: f.frame_ms,
                target_ms: f.tick.target_ms,
                steps: f.report.steps,
                physics_ms: f.physics_ns as f64 / 1e6,
                memory_bytes: telemetry::memory_stats().current_bytes,
                multiplier: f.tick.multiplier,
                budget_ms: f.budget_ms,
                decided: f.tick.decisions > 0,
                lane_busy: &self.lane.busy_now,
                world: f.world,
            };
            self.record.record(&figures);
        }
    }
}

impl Meter {
    /// Copies each system's counters into its `system.*{system}` series (every
    /// [`SYSTEM_METRICS_EVERY`] frames: the per-run timing stays in the scheduler's window, so
    /// the metrics cost nothing per system run). Registers the series of new systems.
    fn update_system_metrics(&mut self, world: &World) {
        for (i, id) in world.system_ids().enumerate() {
            if i == self.system_series.len() {
                let name = world.system_name(id).unwrap_or("unknown");
                self.system_series
                    .push(SystemSeries::register(&self.registry, name).ok());
            }
            let (Some(series), Ok(stats)) = (
                self.system_series[i].as_mut(),
                world.system_timing_stats(id),
            ) else {
                continue;
            };
            series.runs.add(stats.runs.saturating_sub(series.runs_seen));
            series
                .over
                .add(stats.warns.saturating_sub(series.over_seen));
            (series.runs_seen, series.over_seen) = (stats.runs, stats.warns);
            series.last.set(stats.last_ns as f64 / 1e9);
        }
    }

    /// Each agent's current strategy into its `budget.strategy{agent}` gauge (registering the
    /// gauges of agents registered since).
    fn update_agent_metrics(&mut self, controller: &Controller) {
        for (i, id) in controller.agent_ids().enumerate() {
            if i == self.agent_series.len() {
                let name = controller.agent_name(id).unwrap_or("unknown");
                self.agent_series.push(
                    self.registry
                        .register_gauge(
                            "budget.strategy",
                            &[("agent", name)],
                            Unit::None,
                            "Index of the agent's current strategy (0: its first, fullest one).",
                        )
                        .ok(),
                );
            }
            if let (Some(g), Some(c)) = (&self.agent_series[i], controller.current(id)) {
                g.set(c.0 as f64);
            }
        }
    }

    /// Each lane's busy share of the frame, into the lane meter's `busy_now` (no allocation, no lookup).
    fn update_lane_busy(&mut self, lanes: &Lanes, frame_ms: f64) {
        for (i, id) in self.lane.ids.iter().enumerate() {
            let Some(id) = *id else {
                continue;
            };
            let s = lanes.stats(id).unwrap_or_default();
            let busy = s.busy_ns.saturating_sub(self.lane.busy_prev[i]);
            let jobs = s.jobs.saturating_sub(self.lane.jobs_prev[i]);
            self.lane.busy_prev[i] = s.busy_ns;
            self.lane.jobs_prev[i] = s.jobs;
            let share = if frame_ms > 0.0 {
                (busy as f64 / 1e6 / (frame_ms * self.lane.workers[i])).min(1.0)
            } else {
                0.0
            };
            self.metrics.lane_busy[i].set(share);
            self.metrics.lane_jobs[i].add(jobs);
            self.metrics.lane_queued[i].set(s.queued as f64);
            let panics = s.detached_panics.saturating_sub(self.lane.panics_prev[i]);
            self.lane.panics_prev[i] = s.detached_panics;
            self.metrics.lane_panics[i].add(panics);
            self.lane.busy_now[i] = share;
        }
    }
}
