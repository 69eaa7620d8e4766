//! The built-in budget agents: physics, render and asset, and the settings each strategy means.
//!
//! Owns: the strategy tables of the three built-in agents ([`PhysicsAgent`], [`RenderAgent`],
//! [`AssetAgent`]) and the typed settings a chosen strategy maps to ([`PhysicsSettings`],
//! [`RenderSettings`], [`AssetSettings`]). Must never: measure or decide (the engine feeds their
//! measured costs to the controller and reads back which strategy it chose).
//!
//! Quotes are a-priori ratios (the controller rescales them to measurements): a neighbour pass
//! every second step costs about 60 % of one every step; half resolution about 40 % of the GPU
//! time; a quarter of the instances about 30 %.

use crate::budget::{Agent, CostLaw, Pool, Quote, Strategy, StrategyIndex};

/// What a physics strategy asks of the physics step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhysicsSettings {
    /// Run the neighbour pass every this many steps (0: never).
    pub neighbour_every: u32,
    /// The fixed step the strategy declares, Hz.
    pub step_hz: u32,
}

/// What a render strategy asks of the render lane.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RenderSettings {
    /// Target size as a fraction of the configured size (0 < s <= 1).
    pub resolution_scale: f32,
    /// Most instances drawn, as a fraction of the view's instances (0 < f <= 1).
    pub instance_fraction: f32,
    /// Whether the GPU's cull compute pass runs (off: no dispatch, every instance drawn and
    /// clipped by the rasteriser; the same picture, see `Renderer::set_cull`).
    pub gpu_cull: bool,
}

/// What an asset strategy asks of the asset stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AssetSettings {
    /// Asset requests issued (and completions applied) per frame at most.
    pub jobs_per_frame: u32,
}

/// Per-entity cost quote of one physics step with the neighbour pass, ms (a 2-core laptop core
/// integrates ~1 M entities/ms and sorts ~50 k/ms into the grid: the quote only needs ratios).
const PHYSICS_MS_PER_ENTITY: f64 = 20e-6;

/// The physics agent: neighbour-pass frequency and fixed step.
#[derive(Debug, Clone)]
pub struct PhysicsAgent {
    base_hz: u32,
}

impl PhysicsAgent {
    /// Strategies stepping at `base_hz` (the configured fixed step), or half of it at the
    /// cheapest.
    pub fn new(base_hz: u32) -> Self {
        PhysicsAgent {
            base_hz: base_hz.max(2),
        }
    }

    /// The settings of strategy `index` (the first for an index out of range).
    pub fn settings(&self, index: StrategyIndex) -> PhysicsSettings {
        match index.get() {
            1 => PhysicsSettings {
                neighbour_every: 2,
                step_hz: self.base_hz,
            },
            2 => PhysicsSettings {
                neighbour_every: 0,
                step_hz: (self.base_hz / 2).max(1),
            },
            _ => PhysicsSettings {
                neighbour_every: 1,
                step_hz: self.base_hz,
            },
        }
    }
}

impl Agent for PhysicsAgent {
    fn name(&self) -> &str {
        "physics"
    }

    fn weight(&self) -> u16 {
        3
    }

    fn strategies(&self) -> Vec<Strategy> {
        let q = |f: f64| Quote::new(CostLaw::Linear, PHYSICS_MS_PER_ENTITY * f);
        let hz = |h: u32| 1.0 / f64::from(h);
        vec![
            Strategy::new("full", 3, q(1.0)).with_fixed_step(hz(self.base_hz)),
            Strategy::new("neighbours_every_2", 2, q(0.6)).with_fixed_step(hz(self.base_hz)),
            Strategy::new("no_neighbours_half_rate", 1, q(0.15))
                .with_fixed_step(hz((self.base_hz / 2).max(1))),
        ]
    }

    fn initial_workload(&self) -> u64 {
        10_000
    }

    fn apply(&mut self, _index: StrategyIndex, _strategy: &Strategy) {
        // The engine reads the controller's current choice each frame (see `Engine::frame`).
    }
}

/// The render agent: resolution scale, instance cap, and the cull compute pass on or off.
///
/// Its ladder, best first: `full`; `half_res`; `half_res_quarter_instances`; then
/// `half_res_quarter_instances_no_compute`, which also drops the cull dispatch. Without the cull
/// the picture is the same but every drawn instance reaches the rasteriser, so it is the last
/// rung: a bet that pays when most of the (already capped) instances are on screen, as in the
/// demo, and when the GPU's compute is what overruns.
#[derive(Debug, Clone)]
pub struct RenderAgent {
    pool: Pool,
}

impl RenderAgent {
    /// A render agent whose cost lands on the GPU (`gpu: true`) or the CPU.
    pub fn new(gpu: bool) -> Self {
        RenderAgent {
            pool: if gpu { Pool::Gpu } else { Pool::Cpu },
        }
    }

    /// The settings of strategy `index`.
    pub fn settings(index: StrategyIndex) -> RenderSettings {
        match index.get() {
            1 => RenderSettings {
                resolution_scale: 0.5,
                instance_fraction: 1.0,
                gpu_cull: true,
            },
            2 => RenderSettings {
                resolution_scale: 0.5,
                instance_fraction: 0.25,
                gpu_cull: true,
            },
            3 => RenderSettings {
                resolution_scale: 0.5,
                instance_fraction: 0.25,
                gpu_cull: false,
            },
            _ => RenderSettings {
                resolution_scale: 1.0,
                instance_fraction: 1.0,
                gpu_cull: true,
            },
        }
    }
}

impl Agent for RenderAgent {
    fn name(&self) -> &str {
        "render"
    }

    fn pool(&self) -> Pool {
        self.pool
    }

    fn weight(&self) -> u16 {
        2
    }

    fn strategies(&self) -> Vec<Strategy> {
        let q = |f: f64| Quote::new(CostLaw::Linear, 10e-6 * f);
        vec![
            Strategy::new("full", 4, q(1.0)),
            Strategy::new("half_res", 3, q(0.4)),
            Strategy::new("half_res_quarter_instances", 2, q(0.3)),
            Strategy::new("half_res_quarter_instances_no_compute", 1, q(0.25)),
        ]
    }

    fn initial_workload(&self) -> u64 {
        10_000
    }

    fn apply(&mut self, _index: StrategyIndex, _strategy: &Strategy) {}
}

/// The asset agent: how many asset jobs a frame admits.
#[derive(Debug, Clone, Default)]
pub struct AssetAgent;

impl AssetAgent {
    /// The settings of strategy `index`.
    pub fn settings(index: StrategyIndex) -> AssetSettings {
        AssetSettings {
            jobs_per_frame: match index.get() {
                1 => 2,
                2 => 1,
                _ => 4,
            },
        }
    }
}

impl Agent for AssetAgent {
    fn name(&self) -> &str {
        "asset"
    }

    fn strategies(&self) -> Vec<Strategy> {
        vec![
            Strategy::new("4_per_frame", 3, Quote::constant(0.4)),
            Strategy::new("2_per_frame", 2, Quote::constant(0.2)),
            Strategy::new("1_per_frame", 1, Quote::constant(0.1)),
        ]
    }

    fn apply(&mut self, _index: StrategyIndex, _strategy: &Strategy) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_and_settings_line_up() {
        let p = PhysicsAgent::new(60);
        assert_eq!(p.strategies().len(), 3);
        assert_eq!(p.settings(StrategyIndex(0)).neighbour_every, 1);
        assert_eq!(p.settings(StrategyIndex(2)).step_hz, 30);
        assert_eq!(
            RenderAgent::settings(StrategyIndex(2)).instance_fraction,
            0.25
        );
        assert_eq!(AssetAgent::settings(StrategyIndex(1)).jobs_per_frame, 2);
        let render = RenderAgent::new(true).strategies();
        assert_eq!(render.len(), 4);
        for (i, s) in render.iter().enumerate() {
            let set = RenderAgent::settings(StrategyIndex(i as u8));
            assert_eq!(
                set.gpu_cull,
                !s.name.ends_with("no_compute"),
                "strategy {} and its settings disagree on the compute pass",
                s.name
            );
        }
        assert_eq!(RenderAgent::new(true).pool(), Pool::Gpu);
    }
}
