//! Cost models: data generated from each of the four laws, with noise, is recognised as that
//! law; calibration rescales quotes to measurements (clamped, order preserved); with no
//! samples the quote stands; an announced workload is costed along the fitted law.

use lanegraph::hooks::budget::{
    Agent, AgentSample, Controller, CostLaw, CostModel, FrameInput, Pool, Quote, Strategy,
    StrategyIndex,
};
use lanegraph::hooks::ControllerDriver;
use lanegraph::hooks::CostLawHooks;
use lanegraph_tools::budget_sim::SplitMix;

/// Samples of `c * law(n)` with `n` log-uniform over `[64, 16384]` and relative Gaussian
/// noise `sigma`.
fn model_of(law: CostLaw, c: f64, sigma: f64, seed: u64, count: usize) -> CostModel {
    let mut rng = SplitMix(seed);
    let mut m = CostModel::new();
    for _ in 0..count {
        let n = (64.0 * 256f64.powf(rng.unit())).round() as u64;
        let noise = (1.0 + sigma * rng.normal()).max(0.05);
        m.push(n, c * law.eval(n) * noise);
    }
    m
}

#[test]
fn each_law_is_recognised_from_noisy_data() {
    let coefficient = |law| match law {
        CostLaw::Constant => 2.0,
        CostLaw::Linear => 1e-3,
        CostLaw::NLogN => 1e-4,
        CostLaw::Quadratic => 1e-7,
    };
    for law in CostLaw::ALL {
        for seed in 1..=20 {
            for sigma in [0.02, 0.05, 0.10] {
                let fit = model_of(law, coefficient(law), sigma, seed, 64)
                    .fit()
                    .unwrap();
                assert_eq!(
                    fit.law, law,
                    "seed {seed}, noise {sigma}: {law:?} data fitted as {:?} (errors {:?})",
                    fit.law, fit.errors
                );
                assert!(fit.identifiable);
                let rel = (fit.coefficient / coefficient(law) - 1.0).abs();
                assert!(rel < 3.0 * sigma, "coefficient off by {rel}");
            }
        }
    }
}

#[test]
fn the_criterion_does_not_always_favour_the_richer_law() {
    // Linear data: the quadratic law is never chosen, even though every law has one parameter
    // and noise could favour it by a hair.
    for seed in 1..=50 {
        let fit = model_of(CostLaw::Linear, 1e-3, 0.10, seed, 64)
            .fit()
            .unwrap();
        assert_ne!(fit.law, CostLaw::Quadratic);
        assert_ne!(fit.law, CostLaw::NLogN, "errors {:?}", fit.errors);
    }
    // Constant work at a constant n: nothing to tell the laws apart, so the simplest is named
    // and flagged as not identifiable.
    let mut m = CostModel::new();
    for _ in 0..32 {
        m.push(1000, 4.0);
    }
    let fit = m.fit().unwrap();
    assert_eq!(fit.law, CostLaw::Constant);
    assert!(!fit.identifiable);
}

#[test]
fn the_window_forgets_an_old_law() {
    let mut rng = SplitMix(9);
    let mut m = CostModel::new();
    for k in 0..200 {
        let n = (64.0 * 256f64.powf(rng.unit())).round() as u64;
        let law = if k < 100 {
            CostLaw::Quadratic
        } else {
            CostLaw::Linear
        };
        m.push(n, law.eval(n) * 1e-4);
    }
    assert_eq!(m.len(), lanegraph::hooks::budget::COST_MODEL_WINDOW);
    assert_eq!(m.fit().unwrap().law, CostLaw::Linear);
}

struct Quoted {
    quotes: Vec<f64>,
}

impl Agent for Quoted {
    fn name(&self) -> &str {
        "quoted"
    }
    fn pool(&self) -> Pool {
        Pool::Cpu
    }
    fn strategies(&self) -> Vec<Strategy> {
        self.quotes
            .iter()
            .enumerate()
            .map(|(i, &q)| {
                Strategy::new(
                    format!("s{i}"),
                    (self.quotes.len() - i) as u16,
                    Quote::new(CostLaw::Linear, q),
                )
            })
            .collect()
    }
    fn initial_workload(&self) -> u64 {
        1000
    }
}

fn tick(c: &mut Controller, frame: u64, ms: f64, n: u64) {
    let id = c.agent_id("quoted").unwrap();
    let s = [AgentSample {
        agent: id,
        frame,
        n,
        ms,
    }];
    c.tick(&FrameInput {
        frame,
        cpu_ms: ms + 1.0,
        gpu: None,
        samples: &s,
        step: None,
    })
    .unwrap();
}

#[test]
fn quotes_are_rescaled_to_measurements_with_order_preserved() {
    // Quotes at n = 1000: 8, 4, 2 ms. The best strategy (8 ms) fits the 15 ms target.
    let mut c = Controller::new(Default::default()).unwrap();
    let id = c
        .register(Box::new(Quoted {
            quotes: vec![0.008, 0.004, 0.002],
        }))
        .unwrap();
    // No samples: the quote stands.
    assert_eq!(c.calibrated_costs(id).unwrap(), vec![8.0, 4.0, 2.0]);
    // Measured 1.5x the quote: every strategy is rescaled by the same factor.
    for f in 1..=10 {
        tick(&mut c, f, 12.0, 1000);
    }
    assert_eq!(c.current(id), Some(StrategyIndex(0)));
    let costs = c.calibrated_costs(id).unwrap();
    for (got, want) in costs.iter().zip([12.0, 6.0, 3.0]) {
        assert!((got - want).abs() < 1e-9, "{costs:?}");
    }
    // Measured 10x the quote: taken as measured (the factor's range is three decades), order
    // preserved.
    let mut c = Controller::new(Default::default()).unwrap();
    let id = c
        .register(Box::new(Quoted {
            quotes: vec![0.001, 0.0005],
        }))
        .unwrap();
    for f in 1..=10 {
        tick(&mut c, f, 10.0, 1000);
    }
    let costs = c.calibrated_costs(id).unwrap();
    assert!(
        (costs[0] - 10.0).abs() < 1e-9 && (costs[1] - 5.0).abs() < 1e-9,
        "{costs:?}"
    );
}

#[test]
fn an_announced_workload_is_costed_along_the_fitted_law() {
    // The agent quotes linear, but its real cost is quadratic: once the law is fitted, an
    // announced 2x workload is costed at 4x, not 2x.
    let mut c = Controller::new(Default::default()).unwrap();
    let id = c
        .register(Box::new(Quoted {
            quotes: vec![0.002],
        }))
        .unwrap();
    let mut rng = SplitMix(4);
    for f in 1..=80 {
        let n = 500 + (rng.unit() * 1000.0) as u64;
        tick(&mut c, f, 2e-6 * (n * n) as f64, n);
    }
    let fit = c.cost_fit(id).unwrap();
    assert_eq!(fit.law, CostLaw::Quadratic);
    tick(&mut c, 81, 2e-6 * 1e6, 1000);
    let at_1000 = c.calibrated_costs(id).unwrap()[0];
    c.announce_workload(id, Some(2000));
    let at_2000 = c.calibrated_costs(id).unwrap()[0];
    let ratio = at_2000 / at_1000;
    assert!((ratio - 4.0).abs() < 0.05, "ratio {ratio}");
}
