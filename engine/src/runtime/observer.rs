//! Frame observers: how a game, a tool or a test sees each frame's figures without the engine
//! keeping them.
//!
//! Owns: [`FrameFigures`] (one frame, by reference), the [`FrameObserver`] trait, and the typed
//! handle ([`ObserverId`]) that reads an installed observer back. Must never: copy a frame's
//! figures for an observer (they are lent for the call), or let an observer reach the engine
//! mid-frame (it sees the figures and the world, read-only).

use std::any::Any;
use std::marker::PhantomData;

use crate::world::World;

/// What one frame measured, lent to every observer at the end of [`crate::Engine::frame`].
#[derive(Debug, Clone, Copy)]
pub struct FrameFigures<'a> {
    /// Frame number (1-based).
    pub frame: u64,
    /// Owner-thread wall time of the frame, ms.
    pub frame_ms: f64,
    /// The controller's frame-time target after this frame, ms.
    pub target_ms: f64,
    /// Fixed steps run.
    pub steps: u32,
    /// Steps dropped by the cap.
    pub dropped_steps: u64,
    /// Time in the physics hook, ms.
    pub physics_ms: f64,
    /// Live heap bytes after the frame (0 without the tracking allocator).
    pub memory_bytes: i64,
    /// The budget controller's multiplier.
    pub multiplier: f64,
    /// Strategy switches the controller made this frame.
    pub decisions: usize,
    /// Busy share of each lane over the frame, 0..1, in lane-plan order.
    pub lane_busy: &'a [f64],
    /// The world after the frame: system timings (`system_ids`, `system_timing_stats`), entity
    /// counts, the state hash.
    pub world: &'a World,
}

/// Sees every frame's figures. Installed with [`crate::Engine::observe`]; called on the owner
/// thread at the end of each frame, in the order installed.
///
/// An observer runs inside the frame: keep it cheap and allocation-free in steady state (the
/// provided [`super::RunRecorder`] is).
pub trait FrameObserver: Send + 'static {
    /// One frame's figures.
    fn on_frame(&mut self, figures: &FrameFigures<'_>);
}

/// Reads an installed observer back ([`crate::Engine::observer`]).
#[derive(Debug)]
pub struct ObserverId<O> {
    pub(super) index: usize,
    pub(super) _type: PhantomData<fn() -> O>,
}

impl<O> Clone for ObserverId<O> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<O> Copy for ObserverId<O> {}

/// An observer the engine holds, readable back as its own type.
pub(super) trait HeldObserver: Send {
    fn on_frame(&mut self, figures: &FrameFigures<'_>);
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<O: FrameObserver> HeldObserver for O {
    fn on_frame(&mut self, figures: &FrameFigures<'_>) {
        FrameObserver::on_frame(self, figures);
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
