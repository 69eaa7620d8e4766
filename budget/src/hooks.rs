//! What the runtime, its tools and its tests call on the controller and no game needs: the
//! per-frame tick an engine drives, replay of a recording, and the arbitration internals the
//! tests read (cost fits, bars, the death spiral). `lanegraph` re-exports this crate whole only
//! as `lanegraph::hooks::budget`; a game's `lanegraph::budget` leaves it out.
//!
//! Must never hold logic of its own: each method is the controller's, moved behind a trait so
//! a game's view of `Controller` is the dozen calls it makes.

pub use crate::controller::ControllerDriver;
pub use crate::cost_model::{CostLawHooks, CostModel, WINDOW as COST_MODEL_WINDOW};
pub use crate::record::Recording;

/// An agent id's registration index, for the runtime's per-agent tables (a game keys its own
/// tables on the `AgentId` itself: it is `Ord` and `Hash`).
pub trait AgentIdHooks {
    /// The registration index (0 for the first agent registered).
    fn index(self) -> usize;

    /// The id of the agent registered `index`-th (the simulator registers in scenario order);
    /// `None` past the id space.
    fn from_index(index: usize) -> Option<Self>
    where
        Self: Sized;
}

impl AgentIdHooks for crate::AgentId {
    fn index(self) -> usize {
        crate::AgentId::index(self)
    }

    fn from_index(index: usize) -> Option<Self> {
        u16::try_from(index).ok().map(crate::AgentId)
    }
}
