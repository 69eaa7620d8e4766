//! The tape: input and decisions as a run log holds them; live input pushed and logged, or recorded input and decisions replayed.
//!
//! Owns: the fields below, each documented with who writes it and who reads it (the frame's
//! steps are numbered as in the `engine` module docs). Must never: be reached from outside the
//! engine (its fields are the engine's parts, not a surface).

use std::collections::VecDeque;

use super::super::run_log::DecisionEntry;
use crate::input::{InputEvent, RecordedInput};

/// The tape: input and decisions as a run log holds them; live input pushed and logged, or recorded input and decisions replayed.
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
