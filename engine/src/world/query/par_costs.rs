//! When a parallel query splits: the costs it learns per call site (ns per row, whether past
//! splits paid) and the outcome of a run ([`ParRun`], [`SerialReason`]).
//!
//! Owns: the per-site cost model and the split decision. Must never: split work predicted
//! below twice [`PAR_CHUNK_MIN_NS`], or read a clock itself (the query times its runs).

use std::panic::Location;

/// The least predicted work (ns) a parallel query's chunk holds; a query splits only when it
/// predicts at least twice this.
pub const PAR_CHUNK_MIN_NS: u64 = 100_000;

/// The least predicted work a fresh call site splits.
pub(crate) const SPLIT_MIN_NS: f64 = 2.0 * PAR_CHUNK_MIN_NS as f64;

/// What a [`Query::par_for_each`](crate::world::Query::par_for_each) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParRun {
    /// Entities visited.
    pub visited: usize,
    /// Chunks it ran as (1: on the caller).
    pub chunks: usize,
    /// Why it ran on the caller, when it did.
    pub serial: Option<SerialReason>,
}

/// Why a parallel query ran on the calling thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SerialReason {
    /// The world has no parallel lane (a bare `World`, or its engine is gone):
    /// [`World::set_parallel_lane`](crate::hooks::WorldHooks::set_parallel_lane) gives it one; inside an engine it is the physics lane.
    NoLane,
    /// Fewer than two threads serve the lane (said of a run that would otherwise split: a
    /// run too small to split says that instead).
    OneThread,
    /// One of the call site's first runs: they are timed to learn the cost per row.
    Learning,
    /// The predicted work is under the call site's split threshold.
    TooLittleWork {
        /// The predicted work, in nanoseconds.
        predicted_ns: u64,
        /// The call site's threshold in force, in nanoseconds: at first twice
        /// [`PAR_CHUNK_MIN_NS`], doubled each time this site's splits stopped paying (they
        /// averaged more than 95 % of the time the caller alone would take), lowered again by
        /// a split that paid.
        threshold_ns: u64,
        /// True when past splits that did not pay raised the threshold above its start.
        raised: bool,
    },
    /// The site splits as a rule, and this run is its periodic run alone on the caller, which
    /// keeps its serial cost fresh (its 8th, 16th and 32nd runs, then one in 64).
    Probing {
        /// The predicted work, in nanoseconds.
        predicted_ns: u64,
    },
}

/// What each parallel query call site learned about its cost.
#[derive(Debug, Default)]
pub(crate) struct ParCosts {
    pub(crate) sites: Vec<ParSite>,
    pub(crate) noted_no_lane: bool,
}

#[derive(Debug)]
pub(crate) struct ParSite {
    pub(crate) at: &'static Location<'static>,
    /// Exponential average of the cost per row measured on the caller alone (what a split is
    /// judged against).
    pub(crate) ns_per_row: f64,
    /// Serial runs timed so far (the first [`LEARN_RUNS`] are the learning runs).
    pub(crate) samples: u32,
    pub(crate) runs: u64,
    /// The least predicted work this site splits: starts at twice [`PAR_CHUNK_MIN_NS`],
    /// doubles past the predicted work when the site's splits stop paying (`split_ratio` above
    /// [`SPLIT_WORTH`]: the split goes back to the caller), and falls to the predicted work of
    /// a split (or a probe, every [`PROBE_EVERY`] runs) that beat the caller alone.
    pub(crate) split_min_ns: f64,
    /// Exponential average (weight [`SPLIT_RATIO_WEIGHT`]) of a split run's wall time over the
    /// serial time predicted for it: one preempted run moves it a little, a split that never
    /// pays moves it past [`SPLIT_WORTH`] in a few runs.
    pub(crate) split_ratio: f64,
}

/// A site whose splits average more than this share of the serial time stops splitting: a
/// split must save at least 5 %.
pub(crate) const SPLIT_WORTH: f64 = 0.95;
/// The weight of a new split run in `split_ratio`.
pub(crate) const SPLIT_RATIO_WEIGHT: f64 = 0.3;
/// The most one split run counts as in `split_ratio`: from the start value, three splits in a
/// row at or past this back a site off (0.6 -> 0.78 -> 0.91 -> 1.0), one does not.
pub(crate) const SPLIT_RATIO_CAP: f64 = 1.2;
/// Where `split_ratio` starts (and restarts after a back-off): an optimistic guess, so the
/// first few splits are judged on their own evidence.
pub(crate) const SPLIT_RATIO_START: f64 = 0.6;
/// A site held on the caller by its threshold, with at least the base threshold of work, tries
/// a split once in this many runs (work and machines change).
pub(crate) const PROBE_EVERY: u64 = 64;
/// A site's first runs are serial and timed, and the least cost per row among them is its
/// first estimate: a first run alone pays the cold caches and page faults of a fresh world
/// (measured at twice the warm cost at 100k rows), and an estimate that high makes a split
/// look like it pays when it does not.
pub(crate) const LEARN_RUNS: u32 = 3;

impl ParCosts {
    pub(crate) fn site(&mut self, at: &'static Location<'static>) -> &mut ParSite {
        // One call site's `Location` is usually one static: the pointer compare settles it
        // without comparing the file name.
        let same = |s: &ParSite| {
            std::ptr::eq(s.at, at)
                || (s.at.line() == at.line()
                    && s.at.column() == at.column()
                    && s.at.file() == at.file())
        };
        match self.sites.iter().position(same) {
            Some(i) => &mut self.sites[i],
            None => {
                self.sites.push(ParSite {
                    at,
                    ns_per_row: f64::NAN,
                    samples: 0,
                    runs: 0,
                    split_min_ns: SPLIT_MIN_NS,
                    split_ratio: SPLIT_RATIO_START,
                });
                self.sites.last_mut().expect("just pushed")
            }
        }
    }
}

impl ParSite {
    /// Judges a split run that took `wall_ns` where the caller alone was predicted to take
    /// `predicted_ns`.
    pub(crate) fn judge_split(&mut self, wall_ns: u64, predicted_ns: f64) {
        let ratio = wall_ns as f64 / predicted_ns;
        // One run preempted by another process can take several times its work; capped, it
        // moves the average a step, and only a run of bad splits backs the site off.
        self.split_ratio += SPLIT_RATIO_WEIGHT * (ratio.min(SPLIT_RATIO_CAP) - self.split_ratio);
        if self.split_ratio > SPLIT_WORTH {
            self.split_min_ns = (2.0 * predicted_ns).max(2.0 * self.split_min_ns);
            self.split_ratio = SPLIT_RATIO_START;
        } else if ratio < 1.0 {
            self.split_min_ns = self.split_min_ns.min(predicted_ns).max(SPLIT_MIN_NS);
        }
    }

    /// Why this run, predicted at `predicted_ns`, stays on the caller (`None`: it splits).
    pub(crate) fn serial_reason(&self, predicted_ns: f64) -> Option<SerialReason> {
        if self.splits(predicted_ns) {
            return None;
        }
        let predicted = predicted_ns as u64;
        Some(if predicted_ns >= self.split_min_ns {
            SerialReason::Probing {
                predicted_ns: predicted,
            }
        } else {
            SerialReason::TooLittleWork {
                predicted_ns: predicted,
                threshold_ns: self.split_min_ns as u64,
                raised: self.split_min_ns > SPLIT_MIN_NS,
            }
        })
    }

    /// Whether this run, predicted at `predicted_ns`, splits.
    fn splits(&self, predicted_ns: f64) -> bool {
        // A young site probes sooner (its 8th, 16th and 32nd runs), then once in
        // `PROBE_EVERY`: the serial cost it learned in its first runs is often a cold one, and
        // a split judged against a serial time too high looks like it pays when it does not.
        let run = self.runs + 1;
        let probe =
            run % PROBE_EVERY == 0 || ((8..PROBE_EVERY).contains(&run) && run.is_power_of_two());
        // Once in `PROBE_EVERY` runs the usual choice is reversed: a held-back site tries a
        // split, a splitting site runs alone to refresh its serial cost.
        (predicted_ns >= self.split_min_ns) != (probe && predicted_ns >= SPLIT_MIN_NS)
    }

    pub(crate) fn learn(&mut self, ns: u64, rows: usize) {
        if rows == 0 {
            return;
        }
        let sample = ns as f64 / rows as f64;
        self.ns_per_row = if self.ns_per_row.is_nan() {
            sample
        } else if self.samples < LEARN_RUNS {
            self.ns_per_row.min(sample)
        } else {
            // A faster run is believed at once (the estimate a split must beat stays the
            // caller's best), a slower one moves it a quarter of the way.
            (0.75 * self.ns_per_row + 0.25 * sample).min(sample)
        };
        self.samples = self.samples.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> ParSite {
        ParSite {
            at: Location::caller(),
            ns_per_row: f64::NAN,
            samples: 0,
            runs: 0,
            split_min_ns: SPLIT_MIN_NS,
            split_ratio: SPLIT_RATIO_START,
        }
    }

    #[test]
    fn a_cold_start_estimate_is_refreshed_by_early_probes() {
        let mut s = site();
        // Three cold learning runs at 2.0-2.4 ns per row over 1M rows.
        for ns in [2_400_000, 2_000_000, 2_200_000] {
            s.learn(ns, 1_000_000);
            s.runs += 1;
        }
        assert_eq!(s.ns_per_row, 2.0, "the least of the learning runs");
        let predicted = s.ns_per_row * 1e6;
        // Runs 4..7 split; the 8th runs alone (a probe), then 9..15 split, the 16th alone.
        let choices: Vec<bool> = (3..16)
            .map(|runs| {
                s.runs = runs;
                s.splits(predicted)
            })
            .collect();
        let alone: Vec<u64> = (3..16u64).filter(|&r| !choices[(r - 3) as usize]).collect();
        assert_eq!(alone, vec![7, 15], "probes on the 8th and 16th runs");
        // The probe ran warm, at 1.0 ns per row: believed at once, not averaged in.
        s.learn(1_000_000, 1_000_000);
        assert_eq!(s.ns_per_row, 1.0);
        // A slower run moves the estimate a quarter of the way.
        s.learn(2_000_000, 1_000_000);
        assert_eq!(s.ns_per_row, 1.25);
        // Past 64 runs, a probe once in 64.
        let late: Vec<u64> = (64..200u64)
            .filter(|&r| {
                s.runs = r;
                !s.splits(1e9)
            })
            .collect();
        assert_eq!(late, vec![127, 191]);
    }
}
