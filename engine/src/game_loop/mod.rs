//! The fixed-timestep game loop: accumulator, steps, interpolation alpha, injectable clock.
//!
//! Owns: [`GameLoop`] and its parts: the exact [`FixedStep`], the integer `Accumulator`, the
//! [`FrameClock`] it reads. Must never: let real time decide *what* the simulation computes
//! (only *how many* fixed steps a frame runs), or lose time silently.
//!
//! - the step itself, an exact rational number of nanoseconds, is `crate::fixed_step`'s (re-exported
//!   here), so the world and the systems read it without depending on the loop.
//! - `accumulator`: steps per frame, the cap, the clamp, alpha.
//! - `clock`: the real and the manual clock.
//! - `runner`: the loop itself.
//!
//! | file | idea |
//! |------|------|
//! | `accumulator` | The fixed-step accumulator: how many steps a frame runs, what it drops, and the alpha |
//! | `clock` | Where the game loop reads time from: the real clock, or a manual one tests drive exactly |
//! | `runner` | `GameLoop`: one frame = begin frame, fixed-step accumulator, `run_systems` once per step |

pub(crate) mod accumulator;
pub(crate) mod clock;
pub(crate) mod runner;

pub use crate::fixed_step::{FixedStep, InvalidStep};
pub(crate) use clock::{FrameClock, ManualClock, MonotonicClock};
pub(crate) use runner::FrameReport;
pub(crate) use runner::{GameLoop, LoopOptions, LoopTotals};
