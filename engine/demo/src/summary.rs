//! The demo's `summary.json`: the run in figures, machine-readable.
//!
//! Owns: the demo's own figures (seed, score, neighbours, the run's wall time) on top of the
//! runtime's [`RunSummary`], which it flattens into the same JSON object. Must never: report a
//! figure that was not measured as if it were (absent is `null`, not zero).

use serde::Serialize;

use super::world::Score;
use lanegraph::runtime::{Engine, RunSummary};

/// Everything `summary.json` holds: the runtime's run summary and the demo's own figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DemoSummary {
    /// What any game's run has (frames, `world_hash`, `frame_ms`, lanes, gpu, decisions, ...).
    #[serde(flatten)]
    pub run: RunSummary,
    /// Particles at the start.
    pub entities_initial: usize,
    /// The seed.
    pub seed: u64,
    /// Whether the run was lockstep (`--frames`): its world hash is then a function of the
    /// seed, the frames and the decision log, reproduced on any machine and lane plan by
    /// `lanegraph replay` (which feeds `decisions` back instead of the live controller).
    pub deterministic: bool,
    /// The game's score.
    pub score: Score,
    /// Mean neighbours per particle in the last neighbour pass (the pass's cost grows with it).
    pub mean_neighbours: f64,
    /// Wall time of the whole run, s.
    pub wall_s: f64,
    /// The configured step rate, Hz (the physics agent's strategies are relative to it).
    pub fixed_step_hz: u32,
}

impl DemoSummary {
    /// Builds the summary of a finished run.
    pub fn from_engine(
        engine: &Engine,
        seed: u64,
        entities_initial: usize,
        deterministic: bool,
        score: Score,
        wall_s: f64,
    ) -> DemoSummary {
        DemoSummary {
            run: RunSummary::from_engine(engine),
            entities_initial,
            seed,
            deterministic,
            score,
            mean_neighbours: 0.0,
            wall_s,
            fixed_step_hz: engine.config().fixed_step_hz,
        }
    }

    /// The short table printed at the end of a run.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let mut row = |k: &str, v: String| s.push_str(&format!("  {k:<22} {v}\n"));
        for (k, v) in self.run.rows() {
            match k {
                "entities" => row(
                    k,
                    format!(
                        "{} (started with {})",
                        self.run.entities, self.entities_initial
                    ),
                ),
                "world_hash" => row(
                    k,
                    format!(
                        "{} (seed {}{})",
                        self.run.world_hash,
                        self.seed,
                        if self.deterministic {
                            ", lockstep"
                        } else {
                            ", real time: not reproducible"
                        }
                    ),
                ),
                "dropped steps" => {
                    row(k, v);
                    row(
                        "neighbours / particle",
                        format!("{:.1}", self.mean_neighbours),
                    );
                }
                _ => row(k, v),
            }
        }
        row(
            "score",
            format!(
                "{} spawned in {} waves and {} bursts, {} swallowed",
                self.score.spawned, self.score.waves, self.score.bursts, self.score.swallowed
            ),
        );
        s
    }
}
