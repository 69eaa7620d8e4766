//! The tape: input and decisions as a run log holds them; live input pushed and logged, or recorded input and decisions replayed.
//!
//! Owns: the fields below, each documented with who writes it and who reads it (the frame's
//! steps are numbered as in the `engine` module docs). Must never: be reached from outside the
//! engine (its fields are the engine's parts, not a surface).

use std::collections::VecDeque;

use super::super::run_log::DecisionEntry;
use crate::input::{InputEvent, RecordedInput, MAX_LOGGED_INPUTS};
use crate::world::World;

/// The tape: input and decisions as a run log holds them; live input pushed and logged, or recorded input and decisions replayed.
#[derive(Default)]
pub(super) struct Tape {
    /// Recorded strategy decisions to apply instead of the live controller's, in frame order.
    /// Writer: `replay` (between frames); `apply_replay` (step 0) pops the due ones.
    /// Reader: `apply_replay`.
    pub(super) decisions: Option<VecDeque<DecisionEntry>>,
    /// Input pushed since the last frame began ([`Engine::push_input`]).
    /// Writers: `push_input` (between frames), `replay` (clears it). Reader: `deliver_input`
    /// (owner thread, step 0) drains it.
    pub(super) pending_input: Vec<InputEvent>,
    /// Every event handed to the world, with its frame (at most `MAX_LOGGED_INPUTS`).
    /// Writer: `deliver_input` (owner thread, step 0). Reader: `Engine::input_log` (the summary's `inputs`).
    pub(super) input_log: Vec<RecordedInput>,
    /// Events not logged because the log was full.
    /// Writer: `deliver_input` (owner thread, step 0). Reader: `Engine::input_log_dropped`.
    pub(super) input_log_dropped: u64,
    /// Recorded input to hand over instead of live input, in frame order.
    /// Writer: `replay` (between frames); `deliver_input` (step 0) pops the due events.
    /// Readers: `deliver_input`, `push_input` (while set, live input is ignored).
    pub(super) input_replay: Option<VecDeque<RecordedInput>>,
    /// Live events ignored because a replay was running.
    /// Writer: `push_input` (between frames). Reader: `Engine::live_input_ignored`.
    pub(super) live_input_ignored: u64,
}

impl Tape {
    /// Queues live `event` for the next frame; ignored (and counted) while a replay of recorded
    /// input runs.
    pub(super) fn push(&mut self, event: InputEvent) {
        if self.input_replay.is_some() {
            self.live_input_ignored += 1;
        } else {
            self.pending_input.push(event);
        }
    }

    /// Step 0: hands frame `frame`'s input (replayed, or pushed live) to `world` and logs it.
    pub(super) fn deliver(&mut self, frame: u64, world: &mut World) {
        let mut log = |event: InputEvent, log: &mut Vec<RecordedInput>, dropped: &mut u64| {
            world.input.deliver(event);
            if log.len() < MAX_LOGGED_INPUTS {
                log.push(RecordedInput { frame, event });
            } else {
                *dropped += 1;
            }
        };
        if let Some(replay) = self.input_replay.as_mut() {
            while let Some(r) = replay.front().filter(|r| r.frame <= frame).copied() {
                replay.pop_front();
                log(r.event, &mut self.input_log, &mut self.input_log_dropped);
            }
        } else {
            for event in self.pending_input.drain(..) {
                log(event, &mut self.input_log, &mut self.input_log_dropped);
            }
        }
    }

    /// The next recorded decision made before `frame` (the end of frame N is the start of
    /// frame N + 1), taken off the replay.
    pub(super) fn due_decision(&mut self, frame: u64) -> Option<DecisionEntry> {
        let r = self.decisions.as_mut()?;
        r.front().filter(|d| d.frame < frame)?;
        r.pop_front()
    }
}
