//! One frame of the [`Engine`], phase by phase (the steps of the module docs of `engine`), and
//! the frame boundary where every decision made since the last frame takes effect.
//!
//! Owns: `Engine::frame` as its steps calling the parts (each step's logic is its part's:
//! `Stepper::run`, `RenderSide::publish`, `AssetSide::pump`, `Meter::after_frame`,
//! `BudgetSide::tick`, `Meter::record_frame`), `pump_assets` and `apply_strategies`. Must never:
//! let a timing enter world state, or block on the render or asset lanes.

use super::budget_side::FrameWork;
use super::meter::FrameEnd;
use super::*;

impl Engine {
    // ---- the frame ------------------------------------------------------------------------

    /// Runs one frame (see the module docs).
    ///
    /// Errors: the controller refused the frame's measurements (a custom agent's cost report
    /// was not a finite time). A panic in a system or in the physics hook propagates, as from
    /// `World::run_systems` (the world stays usable); panics in lane jobs do not (the physics
    /// hook gets them as errors from its scope or graph, detached jobs count them per lane).
    pub fn frame(&mut self) -> Result<FrameOutcome, FrameError> {
        let t0 = clock::now();
        let frame = self.frame + 1;
        self.begin_frame(frame);

        // The frame's span carries its number (the trace's `args.frame`, and its counters).
        let frame_span = crate::span!("frame", frame);

        // 1. Assets.
        let (asset_settings, asset_ms) = self.pump_assets();
        // 2. Fixed steps: systems, then the physics hook.
        let settings = self
            .budget
            .builtins
            .physics_settings(&self.budget.controller);
        let (report, physics_ns) = self.stepper.run(&self.lanes, self.physics_lane, settings);

        // 3. The RenderView.
        self.render
            .publish(&self.lanes, self.stepper.game.world(), frame);
        drop(frame_span);
        let frame_ms = clock::now().ms_since(t0);
        self.frame = frame;

        // 4. Telemetry.
        self.meter.after_frame(
            frame,
            frame_ms,
            &self.lanes,
            self.stepper.game.world(),
            &self.budget.controller,
        );

        // 5. The controller.
        let rstats = self.render.lane.pulse();
        if let Some((_, total_ms)) = rstats.gpu {
            self.meter.metrics.gpu_frame.set(total_ms / 1000.0);
        }
        let work = FrameWork {
            frame,
            world: self.stepper.game.world(),
            physics: self.stepper.physics.is_some().then_some(physics_ns),
            assets: (asset_settings, self.assets.work(), asset_ms),
            render: &rstats,
            steps: report.steps,
        };
        let tick = self.budget.tick(&work, frame_ms, &report)?;
        // Its decisions take effect at the next frame's start (`apply_strategies` there).

        self.meter.record_frame(&FrameEnd {
            frame,
            frame_ms,
            physics_ns,
            report: &report,
            tick: &tick,
            asset_pending: self.assets.stream.pending(),
            budget_ms: 1000.0 / self.config.target_fps,
            world: self.stepper.game.world(),
        });
        // The frame's lane work is over: idle workers park now instead of spinning into the
        // owner's pacing or vsync wait (`Lanes::rest`); the next frame's first push wakes them.
        self.lanes.rest();
        Ok(FrameOutcome {
            frame,
            frame_ms,
            steps: report.steps,
            dropped_steps: report.dropped_steps,
            decisions: tick.decisions,
            target_ms: tick.target_ms,
        })
    }

    /// The frame boundary (step 0): the thread running the frame becomes the owner, every
    /// decision made since the last frame takes effect, this frame's input is handed over, and
    /// in lockstep the clock is set to exactly one step ahead.
    pub(super) fn begin_frame(&mut self, frame: u64) {
        // The thread running the frame is the owner: it serves the physics lane while it waits
        // (an engine moved to another thread moves the role with it).
        if !self.lanes.is_owner_thread() {
            self.lanes.register_owner();
        }
        // The frame boundary: every decision made since the last frame (the controller's at the
        // end of the last tick, a manual pin between frames, a replayed one) takes effect here,
        // through one path, before the clock is read; then this frame's input is handed over.
        self.apply_replay(frame);
        self.apply_strategies();
        self.deliver_input(frame);
        self.stepper.set_lockstep_clock(frame);
    }

    /// Step 1 of a frame on its own: applies asset completions (at most the asset strategy's
    /// jobs per frame) and issues queued requests, without simulating. `frame()` calls it; a
    /// game may call it between frames (a loading screen) to let loads finish. Returns the
    /// settings used and the time it took, ms.
    pub fn pump_assets(&mut self) -> (AssetSettings, f64) {
        let settings = self.budget.builtins.asset_settings(&self.budget.controller);
        let ms = self.assets.pump(&self.lanes, settings, &self.meter.metrics);
        (settings, ms)
    }

    /// Applies the strategies in force (the frame boundary's one path, see `frame`): the
    /// physics step and render settings of the installed built-in agents, and every agent's
    /// choice where systems read it ([`World::agent_strategy`]).
    pub(super) fn apply_strategies(&mut self) {
        self.stepper
            .adopt_divisor(self.budget.finest_step_divisor());
        if self.budget.builtins.render.is_some() {
            self.render.lane.set_settings(
                self.budget
                    .builtins
                    .render_settings(&self.budget.controller),
            );
        }
        self.budget.write_strategies(self.stepper.game.world_mut());
    }
}
