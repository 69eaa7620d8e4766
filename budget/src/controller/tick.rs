//! One tick, steps 1 to 9 of the module docs, as a [`Tick`] value its steps fill in order.
//!
//! Owns: the order of a tick's steps and what each hands the next. Must never: reorder the
//! steps (the simulator, the replays and every decision log depend on it), or half-apply an
//! input (it is validated whole first).

use super::{
    AdaptationMode, ArbMark, Controller, ControllerDriver, TickReport, GPU_STALE_FRAMES,
    OVERHEAD_WINDOW,
};
use crate::agent::Pool;
use crate::config::{FrameInput, InputError, GPU_READ_LAG_FRAMES};
use crate::heuristics::{median_in_place, Assessment, Signals};
use crate::providers::Readings;
use crate::record::RecordedFrame;
use crate::slot::Slot;

/// A tick in progress: the frame and what the steps so far measured.
struct Tick<'i> {
    input: &'i FrameInput<'i>,
    frame: u64,
    /// The frame of the tick before (`None` for the first).
    prev_frame: Option<u64>,
    /// The newest GPU reading's time while it is current.
    gpu_ms: Option<f64>,
}

/// What steps 4-5 gave: the heuristics' assessment and each pool's multiplier.
struct Budgeted {
    a: Assessment,
    m: [f64; 2],
    /// The frame's time: the worse of the CPU's and the current GPU reading.
    measured: f64,
}

impl Controller {
    /// One tick with given provider readings (module docs: steps 1-9).
    pub(super) fn run_tick(
        &mut self,
        input: &FrameInput<'_>,
        readings: Readings,
    ) -> Result<TickReport, InputError> {
        let t = self.begin(input, readings)?;
        self.credit_samples(&t);
        let b = self.budget(&t, readings);
        let pool_cost = self.calibrate(t.frame);
        let trigger = self.triggered(&t, &b, pool_cost);
        let arbitrated = trigger && self.mode == AdaptationMode::Adaptive;
        let decisions = if arbitrated {
            self.arbitrate(&t, &b)
        } else {
            0
        };
        if trigger {
            self.dirty = false;
        }
        Ok(TickReport {
            frame: t.frame,
            target_ms: b.a.target_ms,
            multiplier: self.multiplier(),
            pool_multipliers: b.m,
            measured_ms: b.measured,
            arbitrated,
            decisions,
            critical: b.a.critical,
        })
    }

    /// Step 1: validates the input (refused whole), records it, and moves the frame on.
    fn begin<'i>(
        &mut self,
        input: &'i FrameInput<'i>,
        readings: Readings,
    ) -> Result<Tick<'i>, InputError> {
        input.validate(self.last_frame, self.slots.len())?;
        if let Some(rec) = self.recording.as_mut() {
            rec.frames.push(RecordedFrame::new(input, readings));
        }
        let frame = input.frame;
        let prev_frame = self.last_frame.replace(frame);
        if let Some(g) = input.gpu {
            self.last_gpu = Some((g.frame, g.ms));
        }
        let gpu_ms = self
            .last_gpu
            .filter(|&(f, _)| frame.saturating_sub(f) <= GPU_STALE_FRAMES + GPU_READ_LAG_FRAMES)
            .map(|(_, ms)| ms);
        Ok(Tick {
            input,
            frame,
            prev_frame,
            gpu_ms,
        })
    }

    /// Steps 2-3: each sample to its strategy's cost memory, then each pool's overhead (the
    /// median of its last frames' unattributed time).
    fn credit_samples(&mut self, t: &Tick<'_>) {
        let mut attributed = [0.0f64; 2];
        let mut any = [false; 2];
        let gpu_frame = t.input.gpu.map(|g| g.frame);
        for s in t.input.samples {
            let slot = &mut self.slots[s.agent.index()];
            slot.ingest(s.frame, s.n, s.ms);
            let p = slot.pool.index();
            let same = match slot.pool {
                Pool::Cpu => s.frame == t.frame,
                Pool::Gpu => Some(s.frame) == gpu_frame,
            };
            if same {
                attributed[p] += s.ms;
                any[p] = true;
            }
        }
        let pool_ms = [Some(t.input.cpu_ms), t.input.gpu.map(|g| g.ms)];
        for p in 0..2 {
            let Some(total) = pool_ms[p] else { continue };
            if any[p] || p == Pool::Cpu.index() {
                let o = (total - attributed[p]).max(0.0);
                let w = &mut self.overhead_window[p];
                w.ring[w.head] = o;
                w.head = (w.head + 1) % OVERHEAD_WINDOW;
                w.len = (w.len + 1).min(OVERHEAD_WINDOW);
                let mut scratch = [0.0f64; OVERHEAD_WINDOW];
                scratch[..w.len].copy_from_slice(&w.ring[..w.len]);
                self.overhead[p] = median_in_place(&mut scratch[..w.len]);
            }
        }
    }

    /// Steps 4-5: the heuristics' target and cap, then each pool's PID on its own time.
    fn budget(&mut self, t: &Tick<'_>, readings: Readings) -> Budgeted {
        let cpu_ms = t.input.cpu_ms;
        let a = self.heuristics.assess(&Signals {
            cpu_ms,
            gpu_ms: t.gpu_ms,
            step_clamped: t.input.step.is_some_and(|s| s.clamped),
            readings,
        });
        let measured = t.gpu_ms.map_or(cpu_ms, |g| g.max(cpu_ms));
        let spiral = self.heuristics.in_death_spiral();
        if spiral && !self.was_spiral {
            tracing::warn!(
                code = "budget/death_spiral",
                frame = t.frame,
                measured_ms = measured,
                "budget/death_spiral | the fixed step clamped {} frames in a row | frames take longer than the simulation steps they run, so each frame runs more steps | every agent degrades to its cheapest strategy until 60 frames run unclamped; if it persists, cut per-step work | docs/budgets.md#death-spiral",
                crate::heuristics::SPIRAL_ENTER
            );
        }
        self.was_spiral = spiral;
        let pool_now = [Some(cpu_ms), t.gpu_ms];
        for (pid, now) in self.pid.iter_mut().zip(pool_now) {
            pid.set_max(a.cap.min(self.cfg.pid.max));
            if let Some(ms) = now {
                pid.update((a.target_ms - ms) / a.target_ms, ms / a.target_ms);
            }
        }
        self.gpu_current = t.gpu_ms.is_some();
        let m = self.pool_multipliers();
        Budgeted { a, m, measured }
    }

    /// Step 6: every strategy's calibrated cost (`costs`), after retiring the probes that
    /// ended (one that held through its dwell is forgiven its strikes). Returns each pool's
    /// cost at the rungs in force.
    fn calibrate(&mut self, frame: u64) -> [f64; 2] {
        let half_life = self.frames_per_second() * super::COST_MEMORY_HALF_LIFE_S;
        let dwell_frames = self.cfg.dwell_frames;
        for slot in &mut self.slots {
            if let Some((j, start)) = slot.probe {
                if slot.current != j {
                    slot.probe = None;
                } else if frame >= start + dwell_frames {
                    slot.strikes = 0;
                    slot.probe = None;
                }
            }
        }
        self.costs.resize_with(self.slots.len(), Vec::new);
        let mut pool_cost = [0.0f64; 2];
        for (slot, costs) in self.slots.iter().zip(self.costs.iter_mut()) {
            // Fitting costs 4 laws x 64 samples: only when a workload was announced.
            let fit = slot.announced_n.and_then(|_| slot.fit());
            slot.price_ladder(fit.as_ref(), frame, half_life, costs);
            pool_cost[slot.pool.index()] += costs[slot.current.get()];
        }
        pool_cost
    }

    /// Step 7: whether this tick re-arbitrates (module docs: the triggers).
    fn triggered(&self, t: &Tick<'_>, b: &Budgeted, pool_cost: [f64; 2]) -> bool {
        let frame = t.frame;
        let dwell = self.cfg.dwell_frames;
        let dwell_ended = self
            .slots
            .iter()
            .any(|s| s.below_best() && s.last_change.is_some_and(|f| frame == f + dwell));
        // A bar that ends this frame frees a rung the last arbitration could not choose.
        let bar_ended = self.slots.iter().any(|s| {
            s.pinned.is_none()
                && s.bars
                    .iter()
                    .flatten()
                    .any(|b| b.until <= frame && t.prev_frame.is_none_or(|p| p < b.until))
        });
        // An agent below its best is looked at again every dwell even when nothing moved: the
        // recent peak its upgrades are priced at (`Slot::peak_load_ratio`) falls as its window
        // rolls, which no other trigger sees.
        let revisit = self.last_arb.is_some_and(|l| frame >= l.frame + dwell)
            && self.slots.iter().any(Slot::below_best);
        self.dirty
            || dwell_ended
            || bar_ended
            || revisit
            || self
                .last_arb
                .is_none_or(|last| self.moved_since(&last, b, pool_cost))
    }

    /// Step 7's dead bands: the multipliers, the target, the cap or the critical state moved
    /// since the last arbitration, or a pool's current choice no longer fits, or its cost moved
    /// by more than `cost_move_fraction` of its capacity.
    fn moved_since(&self, last: &ArbMark, b: &Budgeted, pool_cost: [f64; 2]) -> bool {
        let d = self.cfg.renegotiate_delta;
        let (a, m) = (&b.a, &b.m);
        (0..2).any(|p| (m[p] - last.multiplier[p]).abs() > d)
            || (a.target_ms - last.target).abs() > d * last.target
            || a.cap != last.cap
            || a.critical != last.critical
            || (0..2).any(|p| {
                let cap = (m[p] * a.target_ms - self.overhead[p]).max(1e-9);
                pool_cost[p] * (1.0 - self.cfg.keep_tolerance) > cap
                    || (pool_cost[p] - last.pool_cost[p]).abs() > self.cfg.cost_move_fraction * cap
            })
    }

    /// Steps 8-9 for every pool, then the mark the next tick's dead bands measure from.
    /// Returns the number of changes.
    fn arbitrate(&mut self, t: &Tick<'_>, b: &Budgeted) -> usize {
        let mut decisions = 0;
        for pool in Pool::ALL {
            let pool_measured = match pool {
                Pool::Cpu => Some(t.input.cpu_ms),
                Pool::Gpu => t.gpu_ms,
            };
            decisions += self.arbitrate_pool(pool, t.frame, b.m[pool.index()], &b.a, pool_measured);
        }
        // Costs after the changes, for the cost dead band.
        let mut after = [0.0f64; 2];
        for (slot, costs) in self.slots.iter().zip(&self.costs) {
            after[slot.pool.index()] += costs[slot.current.get()];
        }
        self.last_arb = Some(ArbMark {
            frame: t.frame,
            multiplier: b.m,
            target: b.a.target_ms,
            cap: b.a.cap,
            critical: b.a.critical,
            pool_cost: after,
        });
        decisions
    }
}
