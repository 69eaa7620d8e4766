//! The render side: the game's view source, the last view published, and the owner's handle to the render lane.
//!
//! Owns: the fields below, each documented with who writes it and who reads it (the frame's
//! steps are numbered as in the `engine` module docs). Must never: be reached from outside the
//! engine (its fields are the engine's parts, not a surface).

use lanegraph_jobs::Lanes;

use super::super::render::{Published, RenderLane};
use super::super::view::ViewSource;
use crate::world::World;

/// The render side: the game's view source, the last view published, and the owner's handle to the render lane.
pub(super) struct RenderSide {
    /// The game's view source and its cache (`None`: no render view). Writer: `assemble`;
    /// `publish_view` derives through it (owner thread, step 3). Readers: `publish_view`,
    /// `view_cache_stats`.
    pub(super) view: Option<Box<dyn ViewSource>>,
    /// The last view published, kept for a capture. Writer: `publish_view` (owner thread, step 3).
    /// Reader: `capture_png` (end of run).
    pub(super) last_view: Option<Published>,
    /// The owner's handle to the render lane. Writers: `apply_strategies` (settings, step 0),
    /// `publish_view` (step 3), `gather_samples` (`pulse`, step 5). Readers: `finish_render`,
    /// `capture_png`, `render_stats`, `present_intervals_ms`, `render_device` (end of run).
    pub(super) lane: RenderLane,
}

impl RenderSide {
    /// Step 3: the RenderView, re-derived only when the domains it reads moved, published to
    /// the render lane's mailbox.
    pub(super) fn publish(&mut self, lanes: &Lanes, world: &World, frame: u64) {
        if let Some(source) = self.view.as_mut() {
            let _s = crate::span!("render_view.publish");
            let v = source.publishable(world, frame);
            // Replaced in place: the old pointer is dropped, nothing allocates.
            self.last_view = Some(v.clone());
            self.lane.publish(lanes, v);
        }
    }
}
