//! [`EngineHooks`]: the Engine's methods that only the runtime's app, tools and tests call,
//! and fault injection for the stress harness ([`inject_asset_panics`]).
//!
//! Owns: the trait and its delegating impl. Must never: hold Engine logic (each method calls
//! the Engine's own `pub(crate)` method of the same name).

use lanegraph_budget::{AdaptationMode, AgentId};

use crate::input::RecordedInput;

use crate::hooks::ViewCacheStats;
use crate::runtime::record::RunRecorder;
use crate::runtime::*;

/// The Engine's calls for the runtime's app, tools and tests, which a game does not make: the
/// run record, the built-in agents' ids, present intervals, the view cache, the loop's totals,
/// the input log and its overflow counters, and switching adaptation mid-run. Each method is the Engine's own (`pub(crate)`
/// there); this trait only names it for code outside the crate.
pub trait EngineHooks {
    /// The run record the engine keeps: the report's frame rows and percentiles.
    fn run_record(&self) -> &RunRecorder;

    /// Waits until the render lane has drawn every published view, for a test or tool that
    /// reads what drawing left (presents, GPU spans, metrics) mid-run. A game's end-of-run
    /// readers (`render_stats`, `capture_png`, `RunSummary::from_engine`) wait themselves.
    fn finish_render(&self);

    /// The trace history itself (the last `trace_frames` frames of spans), for the report's
    /// slowest frames and tests that read spans; a game writes it with `Engine::chrome_trace`.
    fn trace(&self) -> &lanegraph_telemetry::TraceHistory;

    /// Stops (or resumes) feeding the run record, so a bench can time the frame without it.
    /// Frames run while it is off are missing from the record and from the summary's
    /// whole-run figures: a game never turns it off.
    fn set_recording(&mut self, on: bool);

    /// The built-in physics agent's id, when installed.
    fn physics_agent(&self) -> Option<AgentId>;

    /// The first failure of the SyncTest mode ([`EngineConfig::sync_test`](crate::EngineConfig::sync_test)),
    /// typed: a [`WorldError::Desync`](crate::world::WorldError::Desync) naming the step, the
    /// system (or `after the systems (the physics hook)`) and what differs. The run summary's
    /// `sync_test` holds its text.
    fn sync_test_desync(&self) -> Option<&crate::world::WorldError>;

    /// Every present-to-present interval of the run, ms, when the render pass presents to a
    /// window (empty otherwise; the first 65,536). Waits for a draw in progress: for the end
    /// of a run (the report's present histogram).
    fn present_intervals_ms(&self) -> Vec<f64>;

    /// View cache hits and misses (zeros without a render view).
    fn view_cache_stats(&self) -> ViewCacheStats;

    /// Loop totals (steps, dropped steps).
    fn loop_totals(&self) -> crate::game_loop::LoopTotals;

    /// Every event handed to the world so far, with its frame: a lockstep run's deterministic
    /// inputs beside its decisions (a game reads them as the run summary's `inputs`).
    fn input_log(&self) -> &[RecordedInput];

    /// Switches the controller between adapting and manual (every agent holds its strategy
    /// unless pinned) mid-run; a game chooses once, with `EngineBuilder::adaptive`.
    fn set_adaptation(&mut self, mode: AdaptationMode);

    /// Live events ignored because recorded input was being replayed.
    fn live_input_ignored(&self) -> u64;

    /// Starts recording every controller tick's input (each agent's samples, the CPU and GPU
    /// frame): what `lanegraph demo --record-costs` builds its cost trace from. The recording
    /// grows with the run: a tool's, not a game's.
    fn record_controller_inputs(&mut self);

    /// The recording since [`record_controller_inputs`](Self::record_controller_inputs), which
    /// it ends (`None` when none was started).
    fn take_controller_recording(&mut self) -> Option<lanegraph_budget::hooks::Recording>;
}

impl EngineHooks for Engine {
    fn finish_render(&self) {
        Engine::finish_render(self)
    }

    fn trace(&self) -> &lanegraph_telemetry::TraceHistory {
        Engine::trace(self)
    }

    fn run_record(&self) -> &RunRecorder {
        Engine::run_record(self)
    }

    fn set_recording(&mut self, on: bool) {
        Engine::set_recording(self, on)
    }

    fn physics_agent(&self) -> Option<AgentId> {
        Engine::physics_agent(self)
    }

    fn sync_test_desync(&self) -> Option<&crate::world::WorldError> {
        Engine::sync_test_desync(self)
    }

    fn present_intervals_ms(&self) -> Vec<f64> {
        Engine::present_intervals_ms(self)
    }

    fn view_cache_stats(&self) -> ViewCacheStats {
        Engine::view_cache_stats(self)
    }

    fn loop_totals(&self) -> crate::game_loop::LoopTotals {
        Engine::loop_totals(self)
    }

    fn live_input_ignored(&self) -> u64 {
        Engine::live_input_ignored(self)
    }

    fn input_log(&self) -> &[RecordedInput] {
        Engine::input_log(self)
    }

    fn set_adaptation(&mut self, mode: AdaptationMode) {
        Engine::set_adaptation(self, mode)
    }

    fn record_controller_inputs(&mut self) {
        Engine::record_controller_inputs(self)
    }

    fn take_controller_recording(&mut self) -> Option<lanegraph_budget::hooks::Recording> {
        Engine::take_controller_recording(self)
    }
}

/// Makes every asset decode whose path contains `marker` panic on the asset lane, as a broken
/// decoder would: each is reported as a failed load (`AssetError::Panicked`) and the game goes
/// on (`lanegraph stress` checks this under load). Feature `testing`: a game never ships it.
#[cfg(feature = "testing")]
pub fn inject_asset_panics(engine: &mut Engine, marker: &str) {
    engine.assets_mut().inject_panics_for(marker);
}
