//! The demo's `summary.json`: the run in figures, machine-readable.
//!
//! Owns: the summary's shape and building it from a finished engine. Must never: report a
//! figure that was not measured as if it were (absent is `null`, not zero).

use std::collections::BTreeMap;

use serde::Serialize;

use super::world::Score;
use lanegraph::budget::Decision;
use lanegraph::runtime::{Engine, GpuPass, RunRecorder};

/// `frame_ms` of the summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuEntry {
    /// Whether a Vulkan device drew the frames.
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

/// One controller decision, as `summary.json` and the report show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionEntry {
    /// Frame decided in.
    pub frame: u64,
    /// Agent.
    pub agent: String,
    /// From strategy.
    pub from: String,
    /// To strategy.
    pub to: String,
    /// Why.
    pub reason: String,
}

/// `assets` of the summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AssetEntry {
    /// Loaded and handed to the render lane.
    pub loaded: u64,
    /// Failed (reported and skipped).
    pub failed: u64,
    /// Why each failed.
    pub failures: Vec<String>,
    /// Decoded textures the render lane took in.
    pub uploaded: u64,
    /// Of those, uploaded to GPU images (0 without a GPU).
    pub uploaded_gpu: u64,
}

/// Everything `summary.json` holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DemoSummary {
    /// Frames run.
    pub frames: u64,
    /// Live entities at the end (particles plus the score entity).
    pub entities: usize,
    /// Particles at the start.
    pub entities_initial: usize,
    /// The seed.
    pub seed: u64,
    /// The world's state hash at the end, `0x`-prefixed hex.
    pub world_hash: String,
    /// Whether the run was lockstep (`--frames`): the hash is then reproducible on any machine
    /// and any lane plan.
    pub deterministic: bool,
    /// Owner-thread frame times.
    pub frame_ms: FrameMs,
    /// The controller's frame-time target at the end, ms (the budget less headroom, scaled by
    /// the controller under pressure).
    pub target_ms: f64,
    /// The configured frame budget, ms (`1000 / target_fps`).
    pub frame_budget_ms: f64,
    /// The lane plan used.
    pub lanes: Vec<LaneEntry>,
    /// The GPU.
    pub gpu: GpuEntry,
    /// Vulkan validation messages (`null`: no device, or validation off).
    pub validation_messages: Option<u64>,
    /// Fixed steps dropped by the step cap.
    pub dropped_steps: u64,
    /// Fixed steps run.
    pub steps: u64,
    /// The controller's strategy switches, with reasons.
    pub decisions: Vec<DecisionEntry>,
    /// The strategies in force at the end, per agent.
    pub strategies: BTreeMap<String, String>,
    /// Assets.
    pub assets: AssetEntry,
    /// RenderView cache hits and misses.
    pub view_cache: BTreeMap<String, u64>,
    /// Views drawn and skipped by the render lane.
    pub render: BTreeMap<String, u64>,
    /// The game's score.
    pub score: Score,
    /// Mean neighbours per particle in the last neighbour pass (the pass's cost grows with it).
    pub mean_neighbours: f64,
    /// The layout advisor's word on each component (`component`, `layout`, `recommendation`,
    /// `reason`), from the World's access telemetry over the run.
    pub layout_advice: Vec<crate::report::LayoutRow>,
    /// Wall time of the whole run, s.
    pub wall_s: f64,
}

impl DemoSummary {
    /// Builds the summary of a finished run.
    pub fn from_engine(
        engine: &Engine,
        rec: &RunRecorder,
        seed: u64,
        entities_initial: usize,
        deterministic: bool,
        score: Score,
        wall_s: f64,
    ) -> DemoSummary {
        let times = rec.frame_ms();
        let lanes = engine
            .lanes()
            .plan()
            .lanes()
            .iter()
            .enumerate()
            .map(|(i, l)| LaneEntry {
                name: l.name.clone(),
                kind: match l.kind {
                    lanegraph::jobs::LaneKind::FrameCritical => "frame_critical".into(),
                    lanegraph::jobs::LaneKind::Background => "background".into(),
                },
                workers: l.worker_cores.len(),
                cores: l.worker_cores.clone(),
                mean_busy: rec.mean_lane_busy(i).unwrap_or(0.0),
            })
            .collect();
        let dev = engine.render_device();
        let (device, why, validation) = (dev.name, dev.unavailable, dev.validation_messages);
        let rstats = engine.render_stats();
        let gpu = GpuEntry {
            available: device.is_some(),
            device,
            unavailable_reason: why,
            passes: rstats
                .gpu
                .as_ref()
                .map(|g| g.passes.clone())
                .unwrap_or_default(),
            frame_ms: rstats.gpu.as_ref().map(|g| g.total_ms),
        };
        let c = engine.controller();
        let decisions = c.log().iter().map(DecisionEntry::from).collect();
        let mut strategies = BTreeMap::new();
        for id in engine.builtin_agents() {
            if let (Some(name), Some(cur), Some(list)) =
                (c.agent_name(id), c.current(id), c.strategies(id))
            {
                strategies.insert(name.to_string(), list[cur.get()].name.clone());
            }
        }
        let (totals, failures) = engine.asset_report();
        let vc = engine.view_cache_stats();
        let lt = engine.loop_totals();
        DemoSummary {
            frames: engine.frames(),
            entities: engine.world().len(),
            entities_initial,
            seed,
            world_hash: format!("{:#018x}", engine.world().state_hash()),
            deterministic,
            frame_ms: FrameMs {
                p50: times.percentile(50.0).unwrap_or(0.0),
                p99: times.percentile(99.0).unwrap_or(0.0),
                max: times.max(),
                mean: times.mean(),
            },
            target_ms: rec.last_target_ms(),
            frame_budget_ms: 1000.0 / engine.config().target_fps,
            lanes,
            gpu,
            validation_messages: validation,
            dropped_steps: lt.dropped_steps,
            steps: lt.steps,
            decisions,
            strategies,
            assets: AssetEntry {
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
            score,
            mean_neighbours: 0.0,
            layout_advice: crate::report::LayoutRow::of_world(engine.world()),
            wall_s,
        }
    }

    /// The short table printed at the end of a run.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let mut row = |k: &str, v: String| s.push_str(&format!("  {k:<22} {v}\n"));
        row("frames", self.frames.to_string());
        row(
            "entities",
            format!("{} (started with {})", self.entities, self.entities_initial),
        );
        row(
            "world_hash",
            format!(
                "{} (seed {}{})",
                self.world_hash,
                self.seed,
                if self.deterministic {
                    ", lockstep"
                } else {
                    ", real time: not reproducible"
                }
            ),
        );
        row(
            "frame_ms p50 / p99",
            format!(
                "{:.2} / {:.2} (target {:.2}, budget {:.2})",
                self.frame_ms.p50, self.frame_ms.p99, self.target_ms, self.frame_budget_ms
            ),
        );
        row(
            "lanes",
            self.lanes
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
                .join(", "),
        );
        row(
            "gpu",
            match (&self.gpu.device, &self.gpu.unavailable_reason) {
                (Some(d), _) => format!(
                    "{d}; {}",
                    self.gpu
                        .passes
                        .iter()
                        .map(|p| format!("{} {:.3} ms", p.name, p.ema_ms))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                (None, Some(why)) => format!("unavailable: {why}"),
                (None, None) => "unavailable".into(),
            },
        );
        row(
            "validation messages",
            self.validation_messages
                .map_or("not checked (validation off)".into(), |n| n.to_string()),
        );
        row("dropped steps", self.dropped_steps.to_string());
        row(
            "neighbours / particle",
            format!("{:.1}", self.mean_neighbours),
        );
        row(
            "layout advice",
            self.layout_advice
                .iter()
                .map(|l| format!("{} ({}) {}", l.component, l.layout, l.recommendation))
                .collect::<Vec<_>>()
                .join(", "),
        );
        row("decisions", self.decisions.len().to_string());
        row(
            "strategies",
            self.strategies
                .iter()
                .map(|(a, s)| format!("{a}={s}"))
                .collect::<Vec<_>>()
                .join(", "),
        );
        row(
            "assets",
            format!(
                "{} loaded, {} failed (reported and skipped); {} uploaded to GPU images",
                self.assets.loaded, self.assets.failed, self.assets.uploaded_gpu
            ),
        );
        row(
            "score",
            format!(
                "{} spawned in {} waves, {} swallowed",
                self.score.spawned, self.score.waves, self.score.swallowed
            ),
        );
        s
    }
}

impl From<&Decision> for DecisionEntry {
    fn from(d: &Decision) -> Self {
        DecisionEntry {
            frame: d.frame,
            agent: d.agent_name.clone(),
            from: d.from_name.clone(),
            to: d.to_name.clone(),
            reason: d.reason.clone(),
        }
    }
}
