//! `--record-costs FILE`: a run that measures every rung of every agent, frame by frame, and
//! writes the cost trace the `budget` bench replays (`lanegraph::hooks::budget::cost_trace`).
//!
//! Owns: the sweep (every [`SWEEP_FRAMES`] frames each agent is pinned to its next rung, so
//! every rung is measured all through the run, on the world as it evolves), the strategy each
//! agent ran in each frame, and the trace's file. Must never: run beside the controller's own
//! decisions (a recording run is manual: the sweep decides) or write a trace cut short (the
//! file is written whole, then renamed into place).

use std::path::Path;

use lanegraph::hooks::budget::cost_trace::CostTrace;
use lanegraph::hooks::EngineHooks;
use lanegraph::hooks::{AgentIdHooks, ControllerDriver};
use lanegraph::runtime::Engine;

/// Frames each rung holds in the sweep. Two: a rung's first frame already runs it whole (the
/// pin applies before the frame), and every rung of the demo's 10-rung physics ladder is then
/// measured every 20 frames, a third of a second.
pub const SWEEP_FRAMES: u64 = 2;

/// The sweep in progress and what it ran.
#[derive(Debug, Default)]
pub struct CostRecorder {
    /// Per frame run (index = frame - 1), each agent's strategy index, in registration order.
    ran: Vec<Vec<u8>>,
}

impl CostRecorder {
    /// Starts recording: the controller records its inputs and stops adapting (the sweep pins).
    pub fn start(engine: &mut Engine) -> Self {
        engine.record_controller_inputs();
        engine.set_adaptation(lanegraph::budget::AdaptationMode::Manual);
        CostRecorder::default()
    }

    /// Before the frame after `n` frames: pins each agent to the rung the sweep is at, and
    /// notes what every agent runs in that frame.
    pub fn before_frame(&mut self, engine: &mut Engine, n: u64) {
        let ids: Vec<_> = engine.controller().agent_ids().collect();
        if n % SWEEP_FRAMES == 0 {
            for &id in &ids {
                let Some(ss) = engine.controller().strategies(id) else {
                    continue;
                };
                let k = (n / SWEEP_FRAMES) as usize % ss.len();
                let name = ss[k].name.clone();
                // The agent and strategy come from the controller itself: the pin cannot fail.
                let _ = engine.pin(id, &name);
            }
        }
        self.ran.push(
            ids.iter()
                .map(|&id| engine.strategy(id).map_or(0, |s| s.get() as u8))
                .collect(),
        );
    }

    /// Ends the recording and writes the trace to `path` (whole, then renamed into place).
    /// `notes` become its comment lines (the command, the machine).
    ///
    /// # Errors
    /// The file could not be written.
    pub fn finish(
        self,
        engine: &mut Engine,
        path: &Path,
        notes: Vec<String>,
    ) -> std::io::Result<()> {
        let recording = engine.take_controller_recording().unwrap_or_default();
        let budget_ms = 1000.0 / engine.config().target_fps;
        let mut trace = CostTrace::new(budget_ms);
        trace.notes = notes;
        let c = engine.controller();
        for id in c.agent_ids() {
            let rungs = c
                .strategies(id)
                .map(|ss| ss.iter().map(|s| s.name.clone()).collect())
                .unwrap_or_default();
            let pool = c.pool(id).unwrap_or(lanegraph::budget::Pool::Cpu);
            trace.add_agent(c.agent_name(id).unwrap_or("agent"), pool, rungs);
        }
        // A GPU reading and a GPU sample arrive two frames late: file each under the frame
        // that did the work.
        let frames = self.ran.len();
        let mut gpu = vec![None; frames];
        let mut samples = vec![Vec::new(); frames];
        for t in &recording.frames {
            if let Some(g) = t.gpu {
                if let Some(slot) = (g.frame as usize)
                    .checked_sub(1)
                    .and_then(|i| gpu.get_mut(i))
                {
                    *slot = Some(g.ms);
                }
            }
            for s in &t.samples {
                if let Some(slot) = (s.frame as usize)
                    .checked_sub(1)
                    .and_then(|i| samples.get_mut(i))
                {
                    slot.push(*s);
                }
            }
        }
        for t in &recording.frames {
            let i = t.frame as usize - 1;
            if i >= frames {
                break;
            }
            trace.push_frame(t.frame, t.cpu_ms, gpu[i]);
            for s in &samples[i] {
                let a = s.agent.index();
                let rung = self.ran[i].get(a).copied().unwrap_or(0);
                trace.push_sample(a, usize::from(rung), s.n, s.ms);
            }
        }
        let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
        std::fs::write(&tmp, trace.to_text())?;
        std::fs::rename(&tmp, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}
