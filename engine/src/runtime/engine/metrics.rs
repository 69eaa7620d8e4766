//! The [`Engine`]'s own metrics (`docs/telemetry.md` lists them): registered once at build,
//! updated once per frame (systems' counters every [`SYSTEM_METRICS_EVERY`] frames).
//!
//! Owns: [`Metrics`], the per-system series and the per-frame updates. Must never: look a
//! name up or allocate per frame (every handle is registered at build or on first sight of a
//! system or agent).

use super::*;
use lanegraph_telemetry::hooks::BucketsHooks;

pub(super) struct Metrics {
    /// `frame.time`: each frame's owner-thread wall time, seconds.
    /// Writer: `record_frame` (owner thread, frame end). Reader: exporters of `Engine::metrics`.
    pub(super) frame_time: Histogram,
    /// `frame.completed`: frames completed.
    /// Writer: `record_frame` (owner thread, frame end). Reader: exporters of `Engine::metrics`.
    pub(super) completed: Counter,
    /// `frame.sim_steps`: fixed steps run.
    /// Writer: `record_frame` (owner thread, frame end). Reader: exporters of `Engine::metrics`.
    pub(super) steps: Counter,
    /// `frame.steps_dropped`: fixed steps dropped by the step cap.
    /// Writer: `record_frame` (owner thread, frame end). Reader: exporters of `Engine::metrics`.
    pub(super) dropped: Counter,
    /// `frame.target`: the controller's frame-time target (from the tick), seconds.
    /// Writer: `record_frame` (owner thread, frame end). Reader: exporters of `Engine::metrics`.
    pub(super) target: Gauge,
    /// `frame.over_target`: frames whose wall time exceeded the target.
    /// Writer: `record_frame` (owner thread, frame end). Reader: exporters of `Engine::metrics`.
    pub(super) over_target: Counter,
    /// `budget.multiplier`: the PID's budget multiplier (from the tick).
    /// Writer: `record_frame` (owner thread, frame end). Reader: exporters of `Engine::metrics`.
    pub(super) multiplier: Gauge,
    /// `budget.switches`: the controller's strategy switches.
    /// Writer: `record_frame` (owner thread, frame end). Reader: exporters of `Engine::metrics`.
    pub(super) switches: Counter,
    /// `asset.loaded`: drained completions that loaded.
    /// Writer: `pump_assets` (owner thread, step 1). Reader: exporters of `Engine::metrics`.
    pub(super) asset_loaded: Counter,
    /// `asset.failed`: drained completions that failed.
    /// Writer: `pump_assets` (owner thread, step 1). Reader: exporters of `Engine::metrics`.
    pub(super) asset_failed: Counter,
    /// `asset.pending`: requests not yet drained (`AssetStream::pending`).
    /// Writer: `record_frame` (owner thread, frame end). Reader: exporters of `Engine::metrics`.
    pub(super) asset_pending: Gauge,
    /// `gpu.frame.time`: the render lane's newest GPU frame time, seconds.
    /// Writer: `gather_samples` (owner thread, step 5, when the pulse has a reading).
    /// Reader: exporters of `Engine::metrics`.
    pub(super) gpu_frame: Gauge,
    /// `frame.interpolation_alpha`: the accumulator's leftover after the frame's steps.
    /// Writer: `record_frame` (owner thread, frame end). Reader: exporters of `Engine::metrics`.
    pub(super) alpha: Gauge,
    /// Per plan lane, `lane.busy{lane}`: its workers' busy share of the frame.
    /// Writer: `update_lane_busy` (owner thread, step 4). Reader: exporters of `Engine::metrics`.
    pub(super) lane_busy: Vec<Gauge>,
    /// Per plan lane, `lane.jobs{lane}`: jobs its workers popped.
    /// Writer: `update_lane_busy` (owner thread, step 4). Reader: exporters of `Engine::metrics`.
    pub(super) lane_jobs: Vec<Counter>,
    /// Per plan lane, `lane.queue_depth{lane}`: jobs waiting at the frame's end.
    /// Writer: `update_lane_busy` (owner thread, step 4). Reader: exporters of `Engine::metrics`.
    pub(super) lane_queued: Vec<Gauge>,
    /// Per plan lane, `lane.panics{lane}`: its detached jobs that panicked.
    /// Writer: `update_lane_busy` (owner thread, step 4). Reader: exporters of `Engine::metrics`.
    pub(super) lane_panics: Vec<Counter>,
}

/// The per-lane series, each a family with the lane as its label
/// (OpenMetrics: `..{lane="physics"}`), in plan order.
type LaneSeries = (Vec<Gauge>, Vec<Counter>, Vec<Gauge>, Vec<Counter>);

impl Metrics {
    /// Registers every engine metric once (`docs/telemetry.md` lists them), one line per
    /// metric with its unit and help text, so the exported names are read in one place.
    pub(super) fn new(r: &Registry, lanes: &Lanes) -> Result<Metrics, telemetry::RegisterError> {
        let _ = telemetry::register_memory_metrics(r);
        let _ = telemetry::spans::register_metrics(r);
        let (lane_busy, lane_jobs, lane_queued, lane_panics) = Self::lane_series(r, lanes)?;
        let counter = |name, help| r.register_counter(name, &[], Unit::None, help);
        let gauge = |name, unit, help| r.register_gauge(name, &[], unit, help);
        Ok(Metrics {
            frame_time: r.register_histogram(
                "frame.time",
                &[],
                Unit::Seconds,
                "Wall time of one frame on the owner thread.",
                Buckets::frame_time_seconds(),
            )?,
            completed: counter("frame.completed", "Frames completed.")?,
            steps: counter("frame.sim_steps", "Fixed simulation steps taken.")?,
            dropped: counter(
                "frame.steps_dropped",
                "Fixed steps dropped by the 5-step cap (slow motion).",
            )?,
            target: gauge(
                "frame.target",
                Unit::Seconds,
                "The budget controller's current frame-time target.",
            )?,
            over_target: counter(
                "frame.over_target",
                "Frames whose wall time exceeded the target.",
            )?,
            multiplier: gauge(
                "budget.multiplier",
                Unit::Ratio,
                "The PID's global budget multiplier.",
            )?,
            switches: counter(
                "budget.switches",
                "Strategy switches, each logged with its reason.",
            )?,
            asset_loaded: counter("asset.loaded", "Assets loaded and applied.")?,
            asset_failed: counter("asset.failed", "Asset requests that ended in an error.")?,
            asset_pending: gauge("asset.pending", Unit::None, "Asset requests in flight.")?,
            gpu_frame: gauge(
                "gpu.frame.time",
                Unit::Seconds,
                "GPU time of the whole frame (EMA-smoothed).",
            )?,
            alpha: gauge(
                "frame.interpolation_alpha",
                Unit::Ratio,
                "Leftover of the fixed-step accumulator, 0..1.",
            )?,
            lane_busy,
            lane_jobs,
            lane_queued,
            lane_panics,
        })
    }

    /// `lane.busy`, `lane.jobs`, `lane.queue_depth` and `lane.panics` for every plan lane.
    fn lane_series(r: &Registry, lanes: &Lanes) -> Result<LaneSeries, telemetry::RegisterError> {
        let mut out: LaneSeries = Default::default();
        for l in lanes.plan().lanes() {
            let lane: &[(&str, &str)] = &[("lane", &l.name)];
            out.0.push(r.register_gauge(
                "lane.busy",
                lane,
                Unit::Ratio,
                "Share of the last frame the lane's workers were busy.",
            )?);
            out.1.push(r.register_counter(
                "lane.jobs",
                lane,
                Unit::None,
                "Jobs the lane's workers popped.",
            )?);
            out.2.push(r.register_gauge(
                "lane.queue_depth",
                lane,
                Unit::None,
                "Jobs waiting on the lane at the frame's end.",
            )?);
            out.3.push(r.register_counter(
                "lane.panics",
                lane,
                Unit::None,
                "Detached jobs on the lane that panicked (the lane lives on).",
            )?);
        }
        Ok(out)
    }
}

/// Frames between copies of the systems' counters into their metrics.
pub(crate) const SYSTEM_METRICS_EVERY: u64 = 30;

/// One system's labelled series (`system="<name>"`).
pub(super) struct SystemSeries {
    /// `system.runs{system}`: the system's runs.
    /// Writer: `update_system_metrics` (owner thread, every `SYSTEM_METRICS_EVERY` frames).
    /// Reader: exporters of `Engine::metrics`.
    pub(super) runs: Counter,
    /// `system.over_budget{system}`: runs strictly above the system's budget.
    /// Writer: `update_system_metrics` (owner thread, every `SYSTEM_METRICS_EVERY` frames).
    /// Reader: exporters of `Engine::metrics`.
    pub(super) over: Counter,
    /// `system.last_time{system}`: the system's last run time, seconds.
    /// Writer: `update_system_metrics` (owner thread, every `SYSTEM_METRICS_EVERY` frames).
    /// Reader: exporters of `Engine::metrics`.
    pub(super) last: Gauge,
    /// The scheduler's run count at the last copy: `runs` gets the difference.
    /// Writer and reader: `update_system_metrics`.
    pub(super) runs_seen: u64,
    /// The scheduler's over-budget count (`warns`) at the last copy: `over` gets the
    /// difference. Writer and reader: `update_system_metrics`.
    pub(super) over_seen: u64,
}

impl SystemSeries {
    pub(super) fn register(
        r: &Registry,
        name: &str,
    ) -> Result<SystemSeries, telemetry::RegisterError> {
        let label: &[(&str, &str)] = &[("system", name)];
        Ok(SystemSeries {
            runs: r.register_counter("system.runs", label, Unit::None, "Runs of the system.")?,
            over: r.register_counter(
                "system.over_budget",
                label,
                Unit::None,
                "Runs strictly above the system's budget.",
            )?,
            last: r.register_gauge(
                "system.last_time",
                label,
                Unit::Seconds,
                "The system's last run time.",
            )?,
            runs_seen: 0,
            over_seen: 0,
        })
    }
}
