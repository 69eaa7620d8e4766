//! The fixed-step loop and what runs in it: the game loop with its world and clock (real or lockstep), the physics hook and the SyncTest mode.
//!
//! Owns: the fields below, each documented with who writes it and who reads it (the frame's
//! steps are numbered as in the `engine` module docs). Must never: be reached from outside the
//! engine (its fields are the engine's parts, not a surface).

use super::{EngineClock, PhysicsFn};
use crate::game_loop::{FixedStep, GameLoop, ManualClock};
use crate::world::{SyncTest, WorldError};

/// The fixed-step loop and what runs in it: the game loop with its world and clock (real or lockstep), the physics hook and the SyncTest mode.
pub(super) struct Stepper {
    /// The fixed-step loop, its clock and the world. Writers: `frame` (owner thread, steps 0-2),
    /// the game between frames (`world_mut`, `restore`). Readers: steps 3-5 (`publish_view`,
    /// `gather_samples`, `record_frame`, metrics), `world`, `loop_totals`, `fixed_step`, ...
    pub(super) game: GameLoop<EngineClock>,
    /// Lockstep: the manual clock, sharing its time with `game`'s clock (`None`: real time).
    /// Writer: `assemble`; `begin_frame` sets its time (owner thread, step 0). Readers:
    /// `begin_frame`, and `game`'s clock (`frame_stepping`, step 2).
    pub(super) lockstep: Option<ManualClock>,
    /// Lockstep: the frame and clock reading at which the step in force was adopted.
    /// Writer: `assemble`, `begin_frame` (step 0) when the step changed. Reader: `begin_frame`.
    pub(super) lockstep_base: (u64, u64, FixedStep),
    /// The physics hook (`None`: not set). Writer: `set_physics` (the game, between frames).
    /// Readers: `run_steps` (step 2, runs it), `gather_samples` (no hook: no physics work).
    pub(super) physics: Option<PhysicsFn>,
    /// The SyncTest mode ([`EngineConfig::sync_test`]): made by the builder, run
    /// by `frame` around each fixed step; the first desync it found.
    /// Desync writer: `run_steps` (step 2, owner thread). Reader: `sync_test_desync`.
    pub(super) sync_test: Option<(SyncTest, Option<WorldError>)>,
}
