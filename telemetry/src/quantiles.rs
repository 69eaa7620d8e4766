//! Percentiles: the one definition the runtime, the demo's summary and report, and the benches
//! share.
//!
//! Owns: the nearest-rank [`percentile`] of a sample set, and [`LogHistogram`], a bounded
//! streaming estimate of the same percentiles over any number of samples (a whole run).
//! Must never: allocate in [`LogHistogram::record`], or report a percentile further from the
//! exact nearest-rank one than [`LogHistogram::RELATIVE_ERROR`] (or half a unit, for values
//! below 64 units).

/// Nearest-rank percentile `p` (0..=100) of `values` (unsorted, unchanged); `None` when empty.
///
/// Rank `ceil(p / 100 * n)` of the sorted values (at least 1): p50 of 1..=100 is 50, p99 is 99.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    Some(v[rank(p, v.len()) - 1])
}

/// The 1-based nearest rank of percentile `p` (0..=100, clamped) among `n` samples:
/// `ceil(p / 100 * n)`, at least 1 and at most `n`. Every percentile in lanegraph is this rank.
pub fn rank(p: f64, n: usize) -> usize {
    let r = ((p.clamp(0.0, 100.0) / 100.0) * n as f64).ceil() as usize;
    r.clamp(1, n.max(1))
}

/// Sub-buckets per power of two: bucket width is at most 1/64 of its lower bound.
const SUB_BITS: u32 = 6;
const SUB: usize = 1 << SUB_BITS;
/// Octaves covered above the unit: values up to `unit * 2^OCTAVES`.
const OCTAVES: usize = 40;

/// A streaming histogram with logarithmic buckets: records any number of non-negative samples
/// in fixed memory (about 10 KiB) and answers nearest-rank percentiles within
/// [`Self::RELATIVE_ERROR`] of the exact value.
///
/// `unit` is the resolution: below 64 units the buckets are one unit wide (error at most half
/// a unit), above it each power of two has 64 buckets (relative error at most 1/128), up to
/// `unit * 2^46`; larger values share the last bucket and report as the largest seen. The minimum and maximum are exact, and a
/// percentile is never reported outside them.
#[derive(Debug, Clone)]
pub struct LogHistogram {
    unit: f64,
    per_unit: f64,
    counts: Vec<u32>,
    n: u64,
    sum: f64,
    min: f64,
    max: f64,
}

impl LogHistogram {
    /// The largest relative distance between a reported percentile and the exact one, for
    /// values of at least 64 units: half a bucket's width, 1/128.
    pub const RELATIVE_ERROR: f64 = 1.0 / (2 * SUB) as f64;

    /// An empty histogram counting in units of `unit` (> 0; the smallest difference that
    /// matters).
    pub fn new(unit: f64) -> LogHistogram {
        LogHistogram {
            unit: if unit > 0.0 && unit.is_finite() {
                unit
            } else {
                1.0
            },
            per_unit: if unit > 0.0 && unit.is_finite() {
                1.0 / unit
            } else {
                1.0
            },
            counts: vec![0; (OCTAVES + 1) * SUB],
            n: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: 0.0,
        }
    }

    /// Counts one sample (negative and non-finite samples count as zero).
    #[inline]
    pub fn record(&mut self, value: f64) {
        let v = if value.is_finite() && value > 0.0 {
            value
        } else {
            0.0
        };
        let i = self.bucket(v);
        self.counts[i] = self.counts[i].saturating_add(1);
        self.n += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// The bucket of `v` (>= 0): integer arithmetic on whole units, so a bucket's range
    /// `[lo, hi)` (whole units) holds every value whose whole part it holds.
    #[inline]
    fn bucket(&self, v: f64) -> usize {
        // `as` saturates: huge values land in the overflow bucket below.
        let u = (v * self.per_unit) as u64;
        if u < SUB as u64 {
            // Below 2^SUB_BITS units the buckets are one unit wide (linear).
            return u as usize;
        }
        let bits = 63 - u.leading_zeros();
        let octave = (bits - SUB_BITS + 1) as usize;
        if octave > OCTAVES {
            return self.counts.len() - 1;
        }
        // Position within the octave: the SUB_BITS bits below the leading one.
        let within = (u >> (bits - SUB_BITS)) as usize - SUB;
        octave * SUB + within
    }

    /// The range `[lo, hi)` of bucket `i`, in value units.
    fn bounds(&self, i: usize) -> (f64, f64) {
        let (octave, within) = (i / SUB, i % SUB);
        if octave == 0 {
            return (within as f64 * self.unit, (within + 1) as f64 * self.unit);
        }
        let width = (1u64 << (octave - 1)) as f64;
        let lo = (SUB + within) as f64 * width;
        (lo * self.unit, (lo + width) * self.unit)
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// Mean of the samples (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum / self.n as f64
        }
    }

    /// The largest sample (0 when empty).
    pub fn max(&self) -> f64 {
        self.max
    }

    /// The smallest sample (0 when empty).
    pub fn min(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.min
        }
    }

    /// Samples strictly above `threshold`, counted to bucket precision (a bucket that holds
    /// the threshold counts as above when its midpoint is).
    pub fn count_above(&self, threshold: f64) -> u64 {
        self.counts
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c > 0)
            .filter(|&(i, _)| {
                let (lo, hi) = self.bounds(i);
                (lo + hi) / 2.0 > threshold
            })
            .map(|(_, &c)| u64::from(c))
            .sum()
    }

    /// Nearest-rank percentile `p` (0..=100): the midpoint of the bucket holding that rank,
    /// clamped to the exact minimum and maximum. `None` when empty.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let want = rank(p, self.n.min(usize::MAX as u64) as usize) as u64;
        // The extreme ranks are known exactly.
        if want <= 1 {
            return Some(self.min());
        }
        if want >= self.n {
            return Some(self.max);
        }
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += u64::from(c);
            if seen >= want {
                if i == self.counts.len() - 1 {
                    // The overflow bucket has no upper bound: its values report as the largest.
                    return Some(self.max);
                }
                let (lo, hi) = self.bounds(i);
                return Some(((lo + hi) / 2.0).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), Some(50.0));
        assert_eq!(percentile(&v, 99.0), Some(99.0));
        assert_eq!(percentile(&v, 100.0), Some(100.0));
        assert_eq!(percentile(&v, 0.0), Some(1.0));
        assert_eq!(percentile(&[3.0], 99.0), Some(3.0));
        assert_eq!(percentile(&[], 50.0), None);
    }

    /// A deterministic spread of values over six decades, with a heavy tail.
    fn samples(n: usize) -> Vec<f64> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let u = (x >> 11) as f64 / (1u64 << 53) as f64;
                0.002 * 10f64.powf(6.0 * u * u)
            })
            .collect()
    }

    #[test]
    fn streaming_percentiles_stay_within_the_stated_error() {
        let v = samples(50_000);
        let mut h = LogHistogram::new(0.001);
        for &x in &v {
            h.record(x);
        }
        assert_eq!(h.count(), v.len() as u64);
        for p in [0.0, 1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 100.0] {
            let exact = percentile(&v, p).unwrap();
            let est = h.percentile(p).unwrap();
            let allowed = (exact * LogHistogram::RELATIVE_ERROR).max(0.001 / 2.0) + 1e-12;
            assert!(
                (est - exact).abs() <= allowed,
                "p{p}: {est} vs exact {exact} (allowed {allowed})"
            );
        }
        assert_eq!(h.max(), v.iter().copied().fold(0.0, f64::max));
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        assert!((h.mean() - mean).abs() / mean < 1e-9);
    }

    #[test]
    fn counts_above_a_threshold_and_survives_odd_samples() {
        let mut h = LogHistogram::new(1.0);
        assert_eq!(h.percentile(50.0), None);
        for v in [1.0, 2.0, 3.0, 1000.0, 2000.0, -5.0, f64::NAN, 1e300] {
            h.record(v);
        }
        assert_eq!(h.count(), 8);
        assert_eq!(h.count_above(500.0), 3);
        assert_eq!(h.percentile(100.0), Some(1e300));
        assert_eq!(h.percentile(0.0), Some(0.0));
    }
}
