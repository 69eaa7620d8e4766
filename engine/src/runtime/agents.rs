//! The built-in budget agents: physics, render and asset, and the settings each strategy means.
//!
//! Owns: one table per built-in agent ([`PHYSICS_LADDER`], [`RENDER_LADDER`], [`ASSET_LADDER`]):
//! each row is one strategy, declared once, with its name, quality rank, cost quote and the typed
//! settings it maps to ([`PhysicsSettings`], [`RenderSettings`], [`AssetSettings`]). The agents
//! read their strategies from the table and the engine reads the settings of the strategy in
//! force from the same row. Must never: measure or decide (the engine feeds measured costs to
//! the controller and reads back which strategy it chose), or hold a strategy outside its table.
//!
//! Quotes are a-priori ratios (the controller rescales them to measurements): a detail pass
//! every second step costs about 60 % of one every step; half resolution about 40 % of the GPU
//! time; a quarter of the instances about 30 %.

use crate::budget::{Agent, CostLaw, Pool, Quote, Strategy, StrategyIndex};

/// What a physics strategy asks of the game's physics hook.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhysicsSettings {
    /// Run the game's optional detail pass (neighbour search, contact refinement: whatever
    /// the game's physics can skip) every this many steps; 0: never.
    pub detail_every: u32,
    /// The share of bodies the detail pass covers in a step that runs it, in `(0, 1]`: the
    /// fine-grained quality between "every body" and "none" (the demo's neighbour pass covers a
    /// window of this share of its grid, rotating step by step, so every body gets the pass
    /// every `1 / share` steps and each step costs the same).
    pub detail_fraction: f32,
    /// The fixed step the strategy declares, Hz.
    pub step_hz: u32,
}

/// What a render strategy asks of the game's render pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RenderSettings {
    /// Target size as a fraction of the configured size (0 < s <= 1).
    pub resolution_scale: f32,
    /// Most instances drawn, as a fraction of the view's instances (0 < f <= 1).
    pub instance_fraction: f32,
    /// Whether the pass's compute pre-pass runs (the demo's GPU cull; off: the same picture,
    /// every instance reaches the rasteriser).
    pub gpu_cull: bool,
}

/// What an asset strategy asks of the asset stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AssetSettings {
    /// Asset requests issued (and completions applied) per frame at most.
    pub jobs_per_frame: u32,
}

/// One row of a built-in agent's table: a strategy, declared once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rung<S> {
    /// The strategy's name (decision log, pins, the summary).
    pub name: &'static str,
    /// Its quality rank (higher is better).
    pub quality: u16,
    /// Its cost relative to the best rung's (the quote's ratio; the controller calibrates).
    pub relative_cost: f64,
    /// What it asks of the game.
    pub settings: S,
}

/// The physics table, best first. `step_hz` here is a divisor of the configured step rate
/// (1: the configured rate, 2: half of it). Between `full` and `no_detail`, seven rungs cover
/// the detail pass over 7/8 ... 1/8 of the bodies each step: the controller picks the largest
/// share that fits (fine-grained quality, not a jump from the whole pass to none). Costs are
/// quoted as 20 % for the step without the pass plus 80 % times the share.
pub const PHYSICS_LADDER: [Rung<PhysicsSettings>; 10] = [
    Rung {
        name: "full",
        quality: 10,
        relative_cost: 1.0,
        settings: PhysicsSettings {
            detail_every: 1,
            detail_fraction: 1.0,
            step_hz: 1,
        },
    },
    Rung {
        name: "detail_7_8",
        quality: 9,
        relative_cost: 0.9,
        settings: PhysicsSettings {
            detail_every: 1,
            detail_fraction: 0.875,
            step_hz: 1,
        },
    },
    Rung {
        name: "detail_6_8",
        quality: 8,
        relative_cost: 0.8,
        settings: PhysicsSettings {
            detail_every: 1,
            detail_fraction: 0.75,
            step_hz: 1,
        },
    },
    Rung {
        name: "detail_5_8",
        quality: 7,
        relative_cost: 0.7,
        settings: PhysicsSettings {
            detail_every: 1,
            detail_fraction: 0.625,
            step_hz: 1,
        },
    },
    Rung {
        name: "detail_4_8",
        quality: 6,
        relative_cost: 0.6,
        settings: PhysicsSettings {
            detail_every: 1,
            detail_fraction: 0.5,
            step_hz: 1,
        },
    },
    Rung {
        name: "detail_3_8",
        quality: 5,
        relative_cost: 0.5,
        settings: PhysicsSettings {
            detail_every: 1,
            detail_fraction: 0.375,
            step_hz: 1,
        },
    },
    Rung {
        name: "detail_2_8",
        quality: 4,
        relative_cost: 0.4,
        settings: PhysicsSettings {
            detail_every: 1,
            detail_fraction: 0.25,
            step_hz: 1,
        },
    },
    Rung {
        name: "detail_1_8",
        quality: 3,
        relative_cost: 0.3,
        settings: PhysicsSettings {
            detail_every: 1,
            detail_fraction: 0.125,
            step_hz: 1,
        },
    },
    Rung {
        name: "no_detail",
        quality: 2,
        relative_cost: 0.2,
        settings: PhysicsSettings {
            detail_every: 0,
            detail_fraction: 1.0,
            step_hz: 1,
        },
    },
    Rung {
        name: "no_detail_half_rate",
        quality: 1,
        relative_cost: 0.1,
        settings: PhysicsSettings {
            detail_every: 0,
            detail_fraction: 1.0,
            step_hz: 2,
        },
    },
];

/// The render table, best first. The last rung also drops the compute pre-pass: the picture
/// is the same but every drawn instance reaches the rasteriser, so it is a bet that pays when
/// most of the (already capped) instances are on screen, as in the demo, and when the GPU's
/// compute is what overruns.
pub const RENDER_LADDER: [Rung<RenderSettings>; 4] = [
    Rung {
        name: "full",
        quality: 4,
        relative_cost: 1.0,
        settings: RenderSettings {
            resolution_scale: 1.0,
            instance_fraction: 1.0,
            gpu_cull: true,
        },
    },
    Rung {
        name: "half_res",
        quality: 3,
        relative_cost: 0.4,
        settings: RenderSettings {
            resolution_scale: 0.5,
            instance_fraction: 1.0,
            gpu_cull: true,
        },
    },
    Rung {
        name: "half_res_quarter_instances",
        quality: 2,
        relative_cost: 0.3,
        settings: RenderSettings {
            resolution_scale: 0.5,
            instance_fraction: 0.25,
            gpu_cull: true,
        },
    },
    Rung {
        name: "half_res_quarter_instances_no_compute",
        quality: 1,
        relative_cost: 0.25,
        settings: RenderSettings {
            resolution_scale: 0.5,
            instance_fraction: 0.25,
            gpu_cull: false,
        },
    },
];

/// The asset table, best first (costs are constant per frame, in ms of owner time).
pub const ASSET_LADDER: [Rung<AssetSettings>; 3] = [
    Rung {
        name: "4_per_frame",
        quality: 3,
        relative_cost: 1.0,
        settings: AssetSettings { jobs_per_frame: 4 },
    },
    Rung {
        name: "2_per_frame",
        quality: 2,
        relative_cost: 0.5,
        settings: AssetSettings { jobs_per_frame: 2 },
    },
    Rung {
        name: "1_per_frame",
        quality: 1,
        relative_cost: 0.25,
        settings: AssetSettings { jobs_per_frame: 1 },
    },
];

/// The row of `index` in `table` (the first for an index out of range).
fn rung<S>(table: &[Rung<S>], index: StrategyIndex) -> &Rung<S> {
    table.get(index.get()).unwrap_or(&table[0])
}

/// Per-entity cost quote of one physics step with the detail pass, ms (a 2-core laptop core
/// integrates ~1 M entities/ms and sorts ~50 k/ms into a grid: the quote only needs ratios).
const PHYSICS_MS_PER_ENTITY: f64 = 20e-6;
/// Per-instance cost quote of a full-resolution draw, ms.
const RENDER_MS_PER_INSTANCE: f64 = 10e-6;
/// Owner time of admitting four asset jobs in a frame, ms.
const ASSET_MS_AT_FOUR: f64 = 0.4;

/// The physics agent: detail-pass frequency and fixed step.
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

    /// The settings of strategy `index` (the first for an index out of range), with the step
    /// rate resolved against the configured one.
    pub fn settings(&self, index: StrategyIndex) -> PhysicsSettings {
        let s = rung(&PHYSICS_LADDER, index).settings;
        PhysicsSettings {
            detail_every: s.detail_every,
            detail_fraction: s.detail_fraction,
            step_hz: (self.base_hz / s.step_hz).max(1),
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
        PHYSICS_LADDER
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let hz = self.settings(StrategyIndex(i as u8)).step_hz;
                Strategy::new(
                    r.name,
                    r.quality,
                    Quote::new(CostLaw::Linear, PHYSICS_MS_PER_ENTITY * r.relative_cost),
                )
                .with_fixed_step(1.0 / f64::from(hz))
            })
            .collect()
    }

    fn initial_workload(&self) -> u64 {
        10_000
    }
}

/// The render agent: resolution scale, instance cap, and the compute pre-pass on or off
/// ([`RENDER_LADDER`]).
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

    /// The settings of strategy `index` (the first for an index out of range).
    pub fn settings(index: StrategyIndex) -> RenderSettings {
        rung(&RENDER_LADDER, index).settings
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
        RENDER_LADDER
            .iter()
            .map(|r| {
                Strategy::new(
                    r.name,
                    r.quality,
                    Quote::new(CostLaw::Linear, RENDER_MS_PER_INSTANCE * r.relative_cost),
                )
            })
            .collect()
    }

    fn initial_workload(&self) -> u64 {
        10_000
    }
}

/// The asset agent: how many asset jobs a frame admits ([`ASSET_LADDER`]).
#[derive(Debug, Clone, Default)]
pub struct AssetAgent;

impl AssetAgent {
    /// The settings of strategy `index` (the first for an index out of range).
    pub fn settings(index: StrategyIndex) -> AssetSettings {
        rung(&ASSET_LADDER, index).settings
    }
}

impl Agent for AssetAgent {
    fn name(&self) -> &str {
        "asset"
    }

    fn strategies(&self) -> Vec<Strategy> {
        ASSET_LADDER
            .iter()
            .map(|r| {
                Strategy::new(
                    r.name,
                    r.quality,
                    Quote::constant(ASSET_MS_AT_FOUR * r.relative_cost),
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_strategy_comes_from_its_table_row() {
        let p = PhysicsAgent::new(60);
        let ps = p.strategies();
        assert_eq!(ps.len(), PHYSICS_LADDER.len());
        assert_eq!(p.settings(StrategyIndex(0)).detail_every, 1);
        let last = PHYSICS_LADDER.len() - 1;
        assert_eq!(p.settings(StrategyIndex(last as u8)).step_hz, 30);
        assert_eq!(ps[last].fixed_step_s, Some(1.0 / 30.0));
        assert_eq!(p.settings(StrategyIndex(4)).detail_fraction, 0.5);
        assert_eq!(ps[4].name, "detail_4_8");
        // Best first, every rank distinct, and the quotes fall with the rank.
        for w in ps.windows(2) {
            assert!(w[0].quality > w[1].quality, "{} / {}", w[0].name, w[1].name);
            assert!(w[0].quote.coefficient > w[1].quote.coefficient);
        }
        assert_eq!(
            RenderAgent::settings(StrategyIndex(2)).instance_fraction,
            0.25
        );
        assert_eq!(AssetAgent::settings(StrategyIndex(1)).jobs_per_frame, 2);
        assert_eq!(AssetAgent::settings(StrategyIndex(9)).jobs_per_frame, 4);
        let render = RenderAgent::new(true).strategies();
        for (s, r) in render.iter().zip(&RENDER_LADDER) {
            assert_eq!((s.name.as_str(), s.quality), (r.name, r.quality));
        }
        for (i, s) in render.iter().enumerate() {
            let set = RenderAgent::settings(StrategyIndex(i as u8));
            assert_eq!(
                set.gpu_cull,
                !s.name.ends_with("no_compute"),
                "strategy {} and its settings disagree on the compute pass",
                s.name
            );
        }
        let asset: Vec<String> = AssetAgent
            .strategies()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(asset, ["4_per_frame", "2_per_frame", "1_per_frame"]);
        assert_eq!(RenderAgent::new(true).pool(), Pool::Gpu);
    }
}
