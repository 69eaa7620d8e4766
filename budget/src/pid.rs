//! The PID controller that drives the global budget multiplier.
//!
//! Owns: one positional PID with output limits and anti-windup. Must never: know what it
//! controls (it maps an error to an output; the controller gives both their meaning).
//!
//! # Algorithm
//! Positional form with derivative on the measurement and conditional integration
//! (Åström & Hägglund, *Advanced PID Control*, 2006, §3.5 "Integrator windup"):
//!
//! 1. `e` = error, clamped to `[-ERROR_CLAMP, ERROR_CLAMP]` so one pathological frame cannot
//!    dominate the integral.
//! 2. The integral takes `ki * e` only if that does not push an output already at a limit
//!    further past it (conditional integration: the integrator never winds up against a limit).
//! 3. `u = bias + kp * e + i - kd * (y - y_prev)` (derivative on the measurement `y`, so a
//!    setpoint change does not kick), clamped to `[min, max]`.
//! 4. When a limit moves inside the current output (a hard ceiling), the integral is
//!    back-calculated so that the unclamped output equals the limit: when the ceiling lifts, the
//!    output leaves it smoothly (bumpless) instead of jumping to a stale value.

/// Errors beyond this magnitude count as this much (normalised error, 1.0 = 100 % of target).
pub(crate) const ERROR_CLAMP: f64 = 1.0;

/// Gains and limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PidConfig {
    /// Proportional gain.
    pub kp: f64,
    /// Integral gain, per tick.
    pub ki: f64,
    /// Derivative gain, per tick (on the measurement).
    pub kd: f64,
    /// Output when error and integral are zero.
    pub bias: f64,
    /// Lowest output.
    pub min: f64,
    /// Highest output.
    pub max: f64,
}

/// A PID controller (see the module docs for the algorithm).
#[derive(Debug, Clone)]
pub(crate) struct Pid {
    cfg: PidConfig,
    integral: f64,
    prev_measurement: Option<f64>,
    output: f64,
}

impl Pid {
    /// A controller whose output starts at `bias` clamped to the limits.
    pub(crate) fn new(cfg: PidConfig) -> Self {
        Pid {
            cfg,
            integral: 0.0,
            prev_measurement: None,
            output: cfg.bias.clamp(cfg.min, cfg.max),
        }
    }

    /// The last output.
    pub(crate) fn output(&self) -> f64 {
        self.output
    }

    /// Moves the upper limit (a ceiling); an output above it drops to it at once and the
    /// integral is back-calculated (step 4).
    pub(crate) fn set_max(&mut self, max: f64) {
        self.cfg.max = max.max(self.cfg.min);
        if self.output > self.cfg.max {
            self.output = self.cfg.max;
            self.integral = self.cfg.max - self.cfg.bias;
        }
    }

    /// One update. `error` is `setpoint - measurement` in normalised units; `measurement` feeds
    /// the derivative. Returns the new output.
    pub(crate) fn update(&mut self, error: f64, measurement: f64) -> f64 {
        let c = self.cfg;
        let e = if error.is_finite() {
            error.clamp(-ERROR_CLAMP, ERROR_CLAMP)
        } else {
            0.0
        };
        let d = match self.prev_measurement {
            Some(prev) if measurement.is_finite() => measurement - prev,
            _ => 0.0,
        };
        if measurement.is_finite() {
            self.prev_measurement = Some(measurement);
        }
        let unclamped_without_i = c.bias + c.kp * e - c.kd * d;
        let candidate = self.integral + c.ki * e;
        let u_try = unclamped_without_i + candidate;
        let winds_up = (u_try > c.max && e > 0.0) || (u_try < c.min && e < 0.0);
        if !winds_up {
            self.integral = candidate;
        }
        self.output = (unclamped_without_i + self.integral).clamp(c.min, c.max);
        self.output
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> PidConfig {
        PidConfig {
            kp: 0.1,
            ki: 0.05,
            kd: 0.0,
            bias: 1.0,
            min: 0.25,
            max: 1.0,
        }
    }

    #[test]
    fn does_not_wind_up_against_the_limit() {
        let mut pid = Pid::new(cfg());
        for _ in 0..1000 {
            pid.update(0.5, 0.0);
        }
        assert_eq!(pid.output(), 1.0);
        // One tick of negative error must move the output off the limit at once.
        let u = pid.update(-0.5, 0.0);
        assert!(u < 1.0, "{u}");
    }

    #[test]
    fn sustained_negative_error_reaches_the_floor_and_stays_within_limits() {
        let mut pid = Pid::new(cfg());
        for _ in 0..1000 {
            let u = pid.update(-1.0, 0.0);
            assert!((0.25..=1.0).contains(&u));
        }
        assert_eq!(pid.output(), 0.25);
        // And recovers without a long wound-up delay.
        let mut ticks = 0;
        while pid.update(0.2, 0.0) < 0.5 {
            ticks += 1;
            assert!(ticks < 100, "wound up");
        }
    }

    #[test]
    fn ceiling_applies_at_once_and_lifts_smoothly() {
        let mut pid = Pid::new(cfg());
        pid.update(0.0, 0.0);
        pid.set_max(0.5);
        assert_eq!(pid.output(), 0.5);
        pid.set_max(1.0);
        let u = pid.update(0.0, 0.0);
        assert!((u - 0.5).abs() < 1e-12, "bumpless: {u}");
    }

    #[test]
    fn nan_error_is_ignored() {
        let mut pid = Pid::new(cfg());
        let u = pid.update(f64::NAN, f64::NAN);
        assert_eq!(u, 1.0);
    }
}
