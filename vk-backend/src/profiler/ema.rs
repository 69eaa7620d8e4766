//! Exponential moving average of per-pass GPU times.
//!
//! Owns: the smoothing of raw figures. Must never: allocate or hide the raw value (both are
//! reported side by side).
//!
//! `ema <- ema + alpha * (sample - ema)`, seeded by the first sample. [`EMA_ALPHA`] = 0.1: the
//! weight of a sample halves after ln 2 / -ln(0.9) = 6.6 frames, so a step change is 90 %
//! absorbed after 22 frames (0.37 s at 60 Hz): steady enough for the budget controller's
//! cold-path tick (it re-arbitrates on moves above 5 %), quick enough to follow a scene change.

/// Weight of the newest sample (see the module docs for why 0.1).
pub const EMA_ALPHA: f64 = 0.1;

/// One smoothed series.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Ema {
    value: Option<f64>,
}

impl Ema {
    /// Folds in one sample and returns the new average.
    #[inline]
    pub fn update(&mut self, sample: f64) -> f64 {
        let v = match self.value {
            None => sample,
            Some(v) => v + EMA_ALPHA * (sample - v),
        };
        self.value = Some(v);
        v
    }

    /// The average so far (`None` before the first sample).
    #[inline]
    pub fn value(&self) -> Option<f64> {
        self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_then_converges() {
        let mut e = Ema::default();
        assert_eq!(e.value(), None);
        assert_eq!(e.update(100.0), 100.0);
        assert!((e.update(200.0) - 110.0).abs() < 1e-9);
        for _ in 0..200 {
            e.update(200.0);
        }
        assert!((e.value().unwrap() - 200.0).abs() < 1e-6);
    }

    #[test]
    fn step_is_ninety_percent_absorbed_in_22_samples() {
        let mut e = Ema::default();
        e.update(0.0);
        let mut v = 0.0;
        for _ in 0..22 {
            v = e.update(1.0);
        }
        assert!(v >= 0.9, "{v}");
        let mut e = Ema::default();
        e.update(0.0);
        for _ in 0..21 {
            v = e.update(1.0);
        }
        assert!(v < 0.9, "{v}");
    }
}
