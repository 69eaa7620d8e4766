//! The run log's way back in: replaying recorded decisions and input, and logging the live
//! input a frame hands to the world.
//!
//! Owns: [`ReplayError`], `Engine::replay`, `push_input` and the input log. Must never: apply
//! part of a refused log.

use lanegraph_budget::hooks::ControllerDriver;

use super::*;

/// What a replay refused ([`Engine::replay`]): nothing of a refused log is applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// An entry comes before the one listed ahead of it.
    #[error("replay: a {what} for frame {frame} follows one for frame {after} (fix: pass the log in the order the run log gives it)")]
    OutOfOrder {
        /// `decision` or `input`.
        what: &'static str,
        /// The out-of-order entry's frame.
        frame: u64,
        /// The frame of the entry listed before it.
        after: u64,
    },
    /// An entry would take effect in a frame the engine has already run. A decision made at
    /// frame `N` takes effect at frame `N + 1`; an input at its own frame.
    #[error("replay: a {what} recorded at frame {frame} takes effect at frame {effective}, but the engine has already run {now} frames (fix: start the replay on a fresh engine, before its first frame)")]
    AlreadyRun {
        /// `decision` or `input`.
        what: &'static str,
        /// The entry's recorded frame.
        frame: u64,
        /// The frame it would take effect in.
        effective: u64,
        /// Frames run.
        now: u64,
    },
    /// An input for frame 0: frames are numbered from 1, so no frame can deliver it.
    #[error("replay: an input is recorded for frame 0, which no run has (frames are numbered from 1) (fix: pass an input log an engine wrote: `input_log`, or summary.json `inputs`)")]
    FrameZeroInput,
    /// A decision names an agent this engine does not have.
    #[error("replay: no agent named `{0}` (fix: replay a run log made by this game, with the same agents installed)")]
    UnknownAgent(String),
    /// A decision names a strategy its agent does not have.
    #[error("replay: agent `{agent}` has no strategy `{strategy}` (fix: one of {known})")]
    UnknownStrategy {
        /// The agent.
        agent: String,
        /// The name asked for.
        strategy: String,
        /// The names it has.
        known: String,
    },
}

/// `OutOfOrder` at the first entry (`what`: `decision` or `input`) whose frame is before the
/// one listed ahead of it: decisions and inputs are checked the same way.
fn in_frame_order(
    what: &'static str,
    frames: impl Iterator<Item = u64>,
) -> Result<(), ReplayError> {
    let mut prev: Option<u64> = None;
    for frame in frames {
        if let Some(after) = prev.filter(|&p| frame < p) {
            return Err(ReplayError::OutOfOrder { what, frame, after });
        }
        prev = Some(frame);
    }
    Ok(())
}

impl Engine {
    /// Replays a run from its log (`summary.json` read back as a [`RunLog`], or
    /// `RunLog::from(&summary)`), from the next frame. Its decisions (controller
    /// decisions and pins alike) replace the live controller, which stops choosing (manual
    /// mode); each takes effect at the frame boundary after the frame it was made in, as it did
    /// live. Its inputs replace live input: each event reaches the world at its recorded frame,
    /// and [`Engine::push_input`] is ignored (and counted), so a log with no inputs replays a
    /// run that had none. With the same seed and frames, a lockstep run reproduces the recorded
    /// world hash on any lane plan.
    ///
    /// Errors: an agent or strategy this engine does not have, entries out of frame order, or
    /// an entry for a frame already run. Nothing is applied when refused.
    pub fn replay(&mut self, log: &RunLog) -> Result<(), ReplayError> {
        self.check_decisions(&log.decisions)?;
        self.check_inputs(&log.inputs)?;
        self.budget.controller.set_mode(AdaptationMode::Manual);
        self.tape.decisions = Some(log.decisions.iter().cloned().collect());
        self.tape.pending_input.clear();
        self.tape.input_replay = Some(log.inputs.iter().cloned().collect());
        Ok(())
    }

    pub(super) fn check_decisions(&self, decisions: &[DecisionEntry]) -> Result<(), ReplayError> {
        in_frame_order("decision", decisions.iter().map(|d| d.frame))?;
        // A decision made at frame N takes effect at frame N + 1.
        if let Some(d) = decisions.first().filter(|d| d.frame < self.frame) {
            return Err(ReplayError::AlreadyRun {
                what: "decision",
                frame: d.frame,
                effective: d.frame + 1,
                now: self.frame,
            });
        }
        for d in decisions {
            let Some(id) = self.agent_by_name(&d.agent) else {
                return Err(ReplayError::UnknownAgent(d.agent.clone()));
            };
            let known = self.budget.controller.strategies(id).unwrap_or(&[]);
            if !known.iter().any(|s| s.name == d.to) {
                return Err(ReplayError::UnknownStrategy {
                    agent: d.agent.clone(),
                    strategy: d.to.clone(),
                    known: known
                        .iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        }
        Ok(())
    }

    pub(super) fn agent_by_name(&self, name: &str) -> Option<AgentId> {
        self.budget.controller.agent_id(name)
    }

    /// Applies the recorded decisions made at frames before `frame` (the end of frame N is
    /// the start of frame N + 1).
    pub(super) fn apply_replay(&mut self, frame: u64) {
        while let Some(d) = self.tape.due_decision(frame) {
            self.budget.apply_replayed(&d);
        }
    }

    // ---- input ------------------------------------------------------------------------------

    /// Queues `event` for the world: the next frame hands it to its first fixed step's systems
    /// (`world.input()`, see [`crate::input`]) and logs it (the run summary's `inputs`). Ignored
    /// (and counted) while a replay of recorded input runs.
    pub fn push_input(&mut self, event: InputEvent) {
        self.tape.push(event);
    }

    /// The body of [`EngineHooks::input_log`](crate::hooks::EngineHooks::input_log), which documents it.
    pub(crate) fn input_log(&self) -> &[RecordedInput] {
        &self.tape.input_log
    }

    /// The body of [`EngineHooks::input_log_dropped`](crate::hooks::EngineHooks::input_log_dropped), which documents it.
    pub(crate) fn input_log_dropped(&self) -> u64 {
        self.tape.input_log_dropped
    }

    /// The body of [`EngineHooks::live_input_ignored`](crate::hooks::EngineHooks::live_input_ignored), which documents it.
    pub(crate) fn live_input_ignored(&self) -> u64 {
        self.tape.live_input_ignored
    }

    pub(super) fn check_inputs(&self, inputs: &[RecordedInput]) -> Result<(), ReplayError> {
        in_frame_order("input", inputs.iter().map(|i| i.frame))?;
        match inputs.first() {
            Some(i) if i.frame == 0 => Err(ReplayError::FrameZeroInput),
            Some(i) if i.frame <= self.frame => Err(ReplayError::AlreadyRun {
                what: "input",
                frame: i.frame,
                effective: i.frame,
                now: self.frame,
            }),
            _ => Ok(()),
        }
    }

    /// Hands this frame's input to the world and logs it (step 2 of [`crate::input`]).
    pub(super) fn deliver_input(&mut self, frame: u64) {
        self.tape.deliver(frame, self.stepper.game.world_mut());
    }
}
