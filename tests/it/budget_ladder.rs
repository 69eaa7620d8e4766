//! Evidence that travels along a ladder: a rung measured at X ms bounds every richer rung from
//! below, unmeasured rungs are priced from the measured shape, an upgrade onto a rung only a
//! quote prices moves one rung, the hysteresis is one rung wide, and no reason contradicts its
//! own figures, even when the game got every quote wrong.

use lanegraph::hooks::budget::{CostLaw, Decision, Pool, Quote, Strategy};
use lanegraph_tools::budget_sim::{self as sim, Driver, Scenario, SimAgentSpec, Trace};

/// 10 simulated minutes at 60 fps.
const TEN_MINUTES: u64 = 36_000;

/// Upgrades undone by the next decision of the same agent within `window` frames.
fn overrun_probes(decisions: &[Decision], window: u64) -> Vec<u64> {
    decisions
        .windows(2)
        .filter(|w| {
            let (up, down) = (&w[0], &w[1]);
            up.to.get() < up.from.get()
                && down.to.get() > down.from.get()
                && down.frame <= up.frame + window
        })
        .map(|w| w[0].frame)
        .collect()
}

/// The demo's physics ladder: a pass over k/8 of the bodies for k = 8..=1, then none. The
/// truth is 0.5 ms without the pass plus k/8 of 28 ms; the quotes are `quote_of(truth, k)`.
fn demo_shaped(quote_of: impl Fn(f64, u32) -> f64, seed: u64) -> Scenario {
    let n = 10_000u64;
    let mut strategies = Vec::new();
    let mut truth = Vec::new();
    for k in (0..=8u32).rev() {
        let ms = 0.5 + 28.0 * f64::from(k) / 8.0;
        let name = if k == 0 {
            "no_detail".to_string()
        } else {
            format!("detail_{k}_8")
        };
        strategies.push(Strategy::new(
            name,
            (k + 1) as u16,
            Quote::new(CostLaw::Linear, quote_of(ms, k) / n as f64),
        ));
        truth.push(ms / n as f64);
    }
    let mut sc = Scenario::one_agent(
        SimAgentSpec {
            name: "physics".into(),
            pool: Pool::Cpu,
            weight: 1,
            strategies,
            law: CostLaw::Linear,
            truth,
            n,
            per_step: false,
        },
        TEN_MINUTES,
        seed,
    );
    // Start where the demo starts its walk: a heavy first ten seconds (six times the load)
    // drive it to its cheapest rung, then the ladder is climbed from the bottom, where only
    // the cheapest rung and the best one have been measured.
    sc.load = vec![(0, 6.0), (600, 1.0)];
    sc.noise = 0.05;
    sc
}

fn log(t: &Trace) -> String {
    lanegraph_tests::decision_lines(&t.decisions)
}

fn check_settles(sc: &Scenario, what: &str) {
    let t = sim::run(sc, Driver::Adaptive);
    let probes = overrun_probes(&t.decisions, 30);
    assert!(
        probes.len() <= 2,
        "{what}: {} overrun probes in 10 minutes at frames {probes:?}\n{}",
        probes.len(),
        log(&t)
    );
    // Settled on a rung that uses the budget, not on the floor, and holds the target.
    let tail = &t.frames[t.frames.len() - 600..];
    let mut ms: Vec<f64> = tail.iter().map(|f| f.frame_ms).collect();
    ms.sort_by(f64::total_cmp);
    let (p50, target) = (ms[ms.len() / 2], tail[0].target_ms);
    assert!(
        p50 >= 0.6 * target && p50 <= target,
        "{what}: p50 {p50:.1} ms against a {target:.1} ms target\n{}",
        log(&t)
    );
    let late = t.decisions.iter().filter(|d| d.frame >= 3_600).count();
    assert!(
        late <= 9,
        "{what}: {late} changes after the first minute\n{}",
        log(&t)
    );
}

#[test]
fn a_ladder_quoted_ten_times_low_on_every_rung_settles_with_two_probes_at_most() {
    for seed in [1, 2, 3] {
        check_settles(&demo_shaped(|ms, _| ms / 10.0, seed), "every rung 10x low");
    }
}

#[test]
fn the_demos_ladder_quoted_right_at_the_bottom_and_eleven_times_low_at_the_top_settles() {
    // The demo's own mistake: the step without the pass is quoted right (0.5 ms), the pass
    // over k/8 of the bodies at 2 ms times k/8 where it costs 28 ms times k/8, so the cheapest
    // rung's measurement says nothing about the others (the full pass is 11x its quote).
    for seed in [4, 5, 6] {
        check_settles(
            &demo_shaped(|_, k| 0.5 + 2.0 * f64::from(k) / 8.0, seed),
            "the demo's quotes",
        );
    }
}

#[test]
fn a_measured_rung_bounds_every_richer_rung_from_below() {
    use lanegraph::hooks::ControllerDriver;
    let sc = demo_shaped(|_, k| 0.5 + 2.0 * f64::from(k) / 8.0, 9);
    let id = sim::agent_id(0);
    let mut checked = 0;
    sim::run_with(&sc, Driver::Adaptive, |c, _| {
        let (Some(costs), Some(strategies)) = (c.calibrated_costs(id), c.strategies(id)) else {
            return;
        };
        // Prices never fall as quality rises (rungs are declared best first).
        for w in costs.windows(2) {
            assert!(
                w[0] >= w[1] - 1e-9,
                "a richer rung priced below a cheaper one: {costs:?} ({:?})",
                strategies.iter().map(|s| &s.name).collect::<Vec<_>>()
            );
        }
        checked += 1;
    });
    assert!(checked > 1000);
}

/// Runs of random periodic ladders under random loads: every decision's printed figures agree
/// with its label, no capacity prints negative, and no upgrade lands on a prediction over its
/// capacity.
#[test]
fn random_periodic_ladders_give_reasons_that_agree_with_their_figures() {
    let mut rng = sim::SplitMix(0x001a_dde7);
    let mut upgrades = 0;
    for case in 0..24 {
        let rungs = 2 + (rng.next_u64() % 3) as usize;
        let base = 2.0 + rng.unit() * 20.0;
        let mut strategies = Vec::new();
        let mut truth = Vec::new();
        for r in 0..rungs {
            let period = 1u32 << r;
            // The quote is the working frame's cost (the peak, as `Strategy::every` says),
            // off by 0.1x to 2.1x; richer rungs also cost more on their working frame.
            let peak = base * (rungs - r) as f64 / rungs as f64;
            let wrong = 0.1 + rng.unit() * 2.0;
            let s = Strategy::new(
                format!("every_{period}"),
                (rungs - r) as u16,
                Quote::constant(peak * wrong),
            )
            .every(period);
            strategies.push(s);
            truth.push(peak);
        }
        let mut sc = Scenario::one_agent(
            SimAgentSpec {
                name: "periodic".into(),
                pool: Pool::Cpu,
                weight: 1,
                strategies,
                law: CostLaw::Constant,
                truth,
                n: 1,
                per_step: false,
            },
            1_200,
            case,
        );
        sc.load = vec![(0, 0.5 + rng.unit()), (600, 0.5 + rng.unit())];
        let t = sim::run(&sc, Driver::Adaptive);
        for d in &t.decisions {
            let r = &d.reason;
            assert!(!r.contains("capacity -"), "a negative capacity: {r}");
            if r.starts_with("headroom") || r.starts_with("cost fits") {
                upgrades += 1;
                let (new_cost, cap) = upgrade_figures(r);
                assert!(
                    new_cost <= cap + 0.05,
                    "case {case}: an upgrade onto {new_cost} ms over a {cap} ms capacity: {r}"
                );
            }
        }
    }
    assert!(upgrades > 0, "no upgrade was checked");
}

/// `cost A -> B ms <= capacity C ms` out of an upgrade's reason: `(B, C)`.
fn upgrade_figures(reason: &str) -> (f64, f64) {
    let after = reason.split("cost ").nth(1).expect("a cost figure");
    // The number right after `marker` in `after`.
    let number_after = |marker: &str| -> Option<f64> {
        after.split(marker).nth(1)?.split(' ').next()?.parse().ok()
    };
    (
        number_after("-> ").expect("a new cost"),
        number_after("capacity ").expect("a capacity"),
    )
}
