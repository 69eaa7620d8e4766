//! Hooks into the engine that a game does not call: fault injection for the stress harness
//! (`lanegraph stress`) and the tests that check the engine survives what it injects.
//!
//! Owns: nothing of its own (each hook reaches one part of a running [`Engine`]). Must never:
//! be needed for a game to run, or change behaviour unless called.

use super::Engine;

/// Makes every asset decode whose path contains `marker` panic on the asset lane, as a broken
/// decoder would: each is reported as a failed load (`AssetError::Panicked`) and the game goes
/// on (`lanegraph stress` checks this under load).
pub fn inject_asset_panics(engine: &mut Engine, marker: &str) {
    engine.assets_mut().inject_panics_for(marker);
}
