//! Helpers shared by the jobs integration tests.
#![allow(dead_code)]

use lanegraph_jobs::{LaneKind, LanePlan, Lanes};

/// A plan with `physics`, `render` and `asset` lanes of the given worker counts, unpinned
/// (tests must not depend on the machine's affinity rules).
pub fn lanes(physics: usize, render: usize, asset: usize) -> Lanes {
    let plan = LanePlan::empty(&[0])
        .with_lane("physics", LaneKind::FrameCritical, vec![None; physics])
        .unwrap()
        .with_lane("render", LaneKind::FrameCritical, vec![None; render])
        .unwrap()
        .with_lane("asset", LaneKind::Background, vec![None; asset])
        .unwrap();
    Lanes::start(plan).unwrap()
}
