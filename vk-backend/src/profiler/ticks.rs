//! Timestamp arithmetic: masking to the queue's valid bits, wrap-safe differences, scaling by
//! the device's timestamp period.
//!
//! Owns: [`TimestampCaps`] and the pure maths on raw ticks. Must never: touch a device (all of
//! it is unit-tested with synthetic capability tables, e.g. 36 valid bits and a 52 ns period,
//! which lavapipe, at 64 bits and 1 ns, cannot show).
//!
//! # Contract
//! A timestamp query writes a tick counter of `timestampValidBits` bits (the bits above are
//! undefined and masked off here). The counter wraps at `2^bits`; the difference of two masked
//! ticks is taken modulo `2^bits`, which is exact as long as the real interval is shorter than
//! one full period of the counter (36 bits at 52 ns: 2^36 * 52 ns = 59.6 minutes; a GPU frame is
//! milliseconds). Ticks become nanoseconds by multiplying with `timestampPeriod` (ns per tick).

use crate::error::GpuError;

/// What a queue's timestamps look like: valid bits and the period of one tick.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimestampCaps {
    /// `VkQueueFamilyProperties::timestampValidBits`, 1..=64.
    pub valid_bits: u32,
    /// `VkPhysicalDeviceLimits::timestampPeriod`: nanoseconds per tick (> 0).
    pub period_ns: f64,
    /// `(1 << valid_bits) - 1`, or all ones for 64 bits.
    pub mask: u64,
}

impl TimestampCaps {
    /// Caps of queue family `family` from its valid bits and the device's period.
    ///
    /// Errors: [`GpuError::NoTimestamps`] when `valid_bits` is 0 (the queue writes no
    /// timestamps); [`GpuError::BadInput`] for more than 64 bits or a period that is not a
    /// positive finite number (a broken driver).
    pub fn new(family: u32, valid_bits: u32, period_ns: f32) -> Result<Self, GpuError> {
        if valid_bits == 0 {
            return Err(GpuError::NoTimestamps { family });
        }
        if valid_bits > 64 {
            return Err(GpuError::BadInput {
                what: "timestampValidBits",
                why: format!("{valid_bits} is more than 64: the driver reports nonsense"),
            });
        }
        if !(period_ns.is_finite() && period_ns > 0.0) {
            return Err(GpuError::BadInput {
                what: "timestampPeriod",
                why: format!("{period_ns} ns per tick is not a positive number"),
            });
        }
        let mask = if valid_bits == 64 {
            u64::MAX
        } else {
            (1u64 << valid_bits) - 1
        };
        Ok(TimestampCaps {
            valid_bits,
            period_ns: f64::from(period_ns),
            mask,
        })
    }

    /// `raw` with the undefined high bits cleared.
    #[inline]
    pub fn masked(&self, raw: u64) -> u64 {
        raw & self.mask
    }

    /// Ticks from `begin` to `end`, both raw, modulo the counter's range (one wrap is exact).
    #[inline]
    pub fn delta_ticks(&self, begin: u64, end: u64) -> u64 {
        self.masked(end).wrapping_sub(self.masked(begin)) & self.mask
    }

    /// Signed ticks from `reference` to `tick`: the shorter way round the counter, so a tick
    /// slightly *before* the reference is negative rather than almost a full period.
    #[inline]
    pub fn signed_delta_ticks(&self, reference: u64, tick: u64) -> i128 {
        let d = self.delta_ticks(reference, tick);
        if d > self.mask / 2 {
            i128::from(d) - i128::from(self.mask) - 1
        } else {
            i128::from(d)
        }
    }

    /// Nanoseconds from `begin` to `end` (raw ticks).
    #[inline]
    pub fn delta_ns(&self, begin: u64, end: u64) -> f64 {
        self.delta_ticks(begin, end) as f64 * self.period_ns
    }

    /// How long until the counter wraps, in seconds (for reports).
    pub fn wrap_period_s(&self) -> f64 {
        (self.mask as f64 + 1.0) * self.period_ns * 1e-9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A desktop part: 36 valid bits, 52.08 ns per tick (the synthetic table lavapipe cannot show).
    fn caps36() -> TimestampCaps {
        TimestampCaps::new(0, 36, 52.0).unwrap()
    }

    #[test]
    fn queue_without_timestamps_is_a_typed_error() {
        let e = TimestampCaps::new(3, 0, 1.0).unwrap_err();
        assert!(matches!(e, GpuError::NoTimestamps { family: 3 }), "{e}");
        assert!(TimestampCaps::new(0, 65, 1.0).is_err());
        assert!(TimestampCaps::new(0, 64, 0.0).is_err());
        assert!(TimestampCaps::new(0, 64, f32::NAN).is_err());
    }

    #[test]
    fn masks_to_valid_bits() {
        let c = caps36();
        assert_eq!(c.mask, 0xF_FFFF_FFFF);
        // Garbage above bit 35 is ignored.
        assert_eq!(c.masked(0xABCD_0000_0000_0001), 1);
        assert_eq!(
            c.delta_ticks(0xFF00_0000_0000_0010, 0x0000_0000_0000_0020),
            0x10
        );
        let c64 = TimestampCaps::new(0, 64, 1.0).unwrap();
        assert_eq!(c64.mask, u64::MAX);
        assert_eq!(c64.masked(u64::MAX), u64::MAX);
    }

    #[test]
    fn scales_by_period() {
        let c = caps36();
        assert_eq!(c.delta_ns(1000, 1100), 100.0 * 52.0);
        let c1 = TimestampCaps::new(0, 64, 1.0).unwrap();
        assert_eq!(c1.delta_ns(5, 1_000_005), 1_000_000.0);
    }

    #[test]
    fn wraps_once_exactly() {
        let c = caps36();
        // Begin 16 ticks before the wrap, end 84 ticks after: 100 ticks.
        let begin = c.mask - 15;
        let end = 84;
        assert_eq!(c.delta_ticks(begin, end), 100);
        assert_eq!(c.delta_ns(begin, end), 5200.0);
        // Same at 64 bits.
        let c64 = TimestampCaps::new(0, 64, 1.0).unwrap();
        assert_eq!(c64.delta_ticks(u64::MAX - 9, 90), 100);
        // Wrap period of the 36-bit, 52 ns counter: ~59.6 minutes.
        assert!(
            (c.wrap_period_s() - 3573.6).abs() < 1.0,
            "{}",
            c.wrap_period_s()
        );
    }

    #[test]
    fn signed_delta_takes_the_short_way() {
        let c = caps36();
        assert_eq!(c.signed_delta_ticks(100, 90), -10);
        assert_eq!(c.signed_delta_ticks(100, 110), 10);
        assert_eq!(c.signed_delta_ticks(c.mask - 4, 5), 10);
        assert_eq!(c.signed_delta_ticks(5, c.mask - 4), -10);
        let c64 = TimestampCaps::new(0, 64, 1.0).unwrap();
        assert_eq!(c64.signed_delta_ticks(0, u64::MAX), -1);
    }

    #[test]
    fn seeded_random_deltas_match_wide_arithmetic() {
        // Small LCG (Knuth MMIX constants): reproducible without a rand dependency.
        let mut s: u64 = 0x5eed;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            s
        };
        for bits in [12u32, 32, 36, 48, 63, 64] {
            let c = TimestampCaps::new(0, bits, 52.0).unwrap();
            for _ in 0..1000 {
                let begin = next();
                let len = next() % (c.mask / 2 + 1);
                // End = begin + len in infinite precision, then truncated and garbage-topped.
                let end = (begin & c.mask).wrapping_add(len) | (next() & !c.mask);
                assert_eq!(c.delta_ticks(begin | (next() & !c.mask), end), len);
            }
        }
    }
}
