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

impl Metrics {
    /// Registers every engine metric once (`docs/telemetry.md` lists them). A list of about
    /// 100 lines, one registration per metric with its unit and help text, kept in one place
    /// so the exported names are read in one place.
    pub(super) fn new(r: &Registry, lanes: &Lanes) -> Result<Metrics, telemetry::RegisterError> {
        let _ = telemetry::register_memory_metrics(r);
        let _ = telemetry::spans::register_metrics(r);
        let (mut lane_busy, mut lane_jobs) = (Vec::new(), Vec::new());
        let (mut lane_queued, mut lane_panics) = (Vec::new(), Vec::new());
        for l in lanes.plan().lanes() {
            // One family per quantity, the lane a label (OpenMetrics: `..{lane="physics"}`).
            let lane: &[(&str, &str)] = &[("lane", &l.name)];
            lane_busy.push(r.register_gauge(
                "lane.busy",
                lane,
                Unit::Ratio,
                "Share of the last frame the lane's workers were busy.",
            )?);
            lane_jobs.push(r.register_counter(
                "lane.jobs",
                lane,
                Unit::None,
                "Jobs the lane's workers popped.",
            )?);
            lane_queued.push(r.register_gauge(
                "lane.queue_depth",
                lane,
                Unit::None,
                "Jobs waiting on the lane at the frame's end.",
            )?);
            lane_panics.push(r.register_counter(
                "lane.panics",
                lane,
                Unit::None,
                "Detached jobs on the lane that panicked (the lane lives on).",
            )?);
        }
        Ok(Metrics {
            frame_time: r.register_histogram(
                "frame.time",
                &[],
                Unit::Seconds,
                "Wall time of one frame on the owner thread.",
                Buckets::frame_time_seconds(),
            )?,
            completed: r.register_counter(
                "frame.completed",
                &[],
                Unit::None,
                "Frames completed.",
            )?,
            steps: r.register_counter(
                "frame.sim_steps",
                &[],
                Unit::None,
                "Fixed simulation steps taken.",
            )?,
            dropped: r.register_counter(
                "frame.steps_dropped",
                &[],
                Unit::None,
                "Fixed steps dropped by the 5-step cap (slow motion).",
            )?,
            target: r.register_gauge(
                "frame.target",
                &[],
                Unit::Seconds,
                "The budget controller's current frame-time target.",
            )?,
            over_target: r.register_counter(
                "frame.over_target",
                &[],
                Unit::None,
                "Frames whose wall time exceeded the target.",
            )?,
            multiplier: r.register_gauge(
                "budget.multiplier",
                &[],
                Unit::Ratio,
                "The PID's global budget multiplier.",
            )?,
            switches: r.register_counter(
                "budget.switches",
                &[],
                Unit::None,
                "Strategy switches, each logged with its reason.",
            )?,
            asset_loaded: r.register_counter(
                "asset.loaded",
                &[],
                Unit::None,
                "Assets loaded and applied.",
            )?,
            asset_failed: r.register_counter(
                "asset.failed",
                &[],
                Unit::None,
                "Asset requests that ended in an error.",
            )?,
            asset_pending: r.register_gauge(
                "asset.pending",
                &[],
                Unit::None,
                "Asset requests in flight.",
            )?,
            gpu_frame: r.register_gauge(
                "gpu.frame.time",
                &[],
                Unit::Seconds,
                "GPU time of the whole frame (EMA-smoothed).",
            )?,
            alpha: r.register_gauge(
                "frame.interpolation_alpha",
                &[],
                Unit::Ratio,
                "Leftover of the fixed-step accumulator, 0..1.",
            )?,
            lane_busy,
            lane_jobs,
            lane_queued,
            lane_panics,
        })
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
