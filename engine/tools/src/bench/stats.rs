//! Small statistics for bench figures: percentiles and medians over samples, as the runtime
//! defines them (`lanegraph::hooks::telemetry::quantiles`).
//!
//! Owns: the bench figures' shape of order statistics (`NaN` for no samples). Must never: be
//! called inside a measured loop.

use lanegraph::hooks::telemetry::quantiles;

/// Nearest-rank percentile (`p` in 0..=100) of `samples`; sorts them in place. `NaN` when empty.
pub fn percentile(samples: &mut [f64], p: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort_by(f64::total_cmp);
    samples[quantiles::rank(p, samples.len()) - 1]
}

/// The median (nearest-rank p50).
pub fn median(samples: &mut [f64]) -> f64 {
    percentile(samples, 50.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let mut v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&mut v, 50.0), 50.0);
        assert_eq!(percentile(&mut v, 99.0), 99.0);
        assert_eq!(percentile(&mut v, 100.0), 100.0);
        assert_eq!(percentile(&mut v, 0.0), 1.0);
        assert!(percentile(&mut [], 50.0).is_nan());
    }
}
