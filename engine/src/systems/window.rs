//! The rolling timing window: the last `N` samples of one system, and their statistics.
//!
//! Owns: [`RollingWindow`] (a fixed ring of nanosecond samples) and [`WindowStats`]
//! (nearest-rank percentiles). Must never: allocate (the ring is inline, statistics sort a stack
//! copy) or forget that samples were dropped (`total_recorded` keeps counting).
//!
//! Contract: capacity fixed at construction (`N`);
//! `record` is O(1); recording beyond the capacity drops the oldest sample; `total_recorded`
//! counts every sample ever recorded, so truncation is observable; a zero sample is a legitimate
//! reading. Percentiles use the nearest-rank definition: the `p`-th percentile of `n` sorted
//! samples is the sample at 1-based rank `ceil(p / 100 * n)` (at least 1).

/// Samples kept per system: about 1.1 s of ticks at the default 60 Hz step (raising it is a
/// design decision, not a knob).
pub const SYSTEM_TIMING_WINDOW_SAMPLES: usize = 64;

/// A fixed-capacity ring of the last `N` samples (nanoseconds).
#[derive(Debug, Clone)]
pub struct RollingWindow<const N: usize> {
    samples: [u64; N],
    /// Where the next sample goes.
    next: usize,
    /// Samples stored (`<= N`).
    len: usize,
    /// Samples ever recorded.
    total: u64,
}

impl<const N: usize> Default for RollingWindow<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> RollingWindow<N> {
    /// An empty window. `N` must be at least 1 (checked at compile time).
    pub const fn new() -> Self {
        const { assert!(N > 0, "a rolling window needs room for at least one sample") };
        RollingWindow {
            samples: [0; N],
            next: 0,
            len: 0,
            total: 0,
        }
    }

    /// Records one sample, dropping the oldest when full. O(1), no allocation.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.samples[self.next] = ns;
        self.next += 1;
        if self.next == N {
            self.next = 0;
        }
        if self.len < N {
            self.len += 1;
        }
        self.total += 1;
    }

    /// The fixed capacity `N`.
    pub const fn capacity(&self) -> usize {
        N
    }

    /// Samples stored now (`min(total_recorded, N)`).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was ever recorded.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Samples ever recorded, including those the window has since dropped.
    pub fn total_recorded(&self) -> u64 {
        self.total
    }

    /// The newest sample.
    pub fn latest(&self) -> Option<u64> {
        (self.len > 0).then(|| self.samples[(self.next + N - 1) % N])
    }

    /// The stored samples, oldest first.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        let start = (self.next + N - self.len) % N;
        (0..self.len).map(move |k| self.samples[(start + k) % N])
    }

    /// Statistics over the stored samples; `None` when empty. Cold path: O(N log N) sort of a
    /// stack copy, no allocation.
    pub fn stats(&self) -> Option<WindowStats> {
        if self.len == 0 {
            return None;
        }
        let mut sorted = [0u64; N];
        let sorted = &mut sorted[..self.len];
        sorted.copy_from_slice(&self.samples[..self.len]);
        sorted.sort_unstable();
        let sum: u128 = sorted.iter().map(|&v| u128::from(v)).sum();
        Some(WindowStats {
            count: self.len,
            total_recorded: self.total,
            min_ns: sorted[0],
            max_ns: sorted[self.len - 1],
            mean_ns: (sum / self.len as u128) as u64,
            p50_ns: nearest_rank(sorted, 50.0),
            p90_ns: nearest_rank(sorted, 90.0),
            p99_ns: nearest_rank(sorted, 99.0),
        })
    }

    /// The nearest-rank `p`-th percentile (`0 < p <= 100`); `None` when empty or `p` is out of
    /// range or not finite.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        if self.len == 0 || !(p > 0.0 && p <= 100.0) {
            return None;
        }
        let mut sorted = [0u64; N];
        let sorted = &mut sorted[..self.len];
        sorted.copy_from_slice(&self.samples[..self.len]);
        sorted.sort_unstable();
        Some(nearest_rank(sorted, p))
    }
}

/// Nearest rank over a sorted, non-empty slice: rank `ceil(p/100 * n)`, clamped to `1..=n`.
fn nearest_rank(sorted: &[u64], p: f64) -> u64 {
    sorted[lanegraph_telemetry::quantiles::rank(p, sorted.len()) - 1]
}

/// Summary of a window (all nanoseconds; `_ms` helpers convert).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowStats {
    /// Samples the statistics cover.
    pub count: usize,
    /// Samples ever recorded (more than `count` once the window wrapped).
    pub total_recorded: u64,
    /// Smallest sample.
    pub min_ns: u64,
    /// Largest sample.
    pub max_ns: u64,
    /// Arithmetic mean (floor).
    pub mean_ns: u64,
    /// Nearest-rank median.
    pub p50_ns: u64,
    /// Nearest-rank 90th percentile.
    pub p90_ns: u64,
    /// Nearest-rank 99th percentile.
    pub p99_ns: u64,
}

impl WindowStats {
    /// `p50_ns` in milliseconds.
    pub fn p50_ms(&self) -> f64 {
        ns_to_ms(self.p50_ns)
    }
    /// `p99_ns` in milliseconds.
    pub fn p99_ms(&self) -> f64 {
        ns_to_ms(self.p99_ns)
    }
}

/// Nanoseconds to milliseconds as `f64` (exact for any value below 2^53 ns, about 104 days).
#[inline]
pub(crate) fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_dropping_the_oldest_and_keeps_counting() {
        let mut w = RollingWindow::<4>::new();
        for v in 1..=6 {
            w.record(v);
        }
        assert_eq!(w.len(), 4);
        assert_eq!(w.total_recorded(), 6);
        assert_eq!(w.iter().collect::<Vec<_>>(), vec![3, 4, 5, 6]);
        assert_eq!(w.latest(), Some(6));
    }

    #[test]
    fn nearest_rank_percentiles() {
        let mut w = RollingWindow::<100>::new();
        for v in (1..=100).rev() {
            w.record(v);
        }
        let s = w.stats().unwrap();
        assert_eq!(
            (s.min_ns, s.p50_ns, s.p90_ns, s.p99_ns, s.max_ns),
            (1, 50, 90, 99, 100)
        );
        assert_eq!(w.percentile(100.0), Some(100));
        assert_eq!(w.percentile(0.5), Some(1));
        assert_eq!(w.percentile(0.0), None);
        assert_eq!(w.percentile(f64::NAN), None);
        // Five samples: p99 is rank ceil(4.95) = 5, p50 rank ceil(2.5) = 3.
        let mut w = RollingWindow::<8>::new();
        for v in [10, 0, 30, 20, 40] {
            w.record(v);
        }
        let s = w.stats().unwrap();
        assert_eq!((s.p50_ns, s.p99_ns, s.min_ns), (20, 40, 0));
    }

    #[test]
    fn empty_window_has_no_stats() {
        let w = RollingWindow::<64>::new();
        assert!(w.stats().is_none());
        assert!(w.latest().is_none());
        assert!(w.is_empty());
    }
}
