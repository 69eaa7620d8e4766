//! `GameLoop`: one frame = begin frame, fixed-step accumulator, `run_systems` once per step.
//!
//! Owns: the [`GameLoop`] (the world, the frame clock, the accumulator, the step declarations),
//! [`FrameReport`] and the loop's running totals. Must never: freeze under overload (the step
//! cap drops steps instead), drop time silently (every dropped step and clamped nanosecond is
//! counted, reported per frame and in a rate-limited event), or read time more than once per
//! frame (every step of a frame simulates the same fixed step).
//!
//! # The step
//! The fixed step is the smallest any declarer (an agent of the budget controller: physics via
//! its strategy, usually) declares through [`GameLoop::declare_fixed_step`]; with none, it is
//! the default (1/60 s, or what [`GameLoop::set_fixed_step`] set). Declarations are plain
//! values keyed by a name, so the controller wires in without this module knowing its types.

use std::borrow::Cow;
use std::time::Duration;

use super::accumulator::{Accumulator, StepPlan, MAX_FRAME_DELTA, MAX_STEPS_PER_FRAME};
use super::clock::{FrameClock, MonotonicClock};
use crate::engine_events::{limiter_now, EngineEvent, EVENT_TARGET};
use crate::fixed_step::FixedStep;
use crate::world::World;

/// Loop settings; the defaults are the accumulator's constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoopOptions {
    /// Longest real frame delta accumulated (default 0.25 s).
    pub max_frame_delta: Duration,
    /// Most steps one frame runs (default 5).
    pub max_steps_per_frame: u32,
    /// Step used while no declarer declares one (default 1/60 s).
    pub default_step: FixedStep,
}

impl Default for LoopOptions {
    fn default() -> Self {
        LoopOptions {
            max_frame_delta: MAX_FRAME_DELTA,
            max_steps_per_frame: MAX_STEPS_PER_FRAME,
            default_step: FixedStep::DEFAULT,
        }
    }
}

/// Loop settings that cannot work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LoopOptionsError {
    /// A zero step cap would never simulate.
    #[error("max_steps_per_frame is 0: the simulation would never advance; fix: use at least 1 (5 is the default)")]
    ZeroStepCap,
    /// A zero clamp would never accumulate time.
    #[error("max_frame_delta is zero: no time would ever accumulate; fix: use a positive clamp (0.25 s is the default)")]
    ZeroFrameDelta,
}

/// What one frame did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameReport {
    /// Frame number (1 for the first `frame()` call).
    pub frame: u64,
    /// Real time since the previous frame (or since the loop was made), nanoseconds.
    pub dt_ns: u64,
    /// The fixed step this frame simulated.
    pub step: FixedStep,
    /// Fixed steps run.
    pub steps: u32,
    /// Steps due but beyond the cap: discarded (slow motion).
    pub dropped_steps: u64,
    /// Real time beyond the frame-delta clamp: discarded.
    pub clamped_ns: u64,
    /// Interpolation alpha for rendering, in `[0, 1)`.
    pub alpha: f64,
}

/// Running totals since the loop was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoopTotals {
    /// Frames run.
    pub frames: u64,
    /// Fixed steps run.
    pub steps: u64,
    /// Steps dropped by the cap.
    pub dropped_steps: u64,
    /// Nanoseconds dropped by the clamp.
    pub clamped_ns: u64,
    /// Frames that dropped anything.
    pub frames_with_drops: u64,
}

/// Which step a frame simulates, passed to the per-step hook of [`GameLoop::frame_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepInfo {
    /// 0-based step within this frame.
    pub index_in_frame: u32,
    /// The world's tick after this step's systems ran.
    pub tick: u64,
    /// The fixed step.
    pub step: FixedStep,
}

/// The fixed-timestep game loop. It owns the world: the thread that calls [`frame`](Self::frame)
/// is the owner thread.
pub struct GameLoop<C: FrameClock = MonotonicClock> {
    /// The world it simulates. Writers: `frame_stepping` (owner thread: each step's systems),
    /// `apply_step`, `on_drop` (event limiter), `restore`, `world_mut`. Readers: `world`,
    /// `snapshot_into`, `into_world`, `Debug`.
    world: World,
    /// The frame clock, read once per frame. Writer: `with_clock`; `clock_mut` lends it (e.g. to
    /// advance a manual clock). Readers: `with_clock`, `frame_stepping`, `resync`.
    clock: C,
    /// The fixed-step accumulator. Writers: `frame_stepping` (owner thread, `advance`),
    /// `apply_step` (`set_step`), `restore`. Readers: `frame_stepping`, `alpha`, `leftover_units`,
    /// `snapshot_into`, `Debug`.
    acc: Accumulator,
    /// The clock reading the next frame's delta is measured from; never goes back. Writers:
    /// `with_clock`, `frame_stepping` (owner thread), `resync`. Reader: `frame_stepping`.
    last_ns: u64,
    /// The loop settings. Writer: `with_clock`; `set_fixed_step` changes the default step.
    /// Readers: `fixed_step` (the default step), `on_drop` (the step cap, logged), `options`.
    options: LoopOptions,
    /// Each declarer's fixed step, in declaration order. Writers: `declare_fixed_step`,
    /// `withdraw_fixed_step`. Readers: `fixed_step` (the smallest), `fixed_step_declarer`.
    declared: Vec<(Cow<'static, str>, FixedStep)>,
    /// Running totals since the loop was made. Writers: `frame_stepping` (owner thread), `on_drop`.
    /// Readers: the same (frame number, event fields), `totals`, `Debug`.
    totals: LoopTotals,
}

impl<C: FrameClock> std::fmt::Debug for GameLoop<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GameLoop")
            .field("world", &self.world)
            .field("step", &self.acc.step())
            .field("totals", &self.totals)
            .finish_non_exhaustive()
    }
}

impl GameLoop<MonotonicClock> {
    /// A loop on the real clock with the default options.
    pub fn new(world: World) -> Self {
        Self::with_clock(world, MonotonicClock, LoopOptions::default())
            .expect("default options are valid")
    }
}

impl<C: FrameClock> GameLoop<C> {
    /// A loop reading time from `clock`. Time starts now: the first frame's delta is measured
    /// from this call.
    pub fn with_clock(
        mut world: World,
        mut clock: C,
        options: LoopOptions,
    ) -> Result<Self, LoopOptionsError> {
        if options.max_steps_per_frame == 0 {
            return Err(LoopOptionsError::ZeroStepCap);
        }
        if options.max_frame_delta.is_zero() {
            return Err(LoopOptionsError::ZeroFrameDelta);
        }
        let step = options.default_step;
        world.set_fixed_step(step);
        let last_ns = clock.now_ns();
        Ok(GameLoop {
            world,
            clock,
            acc: Accumulator::new(step, options.max_frame_delta, options.max_steps_per_frame),
            last_ns,
            options,
            declared: Vec::new(),
            totals: LoopTotals::default(),
        })
    }

    /// Runs one frame (see the module docs) and reports what it did.
    pub fn frame(&mut self) -> FrameReport {
        self.frame_with(|_, _| {})
    }

    /// Like [`frame`](Self::frame), calling `per_step` after the systems of every step (the
    /// place for the physics graph: it runs on the same fixed step, after the systems).
    pub fn frame_with(&mut self, mut per_step: impl FnMut(&mut World, StepInfo)) -> FrameReport {
        self.frame_stepping(|world, info| {
            world.run_systems();
            per_step(world, info);
        })
    }

    /// Like [`frame`](Self::frame), with each fixed step run by `run_step` instead of
    /// [`World::run_systems`]: the step must run the systems itself (a SyncTest step does, and
    /// re-simulates). `StepInfo::tick` is the tick the step's systems leave.
    pub fn frame_stepping(
        &mut self,
        mut run_step: impl FnMut(&mut World, StepInfo),
    ) -> FrameReport {
        self.world.begin_frame();
        let now = self.clock.now_ns();
        let dt_ns = now.saturating_sub(self.last_ns);
        self.last_ns = self.last_ns.max(now);
        let plan = self.acc.advance(dt_ns);
        let step = self.acc.step();
        self.world.set_fixed_step(step);
        for index_in_frame in 0..plan.steps {
            // The tick the step's systems leave (they advance it by one).
            let info = StepInfo {
                index_in_frame,
                tick: self.world.tick() + 1,
                step,
            };
            run_step(&mut self.world, info);
        }
        self.totals.frames += 1;
        self.totals.steps += u64::from(plan.steps);
        if plan.dropped_steps > 0 || plan.clamped_ns > 0 {
            self.on_drop(&plan, step);
        }
        FrameReport {
            frame: self.totals.frames,
            dt_ns,
            step,
            steps: plan.steps,
            dropped_steps: plan.dropped_steps,
            clamped_ns: plan.clamped_ns,
            alpha: plan.alpha,
        }
    }

    #[cold]
    #[inline(never)]
    fn on_drop(&mut self, plan: &StepPlan, step: FixedStep) {
        self.totals.dropped_steps += plan.dropped_steps;
        self.totals.clamped_ns += plan.clamped_ns;
        self.totals.frames_with_drops += 1;
        if self
            .world
            .events
            .admit(EngineEvent::StepsDropped, limiter_now())
        {
            tracing::warn!(
                target: EVENT_TARGET,
                code = "LG-LOOP-001",
                event = "steps_dropped",
                frame = self.totals.frames,
                dropped_steps = plan.dropped_steps,
                clamped_ms = plan.clamped_ns as f64 / 1e6,
                step_ms = step.as_ms_f64(),
                max_steps = self.options.max_steps_per_frame,
                dropped_steps_total = self.totals.dropped_steps,
                "{}",
                EngineEvent::StepsDropped.message()
            );
        }
    }

    /// Declares (or re-declares) `declarer`'s fixed step. The loop simulates the smallest
    /// declared step from the next frame on.
    pub fn declare_fixed_step(&mut self, declarer: impl Into<Cow<'static, str>>, step: FixedStep) {
        let declarer = declarer.into();
        match self.declared.iter_mut().find(|(d, _)| *d == declarer) {
            Some(slot) => slot.1 = step,
            None => self.declared.push((declarer, step)),
        }
        self.apply_step();
    }

    /// Withdraws `declarer`'s step; true when it had one.
    pub fn withdraw_fixed_step(&mut self, declarer: &str) -> bool {
        let before = self.declared.len();
        self.declared.retain(|(d, _)| d != declarer);
        let removed = self.declared.len() != before;
        self.apply_step();
        removed
    }

    /// Sets the step used while nobody declares one (the default is 1/60 s).
    pub fn set_fixed_step(&mut self, step: FixedStep) {
        self.options.default_step = step;
        self.apply_step();
    }

    fn apply_step(&mut self) {
        let step = self.fixed_step();
        self.acc.set_step(step);
        self.world.set_fixed_step(step);
    }

    /// The step in force: the smallest declared, else the default.
    pub fn fixed_step(&self) -> FixedStep {
        self.declared
            .iter()
            .map(|(_, s)| *s)
            .min()
            .unwrap_or(self.options.default_step)
    }

    /// Who declared the step in force (`None` when it is the default).
    pub fn fixed_step_declarer(&self) -> Option<&str> {
        self.declared
            .iter()
            .min_by_key(|(_, s)| *s)
            .map(|(d, _)| &**d)
    }

    /// Forgets the real time since the last frame (after a loading screen, a pause, a debugger
    /// stop): the next frame measures from now. Nothing is simulated for the forgotten time,
    /// and nothing is reported dropped: it was not simulation time. The leftover fraction of a
    /// step (the alpha) is kept.
    pub fn resync(&mut self) {
        self.last_ns = self.last_ns.max(self.clock.now_ns());
    }

    /// The current interpolation alpha.
    pub fn alpha(&self) -> f64 {
        self.acc.alpha()
    }

    /// Totals since the loop was made.
    pub fn totals(&self) -> LoopTotals {
        self.totals
    }

    /// The options in force.
    pub fn options(&self) -> LoopOptions {
        self.options
    }

    /// [`World::snapshot_into`] plus the accumulator's leftover: a [`restore`](Self::restore)
    /// then puts back the time owed to the next step as well, so the frames after it run the
    /// steps the frames after the capture ran.
    pub fn snapshot_into(
        &self,
        snapshot: &mut crate::world::Snapshot,
    ) -> Result<(), crate::world::WorldError> {
        self.world.snapshot_into(snapshot)?;
        snapshot.accumulator = Some((self.acc.step(), self.acc.leftover_units()));
        Ok(())
    }

    /// [`World::restore`], and the accumulator's leftover when the snapshot holds one (a
    /// capture by [`snapshot_into`](Self::snapshot_into)). The frame clock is not rewound: the
    /// next frame's delta is real time since the last frame.
    pub fn restore(
        &mut self,
        snapshot: &crate::world::Snapshot,
    ) -> Result<(), crate::world::WorldError> {
        self.world.restore(snapshot)?;
        if let Some((step, units)) = snapshot.accumulator {
            self.acc.restore_leftover(step, units);
        }
        Ok(())
    }

    /// The accumulator's leftover, in `1/denom` ns units of the current step (exact).
    pub fn leftover_units(&self) -> u128 {
        self.acc.leftover_units()
    }

    /// The world.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The world, mutably (between frames).
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }

    /// The clock (e.g. a [`ManualClock`](super::ManualClock) to advance).
    pub fn clock_mut(&mut self) -> &mut C {
        &mut self.clock
    }

    /// Ends the loop, giving the world back.
    pub fn into_world(self) -> World {
        self.world
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game_loop::ManualClock;
    use crate::systems::test_capture::capturing;

    #[test]
    fn dropped_steps_event_has_the_grammar_and_the_fields() {
        let clock = ManualClock::new();
        let mut lp = GameLoop::with_clock(World::new(), clock.clone(), LoopOptions::default())
            .expect("default options");
        clock.advance(Duration::from_secs(1));
        let (r, events) = capturing(|| lp.frame());
        assert_eq!((r.steps, r.dropped_steps), (5, 10));
        assert_eq!(events.len(), 1, "{events:?}");
        let e = &events[0];
        assert_eq!(e.level, tracing::Level::WARN);
        assert_eq!(e.field("code"), Some("LG-LOOP-001"));
        assert_eq!(e.field("dropped_steps"), Some("10"));
        assert_eq!(e.field("clamped_ms"), Some("750.0"));
        assert_eq!(e.field("max_steps"), Some("5"));
        assert_eq!(e.field("message").map(|m| m.split(" | ").count()), Some(5));
        // A normal frame logs nothing.
        clock.advance_ns(1_000_000_000 / 60 + 1);
        let (r, events) = capturing(|| lp.frame());
        assert_eq!((r.steps, r.dropped_steps, r.clamped_ns), (1, 0, 0));
        assert!(events.is_empty());
    }
}
