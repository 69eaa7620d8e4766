//! One frame of the [`Engine`], phase by phase (the steps of the module docs of `engine`), and
//! the frame boundary where every decision made since the last frame takes effect.
//!
//! Owns: `Engine::frame` and its phases, `pump_assets`, `apply_strategies` and the custom
//! agents' samples. Must never: let a timing enter world state, or block on the render or
//! asset lanes.

use lanegraph_budget::hooks::ControllerDriver;
use lanegraph_budget::TickReport;
#[cfg(feature = "puffin")]
use lanegraph_telemetry::hooks::PuffinHooks;
use lanegraph_telemetry::hooks::TraceHistoryHooks;

use super::*;
use crate::game_loop::FrameReport;

/// The name the step in force is declared under to the game loop (from the agents' strategies).
const STEP_DECLARER: &str = "strategies";

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
        let (report, physics_ns) = self.run_steps();

        // 3. The RenderView.
        self.publish_view(frame);
        drop(frame_span);
        let frame_ms = clock::now().ms_since(t0);
        self.frame = frame;

        // 4. Telemetry.
        let collected = self.meter.history.collect_frame(frame);
        #[cfg(feature = "puffin")]
        if let Some(p) = self.meter.puffin.as_mut() {
            p.publish(&collected, &telemetry::spans::tracks());
        }
        let _ = collected;
        self.update_lane_busy(frame_ms);
        if frame % SYSTEM_METRICS_EVERY == 0 {
            self.update_system_metrics();
        }
        self.update_agent_metrics();

        // 5. The controller.
        let gpu = self.gather_samples(frame, physics_ns, asset_settings, asset_ms, report.steps);
        let tick = self.budget.controller.tick(&FrameInput {
            frame,
            cpu_ms: frame_ms,
            gpu,
            samples: &self.budget.samples,
            step: Some(StepReport {
                steps: report.steps,
                clamped: report.dropped_steps > 0 || report.clamped_ns > 0,
            }),
        })?;
        // Its decisions take effect at the next frame's start (`apply_strategies` there).

        self.record_frame(frame, frame_ms, physics_ns, &report, &tick);
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
        if let Some(m) = &self.stepper.lockstep {
            // Exactly one step per frame, also across a change of step: the clock advances one
            // step of the step in force for every frame since the step last changed.
            let s = self.stepper.game.fixed_step();
            let (base_frame, base_ns, base_step) = &mut self.stepper.lockstep_base;
            if *base_step != s {
                *base_frame = frame - 1;
                *base_ns = m.get_ns();
                *base_step = s;
            }
            // Rounded up, so the accumulator holds whole steps and less than one more.
            let (num, den) = (u128::from(s.numer_ns()), u128::from(s.denom()));
            let since = u128::from(frame - *base_frame);
            m.set_ns(*base_ns + ((since * num).div_ceil(den)) as u64);
        }
    }

    /// Step 2: the fixed steps the accumulator asks for, each running the systems and then
    /// the physics hook (under a SyncTest, each step is also re-simulated and compared).
    /// Returns the loop's report and the physics hook's time, ns.
    pub(super) fn run_steps(&mut self) -> (FrameReport, u64) {
        let physics_settings = self
            .budget
            .builtins
            .physics_settings(&self.budget.controller);
        let mut physics_ns = 0u64;
        let report = {
            let lanes = &self.lanes;
            let lane = self.physics_lane;
            let physics = &mut self.stepper.physics;
            // The hook after a step's systems (the world's tick is the one they left).
            let mut physics_hook = |world: &mut World, dt: f32| {
                if let Some(f) = physics.as_mut() {
                    let _s = crate::span!("physics.step", world.len() as u64);
                    let p0 = clock::now();
                    let step = PhysicsStep {
                        lanes,
                        lane,
                        dt,
                        tick: world.tick(),
                        settings: physics_settings,
                    };
                    f(world, &step);
                    physics_ns += clock::now().ns_since(p0);
                }
            };
            match self.stepper.sync_test.as_mut() {
                // SyncTest mode: each step, systems and hook, is re-simulated from a snapshot
                // `check_distance` steps back and compared stage by stage.
                Some((sync, found)) => self.stepper.game.frame_stepping(|world, info| {
                    let dt = info.step.as_secs_f64() as f32;
                    if let Err(e) = sync.step_with(world, &mut |w| physics_hook(w, dt)) {
                        if found.is_none() {
                            tracing::warn!(target: "lanegraph", code = "LG-SYNC-DESYNC", error = %e, "the SyncTest mode stopped at its first failure, a desync or a snapshot it could not take or put back (the run summary's sync_test); the world goes on from where the check left it");
                            *found = Some(e);
                        }
                    }
                }),
                None => self.stepper.game.frame_with(|world, info| {
                    physics_hook(world, info.step.as_secs_f64() as f32);
                }),
            }
        };

        (report, physics_ns)
    }

    /// Step 3: the RenderView, re-derived only when the domains it reads moved, published to
    /// the render lane's mailbox.
    pub(super) fn publish_view(&mut self, frame: u64) {
        if let Some(source) = self.render.view.as_mut() {
            let _s = crate::span!("render_view.publish");
            let v = source.publishable(self.stepper.game.world(), frame);
            // Replaced in place: the old pointer is dropped, nothing allocates.
            self.render.last_view = Some(v.clone());
            self.render.lane.publish(&self.lanes, v);
        }
    }

    /// Step 5, first half: this frame's cost samples for the controller (the built-in agents'
    /// and the game's), and the GPU reading when a new one arrived.
    ///
    /// Slightly over 80 lines on purpose: one sample per built-in agent, then the render
    /// agent's from whichever pool it is costed on (GPU frame or render-lane CPU time), in the
    /// order the controller reads them.
    pub(super) fn gather_samples(
        &mut self,
        frame: u64,
        physics_ns: u64,
        asset_settings: AssetSettings,
        asset_ms: f64,
        steps: u32,
    ) -> Option<GpuTiming> {
        self.budget.samples.clear();
        if let Some(agent) = self.budget.builtins.physics {
            // No physics hook: no work (the agent takes no decisions).
            let n = if self.stepper.physics.is_some() {
                (self.stepper.game.world().len() as u64).max(1)
            } else {
                0
            };
            self.budget.samples.push(AgentSample {
                agent,
                frame,
                n,
                ms: physics_ns as f64 / 1e6,
            });
        }
        if let Some(agent) = self.budget.builtins.asset {
            // The workload is what the stream had to do: completions applied and loads still
            // waiting; nothing to load is no work.
            let work = self.assets.completions.len() as u64 + self.assets.stream.pending();
            self.budget.samples.push(AgentSample {
                agent,
                frame,
                n: if work > 0 {
                    u64::from(asset_settings.jobs_per_frame)
                } else {
                    0
                },
                ms: asset_ms,
            });
        }
        let rstats = self.render.lane.pulse();
        // The pass tags a GPU reading with the frame whose draw it measured (`GpuFrame::frame`,
        // the draw's `DrawOutput::frame`): it reaches the controller as that frame's, however
        // many draws later it was read. A tag that names no frame run yet (0, or ahead of this
        // one) is a pass that does not tag its readings: not fed.
        let gpu = rstats.gpu.and_then(|(gpu_frame, total_ms)| {
            (gpu_frame != self.budget.last_gpu_frame && (1..=frame).contains(&gpu_frame)).then(
                || {
                    self.budget.last_gpu_frame = gpu_frame;
                    GpuTiming {
                        frame: gpu_frame,
                        ms: total_ms,
                    }
                },
            )
        });
        match (gpu, self.budget.render_on_gpu, self.budget.builtins.render) {
            (_, _, None) => {}
            // On the GPU pool, the render agent's cost is the GPU frame.
            // Its workload is what that draw drew.
            (Some(g), true, Some(agent)) => self.budget.samples.push(AgentSample {
                agent,
                frame: g.frame,
                n: rstats.gpu_instances.unwrap_or(rstats.last_instances),
                ms: g.ms,
            }),
            (_, false, Some(agent)) => {
                // Without a GPU, it is the render job's CPU time on the render lane.
                if let Some((vf, ns)) = rstats.last {
                    if vf > self.budget.last_render_sample && vf <= frame {
                        self.budget.last_render_sample = vf;
                        self.budget.samples.push(AgentSample {
                            agent,
                            frame: vf,
                            n: rstats.last_instances,
                            ms: ns as f64 / 1e6,
                        });
                    }
                }
            }
            (None, true, Some(_)) => {}
        }
        self.collect_custom_samples(frame, steps);
        if let Some((_, total_ms)) = rstats.gpu {
            self.meter.metrics.gpu_frame.set(total_ms / 1000.0);
        }
        gpu
    }

    /// Step 4's figures once the controller has ticked: the engine's frame metrics, and the
    /// frame's figures lent to the run record.
    pub(super) fn record_frame(
        &mut self,
        frame: u64,
        frame_ms: f64,
        physics_ns: u64,
        report: &FrameReport,
        tick: &TickReport,
    ) {
        // OpenMetrics' base unit is the second; the engine reads milliseconds.
        self.meter.metrics.frame_time.observe(frame_ms / 1000.0);
        self.meter.metrics.alpha.set(report.alpha);
        self.meter.metrics.completed.inc();
        self.meter.metrics.steps.add(u64::from(report.steps));
        self.meter.metrics.dropped.add(report.dropped_steps);
        self.meter.metrics.target.set(tick.target_ms / 1000.0);
        if frame_ms > tick.target_ms {
            self.meter.metrics.over_target.inc();
        }
        self.meter.metrics.multiplier.set(tick.multiplier);
        self.meter.metrics.switches.add(tick.decisions as u64);
        self.meter
            .metrics
            .asset_pending
            .set(self.assets.stream.pending() as f64);
        if self.meter.recording {
            let figures = FrameFigures {
                frame,
                frame_ms,
                target_ms: tick.target_ms,
                steps: report.steps,
                physics_ms: physics_ns as f64 / 1e6,
                memory_bytes: telemetry::memory_stats().current_bytes,
                multiplier: tick.multiplier,
                budget_ms: 1000.0 / self.config.target_fps,
                decided: tick.decisions > 0,
                lane_busy: &self.meter.lane.busy_now,
                world: self.stepper.game.world(),
            };
            self.meter.record.record(&figures);
        }
    }

    /// Step 1 of a frame on its own: applies asset completions (at most the asset strategy's
    /// jobs per frame) and issues queued requests, without simulating. `frame()` calls it; a
    /// game may call it between frames (a loading screen) to let loads finish. Returns the
    /// settings used and the time it took, ms.
    pub fn pump_assets(&mut self) -> (AssetSettings, f64) {
        let asset_settings = self.budget.builtins.asset_settings(&self.budget.controller);
        let asset_t0 = clock::now();
        let _s = crate::span!("assets.drain");
        self.assets.completions.clear();
        self.assets
            .stream
            .drain(asset_settings.jobs_per_frame, &mut self.assets.completions);
        for c in &self.assets.completions {
            match &c.result {
                Ok(Asset::Image(_)) => {
                    // Already with the render pass: the graph's `upload` node ran on the render
                    // lane.
                    self.meter.metrics.asset_loaded.inc();
                }
                Ok(Asset::Data(d)) => {
                    self.meter.metrics.asset_loaded.inc();
                    self.assets
                        .loaded
                        .push_back((c.path.clone(), Arc::clone(d)));
                }
                Err(e) => {
                    self.meter.metrics.asset_failed.inc();
                    tracing::warn!(target: "lanegraph", code = "LG-ASSET-001", error = %e, "asset failed to load; skipped, the game goes on");
                    if self.assets.failures.len() < MAX_ASSET_FAILURES {
                        self.assets.failures.push(e.to_string());
                    }
                }
            }
        }

        self.assets
            .stream
            .pump(&self.lanes, asset_settings.jobs_per_frame);
        (asset_settings, clock::now().ms_since(asset_t0))
    }

    /// Applies the strategies in force (the frame boundary's one path, see `frame`): the
    /// physics step and render settings of the installed built-in agents, and every agent's
    /// choice where systems read it ([`World::agent_strategy`]).
    pub(super) fn apply_strategies(&mut self) {
        // The step in force: the configured step divided by the smallest divisor any agent's
        // current strategy declares (checked at registration to stay within 10 s).
        let c = &self.budget.controller;
        let finest = lanegraph_budget::finest_step_divisor(
            c.agent_ids()
                .filter_map(|id| c.strategies(id)?.get(c.current(id)?.get())),
        );
        let base = FixedStep::from_hz(self.config.fixed_step_hz).unwrap_or_default();
        match finest.and_then(|d| base.divided(d).ok()) {
            Some(step) => {
                if self.stepper.game.fixed_step() != step {
                    self.stepper.game.declare_fixed_step(STEP_DECLARER, step);
                }
            }
            None => {
                self.stepper.game.withdraw_fixed_step(STEP_DECLARER);
            }
        }
        if self.budget.builtins.render.is_some() {
            self.render.lane.set_settings(
                self.budget
                    .builtins
                    .render_settings(&self.budget.controller),
            );
        }
        let controller = &self.budget.controller;
        let world = self.stepper.game.world_mut();
        world.agent_strategies.clear();
        world.agent_strategies.extend(
            controller
                .agent_ids()
                .map(|id| controller.current(id).unwrap_or_default()),
        );
    }

    pub(super) fn collect_custom_samples(&mut self, frame: u64, steps: u32) {
        for &(id, cost) in &self.budget.custom {
            if let AgentCost::System(sys) = cost {
                if let Ok(s) = self.stepper.game.world().system_timing_stats(sys) {
                    if steps > 0 {
                        self.budget.samples.push(AgentSample {
                            agent: id,
                            frame,
                            n: s.workload.unwrap_or(1).max(1),
                            ms: s.last_ms * f64::from(steps),
                        });
                    }
                }
            }
        }
        for mut s in self.budget.reported.drain(..) {
            s.frame = s.frame.min(frame);
            self.budget.samples.push(s);
        }
    }
}
