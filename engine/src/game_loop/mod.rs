//! The fixed-timestep game loop: accumulator, steps, interpolation alpha, injectable clock.
//!
//! Owns: [`GameLoop`] and its parts: the exact [`FixedStep`], the integer `Accumulator`, the
//! [`FrameClock`] it reads. Must never: let real time decide *what* the simulation computes
//! (only *how many* fixed steps a frame runs), or lose time silently.
//!
//! - `step`: the step as an exact rational number of nanoseconds.
//! - `accumulator`: steps per frame, the cap, the clamp, alpha.
//! - `clock`: the real and the manual clock.
//! - `runner`: the loop itself.
//!
//! | file | idea |
//! |------|------|
//! | `accumulator` | The fixed-step accumulator: how many steps a frame runs, what it drops, and the alpha |
//! | `clock` | Where the game loop reads time from: the real clock, or a manual one tests drive exactly |
//! | `runner` | `GameLoop`: one frame = begin frame, fixed-step accumulator, `run_systems` once per step |
//! | `step` | The fixed step as an exact rational number of nanoseconds |

pub(crate) mod accumulator;
pub(crate) mod clock;
pub(crate) mod runner;
pub(crate) mod step;

pub(crate) use clock::{FrameClock, ManualClock, MonotonicClock};
pub(crate) use runner::FrameReport;
pub(crate) use runner::{GameLoop, LoopOptions, LoopTotals};
pub use step::{FixedStep, InvalidStep};
