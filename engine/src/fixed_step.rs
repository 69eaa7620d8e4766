//! The fixed step as an exact rational number of nanoseconds.
//!
//! Owns: [`FixedStep`]. Must never: round a step (1/60 s is not a whole number of nanoseconds;
//! storing it as one would drift by a step every few minutes and break "10 s of 60 Hz frames is
//! exactly 600 steps").
//!
//! A step is `num / den` nanoseconds in lowest terms: `from_hz(60)` is `1_000_000_000 / 60`,
//! `from_duration(d)` is `d_ns / 1`. The accumulator counts time in units of `1/den` ns, so
//! every step boundary is an exact integer.

use std::cmp::Ordering;
use std::fmt;
use std::time::Duration;

/// Nanoseconds per second.
const NS_PER_S: u64 = 1_000_000_000;
/// The shortest step accepted: 1 us (1 MHz). Shorter steps cannot be run by any real loop.
pub(crate) const MIN_STEP_NS: u64 = 1_000;
/// The longest step accepted: 10 s. Longer steps are not a simulation rate.
pub(crate) const MAX_STEP_NS: u64 = 10 * NS_PER_S;

/// A fixed simulation step, exact.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FixedStep {
    num: u64,
    den: u64,
}

impl FixedStep {
    /// The default step rate, Hz: the one place the engine's default step is stated
    /// ([`FixedStep::DEFAULT`], the engine config's `fixed_step_hz`, the budget controller's
    /// default all derive from it).
    pub(crate) const DEFAULT_HZ: u32 = 60;

    /// The default step when no agent declares one: `1 / DEFAULT_HZ` s, exactly (a test checks
    /// it equals `from_hz(DEFAULT_HZ)`).
    pub(crate) const DEFAULT: FixedStep = FixedStep {
        num: 50_000_000,
        den: 3,
    };

    /// A step of `1/hz` seconds (`1..=1_000_000` Hz).
    pub fn from_hz(hz: u32) -> Result<FixedStep, InvalidStep> {
        if hz == 0 || u64::from(hz) > NS_PER_S / MIN_STEP_NS {
            return Err(InvalidStep::Rate { hz });
        }
        Ok(Self::reduced(NS_PER_S, u64::from(hz)))
    }

    /// A step of exactly `d` (1 us to 10 s).
    pub(crate) fn from_duration(d: Duration) -> Result<FixedStep, InvalidStep> {
        let ns = d.as_nanos();
        if ns < u128::from(MIN_STEP_NS) || ns > u128::from(MAX_STEP_NS) {
            return Err(InvalidStep::Length { ns });
        }
        Ok(FixedStep {
            num: ns as u64,
            den: 1,
        })
    }

    fn reduced(num: u64, den: u64) -> FixedStep {
        let g = gcd(num, den);
        FixedStep {
            num: num / g,
            den: den / g,
        }
    }

    /// A step of `num` nanoseconds over `den` (as [`numer_ns`](Self::numer_ns) and
    /// [`denom`](Self::denom) give them back); `None` when either is 0 or the step is outside
    /// the constructors' range (1 us to 10 s).
    #[cfg(feature = "savegame")]
    pub(crate) fn from_parts(num: u64, den: u64) -> Option<FixedStep> {
        let in_range = num > 0
            && den > 0
            && u128::from(num) >= u128::from(MIN_STEP_NS) * u128::from(den)
            && u128::from(num) <= u128::from(MAX_STEP_NS) * u128::from(den);
        in_range.then(|| FixedStep::reduced(num, den))
    }

    /// This step made `divisor` times longer (the rate divided by `divisor`): how a strategy's
    /// `step_divisor` becomes the step in force. Exact; over 10 s is refused.
    pub(crate) fn divided(self, divisor: std::num::NonZeroU32) -> Result<FixedStep, InvalidStep> {
        let num = u128::from(self.num) * u128::from(divisor.get());
        if num > u128::from(MAX_STEP_NS) * u128::from(self.den) {
            return Err(InvalidStep::Length {
                ns: num / u128::from(self.den),
            });
        }
        Ok(FixedStep::reduced(num as u64, self.den))
    }

    /// Numerator of the step in nanoseconds (`step = numer / denom` ns, lowest terms).
    pub(crate) fn numer_ns(self) -> u64 {
        self.num
    }

    /// Denominator (`1` for whole-nanosecond steps, e.g. `3` for 1/60 s).
    pub(crate) fn denom(self) -> u64 {
        self.den
    }

    /// The step in seconds (rounded to `f64`: for display and `dt` in integrators).
    pub const fn as_secs_f64(self) -> f64 {
        self.num as f64 / self.den as f64 / NS_PER_S as f64
    }

    /// The step in milliseconds (rounded to `f64`).
    pub(crate) fn as_ms_f64(self) -> f64 {
        self.num as f64 / self.den as f64 / 1e6
    }
}

/// `FixedStep::try_from(duration)`: a step of exactly `d` (within the same bounds as
/// [`FixedStep::from_hz`]).
impl TryFrom<Duration> for FixedStep {
    type Error = InvalidStep;
    fn try_from(d: Duration) -> Result<FixedStep, InvalidStep> {
        FixedStep::from_duration(d)
    }
}

impl Default for FixedStep {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl PartialOrd for FixedStep {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for FixedStep {
    /// Exact comparison by cross-multiplication (no rounding).
    fn cmp(&self, other: &Self) -> Ordering {
        (u128::from(self.num) * u128::from(other.den))
            .cmp(&(u128::from(other.num) * u128::from(self.den)))
    }
}

impl fmt::Debug for FixedStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "FixedStep({}/{} ns = {:.6} ms)",
            self.num,
            self.den,
            self.as_ms_f64()
        )
    }
}

impl fmt::Display for FixedStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6} ms", self.as_ms_f64())
    }
}

/// A step that cannot be simulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum InvalidStep {
    /// A rate of zero or above 1 MHz.
    #[error(
        "fixed step rate {hz} Hz is out of range; fix: use 1 to 1000000 Hz (60 is the default)"
    )]
    Rate {
        /// The rate given.
        hz: u32,
    },
    /// A length under 1 us or over 10 s.
    #[error(
        "fixed step of {ns} ns is out of range; fix: use 1 us to 10 s (1/60 s is the default)"
    )]
    Length {
        /// The length given.
        ns: u128,
    },
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixty_hz_is_exact_and_the_default() {
        assert_eq!(
            FixedStep::from_hz(FixedStep::DEFAULT_HZ).unwrap(),
            FixedStep::DEFAULT
        );
        let s = FixedStep::from_hz(60).unwrap();
        assert_eq!(s, FixedStep::DEFAULT);
        assert_eq!((s.numer_ns(), s.denom()), (50_000_000, 3));
    }

    #[test]
    fn ordering_is_exact() {
        let a = FixedStep::from_hz(60).unwrap();
        let b = FixedStep::from_duration(Duration::from_nanos(16_666_667)).unwrap();
        let c = FixedStep::from_duration(Duration::from_nanos(16_666_666)).unwrap();
        assert!(c < a && a < b);
        assert_eq!(
            FixedStep::from_hz(30).unwrap().max(a),
            FixedStep::from_hz(30).unwrap()
        );
    }

    #[test]
    fn out_of_range_steps_are_errors() {
        assert_eq!(FixedStep::from_hz(0), Err(InvalidStep::Rate { hz: 0 }));
        assert!(FixedStep::from_hz(1_000_001).is_err());
        assert!(FixedStep::from_duration(Duration::ZERO).is_err());
        assert!(FixedStep::from_duration(Duration::from_secs(11)).is_err());
    }
}
