//! The adaptive budget controller: agents, strategies, cost models, heuristics, PID,
//! arbitration, the decision log and manual mode.
//!
//! Owns: deciding, every tick, which strategy each agent runs so that frames hold their target.
//! Must never: measure (measurements arrive as plain values per frame, so the engine wires the
//! World, telemetry and GPU profiler to it and tests drive it with a simulated clock), read a
//! clock, or iterate a hash map (same inputs, same decisions, bit for bit).
//!
//! How it decides, how to write an agent and how to read the log: `docs/budgets.md`. A game
//! reaches what it needs as `lanegraph::budget` (agents, strategies, quotes, the controller);
//! the per-frame tick, replay and recording are the runtime's, through [`hooks`]. The
//! controller's simulator lives with the bench suites (`lanegraph-tools`), where it drives the
//! game loop's own fixed-step accumulator.
//!
//! | file | idea |
//! |------|------|
//! | `agent` | the `Agent` trait, strategies, quotes, ids, registration checks |
//! | `cost_model` | law fitting over `{1, n, n log n, n^2}`, level tracking, calibration |
//! | [`providers`] | thermal, battery and memory readings and the trait that reports them |
//! | `heuristics` | the heuristics and their collapse into one target and cap (its own table) |
//! | `pid` | the anti-windup PID driving each pool's budget multiplier |
//! | `arbitration` | the exact multiple-choice knapsack |
//! | `log` | the bounded decision log |
//! | `config` | tuning constants, per-frame inputs, input errors |
//! | `controller` | the controller and its tick: triggers, hysteresis, dwell, manual mode (its own table) |
//! | `record` | recording and replay of inputs |
//! | `slot` | one agent's state in the controller: its cost memory, the ladder's prices, probes and bars |
//! | `sorted_window` | a window of values kept sorted, for a median that slides one value a frame |
//! | [`hooks`] | what the runtime, its tools and tests call that no game needs |
//! | [`cost_trace`] | a real run's per-rung costs, recorded for the simulator |

#![deny(unreachable_pub, missing_docs)]

pub(crate) mod agent;
pub(crate) mod arbitration;
pub(crate) mod config;
pub(crate) mod controller;
pub(crate) mod cost_model;
pub mod cost_trace;
pub(crate) mod heuristics;
pub mod hooks;
pub(crate) mod log;
pub(crate) mod pid;
pub mod providers;
pub(crate) mod record;
pub(crate) mod slot;
pub(crate) mod sorted_window;

pub use agent::{
    finest_step_divisor, Agent, AgentId, Pool, Quote, RegisterError, Strategy, StrategyIndex,
};
pub use config::{
    AgentSample, ConfigError, ControllerConfig, FrameInput, GpuTiming, InputError, StepReport,
    GPU_READ_LAG_FRAMES,
};
pub use controller::{AdaptationMode, Controller, PinError, TickReport};
pub use cost_model::{CostLaw, CostModel, Fit, WINDOW as COST_MODEL_WINDOW};
pub use log::{Decision, DecisionLog};
pub use pid::PidConfig;
pub use providers::{Readings, ReadingsProvider, ThermalState};
