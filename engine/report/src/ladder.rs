//! The report's ladder table: each agent's strategies, richest first, the cost the game quoted
//! against the cost the controller prices it at now, and what that price rests on.
//!
//! Owns: [`LadderRow`], how the rows are read off a finished engine ([`ladders_of`]) and the
//! table's HTML ([`ladder_table`]). Must never: price anything itself (every figure is the
//! controller's own, through `ControllerDriver`).

use lanegraph::hooks::ControllerDriver;
use lanegraph::runtime::Engine;

use super::svg::esc;

/// One strategy of one agent, as the controller saw it at the end of the run.
#[derive(Debug, Clone, PartialEq)]
pub struct LadderRow {
    /// The agent.
    pub agent: String,
    /// The strategy.
    pub strategy: String,
    /// Its quality rank (higher is richer).
    pub quality: u16,
    /// The game's quote at the agent's workload, ms.
    pub quoted_ms: f64,
    /// The controller's price, ms.
    pub priced_ms: f64,
    /// What the price rests on: `measured`, `estimated` (from the measured rungs) or `quoted`.
    pub evidence: &'static str,
    /// The strategy in force at the end of the run.
    pub current: bool,
    /// Barred at the end of the run (it overran right after an upgrade).
    pub barred: bool,
}

/// Every agent's ladder, agents in registration order, each richest first.
pub fn ladders_of(engine: &Engine) -> Vec<LadderRow> {
    let c = engine.controller();
    let mut rows = Vec::new();
    for id in c.agent_ids() {
        let (Some(name), Some(ss), Some(quoted), Some(priced), Some(measured)) = (
            c.agent_name(id),
            c.strategies(id),
            c.quoted_costs(id),
            c.calibrated_costs(id),
            c.measured_rungs(id),
        ) else {
            continue;
        };
        let any_measured = measured.iter().any(|&m| m);
        let current = c.current(id).map(|s| s.get());
        let mut agent: Vec<LadderRow> = ss
            .iter()
            .enumerate()
            .map(|(k, s)| LadderRow {
                agent: name.to_string(),
                strategy: s.name.clone(),
                quality: s.quality,
                quoted_ms: quoted[k],
                priced_ms: priced[k],
                evidence: match (measured[k], any_measured) {
                    (true, _) => "measured",
                    (false, true) => "estimated",
                    (false, false) => "quoted",
                },
                current: current == Some(k),
                barred: c.is_barred(id, lanegraph::budget::StrategyIndex(k as u8)),
            })
            .collect();
        agent.sort_by_key(|r| std::cmp::Reverse(r.quality));
        rows.extend(agent);
    }
    rows
}

/// The table (or a line saying there is no agent).
pub fn ladder_table(rows: &[LadderRow]) -> String {
    let mut h = String::from("<h2>Agent ladders: quoted against priced cost</h2><p>Each agent's strategies, richest first: the cost the game quoted at the agent's workload, and what the controller prices it at by the end of the run (its own measurements when <em>measured</em>; interpolated from the measured rungs when <em>estimated</em>). A price far above its quote is a rung the game mispriced. In force: the strategy running at the end.</p>");
    if rows.is_empty() {
        h.push_str("<p class=\"empty\" id=\"ladders\">No agents: the game installed none.</p>");
        return h;
    }
    h.push_str("<table id=\"ladders\"><tr><th>agent</th><th>strategy</th><th>quality</th><th>quoted ms</th><th>priced ms</th><th>priced / quoted</th><th>evidence</th><th>state</th></tr>");
    for r in rows {
        let ratio = if r.quoted_ms > 0.0 {
            format!("{:.1}x", r.priced_ms / r.quoted_ms)
        } else {
            "-".into()
        };
        let state = match (r.current, r.barred) {
            (true, _) => "in force",
            (false, true) => "barred",
            _ => "",
        };
        h.push_str(&format!(
            "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{ratio}</td><td>{}</td><td>{state}</td></tr>",
            if r.current { " class=\"current\"" } else { "" },
            esc(&r.agent),
            esc(&r.strategy),
            r.quality,
            r.quoted_ms,
            r.priced_ms,
            r.evidence,
        ));
    }
    h.push_str("</table>");
    h
}
