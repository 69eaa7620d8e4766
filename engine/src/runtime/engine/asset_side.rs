//! The asset side: the owner's end of the asset pipeline, this frame's completions, the data assets waiting for the game and the first failures.
//!
//! Owns: the fields below, each documented with who writes it and who reads it (the frame's
//! steps are numbered as in the `engine` module docs). Must never: be reached from outside the
//! engine (its fields are the engine's parts, not a surface).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

use lanegraph_jobs::{clock, Lanes};

use super::super::agents::AssetSettings;
use super::super::assets::{AssetCompletion, AssetStream};
use super::super::loaders::Asset;
use super::metrics::Metrics;
use super::MAX_ASSET_FAILURES;

/// The asset side: the owner's end of the asset pipeline, this frame's completions, the data assets waiting for the game and the first failures.
pub(super) struct AssetSide {
    /// The owner's side of the asset pipeline. Writers: `pump_assets` (step 1: `drain`, `pump`),
    /// `request_asset`, `assets_mut` (fault injection). Readers: `gather_samples`, `record_frame`
    /// (`pending`), `asset_report`.
    pub(super) stream: AssetStream,
    /// This frame's drained asset completions (reused each frame). Writer: `pump_assets` (owner
    /// thread, step 1). Readers: `pump_assets`, `gather_samples` (step 5: the asset workload).
    pub(super) completions: Vec<AssetCompletion>,
    /// Decoded data assets waiting for the game ([`Engine::take_loaded`]).
    /// Writer: `pump_assets` (owner thread, step 1). Reader: `take_loaded` (the game) drains it.
    pub(super) loaded: VecDeque<(PathBuf, Arc<dyn std::any::Any + Send + Sync>)>,
    /// The first [`MAX_ASSET_FAILURES`] failures' messages (the count is in the asset totals).
    /// Writer: `pump_assets` (owner thread, step 1). Reader: `asset_report`.
    pub(super) failures: Vec<String>,
}

impl AssetSide {
    /// Step 1: applies asset completions (at most `settings.jobs_per_frame`), counting them in
    /// `metrics`, and issues queued requests. Returns the time it took, ms.
    pub(super) fn pump(
        &mut self,
        lanes: &Arc<Lanes>,
        settings: AssetSettings,
        metrics: &Metrics,
    ) -> f64 {
        let t0 = clock::now();
        let _s = crate::span!("assets.drain");
        self.completions.clear();
        self.stream
            .drain(settings.jobs_per_frame, &mut self.completions);
        for c in &self.completions {
            match &c.result {
                Ok(Asset::Image(_)) => {
                    // Already with the render pass: the graph's `upload` node ran on the render
                    // lane.
                    metrics.asset_loaded.inc();
                }
                Ok(Asset::Data(d)) => {
                    metrics.asset_loaded.inc();
                    self.loaded.push_back((c.path.clone(), Arc::clone(d)));
                }
                Err(e) => {
                    metrics.asset_failed.inc();
                    tracing::warn!(target: "lanegraph", code = "LG-ASSET-001", error = %e, "asset failed to load; skipped, the game goes on");
                    if self.failures.len() < MAX_ASSET_FAILURES {
                        self.failures.push(e.to_string());
                    }
                }
            }
        }
        self.stream.pump(lanes, settings.jobs_per_frame);
        clock::now().ms_since(t0)
    }

    /// The asset agent's workload this frame: completions applied and loads still waiting.
    pub(super) fn work(&self) -> u64 {
        self.completions.len() as u64 + self.stream.pending()
    }
}
