//! The run summary: a finished run in figures, for a game's `summary.json`, a CI gate or a
//! report.
//!
//! Owns: [`RunSummary`] (what any game's run has: frames, the world hash, frame-time
//! percentiles, lanes, the GPU, decisions, strategies, assets, the view cache, layout advice)
//! and building it from an engine and the run record it keeps. Must never: report a figure that
//! was not measured as if it were (absent is `null`, not zero), or hold a game's own figures
//! (a game extends it: the demo's summary flattens it and adds its score).

use std::collections::BTreeMap;

use lanegraph_budget::hooks::ControllerDriver;
use serde::{Deserialize, Serialize};

use super::adaptation::{adaptation_of, AdaptationEntry};
use super::engine::Engine;
use super::record::{RunRecorder, RunRecorderHooks};
use super::render::{RenderDevice, RenderStats};
pub use super::run_log::{DecisionEntry, RunLog};
use super::verdict::{target_verdict, VerdictFigures};
use crate::world::World;
use lanegraph_budget::AgentId;
use lanegraph_telemetry::GpuPass;

/// `frame_ms` of the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameMs {
    /// Nearest-rank median.
    pub p50: f64,
    /// Nearest-rank 99th percentile.
    pub p99: f64,
    /// Worst frame.
    pub max: f64,
    /// Mean.
    pub mean: f64,
}

/// One lane of the plan used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneEntry {
    /// Name.
    pub name: String,
    /// `frame_critical` or `background`.
    pub kind: String,
    /// Worker count.
    pub workers: usize,
    /// The core of each worker (`null`: unpinned).
    pub cores: Vec<Option<usize>>,
    /// Mean busy share over the run, 0..1.
    pub mean_busy: f64,
}

/// `gpu` of the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuEntry {
    /// Whether the game's render pass drew on a GPU.
    pub available: bool,
    /// Its name.
    pub device: Option<String>,
    /// Why not, when not.
    pub unavailable_reason: Option<String>,
    /// Per-pass times (the newest reading).
    pub passes: Vec<GpuPass>,
    /// Whole GPU frame, ms (newest reading).
    pub frame_ms: Option<f64>,
}

/// `present` of the summary: how the window was fed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PresentEntry {
    /// `fifo`, `mailbox` or `immediate` (what the display gave, not only what was asked).
    pub mode: String,
    /// Images presented.
    pub presented: u64,
    /// Draws skipped while the window was minimised.
    pub skipped_minimised: u64,
    /// Swapchains rebuilt (resizes, out of date, suboptimal).
    pub recreated: u64,
    /// Present-to-present interval, ms: nearest-rank p50, p99, max (`null` before 2 presents).
    pub interval_ms: Option<[f64; 3]>,
    /// The display's refresh period, ms (`null`: the platform does not say).
    pub refresh_ms: Option<f64>,
}

/// `gpu_memory` of the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuMemoryEntry {
    /// `memory_budget` (the driver's per-heap figures) or `ledger` (the renderer's own count).
    pub source: String,
    /// Every heap at the last reading.
    pub heaps: Vec<GpuHeapEntry>,
    /// Bytes live in the renderer's allocations at the last reading.
    pub live_bytes: u64,
    /// The pressure signal the controller read last: used / budget, 0..1.
    pub pressure: f64,
    /// The highest churn between two readings, allocations plus frees per second.
    pub churn_peak_per_second: f64,
    /// Churn warnings logged.
    pub churn_alerts: u64,
}

/// One heap of `gpu_memory`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuHeapEntry {
    /// The heap's index.
    pub heap: u32,
    /// Device-local memory.
    pub device_local: bool,
    /// This process's usage, bytes (`null`: the driver does not say).
    pub usage_bytes: Option<u64>,
    /// What this process may use, bytes.
    pub budget_bytes: u64,
}

/// `assets` of the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssetEntry {
    /// Requests made.
    pub requested: u64,
    /// Requests not completed at the end (still in flight or queued): with `loaded` and
    /// `failed` they add up to `requested`, so nothing goes missing silently.
    pub pending: u64,
    /// Loaded (images handed to the render pass, data to the game).
    pub loaded: u64,
    /// Failed (reported and skipped).
    pub failed: u64,
    /// Why each failed.
    pub failures: Vec<String>,
    /// Decoded images the render lane handed to the pass.
    pub uploaded: u64,
    /// Of those, uploaded to the GPU by the pass (0 without a GPU).
    pub uploaded_gpu: u64,
}

/// One system over the whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemEntry {
    /// Its name.
    pub name: String,
    /// Its budget, ms.
    pub budget_ms: f64,
    /// Runs.
    pub runs: u64,
    /// Percentiles of its run time over the frames it ran in (the run record's histogram:
    /// within 1/128 of exact), and its worst run, ms.
    pub p50_ms: f64,
    /// See `p50_ms`.
    pub p99_ms: f64,
    /// See `p50_ms`.
    pub max_ms: f64,
    /// Runs over its budget.
    pub over_budget: u64,
    /// Runs at 3x its budget or more (the error threshold).
    pub errors: u64,
}

/// One way a run missed its budget ([`RunSummary::budget_breaches`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetBreach {
    /// What missed: `frame` or the system's name.
    pub what: String,
    /// The measured figure.
    pub figure: f64,
    /// The threshold it crossed.
    pub threshold: f64,
    /// The sentence a user reads.
    pub message: String,
}

/// One component's layout advice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayoutRow {
    /// Component name.
    pub component: String,
    /// Its layout now (`AoS` or `field-SoA`).
    pub layout: String,
    /// `KeepAos`, `SimdFieldSoa` or `HotColdSplit`.
    pub recommendation: String,
    /// Why, in figures.
    pub reason: String,
}

/// The layout advice rows for every component of `world`, from its access telemetry since it
/// was made.
pub fn layout_rows(world: &World) -> Vec<LayoutRow> {
    world
        .component_access()
        .iter()
        .map(|a| {
            let advice = a.advice();
            LayoutRow {
                component: a.name.to_string(),
                layout: a.layout.name().to_string(),
                recommendation: format!("{:?}", advice.recommendation),
                reason: advice.reason,
            }
        })
        .collect()
}

/// A finished run in figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// Frames run.
    pub frames: u64,
    /// Live entities at the end.
    pub entities: usize,
    /// The world's state hash at the end, `0x`-prefixed hex.
    pub world_hash: String,
    /// The state-hash format that made `world_hash` (a hash of another format is another
    /// function of the same world: the two are not compared). Absent in summaries written
    /// before it was recorded, which were format 1.
    #[serde(default = "crate::world::hash::format_one")]
    pub world_hash_format: u32,
    /// Owner-thread frame times over the whole run.
    pub frame_ms: FrameMs,
    /// The controller's frame-time target at the end, ms (the budget less headroom, scaled by
    /// the controller under pressure).
    pub target_ms: f64,
    /// The configured frame budget, ms (`1000 / target_fps`).
    pub frame_budget_ms: f64,
    /// Vulkan validation messages (`null`: no device, or validation off).
    pub validation_messages: Option<u64>,
    /// Fixed steps dropped by the step cap.
    pub dropped_steps: u64,
    /// Fixed steps run.
    pub steps: u64,
    /// The controller's strategy switches, with reasons.
    pub decisions: Vec<DecisionEntry>,
    /// Every decision of the run is in `decisions` (the controller's log keeps the last 1,024):
    /// a replay needs them all.
    pub decisions_complete: bool,
    /// The input handed to the world, with frame numbers (a window's events; empty
    /// headless): with `decisions`, what a replay feeds back.
    pub inputs: Vec<crate::input::RecordedInput>,
    /// Every input event is in `inputs` (false once the log's cap was reached).
    pub inputs_complete: bool,
    /// The strategies in force at the end, per agent: the built-in ones the game installed and
    /// its own.
    pub strategies: BTreeMap<String, String>,
    /// Whether the run held its target, in one sentence: held, missed with cheaper strategies
    /// left, or missed with every built-in agent already at its cheapest (no strategy can hold
    /// the target on this machine).
    pub target_verdict: String,
    /// The SyncTest mode's first failure (`EngineConfig::sync_test`), as text: a desync names
    /// the step, the system and what differs. `null` when the mode is off or found nothing.
    #[serde(default)]
    pub sync_test: Option<String>,
    /// The run's detail sections, in the same JSON object: what a report or CI tool reads
    /// (through [`RunSummaryHooks::detail`]).
    #[serde(flatten)]
    pub(crate) detail: RunDetail,
}

/// The detail sections of a [`RunSummary`] (its JSON holds them at the top level beside the
/// figures a game reads): lanes, the GPU, assets, the view cache, the render lane, presenting,
/// GPU memory, layout advice and every system. Read by the report, the app's CI gate and
/// tests through [`RunSummaryHooks::detail`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunDetail {
    /// The lane plan used.
    pub lanes: Vec<LaneEntry>,
    /// The GPU.
    pub gpu: GpuEntry,
    /// Assets.
    pub assets: AssetEntry,
    /// View cache hits and misses.
    pub view_cache: BTreeMap<String, u64>,
    /// Views drawn and skipped by the render lane.
    pub render: BTreeMap<String, u64>,
    /// Presenting to a window (`null` headless).
    pub present: Option<PresentEntry>,
    /// The GPU memory monitor's last reading and what it found (`null`: the pass reads none).
    pub gpu_memory: Option<GpuMemoryEntry>,
    /// The layout advisor's word on each component, from the world's access telemetry.
    pub layout_advice: Vec<LayoutRow>,
    /// Every system over the whole run.
    pub systems: Vec<SystemEntry>,
    /// The run's adaptation in figures (`runtime::adaptation`).
    #[serde(default)]
    pub adaptation: AdaptationEntry,
}

/// The run log in a summary (`RunLog::from(&summary)`): what [`Engine::replay`] replays.
impl From<&RunSummary> for RunLog {
    fn from(s: &RunSummary) -> RunLog {
        RunLog {
            decisions: s.decisions.clone(),
            inputs: s.inputs.clone(),
        }
    }
}

impl RunSummary {
    /// Builds the summary of a finished run from the engine and the run record it keeps
    /// (`EngineConfig::record_frames`). Waits for the render lane (end of a run).
    pub fn from_engine(engine: &Engine) -> RunSummary {
        let rec = engine.run_record();
        let times = rec.frame_ms();
        let dev = engine.render_device();
        let rstats = engine.render_stats();
        let gpu = gpu_of(&dev, &rstats);
        let c = engine.controller();
        let decisions: Vec<DecisionEntry> = c.log().iter().map(DecisionEntry::from).collect();
        let (target_verdict, adaptation) = verdicts_of(engine, &gpu, &decisions);
        let lt = engine.loop_totals();
        RunSummary {
            frames: engine.frames(),
            entities: engine.world().len(),
            world_hash: format!("{:#018x}", engine.world().state_hash()),
            world_hash_format: crate::world::hash::STATE_HASH_FORMAT,
            frame_ms: FrameMs {
                p50: times.percentile(50.0).unwrap_or(0.0),
                p99: times.percentile(99.0).unwrap_or(0.0),
                max: times.max(),
                mean: times.mean(),
            },
            target_ms: rec.last_target_ms(),
            frame_budget_ms: 1000.0 / engine.config().target_fps,
            validation_messages: dev.validation_messages,
            dropped_steps: lt.dropped_steps,
            steps: lt.steps,
            decisions,
            decisions_complete: c.log().dropped() == 0,
            inputs: engine.input_log().to_vec(),
            inputs_complete: engine.input_log_dropped() == 0,
            strategies: strategies_of(c),
            detail: detail_of(engine, &rstats, gpu, adaptation),
            target_verdict,
            sync_test: engine.sync_test_desync().map(|e| e.to_string()),
        }
    }

    /// The summary as `key  value` rows, for a terminal.
    pub fn rows(&self) -> Vec<(&'static str, String)> {
        let mut rows = self.rows_headless();
        if let Some(m) = &self.detail.gpu_memory {
            let mib = |b: u64| b as f64 / (1 << 20) as f64;
            rows.insert(
                6,
                (
                    "gpu memory",
                    format!(
                        "{:.1} MiB live, pressure {:.0} % ({}), churn peak {:.0}/s, {} alerts",
                        mib(m.live_bytes),
                        m.pressure * 100.0,
                        m.source,
                        m.churn_peak_per_second,
                        m.churn_alerts
                    ),
                ),
            );
        }
        if let Some(p) = &self.detail.present {
            let refresh = p
                .refresh_ms
                .map_or(String::new(), |r| format!(" (refresh {r:.2} ms)"));
            let interval = p
                .interval_ms
                .map_or("no interval yet".into(), |[p50, p99, max]| {
                    format!("interval p50 / p99 / max {p50:.2} / {p99:.2} / {max:.2} ms{refresh}")
                });
            rows.insert(
                6,
                (
                    "present",
                    format!(
                        "{} frames ({}), {interval}, {} swapchain rebuilds, {} draws skipped minimised",
                        p.presented, p.mode, p.recreated, p.skipped_minimised
                    ),
                ),
            );
        }
        rows
    }

    /// The `lanes` row: each lane's workers and busy share.
    fn lanes_row(&self) -> String {
        self.detail
            .lanes
            .iter()
            .map(|l| {
                format!(
                    "{}={} ({:.0}% busy)",
                    l.name,
                    l.workers,
                    l.mean_busy * 100.0
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The `gpu` row: the device and its passes, or why there is none.
    fn gpu_row(&self) -> String {
        let gpu = &self.detail.gpu;
        match (&gpu.device, &gpu.unavailable_reason) {
            (Some(d), _) => format!(
                "{d}; {}",
                gpu.passes
                    .iter()
                    .map(|p| format!("{} {:.3} ms", p.name, p.ema_ms))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            (None, Some(why)) => format!("unavailable: {why}"),
            (None, None) => "unavailable".into(),
        }
    }

    fn rows_headless(&self) -> Vec<(&'static str, String)> {
        vec![
            ("frames", self.frames.to_string()),
            ("entities", self.entities.to_string()),
            ("world_hash", self.world_hash.clone()),
            (
                "frame_ms p50 / p99",
                format!(
                    "{:.2} / {:.2} (target {:.2}, budget {:.2})",
                    self.frame_ms.p50, self.frame_ms.p99, self.target_ms, self.frame_budget_ms
                ),
            ),
            ("lanes", self.lanes_row()),
            ("gpu", self.gpu_row()),
            (
                "validation messages",
                self.validation_messages
                    .map_or("not checked (validation off)".into(), |n| n.to_string()),
            ),
            ("target", self.target_verdict.clone()),
            ("adaptation", self.detail.adaptation.to_string()),
            ("dropped steps", self.dropped_steps.to_string()),
            (
                "layout advice",
                self.detail.layout_advice
                    .iter()
                    .map(|l| format!("{} ({}) {}", l.component, l.layout, l.recommendation))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            ("decisions", self.decisions.len().to_string()),
            (
                "strategies",
                self.strategies
                    .iter()
                    .map(|(a, s)| format!("{a}={s}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            (
                "assets",
                format!(
                    "{} requested: {} loaded, {} failed (reported and skipped), {} pending; {} uploaded to GPU images",
                    self.detail.assets.requested,
                    self.detail.assets.loaded,
                    self.detail.assets.failed,
                    self.detail.assets.pending,
                    self.detail.assets.uploaded_gpu
                ),
            ),
        ]
    }
}

/// The summary's detail and its CI gate, for the runtime's app, report and tests.
pub trait RunSummaryHooks {
    /// The detail sections (lanes, GPU, assets, presenting, GPU memory, layout, systems).
    fn detail(&self) -> &RunDetail;
    /// Where the run missed its budget: the frame p99 over the frame budget, and each system
    /// that ran at 3x its budget or more more than `max_system_errors` times. Empty when the
    /// run held its budget (a CI gate: `lanegraph demo --fail-on-budget`).
    fn budget_breaches(&self, max_system_errors: u64) -> Vec<BudgetBreach>;
}

impl RunSummaryHooks for RunSummary {
    fn detail(&self) -> &RunDetail {
        &self.detail
    }

    fn budget_breaches(&self, max_system_errors: u64) -> Vec<BudgetBreach> {
        let mut out = Vec::new();
        if self.frame_ms.p99 > self.frame_budget_ms {
            out.push(BudgetBreach {
                what: "frame".into(),
                figure: self.frame_ms.p99,
                threshold: self.frame_budget_ms,
                message: format!(
                    "frame p99 {:.2} ms is over the frame budget {:.2} ms",
                    self.frame_ms.p99, self.frame_budget_ms
                ),
            });
        }
        for s in &self.detail.systems {
            if s.errors > max_system_errors {
                out.push(BudgetBreach {
                    what: s.name.clone(),
                    figure: s.errors as f64,
                    threshold: max_system_errors as f64,
                    message: format!(
                        "system `{}` ran at 3x its {:.3} ms budget or more {} times (allowed {max_system_errors}; its worst run {:.3} ms)",
                        s.name, s.budget_ms, s.errors, s.max_ms
                    ),
                });
            }
        }
        out
    }
}

/// The summary's `gpu_memory` from the render lane's statistics (`None` without a reading).
pub fn gpu_memory_of(rstats: &super::render::RenderStats) -> Option<GpuMemoryEntry> {
    let g = rstats.gpu_memory.as_ref()?;
    Some(GpuMemoryEntry {
        source: g.source.into(),
        heaps: g
            .heaps
            .iter()
            .map(|h| GpuHeapEntry {
                heap: h.heap,
                device_local: h.device_local,
                usage_bytes: h.usage,
                budget_bytes: h.budget,
            })
            .collect(),
        live_bytes: g.live_bytes,
        pressure: if g.budget_bytes == 0 {
            0.0
        } else {
            g.used_bytes as f64 / g.budget_bytes as f64
        },
        churn_peak_per_second: rstats.gpu_memory_churn.peak_per_second,
        churn_alerts: rstats.gpu_memory_churn.alerts,
    })
}

/// Every system of `world`, with the run record's percentiles where it has them.
fn systems_of(world: &World, rec: &RunRecorder) -> Vec<SystemEntry> {
    world
        .system_ids()
        .filter_map(|id| {
            let stats = world.system_timing_stats(id).ok()?;
            let name = world.system_name(id).ok()?.to_string();
            // The record keeps systems in id order (it walks the world's table).
            let hist = rec.systems().get(id.index() as usize).map(|r| &r.time_ns);
            let ms = |p: f64| hist.and_then(|h| h.percentile(p)).unwrap_or(0.0) / 1e6;
            Some(SystemEntry {
                budget_ms: stats.budget_ns as f64 / 1e6,
                runs: stats.runs,
                p50_ms: ms(50.0),
                p99_ms: ms(99.0),
                max_ms: hist.map_or(0.0, |h| h.max() / 1e6),
                over_budget: stats.warns,
                errors: stats.errors,
                name,
            })
        })
        .collect()
}

/// Each plan lane with its mean busy share over the recorded frames.
fn lanes_of(engine: &Engine, rec: &RunRecorder) -> Vec<LaneEntry> {
    engine
        .lanes()
        .plan()
        .lanes()
        .iter()
        .enumerate()
        .map(|(i, l)| LaneEntry {
            name: l.name.clone(),
            kind: match l.kind {
                lanegraph_jobs::LaneKind::FrameCritical => "frame_critical".into(),
                lanegraph_jobs::LaneKind::Background => "background".into(),
            },
            workers: l.worker_cores.len(),
            cores: l.worker_cores.clone(),
            mean_busy: rec.mean_lane_busy(i).unwrap_or(0.0),
        })
        .collect()
}

/// The GPU: its device (or why there is none), its passes and the last frame's time.
fn gpu_of(dev: &RenderDevice, rstats: &RenderStats) -> GpuEntry {
    GpuEntry {
        available: dev.name.is_some(),
        device: dev.name.clone(),
        unavailable_reason: dev.unavailable.clone(),
        passes: rstats
            .gpu
            .as_ref()
            .map(|g| g.passes.clone())
            .unwrap_or_default(),
        frame_ms: rstats.gpu.as_ref().map(|g| g.total_ms),
    }
}

/// Each agent's strategy in force, by name.
fn strategies_of(c: &lanegraph_budget::Controller) -> BTreeMap<String, String> {
    let mut strategies = BTreeMap::new();
    for id in c.agent_ids() {
        if let (Some(name), Some(cur), Some(list)) =
            (c.agent_name(id), c.current(id), c.strategies(id))
        {
            strategies.insert(name.to_string(), list[cur.get()].name.clone());
        }
    }
    strategies
}

/// The run's verdict (frame target, then adaptation) and the adaptation figures it read.
fn verdicts_of(
    engine: &Engine,
    gpu: &GpuEntry,
    decisions: &[DecisionEntry],
) -> (String, AdaptationEntry) {
    let rec = engine.run_record();
    let times = rec.frame_ms();
    let c = engine.controller();
    let cheapest = |id: AgentId| match (c.current(id), c.strategies(id)) {
        (Some(cur), Some(list)) => cur.get() + 1 >= list.len(),
        _ => true,
    };
    // Every agent counts for "cheapest": the built-in ones the game installed and its own.
    let cpu_cheapest = c
        .agent_ids()
        .filter(|&id| c.pool(id) == Some(lanegraph_budget::Pool::Cpu))
        .all(cheapest);
    // The GPU frame as the controller sees it: the passes' smoothed times (one raw reading is
    // one frame's noise).
    let gpu_ms = (!gpu.passes.is_empty())
        .then(|| gpu.passes.iter().map(|p| p.ema_ms).sum::<f64>())
        .or(gpu.frame_ms);
    let target_verdict = target_verdict(
        VerdictFigures {
            cpu_p50: times.percentile(50.0).unwrap_or(0.0),
            cpu_p99: times.percentile(99.0).unwrap_or(0.0),
            gpu_ms,
            target: rec.last_target_ms(),
            budget: 1000.0 / engine.config().target_fps,
            over_target: rec.frames_over_target(),
            frames: rec.frames(),
        },
        cpu_cheapest,
        engine.render_agent().is_none_or(cheapest),
    );
    let adaptation = adaptation_of(
        c.agent_ids().filter_map(|id| c.agent_name(id)),
        decisions,
        engine.frames(),
        (2.0 * engine.config().target_fps).round() as u64,
        rec.frames_over_budget_after_a_decision(),
        c.log().dropped() == 0,
    );
    let minutes = engine.frames() as f64 / engine.config().target_fps / 60.0;
    let verdict = format!("{target_verdict}; {}", adaptation.verdict(minutes));
    (verdict, adaptation)
}

/// The summary's detail: lanes, GPU, assets, caches, presents, memory, layout, systems and
/// the adaptation figures.
fn detail_of(
    engine: &Engine,
    rstats: &RenderStats,
    gpu: GpuEntry,
    adaptation: AdaptationEntry,
) -> RunDetail {
    let rec = engine.run_record();
    let (totals, failures) = engine.asset_report();
    let vc = engine.view_cache_stats();
    RunDetail {
        lanes: lanes_of(engine, rec),
        gpu,
        assets: AssetEntry {
            requested: totals.requested,
            pending: totals.requested - totals.loaded - totals.failed,
            loaded: totals.loaded,
            failed: totals.failed,
            failures: failures.to_vec(),
            uploaded: rstats.textures,
            uploaded_gpu: rstats.gpu_textures,
        },
        view_cache: BTreeMap::from([("hits".into(), vc.hits), ("misses".into(), vc.misses)]),
        render: BTreeMap::from([
            ("drawn".into(), rstats.drawn),
            ("skipped".into(), rstats.skipped),
        ]),
        present: rstats.present.map(|p| PresentEntry {
            mode: p.mode.into(),
            presented: p.presented,
            skipped_minimised: p.skipped_minimised,
            recreated: p.recreated,
            interval_ms: rstats.present_interval_ms,
            refresh_ms: (p.refresh_ns > 0).then(|| p.refresh_ns as f64 / 1e6),
        }),
        gpu_memory: gpu_memory_of(rstats),
        layout_advice: layout_rows(engine.world()),
        systems: systems_of(engine.world(), rec),
        adaptation,
    }
}
