//! The GPU memory monitor through the engine: a render pass's readings become a churn figure
//! with a rate-limited alert, and GPU memory pressure reaches the budget controller, which caps
//! its multiplier (`budget_control::gpu_memory_pressure_downgrades_and_names_the_gpu` shows the
//! downgrade's reason at the controller).

use lanegraph::hooks::{ControllerDriver, EngineHooks};
use lanegraph::runtime::{DrawOutput, GpuHeap, GpuMemoryFigures, RenderPass, RenderSettings};

/// A pass whose GPU memory readings say `used` of `budget` bytes, churning `per_draw` events
/// per draw.
struct Reading {
    used: u64,
    budget: u64,
    per_draw: u64,
    draws: u64,
}

impl RenderPass<Vec<f32>> for Reading {
    fn draw(
        &mut self,
        v: &Vec<f32>,
        _: &RenderSettings,
        out: &mut DrawOutput,
    ) -> Result<(), String> {
        out.instances = v.len() as u64;
        self.draws += 1;
        let g = out.gpu_memory.get_or_insert_with(GpuMemoryFigures::default);
        g.reading = self.draws;
        g.source = "memory_budget";
        g.heaps.clear();
        g.heaps.push(GpuHeap {
            heap: 0,
            device_local: true,
            usage: Some(self.used),
            budget: self.budget,
        });
        g.events = self.draws * self.per_draw;
        g.by_name.clear();
        g.by_name
            .push(("per-frame scratch", self.draws * self.per_draw));
        g.used_bytes = self.used;
        g.budget_bytes = self.budget;
        Ok(())
    }
}

fn run(pass: Reading, frames: u32) -> lanegraph::Engine {
    let mut engine = lanegraph_tests::engine_with_pass(pass, 8);
    for _ in 0..frames {
        // A new entity each frame changes the view: every frame is drawn.
        engine.world_mut().spawn();
        engine.frame().unwrap();
        engine.finish_render();
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    engine
}

#[test]
fn gpu_memory_pressure_reaches_the_controller_and_caps_it() {
    let engine = run(
        Reading {
            used: 97,
            budget: 100,
            per_draw: 0,
            draws: 0,
        },
        60,
    );
    assert!(
        engine.controller().multiplier() <= 0.5,
        "a critical GPU memory reading caps the multiplier at 0.5: {}",
        engine.controller().multiplier()
    );
    let stats = engine.render_stats();
    assert_eq!(stats.gpu_memory_churn.alerts, 0, "no churn, no alert");

    // The same run at 10 % pressure: no cap.
    let calm = run(
        Reading {
            used: 10,
            budget: 100,
            per_draw: 0,
            draws: 0,
        },
        60,
    );
    assert!(calm.controller().multiplier() > 0.5);
}

#[test]
fn churn_over_the_threshold_alerts_once_and_is_in_the_summary() {
    // 100,000 allocations + frees per draw, a draw every few ms: far over 1,000 per second.
    let engine = run(
        Reading {
            used: 10,
            budget: 100,
            per_draw: 100_000,
            draws: 0,
        },
        20,
    );
    let c = engine.render_stats().gpu_memory_churn;
    assert!(c.peak_per_second > 1000.0, "{c:?}");
    assert!(c.over_threshold >= 10, "{c:?}");
    assert_eq!(c.alerts, 1, "one warning per 10 s: {c:?}");
    let entry = lanegraph::hooks::gpu_memory_of(&engine.render_stats()).expect("a reading");
    assert_eq!(entry.churn_alerts, 1);
    assert_eq!(entry.pressure, 0.1);
    assert_eq!(entry.heaps[0].usage_bytes, Some(10));
}
