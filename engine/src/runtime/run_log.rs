//! The run log: what a replay needs of a run (its decisions and its inputs), in the shape a
//! `summary.json` holds them.
//!
//! Owns: [`DecisionEntry`] (the one row type decisions are written and replayed with) and
//! [`RunLog`]. Must never: hold a figure that is not needed to replay (those are the summary's).

use lanegraph_budget::Decision;
use serde::{Deserialize, Serialize};

#[cfg(doc)]
use crate::Engine;

/// One strategy decision (the controller's, or a manual pin): the one row type a run log is
/// written with and read back from ([`Engine::replay`]). Made at the end of frame
/// `frame`, it takes effect from frame `frame + 1`. A decision to replay needs `frame`,
/// `agent` and `to`: `DecisionEntry { frame: 3, agent: "physics".into(), to: "half".into(),
/// ..Default::default() }`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionEntry {
    /// Frame decided in (0: before the first frame).
    pub frame: u64,
    /// Agent.
    pub agent: String,
    /// From strategy (informative; a replay only needs `to`).
    #[serde(default)]
    pub from: String,
    /// To strategy.
    pub to: String,
    /// Why (informative).
    #[serde(default)]
    pub reason: String,
}

/// What a replay needs of a run: its decisions and its inputs. Reads straight from a
/// `summary.json` (other keys are ignored): `serde_json::from_str::<RunLog>(&text)`, then
/// [`Engine::replay`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunLog {
    /// Every decision, in frame order.
    pub decisions: Vec<DecisionEntry>,
    /// Every input handed to the world, in frame order.
    #[serde(default)]
    pub inputs: Vec<crate::input::RecordedInput>,
}

impl From<&Decision> for DecisionEntry {
    fn from(d: &Decision) -> Self {
        DecisionEntry {
            frame: d.frame,
            agent: d.agent_name.clone(),
            from: d.from_name.clone(),
            to: d.to_name.clone(),
            reason: d.reason.clone(),
        }
    }
}
