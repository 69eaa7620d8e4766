//! The run record: what every frame measured, kept for the summary, the report and the exports.
//!
//! Owns: [`RunRecord`] and its per-frame rows, the per-system samples, and the percentile
//! helper. Must never: be written from anywhere but the owner's end-of-frame step, or hold
//! anything that enters world state.

use std::collections::BTreeMap;

/// One frame's figures.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FrameRow {
    /// Frame number (1-based).
    pub frame: u64,
    /// Owner-thread wall time of `frame()`, ms.
    pub frame_ms: f64,
    /// The controller's frame-time target, ms.
    pub target_ms: f64,
    /// Fixed steps run.
    pub steps: u32,
    /// Time in the physics hook, ms.
    pub physics_ms: f64,
    /// Live heap bytes after the frame (0 without the tracking allocator).
    pub memory_bytes: i64,
    /// Busy share of each lane over the frame, 0..1, in plan order.
    pub lane_busy: Vec<f64>,
    /// The budget multiplier.
    pub multiplier: f64,
}

/// Everything recorded over a run.
#[derive(Debug, Clone, Default)]
pub struct RunRecord {
    /// One row per frame.
    pub frames: Vec<FrameRow>,
    /// Per system: every run's time, ns (in schedule order of first appearance).
    pub system_samples: BTreeMap<String, Vec<u64>>,
    /// Per system: its budget, ms.
    pub system_budgets: BTreeMap<String, f64>,
}

/// Nearest-rank percentile `p` (0..=100) of `values` (unsorted); `None` when empty.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    Some(v[rank.min(v.len()) - 1])
}

#[cfg(test)]
mod tests {
    #[test]
    fn nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(super::percentile(&v, 50.0), Some(50.0));
        assert_eq!(super::percentile(&v, 99.0), Some(99.0));
        assert_eq!(super::percentile(&[3.0], 99.0), Some(3.0));
        assert_eq!(super::percentile(&[], 50.0), None);
    }
}
