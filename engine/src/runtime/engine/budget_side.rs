//! The budget side: the controller, the built-in and custom agents, the readings pushed to it, and the frame's cost samples.
//!
//! Owns: the fields below, each documented with who writes it and who reads it (the frame's
//! steps are numbered as in the `engine` module docs). Must never: be reached from outside the
//! engine (its fields are the engine's parts, not a surface).

use lanegraph_budget::providers::FixedReadings;
use lanegraph_budget::{AgentId, AgentSample, Controller};

use super::{AgentCost, Builtins};

/// The budget side: the controller, the built-in and custom agents, the readings pushed to it, and the frame's cost samples.
pub(super) struct BudgetSide {
    /// The budget controller and its agents. Writers: `frame` (owner thread, step 5: `tick`),
    /// `apply_replay` (pins), the game between frames (`add_agent`, `pin`, `set_adaptation`, ...).
    /// Readers: `apply_strategies`, `pump_assets`, `run_steps`, `update_agent_metrics`, accessors.
    pub(super) controller: Controller,
    /// The built-in agents the game installed, and their ladders. Writer: `assemble` (then fixed).
    /// Readers: `apply_strategies`, `pump_assets`, `run_steps`, `gather_samples`, the id accessors.
    pub(super) builtins: Builtins,
    /// The game's own agents, each with where its cost comes from. Writer: `add_agent` (between
    /// frames). Reader: `collect_custom_samples` (owner thread, step 5).
    pub(super) custom: Vec<(AgentId, AgentCost)>,
    /// The device readings the controller polls each tick, installed as its provider on the
    /// first `set_readings`. Writer: `set_readings` (between frames). Reader: the controller's
    /// tick (owner thread, step 6), through the provider it shares.
    pub(super) readings: Option<FixedReadings>,
    /// Costs the game reported for the frame to come (`AgentCost::Reported` agents). Writer:
    /// `report_cost`. Reader: `collect_custom_samples` (step 5), which drains them into `samples`.
    pub(super) reported: Vec<AgentSample>,
    /// This frame's cost samples for the controller (reused each frame). Writers: `gather_samples`,
    /// `collect_custom_samples` (owner thread, step 5). Reader: `frame`'s `controller.tick`.
    pub(super) samples: Vec<AgentSample>,
    /// Without a GPU: the view frame of the last render sample given to the controller, so each
    /// drawn view is sampled once. Writer and reader: `gather_samples` (owner thread, step 5).
    pub(super) last_render_sample: u64,
    /// The render-lane frame of the last GPU reading given to the controller, so each reading goes
    /// in once. Writer and reader: `gather_samples` (owner thread, step 5).
    pub(super) last_gpu_frame: u64,
    /// The render agent is on the GPU pool (a device came up).
    /// Writer: `assemble`. Reader: `gather_samples` (step 5: GPU time or render-job CPU time).
    pub(super) render_on_gpu: bool,
}
