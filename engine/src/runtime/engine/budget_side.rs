//! The budget side: the controller, the built-in and custom agents, the readings pushed to it, and the frame's cost samples.
//!
//! Owns: the fields below, each documented with who writes it and who reads it (the frame's
//! steps are numbered as in the `engine` module docs). Must never: be reached from outside the
//! engine (its fields are the engine's parts, not a surface).

use std::num::NonZeroU32;

use lanegraph_budget::hooks::ControllerDriver;
use lanegraph_budget::providers::FixedReadings;
use lanegraph_budget::{
    AgentId, AgentSample, Controller, FrameInput, GpuTiming, InputError, StepReport, TickReport,
};

use super::super::agents::AssetSettings;
use super::super::render::RenderPulse;
use super::super::run_log::DecisionEntry;
use super::{AgentCost, Builtins};
use crate::game_loop::FrameReport;
use crate::world::World;

/// What a frame did, as the budget side samples it (step 5).
pub(super) struct FrameWork<'a> {
    pub(super) frame: u64,
    pub(super) world: &'a World,
    /// The physics hook's time, ns (`None`: no hook, so no physics work).
    pub(super) physics: Option<u64>,
    /// The asset settings in force, the asset workload, and the time the asset step took, ms.
    pub(super) assets: (AssetSettings, u64, f64),
    /// The render lane's figures.
    pub(super) render: &'a RenderPulse,
    /// Fixed steps run.
    pub(super) steps: u32,
}

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

impl BudgetSide {
    /// Step 5: this frame's cost samples, then the controller's tick on the frame's time.
    /// Its decisions take effect at the next frame's start.
    pub(super) fn tick(
        &mut self,
        work: &FrameWork<'_>,
        frame_ms: f64,
        report: &FrameReport,
    ) -> Result<TickReport, InputError> {
        let gpu = self.gather(work);
        self.controller.tick(&FrameInput {
            frame: work.frame,
            cpu_ms: frame_ms,
            gpu,
            samples: &self.samples,
            step: Some(StepReport {
                steps: report.steps,
                clamped: report.dropped_steps > 0 || report.clamped_ns > 0,
            }),
        })
    }

    /// This frame's cost samples for the controller (the built-in agents' and the game's),
    /// and the GPU reading when a new one arrived.
    fn gather(&mut self, w: &FrameWork<'_>) -> Option<GpuTiming> {
        self.samples.clear();
        if let Some(agent) = self.builtins.physics {
            // No physics hook: no work (the agent takes no decisions).
            let n = w.physics.map_or(0, |_| (w.world.len() as u64).max(1));
            self.samples.push(AgentSample {
                agent,
                frame: w.frame,
                n,
                ms: w.physics.unwrap_or(0) as f64 / 1e6,
            });
        }
        if let Some(agent) = self.builtins.asset {
            // The workload is what the stream had to do: completions applied and loads still
            // waiting; nothing to load is no work.
            let (settings, work, ms) = w.assets;
            self.samples.push(AgentSample {
                agent,
                frame: w.frame,
                n: if work > 0 {
                    u64::from(settings.jobs_per_frame)
                } else {
                    0
                },
                ms,
            });
        }
        let gpu = self.new_gpu_reading(w.render, w.frame);
        self.sample_render(w.render, gpu, w.frame);
        self.collect_custom(w.world, w.frame, w.steps);
        gpu
    }

    /// The GPU reading not given to the controller yet. The pass tags a reading with the frame
    /// whose draw it measured (`GpuFrame::frame`, the draw's `DrawOutput::frame`): it reaches
    /// the controller as that frame's, however many draws later it was read. A tag that names
    /// no frame run yet (0, or ahead of this one) is a pass that does not tag its readings:
    /// not fed.
    fn new_gpu_reading(&mut self, r: &RenderPulse, frame: u64) -> Option<GpuTiming> {
        let (gpu_frame, total_ms) = r.gpu?;
        (gpu_frame != self.last_gpu_frame && (1..=frame).contains(&gpu_frame)).then(|| {
            self.last_gpu_frame = gpu_frame;
            GpuTiming {
                frame: gpu_frame,
                ms: total_ms,
            }
        })
    }

    /// The render agent's sample: on the GPU pool, the GPU frame (its workload what that draw
    /// drew); without a GPU, the render job's CPU time on the render lane, each drawn view once.
    fn sample_render(&mut self, r: &RenderPulse, gpu: Option<GpuTiming>, frame: u64) {
        let Some(agent) = self.builtins.render else {
            return;
        };
        if self.render_on_gpu {
            if let Some(g) = gpu {
                self.samples.push(AgentSample {
                    agent,
                    frame: g.frame,
                    n: r.gpu_instances.unwrap_or(r.last_instances),
                    ms: g.ms,
                });
            }
        } else if let Some((vf, ns)) = r.last {
            if vf > self.last_render_sample && vf <= frame {
                self.last_render_sample = vf;
                self.samples.push(AgentSample {
                    agent,
                    frame: vf,
                    n: r.last_instances,
                    ms: ns as f64 / 1e6,
                });
            }
        }
    }

    /// The game's own agents' samples: a system's time times the steps run, and the costs the
    /// game reported.
    fn collect_custom(&mut self, world: &World, frame: u64, steps: u32) {
        for &(id, cost) in &self.custom {
            if let AgentCost::System(sys) = cost {
                if let Ok(s) = world.system_timing_stats(sys) {
                    if steps > 0 {
                        self.samples.push(AgentSample {
                            agent: id,
                            frame,
                            n: s.workload.unwrap_or(1).max(1),
                            ms: s.last_ms * f64::from(steps),
                        });
                    }
                }
            }
        }
        for mut s in self.reported.drain(..) {
            s.frame = s.frame.min(frame);
            self.samples.push(s);
        }
    }

    /// The smallest step divisor any agent's current strategy declares.
    pub(super) fn finest_step_divisor(&self) -> Option<NonZeroU32> {
        let c = &self.controller;
        lanegraph_budget::finest_step_divisor(
            c.agent_ids()
                .filter_map(|id| c.strategies(id)?.get(c.current(id)?.get())),
        )
    }

    /// Every agent's strategy in force into `world`, where systems read it
    /// (`World::agent_strategy`).
    pub(super) fn write_strategies(&self, world: &mut World) {
        let c = &self.controller;
        world.agent_strategies.clear();
        world
            .agent_strategies
            .extend(c.agent_ids().map(|id| c.current(id).unwrap_or_default()));
    }

    /// A replayed decision, taken as the live run took it: a pin (an unpin logged as one
    /// releases the pin; the strategy stays). Checked in `Engine::replay`: the agent and the
    /// strategy exist.
    pub(super) fn apply_replayed(&mut self, d: &DecisionEntry) {
        if let Some(id) = self.controller.agent_id(&d.agent) {
            if d.reason.starts_with("manual: unpinned") {
                self.controller.unpin(id);
            } else {
                let _ = self.controller.pin(id, &d.to);
            }
        }
    }
}
