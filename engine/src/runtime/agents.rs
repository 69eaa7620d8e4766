//! The built-in budget agents' building blocks: a fixed-step physics agent, a render-scale
//! agent and an asset-throughput agent, each driven by a ladder the game declares.
//!
//! Owns: the settings each built-in strategy maps to ([`PhysicsSettings`], [`RenderSettings`],
//! [`AssetSettings`]), the [`Rung`] a ladder is made of, the three agents that read their
//! strategies from a game's ladder, and the ladders' validation. Must never: measure or decide
//! (the engine feeds measured costs to the controller and reads back which strategy it chose),
//! hold a game's ladder of its own (the demo's ladders live in the demo: `lanegraph-demo`'s
//! `agents`), or hold a strategy outside the game's ladder.
//!
//! A game installs what it wants with [`super::EngineBuilder::builtin_agents`]; an agent not
//! installed leaves its work at the settings' `FULL` (or `DEFAULT`) value, never changing it.

use crate::runtime::BuildError;
use std::num::NonZeroU32;

use lanegraph_budget::{Agent, CostLaw, Pool, Quote, Strategy, StrategyIndex};

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
    /// The simulation step this rung asks for, as a divisor of the configured fixed-step
    /// rate (`EngineBuilder::fixed_step_hz`): 1 steps at that rate, 2 at half of it. The hook
    /// reads the step in force as `PhysicsStep::dt`.
    pub step_divisor: NonZeroU32,
}

impl PhysicsSettings {
    /// The detail pass over every body every step, at the configured step: what the physics
    /// hook gets when no physics agent is installed.
    pub const FULL: PhysicsSettings = PhysicsSettings {
        detail_every: 1,
        detail_fraction: 1.0,
        step_divisor: NonZeroU32::MIN,
    };
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

impl RenderSettings {
    /// Full resolution, every instance, the compute pre-pass on: what the render pass gets when
    /// no render agent is installed.
    pub const FULL: RenderSettings = RenderSettings {
        resolution_scale: 1.0,
        instance_fraction: 1.0,
        gpu_cull: true,
    };
}

/// What an asset strategy asks of the asset stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AssetSettings {
    /// Asset requests issued (and completions applied) per frame at most.
    pub jobs_per_frame: u32,
}

impl AssetSettings {
    /// Four asset jobs a frame: what the asset stream admits when no asset agent is installed.
    pub(crate) const DEFAULT: AssetSettings = AssetSettings { jobs_per_frame: 4 };
}

/// Four asset jobs a frame (what the stream admits without an asset agent).
impl Default for AssetSettings {
    fn default() -> Self {
        AssetSettings::DEFAULT
    }
}

/// One row of a built-in agent's ladder: a strategy, declared once.
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

/// The row of `index` in `ladder` (the first for an index out of range; ladders are checked
/// non-empty when installed).
fn rung<S>(ladder: &[Rung<S>], index: StrategyIndex) -> Option<&Rung<S>> {
    ladder.get(index.get()).or(ladder.first())
}

/// Per-entity cost quote of one physics step with the detail pass, ms (a 2-core laptop core
/// integrates ~1 M entities/ms and sorts ~50 k/ms into a grid: the quote only needs ratios).
const PHYSICS_MS_PER_ENTITY: f64 = 20e-6;
/// Per-instance cost quote of a full-resolution draw, ms.
const RENDER_MS_PER_INSTANCE: f64 = 10e-6;
/// Owner time of admitting four asset jobs in a frame, ms.
const ASSET_MS_AT_FOUR: f64 = 0.4;

/// The built-in agents a game installs, each with its ladder (best first). None by default:
/// no agent changes a game's fixed step, resolution or asset rate unless the game installed it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BuiltinAgents {
    /// The fixed-step physics agent: the detail pass's frequency and share, and the fixed step
    /// (`step_divisor` divides the configured rate).
    pub physics: Option<Vec<Rung<PhysicsSettings>>>,
    /// The render-scale agent: resolution scale, instance cap, compute pre-pass.
    pub render: Option<Vec<Rung<RenderSettings>>>,
    /// The asset-throughput agent: asset jobs admitted per frame.
    pub asset: Option<Vec<Rung<AssetSettings>>>,
}

impl BuiltinAgents {
    /// Checks every installed ladder: non-empty, each rung's settings in range (the agents'
    /// names and quotes are checked again at registration). `EngineBuilder::build` calls it.
    pub(crate) fn validate(&self) -> Result<(), BuildError> {
        fn check<S>(
            agent: &'static str,
            ladder: &Option<Vec<Rung<S>>>,
            bad: impl Fn(&S) -> Option<&'static str>,
        ) -> Result<(), BuildError> {
            let Some(l) = ladder else {
                return Ok(());
            };
            if l.is_empty() {
                return Err(BuildError::Ladder {
                    agent,
                    rung: String::new(),
                    why: "the ladder has no rung",
                });
            }
            for r in l {
                if let Some(why) = bad(&r.settings) {
                    return Err(BuildError::Ladder {
                        agent,
                        rung: r.name.to_string(),
                        why,
                    });
                }
            }
            Ok(())
        }
        let share = |x: f32| x > 0.0 && x <= 1.0;
        check("physics", &self.physics, |s| {
            if s.step_divisor.get() > 1_000 {
                Some("step_divisor is over 1,000")
            } else if !share(s.detail_fraction) {
                Some("detail_fraction is outside (0, 1]")
            } else {
                None
            }
        })?;
        check("render", &self.render, |s| {
            if !share(s.resolution_scale) {
                Some("resolution_scale is outside (0, 1]")
            } else if !share(s.instance_fraction) {
                Some("instance_fraction is outside (0, 1]")
            } else {
                None
            }
        })?;
        check("asset", &self.asset, |s| {
            (s.jobs_per_frame == 0).then_some("jobs_per_frame is 0")
        })
    }
}

/// Refuses a strategy whose step divisor makes a step over 10 s at the configured step `base`
/// (the longest `FixedStep`): checked before an agent is registered, so the step in force is
/// always one the game loop can take.
pub(crate) fn check_step_divisors(
    base: crate::game_loop::FixedStep,
    agent: &dyn Agent,
) -> Result<(), lanegraph_budget::RegisterError> {
    for s in agent.strategies() {
        let Some(d) = s.step_divisor else { continue };
        if base.divided(d).is_err() {
            let longest = (1..=d.get())
                .rev()
                .find(|&k| NonZeroU32::new(k).is_some_and(|k| base.divided(k).is_ok()))
                .unwrap_or(1);
            return Err(lanegraph_budget::RegisterError::BadStepDivisor {
                agent: agent.name().to_string(),
                strategy: s.name,
                divisor: d.get(),
                max: longest,
            });
        }
    }
    Ok(())
}

/// The fixed-step physics agent: detail-pass frequency and share, and step divisor, from the
/// game's ladder.
#[derive(Debug, Clone)]
pub(crate) struct PhysicsAgent {
    ladder: Vec<Rung<PhysicsSettings>>,
}

impl PhysicsAgent {
    /// The ladder's strategies, each declaring its rung's step divisor.
    pub(crate) fn new(ladder: Vec<Rung<PhysicsSettings>>) -> Self {
        PhysicsAgent { ladder }
    }

    /// The settings of strategy `index` (the first for an index out of range).
    pub(crate) fn settings(&self, index: StrategyIndex) -> PhysicsSettings {
        rung(&self.ladder, index).map_or(PhysicsSettings::FULL, |r| r.settings)
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
        self.ladder
            .iter()
            .map(|r| {
                Strategy::new(
                    r.name,
                    r.quality,
                    Quote::new(CostLaw::Linear, PHYSICS_MS_PER_ENTITY * r.relative_cost),
                )
                .with_step_divisor(r.settings.step_divisor)
            })
            .collect()
    }

    fn initial_workload(&self) -> u64 {
        10_000
    }
}

/// The render-scale agent: resolution scale, instance cap, and the compute pre-pass on or off,
/// from the game's ladder.
#[derive(Debug, Clone)]
pub(crate) struct RenderAgent {
    pool: Pool,
    ladder: Vec<Rung<RenderSettings>>,
}

impl RenderAgent {
    /// A render agent whose cost lands on the GPU (`gpu: true`) or the CPU.
    pub(crate) fn new(gpu: bool, ladder: Vec<Rung<RenderSettings>>) -> Self {
        RenderAgent {
            pool: if gpu { Pool::Gpu } else { Pool::Cpu },
            ladder,
        }
    }

    /// The settings of strategy `index` (the first for an index out of range).
    pub(crate) fn settings(&self, index: StrategyIndex) -> RenderSettings {
        rung(&self.ladder, index).map_or(RenderSettings::FULL, |r| r.settings)
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
        self.ladder
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

/// The asset-throughput agent: how many asset jobs a frame admits, from the game's ladder.
#[derive(Debug, Clone)]
pub(crate) struct AssetAgent {
    ladder: Vec<Rung<AssetSettings>>,
}

impl AssetAgent {
    /// An asset agent on `ladder`.
    pub(crate) fn new(ladder: Vec<Rung<AssetSettings>>) -> Self {
        AssetAgent { ladder }
    }

    /// The settings of strategy `index` (the first for an index out of range).
    pub(crate) fn settings(&self, index: StrategyIndex) -> AssetSettings {
        rung(&self.ladder, index).map_or(AssetSettings::DEFAULT, |r| r.settings)
    }
}

impl Agent for AssetAgent {
    fn name(&self) -> &str {
        "asset"
    }

    fn strategies(&self) -> Vec<Strategy> {
        self.ladder
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

    fn physics_rung(
        name: &'static str,
        quality: u16,
        fraction: f32,
        divisor: u32,
    ) -> Rung<PhysicsSettings> {
        Rung {
            name,
            quality,
            relative_cost: f64::from(fraction),
            settings: PhysicsSettings {
                detail_every: 1,
                detail_fraction: fraction,
                step_divisor: NonZeroU32::new(divisor).unwrap(),
            },
        }
    }

    #[test]
    fn strategies_and_settings_come_from_the_games_ladder() {
        let p = PhysicsAgent::new(vec![
            physics_rung("all", 2, 1.0, 1),
            physics_rung("half", 1, 0.5, 2),
        ]);
        let ps = p.strategies();
        assert_eq!(ps.len(), 2);
        assert_eq!(ps[1].name, "half");
        assert_eq!(ps[1].step_divisor, NonZeroU32::new(2));
        assert_eq!(p.settings(StrategyIndex(1)).detail_fraction, 0.5);
        assert_eq!(p.settings(StrategyIndex(1)).step_divisor.get(), 2);
        // Out of range: the first rung.
        assert_eq!(p.settings(StrategyIndex(9)).step_divisor.get(), 1);
        let r = RenderAgent::new(true, Vec::new());
        assert_eq!(r.settings(StrategyIndex(0)), RenderSettings::FULL);
        assert_eq!(r.pool(), Pool::Gpu);
        assert_eq!(
            AssetAgent::new(Vec::new()).settings(StrategyIndex(0)),
            AssetSettings::DEFAULT
        );
    }

    #[test]
    fn a_bad_ladder_is_refused_with_the_rung_named() {
        assert!(BuiltinAgents::default().validate().is_ok());
        let empty = BuiltinAgents {
            physics: Some(Vec::new()),
            ..BuiltinAgents::default()
        };
        assert!(empty
            .validate()
            .unwrap_err()
            .to_string()
            .contains("no rung"));
        let huge_divisor = BuiltinAgents {
            physics: Some(vec![physics_rung("x", 1, 1.0, 1_001)]),
            ..BuiltinAgents::default()
        };
        let e = huge_divisor.validate().unwrap_err();
        assert!(
            matches!(&e, BuildError::Ladder { agent: "physics", rung, .. } if rung == "x"),
            "{e:?}"
        );
        let bad_share = BuiltinAgents {
            physics: Some(vec![physics_rung("y", 1, 1.5, 1)]),
            ..BuiltinAgents::default()
        };
        assert!(bad_share
            .validate()
            .unwrap_err()
            .to_string()
            .contains("detail_fraction"));
    }
}
