//! The asset side: the owner's end of the asset pipeline, this frame's completions, the data assets waiting for the game and the first failures.
//!
//! Owns: the fields below, each documented with who writes it and who reads it (the frame's
//! steps are numbered as in the `engine` module docs). Must never: be reached from outside the
//! engine (its fields are the engine's parts, not a surface).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

use super::super::assets::{AssetCompletion, AssetStream};

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
