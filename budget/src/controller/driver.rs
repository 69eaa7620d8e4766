//! The controller's calls for an engine, a replay tool or a test: [`ControllerDriver`].
//!
//! Owns: the trait and its implementation (registration, pins, modes, recording, the per-agent
//! figures the tests and the report read, and the tick's entry points). Must never: hold a step
//! of the tick itself (those are `tick`'s and `pool`'s).

use super::{
    AdaptationMode, Controller, OverheadWindow, PinError, TickReport, COST_MEMORY_HALF_LIFE_S,
};
use crate::agent::{self, limits, Agent, AgentId, Pool, RegisterError, Strategy, StrategyIndex};
use crate::arbitration::{self, Arbiter};
use crate::config::{ConfigError, ControllerConfig, FrameInput, InputError};
use crate::cost_model::Fit;
use crate::heuristics::Heuristics;
use crate::log::DecisionLog;
use crate::pid::Pid;
use crate::providers::{Providers, Readings, ReadingsProvider};
use crate::record::Recording;
use crate::slot::Slot;

/// The controller's calls for an engine, a replay tool or a test (`crate::hooks`' docs).
pub trait ControllerDriver {
    /// The decision log in memory: each switch with its indices, the multiplier and target at
    /// the time, and its reason (a game reads the same decisions, by name, in its run summary).
    fn log(&self) -> &DecisionLog;

    /// The configuration.
    fn config(&self) -> &ControllerConfig;

    /// The budget multiplier: the PID's output, which scales the frame target under pressure.
    fn multiplier(&self) -> f64;

    /// The agent's current strategy (a game asks its engine: `Engine::strategy`).
    fn current(&self, id: AgentId) -> Option<StrategyIndex>;

    /// Announces the workload an agent is about to run (e.g. a level streamed in 10,000
    /// bodies): costs are extrapolated along the fitted law before the samples show it. Cleared
    /// by passing `None`.
    fn announce_workload(&mut self, id: AgentId, n: Option<u64>);

    /// A controller with no agents and no providers.
    fn new(cfg: ControllerConfig) -> Result<Self, ConfigError>
    where
        Self: Sized;

    /// Installs the device readings (thermal, battery, memory, and GPU memory where the
    /// platform reports it) polled every tick, replacing the last ones installed.
    fn set_providers(&mut self, provider: Box<dyn ReadingsProvider>);

    /// Installs the GPU memory signal read when the device readings report none (an engine
    /// installs its own at build, fed by its render pass); only its `gpu_memory` is read.
    fn set_gpu_memory_provider(&mut self, provider: Box<dyn ReadingsProvider>);

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

    /// The agent's quoted cost of each strategy at its current workload, ms (what the game
    /// declared, before any measurement): beside [`Self::calibrated_costs`], the report's
    /// ladder table of quoted against priced cost.
    fn quoted_costs(&self, id: AgentId) -> Option<Vec<f64>>;

    /// Per strategy, true when its price rests on measurements of its own (false: estimated
    /// from the measured rungs, or the quote alone when none is measured).
    fn measured_rungs(&self, id: AgentId) -> Option<Vec<bool>>;

    /// True while the agent's strategy `strategy` is barred (it overran right after an upgrade;
    /// module docs): the arbiter will not choose it.
    fn is_barred(&self, id: AgentId, strategy: StrategyIndex) -> bool;

    /// True while the death spiral holds (the fixed step kept clamping; every agent is held at
    /// its cheapest strategy). Entering it logs a `budget/death_spiral` warning.
    fn in_death_spiral(&self) -> bool;

    /// The newest GPU reading fed (`FrameInput::gpu`): the frame it measures and its time, ms.
    fn last_gpu(&self) -> Option<(u64, f64)>;

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

    /// One tick with given provider readings (module docs: steps 1-9, each a step of `tick`).
    fn tick_with(
        &mut self,
        input: &FrameInput<'_>,
        readings: Readings,
    ) -> Result<TickReport, InputError>;
}

impl ControllerDriver for Controller {
    fn log(&self) -> &DecisionLog {
        &self.log
    }

    fn config(&self) -> &ControllerConfig {
        &self.cfg
    }

    fn multiplier(&self) -> f64 {
        let [cpu, gpu] = self.pool_multipliers();
        if self.gpu_current {
            cpu.min(gpu)
        } else {
            cpu
        }
    }

    fn current(&self, id: AgentId) -> Option<StrategyIndex> {
        self.slots.get(id.index()).map(|s| s.current)
    }

    fn announce_workload(&mut self, id: AgentId, n: Option<u64>) {
        if let Some(s) = self.slots.get_mut(id.index()) {
            s.announced_n = n;
        }
    }

    fn new(cfg: ControllerConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(Controller {
            cfg,
            slots: Vec::new(),
            providers: Providers::default(),
            heuristics: Heuristics::new(cfg.frame_budget_ms, cfg.headroom, cfg.pid.min),
            pid: [Pid::new(cfg.pid), Pid::new(cfg.pid)],
            gpu_current: false,
            arbiter: Arbiter::new(),
            log: DecisionLog::new(cfg.log_capacity),
            mode: AdaptationMode::Adaptive,
            last_frame: None,
            last_gpu: None,
            overhead: [0.0; 2],
            overhead_window: [OverheadWindow::default(); 2],
            dirty: true,
            was_spiral: false,
            last_arb: None,
            recording: None,
            costs: Vec::new(),
            groups: Vec::new(),
            members: Vec::new(),
            chosen: Vec::new(),
        })
    }

    fn set_providers(&mut self, provider: Box<dyn ReadingsProvider>) {
        self.providers.device = Some(provider);
    }

    fn set_gpu_memory_provider(&mut self, provider: Box<dyn ReadingsProvider>) {
        self.providers.gpu_memory = Some(provider);
    }

    fn register(&mut self, agent: Box<dyn Agent>) -> Result<AgentId, RegisterError> {
        let name = agent.name().to_string();
        if self.slots.len() >= limits::MAX_AGENTS {
            return Err(RegisterError::TooManyAgents {
                agent: name,
                max: limits::MAX_AGENTS,
            });
        }
        let strategies = agent.strategies();
        agent::validate(&name, agent.weight(), &strategies, |n| {
            self.slots.iter().any(|s| s.name == n)
        })?;
        let max_value = |ss: &[Strategy], w: u16| {
            ss.iter().map(|s| s.quality as u32).max().unwrap_or(0) * w as u32
        };
        let (agents, width) = arbitration::table_size(
            self.slots
                .iter()
                .map(|s| max_value(&s.strategies, s.weight))
                .chain(std::iter::once(max_value(&strategies, agent.weight()))),
        );
        if agents * width > arbitration::MAX_TABLE_CELLS {
            return Err(RegisterError::ArbitrationTooLarge {
                agent: name,
                cells: agents * width,
                max: arbitration::MAX_TABLE_CELLS,
            });
        }
        let mut best = 0;
        for (i, s) in strategies.iter().enumerate() {
            if s.quality > strategies[best].quality {
                best = i;
            }
        }
        let initial = StrategyIndex(best as u8);
        let mut slot = Slot::new(agent, strategies, initial);
        slot.agent.apply(initial, &slot.strategies[best]);
        let id = AgentId(self.slots.len() as u16);
        self.slots.push(slot);
        self.dirty = true;
        Ok(id)
    }

    fn pin(&mut self, id: AgentId, strategy: &str) -> Result<(), PinError> {
        let frame = self.last_frame.unwrap_or(0);
        let slot = self
            .slots
            .get_mut(id.index())
            .ok_or(PinError::UnknownAgent(id))?;
        let Some(i) = slot.strategies.iter().position(|s| s.name == strategy) else {
            return Err(PinError::UnknownStrategy {
                agent: slot.name.clone(),
                strategy: strategy.to_string(),
                known: slot
                    .strategies
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let to = StrategyIndex(i as u8);
        let repeated = slot.pinned == Some(to);
        slot.pinned = Some(to);
        let from = slot.current;
        if from != to {
            slot.switch(to, frame + 1, frame);
        }
        // Logged even when it changes nothing: a reader of the log (and a replay) sees every
        // pin the game made.
        let reason = if from == to {
            "manual: pinned (already in force)"
        } else {
            "manual: pinned"
        };
        // A game re-pinning the same strategy every frame logs it once: the log keeps room for
        // the decisions that change something.
        if !(repeated && from == to) {
            self.log_manual(id, from, to, reason, frame);
        }
        self.dirty = true;
        Ok(())
    }

    fn unpin(&mut self, id: AgentId) {
        let frame = self.last_frame.unwrap_or(0);
        if let Some(s) = self.slots.get_mut(id.index()) {
            if s.pinned.take().is_some() {
                let cur = s.current;
                // The strategy stays until the controller decides otherwise: logged as a
                // decision to stay, so the log shows where the pin ended.
                self.log_manual(id, cur, cur, "manual: unpinned", frame);
            }
            self.dirty = true;
        }
    }

    fn agent_count(&self) -> usize {
        self.slots.len()
    }

    fn agent_ids(&self) -> impl ExactSizeIterator<Item = AgentId> + '_ {
        (0..self.slots.len()).map(|i| AgentId(i as u16))
    }

    fn pool(&self, id: AgentId) -> Option<Pool> {
        self.slots.get(id.index()).map(|s| s.pool)
    }

    fn cost_fit(&self, id: AgentId) -> Option<Fit> {
        self.slots.get(id.index()).and_then(|s| s.fit())
    }

    fn calibrated_costs(&self, id: AgentId) -> Option<Vec<f64>> {
        let s = self.slots.get(id.index())?;
        // The law is only needed to extrapolate to an announced workload.
        let fit = s.announced_n.and_then(|_| s.fit());
        let frame = self.last_frame.unwrap_or(0);
        let half_life = self.frames_per_second() * COST_MEMORY_HALF_LIFE_S;
        let mut out = Vec::with_capacity(s.strategies.len());
        s.price_ladder(fit.as_ref(), frame, half_life, &mut out);
        Some(out)
    }

    fn quoted_costs(&self, id: AgentId) -> Option<Vec<f64>> {
        let s = self.slots.get(id.index())?;
        let n = s.workload();
        Some(s.strategies.iter().map(|st| st.quote.ms(n)).collect())
    }

    fn measured_rungs(&self, id: AgentId) -> Option<Vec<bool>> {
        let s = self.slots.get(id.index())?;
        Some((0..s.strategies.len()).map(|k| s.measured(k)).collect())
    }

    fn is_barred(&self, id: AgentId, strategy: StrategyIndex) -> bool {
        let frame = self.last_frame.unwrap_or(0);
        self.slots.get(id.index()).is_some_and(|s| {
            strategy.get() < s.strategies.len()
                && s.barred(strategy.get(), frame, self.overhead[s.pool.index()])
        })
    }

    fn in_death_spiral(&self) -> bool {
        self.heuristics.in_death_spiral()
    }

    fn last_gpu(&self) -> Option<(u64, f64)> {
        self.last_gpu
    }

    fn set_mode(&mut self, mode: AdaptationMode) {
        if self.mode != mode {
            self.mode = mode;
            self.dirty = true;
        }
    }

    fn start_recording(&mut self) {
        self.recording = Some(Recording::default());
    }

    fn take_recording(&mut self) -> Option<Recording> {
        self.recording.take()
    }

    fn tick(&mut self, input: &FrameInput<'_>) -> Result<TickReport, InputError> {
        input.validate(self.last_frame, self.slots.len())?;
        let readings = self.providers.poll();
        self.tick_with(input, readings)
    }

    fn replay(&mut self, recording: &Recording) -> Result<Vec<TickReport>, InputError> {
        let mut out = Vec::with_capacity(recording.frames.len());
        for f in &recording.frames {
            out.push(self.tick_with(&f.input(), f.readings)?);
        }
        Ok(out)
    }

    fn tick_with(
        &mut self,
        input: &FrameInput<'_>,
        readings: Readings,
    ) -> Result<TickReport, InputError> {
        self.run_tick(input, readings)
    }
}
