//! The run's adaptation in figures, for any game: how often the controller probed a rung that
//! overran, how often it changed its mind after settling, and how many frames went over the
//! budget right after a change (the hitches adaptation itself caused).
//!
//! Owns: [`AdaptationEntry`] and [`AgentAdaptation`] (the `adaptation` block of
//! `summary.json`) and how they are read off the decision log. Must never: decide anything or
//! read a clock (it counts what the controller and the run record already hold).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::run_log::DecisionEntry;

/// Frames after a change within which a frame over the budget counts against it.
pub(crate) const AFTER_A_DECISION_FRAMES: u64 = 5;

/// One agent's adaptation over the run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentAdaptation {
    /// Upgrades undone within their dwell because the frame went over its budget (the
    /// controller's own word: the undo names the rung that overran).
    pub overrun_probes: u64,
    /// The frame the agent first settled at: the end of its first window of two seconds of
    /// frames without a change (`null`: it never settled).
    pub settled_at: Option<u64>,
    /// Changes after that first settle (pins excluded: they are the game's).
    pub flips_after_settling: u64,
}

/// The `adaptation` block: every agent the controller has (the built-in ones the game
/// installed and its own), and the frames over budget right after a change.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AdaptationEntry {
    /// Per agent, by name.
    pub agents: BTreeMap<String, AgentAdaptation>,
    /// Frames over the frame budget within 5 frames after a frame whose tick changed a
    /// strategy.
    pub frames_over_budget_after_a_decision: u64,
    /// The per-agent figures saw every decision of the run. False once the controller's log
    /// dropped its oldest (it keeps 1,024): the figures then cover the decisions kept, and
    /// `settled_at` may be later than it was.
    #[serde(default)]
    pub complete: bool,
}

impl std::fmt::Display for AdaptationEntry {
    /// `physics 0 overrun probes, 1 flip after settling; ...; 3 frames over budget within 5
    /// frames of a change`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (name, a) in &self.agents {
            let settled = match a.settled_at {
                Some(at) => format!("settled at frame {at}"),
                None => "never settled".into(),
            };
            write!(
                f,
                "{name} {} overrun probes, {} flips after settling ({settled}); ",
                a.overrun_probes, a.flips_after_settling
            )?;
        }
        write!(
            f,
            "{} frames over budget within {AFTER_A_DECISION_FRAMES} frames of a change",
            self.frames_over_budget_after_a_decision
        )
    }
}

/// Overrun probes and flips after settling an agent may make per minute and still be steady.
pub(crate) const STEADY_PER_MINUTE: f64 = 1.0;

impl AdaptationEntry {
    /// The verdict's clause on adaptation over a run of `minutes`: `steady` when no agent
    /// made more than [`STEADY_PER_MINUTE`] overrun probes or flips after settling per minute
    /// and no frame went over the budget right after a change; else `unsteady`, naming what.
    pub(crate) fn verdict(&self, minutes: f64) -> String {
        let minutes = minutes.max(1.0 / 60.0);
        let mut over = Vec::new();
        for (name, a) in &self.agents {
            for (what, n) in [
                ("overrun probes", a.overrun_probes),
                ("flips after settling", a.flips_after_settling),
            ] {
                let rate = n as f64 / minutes;
                if rate > STEADY_PER_MINUTE {
                    over.push(format!(
                        "{name} {n} {what} ({rate:.1}/min > {STEADY_PER_MINUTE})"
                    ));
                }
            }
        }
        if self.frames_over_budget_after_a_decision > 0 {
            over.push(format!(
                "{} frames over budget within {AFTER_A_DECISION_FRAMES} frames of a change",
                self.frames_over_budget_after_a_decision
            ));
        }
        if over.is_empty() {
            let (probes, flips) = self.agents.values().fold((0, 0), |(p, f), a| {
                (p + a.overrun_probes, f + a.flips_after_settling)
            });
            format!(
                "adaptation steady: {probes} overrun probes, {flips} flips after settling (<= {STEADY_PER_MINUTE}/min per agent), no frame over budget after a change"
            )
        } else {
            format!("adaptation unsteady: {}", over.join(", "))
        }
    }
}

/// Reads the figures off the decision log: `agents` names every agent (so one that never
/// moved reports zeros), `frames` the frames run, `settle_frames` the quiet window that counts
/// as settled (two seconds of frames at the target rate). The run summary reads a run's
/// figures with it; the `budget` bench reads a simulated run's with it, so both count alike.
pub fn adaptation_of<'a>(
    agents: impl Iterator<Item = &'a str>,
    decisions: &[DecisionEntry],
    frames: u64,
    settle_frames: u64,
    frames_over_budget_after_a_decision: u64,
    complete: bool,
) -> AdaptationEntry {
    let mut out = AdaptationEntry {
        agents: agents
            .map(|a| (a.to_string(), AgentAdaptation::default()))
            .collect(),
        frames_over_budget_after_a_decision,
        complete,
    };
    for (name, entry) in &mut out.agents {
        let changes: Vec<&DecisionEntry> = decisions
            .iter()
            .filter(|d| &d.agent == name && !d.reason.starts_with("manual"))
            .collect();
        entry.overrun_probes = changes
            .iter()
            .filter(|d| d.reason.contains("` overran ("))
            .count() as u64;
        let mut quiet_from = 0;
        let mut settled = None;
        for d in &changes {
            if d.frame >= quiet_from + settle_frames {
                settled = Some(quiet_from + settle_frames);
                break;
            }
            quiet_from = d.frame;
        }
        if settled.is_none() && frames >= quiet_from + settle_frames {
            settled = Some(quiet_from + settle_frames);
        }
        entry.settled_at = settled;
        entry.flips_after_settling = settled.map_or(0, |at| {
            changes.iter().filter(|d| d.frame >= at).count() as u64
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(frame: u64, agent: &str, reason: &str) -> DecisionEntry {
        DecisionEntry {
            frame,
            agent: agent.into(),
            reason: reason.into(),
            ..DecisionEntry::default()
        }
    }

    #[test]
    fn the_verdict_clause_names_what_is_unsteady() {
        let mut a = AdaptationEntry::default();
        a.agents
            .insert("physics".into(), AgentAdaptation::default());
        assert!(
            a.verdict(1.0)
                .starts_with("adaptation steady: 0 overrun probes"),
            "{}",
            a.verdict(1.0)
        );
        a.agents.get_mut("physics").unwrap().flips_after_settling = 3;
        let v = a.verdict(1.0);
        assert_eq!(
            v,
            "adaptation unsteady: physics 3 flips after settling (3.0/min > 1)"
        );
        // Three flips over five minutes are steady.
        assert!(a.verdict(5.0).starts_with("adaptation steady"));
        a.frames_over_budget_after_a_decision = 2;
        assert!(a
            .verdict(5.0)
            .ends_with("2 frames over budget within 5 frames of a change"));
    }

    #[test]
    fn probes_settling_and_flips_are_counted_per_agent() {
        let log = [
            d(3, "physics", "CPU pressure: ..."),
            d(50, "physics", "headroom: ..."),
            d(51, "physics", "CPU pressure: ...; `full` overran (28.0 ms measured, 14.1 ms available): barred 2 s"),
            // Quiet from 51 to 171: settled at 171.
            d(400, "physics", "headroom: ..."),
            d(900, "physics", "manual: pinned by the game"),
            d(10, "render", "GPU pressure: ..."),
        ];
        let a = adaptation_of(
            ["physics", "render", "asset"].into_iter(),
            &log,
            1_000,
            120,
            2,
            true,
        );
        let p = &a.agents["physics"];
        assert_eq!(p.overrun_probes, 1);
        assert_eq!(p.settled_at, Some(171));
        assert_eq!(
            p.flips_after_settling, 1,
            "the pin is the game's, not a flip"
        );
        assert_eq!(a.agents["render"].settled_at, Some(130));
        assert_eq!(a.agents["render"].flips_after_settling, 0);
        assert_eq!(
            a.agents["asset"].settled_at,
            Some(120),
            "never moved: settled at once"
        );
        assert_eq!(a.frames_over_budget_after_a_decision, 2);
        // A run too short to have a quiet window never settled.
        let short = adaptation_of(["physics"].into_iter(), &log[..1], 60, 120, 0, true);
        assert_eq!(short.agents["physics"].settled_at, None);
    }
}
