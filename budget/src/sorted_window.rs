//! A window of values kept in sorted order, for a median that slides one value in and one out
//! per frame in O(log n + n) memory moves instead of a selection over the whole window.
//!
//! Owns: [`SortedWindow`]. Must never: give a median that differs from
//! [`median_in_place`](super::heuristics::median_in_place) over the same values (both order by
//! `f64::total_cmp` and read index `len / 2`), or allocate (a fixed array).

/// At most `N` values, sorted by `f64::total_cmp`.
#[derive(Debug, Clone)]
pub(crate) struct SortedWindow<const N: usize> {
    values: [f64; N],
    len: usize,
}

impl<const N: usize> SortedWindow<N> {
    /// An empty window.
    pub(crate) const fn new() -> Self {
        SortedWindow {
            values: [0.0; N],
            len: 0,
        }
    }

    /// Forgets every value.
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    fn position(&self, v: f64) -> Result<usize, usize> {
        self.values[..self.len].binary_search_by(|x| x.total_cmp(&v))
    }

    /// Adds `v`; false (and nothing added) when the window is full.
    pub(crate) fn insert(&mut self, v: f64) -> bool {
        if self.len == N {
            return false;
        }
        let i = match self.position(v) {
            Ok(i) | Err(i) => i,
        };
        self.values.copy_within(i..self.len, i + 1);
        self.values[i] = v;
        self.len += 1;
        true
    }

    /// Removes one value bit-identical to `v` (`total_cmp` equality is bit equality); false
    /// (and nothing removed) when none is held.
    pub(crate) fn remove(&mut self, v: f64) -> bool {
        match self.position(v) {
            Ok(i) => {
                self.values.copy_within(i + 1..self.len, i);
                self.len -= 1;
                true
            }
            Err(_) => false,
        }
    }

    /// The element at index `len / 2` of the sorted order (the upper middle for an even
    /// count); 0 when empty: what `median_in_place` returns for the same values.
    pub(crate) fn median(&self) -> f64 {
        if self.len == 0 {
            return 0.0;
        }
        self.values[self.len / 2]
    }

    /// Values held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heuristics::median_in_place;

    #[test]
    fn the_median_slides_exactly_as_a_selection_over_the_same_values_would_give() {
        // A deterministic walk with repeats, zeros of both signs, NaN and infinities: every
        // step one value leaves and one enters, and the median must equal the selection's.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            match state % 23 {
                0 => f64::NAN,
                1 => -0.0,
                2 => 0.0,
                3 => f64::INFINITY,
                4 => 1.5, // a frequent repeat
                k => (state >> 11) as f64 / (1u64 << 53) as f64 * 40.0 - 5.0 + k as f64,
            }
        };
        const N: usize = 63;
        let mut w = SortedWindow::<N>::new();
        let mut ring = std::collections::VecDeque::new();
        for step in 0..5_000 {
            if ring.len() == N {
                let out: f64 = ring.pop_front().unwrap();
                assert!(
                    w.remove(out),
                    "step {step}: {out} was inserted and must be found"
                );
            }
            let v = next();
            assert!(w.insert(v));
            ring.push_back(v);
            let mut scratch: Vec<f64> = ring.iter().copied().collect();
            let want = median_in_place(&mut scratch);
            assert_eq!(
                w.median().to_bits(),
                want.to_bits(),
                "step {step}: {} vs {want}",
                w.median()
            );
            assert_eq!(w.len(), ring.len());
        }
    }

    #[test]
    fn a_full_window_refuses_and_a_missing_value_is_not_removed() {
        let mut w = SortedWindow::<2>::new();
        assert_eq!(w.median(), 0.0);
        assert!(w.insert(2.0) && w.insert(1.0));
        assert!(!w.insert(3.0));
        assert_eq!(w.median(), 2.0);
        assert!(!w.remove(5.0));
        assert!(
            !w.remove(-0.0),
            "-0.0 is not 0.0 to total_cmp, and neither is held"
        );
        assert!(w.remove(1.0));
        assert_eq!(w.median(), 2.0);
        w.clear();
        assert_eq!(w.len(), 0);
    }
}
