//! The demo's budget ladders: what its physics, render and asset agents may choose between.
//!
//! Owns: the three ladders (best first) the demo installs with
//! `EngineBuilder::builtin_agents(agents::all())`. Each rung names what the demo does: its
//! neighbour pass over a share of the particles, its GPU cull, its texture stream. Must never:
//! be needed by another game (a game declares its own ladders, or none).
//!
//! Quotes are a-priori ratios (the controller rescales them to measurements): half resolution
//! costs about 40 % of the GPU time; a quarter of the instances about 30 %.

use std::num::NonZeroU32;

use lanegraph::runtime::{AssetSettings, BuiltinAgents, PhysicsSettings, RenderSettings, Rung};

/// The cheapest physics rung's step divisor: half the configured rate.
const HALF_RATE: NonZeroU32 = NonZeroU32::new(2).unwrap();

/// The physics table, best first. `step_divisor` divides the configured step rate
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
            step_divisor: NonZeroU32::MIN,
        },
    },
    Rung {
        name: "detail_7_8",
        quality: 9,
        relative_cost: 0.9,
        settings: PhysicsSettings {
            detail_every: 1,
            detail_fraction: 0.875,
            step_divisor: NonZeroU32::MIN,
        },
    },
    Rung {
        name: "detail_6_8",
        quality: 8,
        relative_cost: 0.8,
        settings: PhysicsSettings {
            detail_every: 1,
            detail_fraction: 0.75,
            step_divisor: NonZeroU32::MIN,
        },
    },
    Rung {
        name: "detail_5_8",
        quality: 7,
        relative_cost: 0.7,
        settings: PhysicsSettings {
            detail_every: 1,
            detail_fraction: 0.625,
            step_divisor: NonZeroU32::MIN,
        },
    },
    Rung {
        name: "detail_4_8",
        quality: 6,
        relative_cost: 0.6,
        settings: PhysicsSettings {
            detail_every: 1,
            detail_fraction: 0.5,
            step_divisor: NonZeroU32::MIN,
        },
    },
    Rung {
        name: "detail_3_8",
        quality: 5,
        relative_cost: 0.5,
        settings: PhysicsSettings {
            detail_every: 1,
            detail_fraction: 0.375,
            step_divisor: NonZeroU32::MIN,
        },
    },
    Rung {
        name: "detail_2_8",
        quality: 4,
        relative_cost: 0.4,
        settings: PhysicsSettings {
            detail_every: 1,
            detail_fraction: 0.25,
            step_divisor: NonZeroU32::MIN,
        },
    },
    Rung {
        name: "detail_1_8",
        quality: 3,
        relative_cost: 0.3,
        settings: PhysicsSettings {
            detail_every: 1,
            detail_fraction: 0.125,
            step_divisor: NonZeroU32::MIN,
        },
    },
    Rung {
        name: "no_detail",
        quality: 2,
        relative_cost: 0.2,
        settings: PhysicsSettings {
            detail_every: 0,
            detail_fraction: 1.0,
            step_divisor: NonZeroU32::MIN,
        },
    },
    Rung {
        name: "no_detail_half_rate",
        quality: 1,
        relative_cost: 0.1,
        settings: PhysicsSettings {
            detail_every: 0,
            detail_fraction: 1.0,
            step_divisor: HALF_RATE,
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

/// All three ladders: what the demo installs.
pub fn all() -> BuiltinAgents {
    BuiltinAgents {
        physics: Some(PHYSICS_LADDER.to_vec()),
        render: Some(RENDER_LADDER.to_vec()),
        asset: Some(ASSET_LADDER.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ladders_are_valid_best_first_and_cheaper_down() {
        // The engine checks every ladder when it is built.
        lanegraph::Engine::builder()
            .lanes_spec("physics=1,render=1,asset=1")
            .lockstep(true)
            .builtin_agents(all())
            .build()
            .unwrap();
        fn check<S>(l: &[Rung<S>]) {
            for w in l.windows(2) {
                assert!(w[0].quality > w[1].quality, "{} / {}", w[0].name, w[1].name);
                assert!(w[0].relative_cost > w[1].relative_cost, "{}", w[1].name);
            }
        }
        check(&PHYSICS_LADDER);
        check(&RENDER_LADDER);
        check(&ASSET_LADDER);
        assert_eq!(PHYSICS_LADDER[4].name, "detail_4_8");
        assert_eq!(PHYSICS_LADDER[4].settings.detail_fraction, 0.5);
        let last = PHYSICS_LADDER.last().unwrap();
        assert_eq!(
            (last.name, last.settings.step_divisor.get()),
            ("no_detail_half_rate", 2)
        );
        for r in &RENDER_LADDER {
            assert_eq!(
                r.settings.gpu_cull,
                !r.name.ends_with("no_compute"),
                "rung {} and its settings disagree on the compute pass",
                r.name
            );
        }
    }
}
