//! Histograms with fixed buckets chosen at registration, plus sum and count.
//!
//! Owns: bucket bounds ([`Buckets`]), the sharded bucket cells and their snapshot. Must never:
//! allocate, lock or log on [`Histogram::observe`].
//!
//! # Semantics
//! Bucket `i` counts observations `v <= bounds[i]` not counted by an earlier bucket (OpenMetrics
//! `le`), and a last, implicit `+Inf` bucket counts the rest. `NaN` observations are ignored (they
//! have no bucket and would poison the sum). The count is the sum of the bucket counts, so a
//! snapshot is always self-consistent (`_count` equals the `+Inf` cumulative bucket) even while
//! writers run; the sum is read after the buckets and may run slightly ahead of them then.
//!
//! # Layout
//! Each thread slot (see [`super::shard`]) owns whole cache lines: `bounds.len() + 1` bucket cells
//! then the sum (an `f64` as bits), rounded up to 8-cell lines. The owner of an exclusive slot
//! updates with relaxed load + store; the shared slot uses `fetch_add` and a CAS loop on the sum.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::shard::{self, Slot};
use super::sync::AtomicU64;
use super::RegisterError;

/// Most finite bucket bounds per histogram (each costs 8 bytes per thread slot; 64 covers a
/// 1.25x exponential series from 10 us to 1 s).
pub(crate) const MAX_BUCKETS: usize = 64;

/// Validated, strictly increasing, finite upper bounds (the `+Inf` bucket is implicit).
#[derive(Debug, Clone, PartialEq)]
pub struct Buckets(Arc<[f64]>);

impl Buckets {
    /// Bounds as given; see [`RegisterError::InvalidBuckets`] for the rules.
    pub fn new(bounds: impl Into<Vec<f64>>) -> Result<Self, RegisterError> {
        let bounds: Vec<f64> = bounds.into();
        let fail = |why: String| Err(RegisterError::InvalidBuckets { why });
        if bounds.is_empty() {
            return fail("no bounds given".into());
        }
        if bounds.len() > MAX_BUCKETS {
            return fail(format!("{} bounds given", bounds.len()));
        }
        if let Some(b) = bounds.iter().find(|b| !b.is_finite()) {
            return fail(format!("bound {b} is not finite"));
        }
        if let Some(w) = bounds.windows(2).find(|w| w[0] >= w[1]) {
            return fail(format!("{} is followed by {}", w[0], w[1]));
        }
        Ok(Buckets(bounds.into()))
    }

    /// `count` bounds `start, start*factor, start*factor^2, ...`.
    pub fn exponential(start: f64, factor: f64, count: usize) -> Result<Self, RegisterError> {
        if !(start > 0.0 && factor > 1.0) {
            return Err(RegisterError::InvalidBuckets {
                why: format!(
                    "exponential buckets need start > 0 and factor > 1 (got {start}, {factor})"
                ),
            });
        }
        Self::new(
            (0..count)
                .map(|i| start * factor.powi(i as i32))
                .collect::<Vec<_>>(),
        )
    }

    /// `count` bounds `start, start+width, start+2*width, ...`.
    pub fn linear(start: f64, width: f64, count: usize) -> Result<Self, RegisterError> {
        Self::new(
            (0..count)
                .map(|i| start + width * i as f64)
                .collect::<Vec<_>>(),
        )
    }

    /// Frame and system times in milliseconds: fine around the 60/120/30 Hz targets
    /// (8.33, 16.67, 33.33 ms), coarse beyond 100 ms.
    pub(crate) fn frame_time_ms() -> Self {
        Self::new(vec![
            0.25, 0.5, 1.0, 2.0, 4.0, 6.0, 8.33, 10.0, 12.0, 14.0, 16.67, 20.0, 25.0, 33.33, 50.0,
            66.67, 100.0, 250.0, 1000.0,
        ])
        .expect("constant bounds are valid")
    }

    /// Frame and system times in seconds (OpenMetrics' base unit): `frame_time_ms`
    /// divided by 1000.
    pub(crate) fn frame_time_seconds() -> Self {
        Self::new(
            Self::frame_time_ms()
                .bounds()
                .iter()
                .map(|ms| ms / 1000.0)
                .collect::<Vec<_>>(),
        )
        .expect("constant bounds are valid")
    }

    /// Job times in microseconds: 1 us to ~16 ms, doubling.
    pub(crate) fn job_time_us() -> Self {
        Self::exponential(1.0, 2.0, 15).expect("constant bounds are valid")
    }

    /// The finite upper bounds.
    pub(crate) fn bounds(&self) -> &[f64] {
        &self.0
    }
}

/// Cells per cache line.
const LINE_CELLS: usize = 8;

#[derive(Debug, Default)]
#[repr(align(64))]
struct Line([AtomicU64; LINE_CELLS]);

#[derive(Debug)]
struct Cells {
    buckets: Buckets,
    /// `buckets + 1` counts then the sum, per slot, rounded up to whole lines.
    lines: Box<[Line]>,
    lines_per_slot: usize,
    slots: usize,
}

impl Cells {
    #[inline]
    fn cell(&self, slot: usize, i: usize) -> &AtomicU64 {
        let flat = slot * self.lines_per_slot * LINE_CELLS + i;
        &self.lines[flat / LINE_CELLS].0[flat % LINE_CELLS]
    }
}

/// Observations counted into fixed buckets, with their sum and count.
#[derive(Debug, Clone)]
pub struct Histogram {
    cells: Arc<Cells>,
}

impl Histogram {
    /// The body of [`HistogramHooks::new_detached`](crate::hooks::HistogramHooks::new_detached), which documents it.
    pub(crate) fn new_detached(buckets: Buckets) -> Self {
        Self::with_exclusive_slots(buckets, shard::exclusive_slots())
    }

    /// A histogram laid out for `exclusive` exclusive slots plus the shared one (the loom models
    /// use a small count; everything else uses [`shard::exclusive_slots`]).
    pub(crate) fn with_exclusive_slots(buckets: Buckets, exclusive: usize) -> Self {
        let per_slot = buckets.bounds().len() + 2;
        let lines_per_slot = per_slot.div_ceil(LINE_CELLS);
        let slots = exclusive + 1;
        let lines = (0..lines_per_slot * slots)
            .map(|_| Line::default())
            .collect();
        Histogram {
            cells: Arc::new(Cells {
                buckets,
                lines,
                lines_per_slot,
                slots,
            }),
        }
    }

    /// Records one observation (ignored when `NaN`).
    #[inline]
    pub fn observe(&self, v: f64) {
        if v.is_nan() {
            return;
        }
        let c = &*self.cells;
        let bounds = c.buckets.bounds();
        // Branch-free count of the bounds below `v` (== the `le` bucket, bounds being sorted):
        // observations vary frame to frame, so a binary search mispredicts ~half its branches,
        // and at <= 64 bounds a compare-and-add sweep the compiler vectorises is cheaper.
        let bucket = bounds.iter().map(|b| usize::from(*b < v)).sum::<usize>();
        self.observe_at(shard::current_slot(), bucket, v);
    }

    /// Counts `v` into `bucket` through the cells of `slot` (owned by the caller if exclusive).
    #[inline]
    pub(crate) fn observe_at(&self, slot: Slot, bucket: usize, v: f64) {
        let c = &*self.cells;
        let sum_index = c.buckets.bounds().len() + 1;
        match slot {
            Slot::Exclusive(s) => {
                // Single writer per exclusive slot (see `shard`): load + store loses nothing.
                let n = c.cell(s, bucket);
                n.store(n.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                let sum = c.cell(s, sum_index);
                let next = f64::from_bits(sum.load(Ordering::Relaxed)) + v;
                sum.store(next.to_bits(), Ordering::Relaxed);
            }
            Slot::Shared => {
                let s = c.slots - 1;
                c.cell(s, bucket).fetch_add(1, Ordering::Relaxed);
                let sum = c.cell(s, sum_index);
                let mut cur = sum.load(Ordering::Relaxed);
                loop {
                    let next = (f64::from_bits(cur) + v).to_bits();
                    match sum.compare_exchange_weak(cur, next, Ordering::Relaxed, Ordering::Relaxed)
                    {
                        Ok(_) => break,
                        Err(seen) => cur = seen,
                    }
                }
            }
        }
    }

    /// The bucket layout.
    pub(crate) fn buckets(&self) -> &Buckets {
        &self.cells.buckets
    }

    /// The body of [`HistogramHooks::snapshot`](crate::hooks::HistogramHooks::snapshot), which documents it.
    pub(crate) fn snapshot(&self) -> HistogramSnapshot {
        let c = &*self.cells;
        let n = c.buckets.bounds().len() + 1;
        let mut counts = vec![0u64; n];
        for s in 0..c.slots {
            for (i, total) in counts.iter_mut().enumerate() {
                *total += c.cell(s, i).load(Ordering::Relaxed);
            }
        }
        let sum = (0..c.slots)
            .map(|s| f64::from_bits(c.cell(s, n).load(Ordering::Relaxed)))
            .sum();
        HistogramSnapshot {
            bounds: c.buckets.bounds().to_vec(),
            count: counts.iter().sum(),
            counts,
            sum,
        }
    }

    /// The body of [`HistogramHooks::same_metric`](crate::hooks::HistogramHooks::same_metric), which documents it.
    pub(crate) fn same_metric(&self, other: &Histogram) -> bool {
        Arc::ptr_eq(&self.cells, &other.cells)
    }
}

/// A histogram's totals at one moment.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HistogramSnapshot {
    /// Finite upper bounds.
    pub bounds: Vec<f64>,
    /// Per-bucket (not cumulative) counts; one more than `bounds`, the last for `+Inf`.
    pub counts: Vec<u64>,
    /// Sum of all observations.
    pub sum: f64,
    /// Number of observations (the sum of `counts`).
    pub count: u64,
}

impl HistogramSnapshot {
    /// Cumulative counts, as OpenMetrics `_bucket` samples carry them.
    pub fn cumulative(&self) -> Vec<u64> {
        self.counts
            .iter()
            .scan(0u64, |acc, c| {
                *acc += c;
                Some(*acc)
            })
            .collect()
    }

    /// Nearest-rank estimate of percentile `p` (0..=100): the upper bound of the bucket holding
    /// that rank (`+Inf` for the last bucket), `None` when empty.
    pub fn percentile_upper_bound(&self, p: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((p / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let i = self.cumulative().iter().position(|c| *c >= rank)?;
        Some(self.bounds.get(i).copied().unwrap_or(f64::INFINITY))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_validate() {
        assert!(Buckets::new(vec![]).is_err());
        assert!(Buckets::new(vec![1.0, 1.0]).is_err());
        assert!(Buckets::new(vec![2.0, 1.0]).is_err());
        assert!(Buckets::new(vec![1.0, f64::NAN]).is_err());
        assert!(Buckets::new(vec![0.0; MAX_BUCKETS + 1]).is_err());
        assert!(Buckets::exponential(0.0, 2.0, 3).is_err());
        assert_eq!(
            Buckets::exponential(1.0, 2.0, 3).unwrap().bounds(),
            &[1.0, 2.0, 4.0]
        );
        assert_eq!(
            Buckets::linear(0.0, 5.0, 3).unwrap().bounds(),
            &[0.0, 5.0, 10.0]
        );
        Buckets::frame_time_ms();
        Buckets::job_time_us();
    }

    #[test]
    fn buckets_sum_and_count_are_exact() {
        let h = Histogram::new_detached(Buckets::new(vec![1.0, 2.0, 4.0]).unwrap());
        for v in [0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 4.5, 100.0, f64::NAN, -1.0] {
            h.observe(v);
        }
        let s = h.snapshot();
        // le=1: 0.5, 1.0, -1.0 | le=2: 1.5, 2.0 | le=4: 3.0, 4.0 | +Inf: 4.5, 100
        assert_eq!(s.counts, vec![3, 2, 2, 2]);
        assert_eq!(s.cumulative(), vec![3, 5, 7, 9]);
        assert_eq!(s.count, 9);
        assert_eq!(s.sum, 0.5 + 1.0 + 1.5 + 2.0 + 3.0 + 4.0 + 4.5 + 100.0 - 1.0);
        assert_eq!(
            s.percentile_upper_bound(50.0),
            Some(2.0),
            "rank 5 of 9 is in le=2"
        );
        assert_eq!(
            s.percentile_upper_bound(70.0),
            Some(4.0),
            "rank 7 of 9 is in le=4"
        );
        assert_eq!(s.percentile_upper_bound(100.0), Some(f64::INFINITY));
    }

    #[test]
    fn concurrent_observations_are_all_counted() {
        let h = Histogram::new_detached(Buckets::new(vec![10.0]).unwrap());
        let threads = shard::exclusive_slots() + 3;
        std::thread::scope(|s| {
            for t in 0..threads {
                let h = h.clone();
                s.spawn(move || {
                    for _ in 0..5_000 {
                        h.observe(if t % 2 == 0 { 1.0 } else { 20.0 });
                    }
                });
            }
        });
        let s = h.snapshot();
        let low = threads.div_ceil(2) as u64 * 5_000;
        let high = (threads / 2) as u64 * 5_000;
        assert_eq!(s.counts, vec![low, high]);
        assert_eq!(s.sum, low as f64 * 1.0 + high as f64 * 20.0);
    }
}
