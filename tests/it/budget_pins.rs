//! Every pin and unpin a game makes is in the decision log, the ones that change nothing
//! included, and a replay of the log logs them again the same way.

use lanegraph::budget::{Agent, CostLaw, Quote, Strategy};
use lanegraph::runtime::{AgentCost, Engine, RunLog, RunSummary};

struct Think;
impl Agent for Think {
    fn name(&self) -> &str {
        "think"
    }
    fn strategies(&self) -> Vec<Strategy> {
        vec![
            Strategy::new("all", 2, Quote::new(CostLaw::Constant, 1.0)),
            Strategy::new("few", 1, Quote::new(CostLaw::Constant, 0.5)),
        ]
    }
}

fn game() -> (Engine, lanegraph::budget::AgentId) {
    let mut engine = Engine::builder().lockstep(true).build().unwrap();
    let id = engine
        .add_agent(Box::new(Think), AgentCost::Reported)
        .unwrap();
    (engine, id)
}

/// `(frame, agent, to, reason)` of the manual entries.
fn manual(engine: &Engine) -> Vec<(u64, String, String, String)> {
    RunSummary::from_engine(engine)
        .decisions
        .iter()
        .filter(|d| d.reason.starts_with("manual"))
        .map(|d| (d.frame, d.agent.clone(), d.to.clone(), d.reason.clone()))
        .collect()
}

#[test]
fn a_pin_to_the_strategy_in_force_and_an_unpin_are_logged_and_replayed() {
    let (mut live, id) = game();
    for _ in 0..5 {
        live.report_cost(id, 1, 1.0);
        live.frame().unwrap();
    }
    live.pin(id, "all").unwrap(); // already in force
    live.frame().unwrap();
    live.pin(id, "few").unwrap();
    live.frame().unwrap();
    // A game re-pinning the same strategy every frame logs it once.
    for _ in 0..3 {
        live.pin(id, "few").unwrap();
        live.frame().unwrap();
    }
    live.unpin(id);
    for _ in 0..3 {
        live.frame().unwrap();
    }
    let logged = manual(&live);
    let reasons: Vec<&str> = logged.iter().map(|m| m.3.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "manual: pinned (already in force)",
            "manual: pinned",
            "manual: unpinned"
        ],
        "{logged:?}"
    );
    // Replayed on a fresh engine: the same manual entries, at the same frames.
    let log = RunLog::from(&RunSummary::from_engine(&live));
    let (mut again, _) = game();
    again.replay(&log).unwrap();
    for _ in 0..live.frames() + 2 {
        again.frame().unwrap();
    }
    assert_eq!(manual(&again), logged);
}
