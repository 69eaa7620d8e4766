//! The fixed-step loop and what runs in it: the game loop with its world and clock (real or lockstep), the physics hook and the SyncTest mode.
//!
//! Owns: the fields below, each documented with who writes it and who reads it (the frame's
//! steps are numbered as in the `engine` module docs). Must never: be reached from outside the
//! engine (its fields are the engine's parts, not a surface).

use lanegraph_jobs::{clock, LaneId, Lanes};

use super::super::agents::PhysicsSettings;
use super::{EngineClock, PhysicsFn, PhysicsStep};
use crate::game_loop::{FixedStep, FrameReport, GameLoop, ManualClock};
use crate::world::{SyncTest, World, WorldError};

/// The name the step in force is declared under to the game loop (from the agents' strategies).
const STEP_DECLARER: &str = "strategies";

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
    /// The configured step (`EngineConfig::fixed_step_hz`), which strategies' step divisors
    /// divide. Writer: `Stepper::build`; never changed. Readers: `adopt_divisor`,
    /// `Engine::add_agent` (the divisor check).
    pub(super) configured: FixedStep,
    /// The physics hook (`None`: not set). Writer: `set_physics` (the game, between frames).
    /// Readers: `run_steps` (step 2, runs it), `gather_samples` (no hook: no physics work).
    pub(super) physics: Option<PhysicsFn>,
    /// The SyncTest mode ([`EngineConfig::sync_test`]): made by the builder, run
    /// by `frame` around each fixed step; the first desync it found.
    /// Desync writer: `run_steps` (step 2, owner thread). Reader: `sync_test_desync`.
    pub(super) sync_test: Option<(SyncTest, Option<WorldError>)>,
}

impl Stepper {
    /// Step 0, in lockstep: the clock set to exactly one step ahead, also across a change of
    /// step (it advances one step of the step in force for every frame since the step last
    /// changed). Does nothing on the real clock.
    pub(super) fn set_lockstep_clock(&mut self, frame: u64) {
        let Some(m) = &self.lockstep else {
            return;
        };
        let s = self.game.fixed_step();
        let (base_frame, base_ns, base_step) = &mut self.lockstep_base;
        if *base_step != s {
            *base_frame = frame - 1;
            *base_ns = m.get_ns();
            *base_step = s;
        }
        // Rounded up, so the accumulator holds whole steps and less than one more.
        let (num, den) = (u128::from(s.numer_ns()), u128::from(s.denom()));
        let since = u128::from(frame - *base_frame);
        m.set_ns(*base_ns + ((since * num).div_ceil(den)) as u64);
    }

    /// Step 0: the step in force is the configured one divided by the smallest divisor any
    /// agent's current strategy declares (`None`: none declares one; the configured step).
    /// Divisors were checked at registration to keep the step within 10 s.
    pub(super) fn adopt_divisor(&mut self, divisor: Option<std::num::NonZeroU32>) {
        match divisor.and_then(|d| self.configured.divided(d).ok()) {
            Some(step) => {
                if self.game.fixed_step() != step {
                    self.game.declare_fixed_step(STEP_DECLARER, step);
                }
            }
            None => {
                self.game.withdraw_fixed_step(STEP_DECLARER);
            }
        }
    }

    /// Step 2: the fixed steps the accumulator asks for, each running the systems and then
    /// the physics hook with `settings` (under a SyncTest, each step is also re-simulated and
    /// compared). Returns the loop's report and the physics hook's time, ns.
    pub(super) fn run(
        &mut self,
        lanes: &Lanes,
        lane: Option<LaneId>,
        settings: PhysicsSettings,
    ) -> (FrameReport, u64) {
        let mut physics_ns = 0u64;
        let physics = &mut self.physics;
        // The hook after a step's systems (the world's tick is the one they left).
        let mut physics_hook = |world: &mut World, dt: f32| {
            if let Some(f) = physics.as_mut() {
                let _s = crate::span!("physics.step", world.len() as u64);
                let p0 = clock::now();
                let step = PhysicsStep {
                    lanes,
                    lane,
                    dt,
                    tick: world.tick(),
                    settings,
                };
                f(world, &step);
                physics_ns += clock::now().ns_since(p0);
            }
        };
        let report = match self.sync_test.as_mut() {
            // SyncTest mode: each step, systems and hook, is re-simulated from a snapshot
            // `check_distance` steps back and compared stage by stage.
            Some((sync, found)) => self.game.frame_stepping(|world, info| {
                let dt = info.step.as_secs_f64() as f32;
                if let Err(e) = sync.step_with(world, &mut |w| physics_hook(w, dt)) {
                    if found.is_none() {
                        tracing::warn!(target: "lanegraph", code = "LG-SYNC-DESYNC", error = %e, "the SyncTest mode stopped at its first failure, a desync or a snapshot it could not take or put back (the run summary's sync_test); the world goes on from where the check left it");
                        *found = Some(e);
                    }
                }
            }),
            None => self.game.frame_with(|world, info| {
                physics_hook(world, info.step.as_secs_f64() as f32);
            }),
        };
        (report, physics_ns)
    }
}
