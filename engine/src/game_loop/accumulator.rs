//! The fixed-step accumulator: how many steps a frame runs, what it drops, and the alpha.
//!
//! Owns: [`Accumulator`] and [`StepPlan`]. Must never: sum floats (time is integer nanoseconds
//! scaled by the step's denominator, so step boundaries are exact), run more than the step cap
//! in one frame (the spiral-of-death guard), or drop time without reporting it.
//!
//! # Per frame (exact integer arithmetic)
//! 1. `dt` (whole ns) is clamped to the maximum frame delta (0.25 s); the excess is reported
//!    as `clamped_ns`.
//! 2. `acc += dt * den` (units of `1/den` ns).
//! 3. `due = acc / num` whole steps; `steps = min(due, cap)`; `dropped = due - steps`.
//! 4. `acc -= due * num`: run steps and dropped steps both leave the accumulator (dropped time is
//!    discarded: slow motion, never a freeze), the fraction of a step stays.
//! 5. `alpha = acc / num` in `[0, 1)`: how far the display is between the last two steps.

use std::time::Duration;

use crate::fixed_step::FixedStep;

/// Longest real frame delta the loop accumulates: 0.25 s.
pub const MAX_FRAME_DELTA: Duration = Duration::from_millis(250);
/// Most fixed steps one frame runs: 5.
pub const MAX_STEPS_PER_FRAME: u32 = 5;

/// What one frame must do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepPlan {
    /// Fixed steps to run now (`<= cap`).
    pub steps: u32,
    /// Whole steps that were due but exceed the cap: discarded.
    pub dropped_steps: u64,
    /// Real time beyond the frame-delta clamp: discarded before it became steps.
    pub clamped_ns: u64,
    /// Interpolation alpha in `[0, 1)`: leftover time as a fraction of one step.
    pub alpha: f64,
}

/// Exact integer fixed-step accumulator.
#[derive(Debug, Clone)]
pub struct Accumulator {
    step: FixedStep,
    /// Time owed, in units of `1/step.denom()` ns. Always `< step.numer_ns()` between frames.
    acc: u128,
    max_frame_ns: u64,
    max_steps: u32,
}

impl Accumulator {
    /// An empty accumulator with the given step, clamp and cap.
    pub fn new(step: FixedStep, max_frame_delta: Duration, max_steps: u32) -> Self {
        Accumulator {
            step,
            acc: 0,
            max_frame_ns: u64::try_from(max_frame_delta.as_nanos()).unwrap_or(u64::MAX),
            max_steps,
        }
    }

    /// The current step.
    pub fn step(&self) -> FixedStep {
        self.step
    }

    /// Changes the step, keeping the leftover time (rescaled exactly where the denominators
    /// allow, floored to `1/den` ns otherwise). A leftover longer than the new step is run by
    /// the next frame (subject to the cap).
    pub fn set_step(&mut self, step: FixedStep) {
        if step == self.step {
            return;
        }
        self.acc = self.acc * u128::from(step.denom()) / u128::from(self.step.denom());
        self.step = step;
    }

    /// Accounts one frame of `dt_ns` real nanoseconds.
    pub fn advance(&mut self, dt_ns: u64) -> StepPlan {
        let used = dt_ns.min(self.max_frame_ns);
        let clamped_ns = dt_ns - used;
        let num = u128::from(self.step.numer_ns());
        self.acc += u128::from(used) * u128::from(self.step.denom());
        let due = self.acc / num;
        let steps = due.min(u128::from(self.max_steps));
        self.acc -= due * num;
        StepPlan {
            steps: steps as u32,
            dropped_steps: (due - steps) as u64,
            clamped_ns,
            alpha: self.alpha(),
        }
    }

    /// The leftover as a fraction of one step, in `[0, 1)`.
    pub fn alpha(&self) -> f64 {
        self.acc as f64 / self.step.numer_ns() as f64
    }

    /// The leftover in `1/denom` ns units (exact; for tests and diagnostics).
    pub fn leftover_units(&self) -> u128 {
        self.acc
    }

    /// Puts back a leftover captured as `units` of `1/step.denom()` ns (a snapshot's): rescaled
    /// as [`set_step`](Self::set_step) does when the step changed since, and kept below one
    /// step (a damaged value cannot make the next frame run extra steps).
    pub(crate) fn restore_leftover(&mut self, step: FixedStep, units: u128) {
        let units = units * u128::from(self.step.denom()) / u128::from(step.denom());
        self.acc = units.min(u128::from(self.step.numer_ns()) - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc60() -> Accumulator {
        Accumulator::new(FixedStep::DEFAULT, MAX_FRAME_DELTA, MAX_STEPS_PER_FRAME)
    }

    #[test]
    fn one_second_hitch_runs_five_and_drops_the_rest() {
        let mut a = acc60();
        let p = a.advance(1_000_000_000);
        // 0.25 s at 60 Hz is exactly 15 steps: 5 run, 10 dropped, 0.75 s clamped.
        assert_eq!(p.steps, 5);
        assert_eq!(p.dropped_steps, 10);
        assert_eq!(p.clamped_ns, 750_000_000);
        assert_eq!(p.alpha, 0.0);
    }

    #[test]
    fn exact_thirds_of_a_step_accumulate_exactly() {
        // 1/180 s frames: every third frame runs one 1/60 s step, with no drift, forever.
        let mut a = acc60();
        let mut t = 0u64;
        let mut steps = 0u64;
        for i in 1..=180_000u64 {
            let now = i * 1_000_000_000 / 180;
            steps += u64::from(a.advance(now - t).steps);
            t = now;
        }
        assert_eq!(steps, 60_000);
        assert_eq!(a.leftover_units(), 0);
    }

    #[test]
    fn changing_the_step_keeps_the_leftover_time() {
        let mut a = acc60();
        a.advance(8_333_333); // just under half a 60 Hz step
        assert!((a.alpha() - 0.5).abs() < 1e-6);
        a.set_step(FixedStep::from_hz(30).unwrap());
        assert!((a.alpha() - 0.25).abs() < 1e-6);
    }
}
