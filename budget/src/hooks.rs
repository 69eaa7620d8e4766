//! What the runtime, its tools and its tests call on the controller and no game needs: the
//! per-frame tick an engine drives, replay of a recording, and the arbitration internals the
//! tests read (cost fits, bars, the death spiral). `lanegraph` re-exports this crate whole only
//! as `lanegraph::hooks::budget`; a game's `lanegraph::budget` leaves it out.
//!
//! Must never hold logic of its own: each method is the controller's, moved behind a trait so
//! a game's view of `Controller` is the dozen calls it makes.

use crate::agent::{Agent, AgentId, Pool, RegisterError, StrategyIndex};
use crate::config::{ConfigError, ControllerConfig, FrameInput, InputError};
use crate::controller::{AdaptationMode, PinError, TickReport};
use crate::cost_model::Fit;
use crate::providers::{Providers, Readings};

pub use crate::cost_model::{CostModel, WINDOW as COST_MODEL_WINDOW};
pub use crate::record::Recording;

/// The controller's calls for an engine, a replay tool or a test (module docs).
pub trait ControllerDriver {
    /// A controller with no agents and no providers.
    fn new(cfg: ControllerConfig) -> Result<Self, ConfigError>
    where
        Self: Sized;

    /// Installs the thermal, battery, memory and GPU memory providers polled every tick. A
    /// `providers` without a GPU memory provider keeps the one installed (an engine installs
    /// its own, fed by its render pass).
    fn set_providers(&mut self, providers: Providers);

    /// Registers an agent; it starts on its highest-quality strategy (ties: the first declared)
    /// and is told so. The next tick arbitrates.
    fn register(&mut self, agent: Box<dyn Agent>) -> Result<AgentId, RegisterError>;

    /// Pins an agent to a strategy by name, at once (logged as a manual decision). A pinned
    /// agent is left out of arbitration and its cost is reserved from its pool's capacity.
    fn pin(&mut self, id: AgentId, strategy: &str) -> Result<(), PinError>;

    /// Releases a pin; the agent rejoins arbitration on the next tick.
    fn unpin(&mut self, id: AgentId);

    /// Registered agents.
    fn agent_count(&self) -> usize;

    /// Every registered agent's id, in registration order.
    fn agent_ids(&self) -> impl ExactSizeIterator<Item = AgentId> + '_;

    /// The pool the agent's cost lands on.
    fn pool(&self, id: AgentId) -> Option<Pool>;

    /// The agent's current strategy's fitted cost law, once it has enough samples.
    fn cost_fit(&self, id: AgentId) -> Option<Fit>;

    /// The agent's calibrated cost of each strategy right now, ms (quotes times the measured
    /// factor; order preserved).
    fn calibrated_costs(&self, id: AgentId) -> Option<Vec<f64>>;

    /// True while the agent's strategy `strategy` is barred (it overran right after an upgrade;
    /// module docs): the arbiter will not choose it.
    fn is_barred(&self, id: AgentId, strategy: StrategyIndex) -> bool;

    /// The smallest fixed step any agent's current strategy declares, in seconds; `None` when
    /// none declares one (the game loop then uses [`DEFAULT_FIXED_STEP_S`](crate::DEFAULT_FIXED_STEP_S)).
    fn smallest_declared_step(&self) -> Option<f64>;

    /// The fixed step the game loop should use: [`Self::smallest_declared_step`] or 1/60 s.
    fn fixed_step_s(&self) -> f64;

    /// True while the death spiral holds (the fixed step kept clamping; every agent is held at
    /// its cheapest strategy). Entering it logs a `budget/death_spiral` warning.
    fn in_death_spiral(&self) -> bool;

    /// Switches mode. Entering `Manual` freezes every agent where it is; leaving it
    /// re-arbitrates on the next tick (pins made with [`Self::pin`] stay until unpinned).
    fn set_mode(&mut self, mode: AdaptationMode);

    /// Starts recording every tick's input and readings (for replay).
    fn start_recording(&mut self);

    /// Stops recording and returns what was recorded.
    fn take_recording(&mut self) -> Option<Recording>;

    /// One tick: polls the providers, then [`Self::tick_with`].
    fn tick(&mut self, input: &FrameInput<'_>) -> Result<TickReport, InputError>;

    /// Replays a recording into this controller (which must have the same agents, registered
    /// in the same order, and the same configuration): the same decisions come out, bit for
    /// bit. Returns the per-tick reports.
    fn replay(&mut self, recording: &Recording) -> Result<Vec<TickReport>, InputError>;

    /// One tick with given provider readings (module docs: steps 1-9).
    ///
    /// One function (about 170 lines) on purpose: the nine steps share the tick's validated
    /// input and run in the order the module docs number them (validate, credit samples,
    /// overhead, heuristics, PID, calibrate, trigger, arbitrate, apply and log); each step's
    /// own logic lives in its module (`cost_model`, `heuristics`, `pid`, `arbitration`, `log`).
    fn tick_with(
        &mut self,
        input: &FrameInput<'_>,
        readings: Readings,
    ) -> Result<TickReport, InputError>;
}
