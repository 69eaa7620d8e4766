//! Small statistics for bench figures: nearest-rank percentiles and medians over samples.
//!
//! Owns: order statistics on the cold path. Must never: be called inside a measured loop.

/// Nearest-rank percentile (`p` in 0..=100) of `samples`; sorts in place. `NaN` when empty.
pub fn percentile(samples: &mut [f64], p: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    let rank = ((p / 100.0) * samples.len() as f64).ceil() as usize;
    samples[rank.clamp(1, samples.len()) - 1]
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
