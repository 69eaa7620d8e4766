//! Cost models: which law an agent's cost follows in its workload size `n`, and what it costs
//! right now.
//!
//! Owns: the four laws, the bounded forgetting window of `(n, ms)` samples, the
//! relative-error-weighted least-squares fit and the law-selection criterion, the fast level
//! tracker, and the calibration factor that rescales an agent's quotes to its measurements.
//! Must never: read a clock or decide a strategy (it turns samples into numbers, nothing more).
//!
//! # The model
//! `ms = c * f(n)` with `f` one of `1`, `n`, `n ln n`, `n^2`. Two parts move at different speeds:
//!
//! 1. **The law** `f` is slow: a system's complexity does not change frame to frame. It is
//!    fitted over a window of the last [`WINDOW`] samples, each weighted `FORGET^age` (the newest
//!    weighs 1). For each law, `c` minimises `sum w_i ((y_i - c f_i) / y_i)^2` (relative error:
//!    a 0.1 ms sample and a 10 ms sample count alike), which has the closed form
//!    `c = sum(w r) / sum(w r^2)` with `r_i = f_i / y_i`. The fit's error is the weighted RMS
//!    relative error.
//! 2. **The level** is fast: thermals, scene content and contention move it. The tracker
//!    keeps the last [`LEVEL_SAMPLES`] ratios of measured to quoted cost and reports their mean
//!    (and its standard error); a step (two
//!    samples in a row off the mean by more than [`STEP_RATIO`], the same way) replaces the
//!    history with the new samples, so a load step is seen in full two samples after it starts,
//!    while one spike is ignored.
//!
//! # Choosing the law (the stated criterion)
//! All four laws have one parameter, so a richer law has no free advantage, but noise can still
//! let a wrong law edge ahead. Walk the laws from simplest to richest; a richer law replaces the
//! current choice only if its error is below `(1 - OCCAM_MARGIN)` times the current choice's.
//! Ties and near-ties go to the simpler law, and when the window's `n` barely varies
//! (`max n / min n < MIN_SPREAD`) the laws cannot be told apart and `Constant` is reported with
//! `identifiable = false`.

/// Samples kept per model (about one second at 60 Hz).
pub const WINDOW: usize = 64;
/// Forgetting factor per sample of age: the oldest of 64 samples weighs `0.98^63 ~ 0.28`.
pub(crate) const FORGET: f64 = 0.98;
/// A richer law must cut the error by this fraction to be preferred (10 %).
pub(crate) const OCCAM_MARGIN: f64 = 0.10;
/// Fewest samples before a law is fitted.
pub(crate) const MIN_FIT_SAMPLES: usize = 8;
/// Smallest `max n / min n` over the window for laws to be distinguishable.
pub(crate) const MIN_SPREAD: f64 = 1.5;
/// Recent ratios the level tracker averages (8 frames: noise averaged down to 35 %; a load
/// step is still seen in 2 frames through step detection).
pub(crate) const LEVEL_SAMPLES: usize = 8;
/// A sample off the level by more than this fraction is a step candidate (40 %: four standard
/// deviations of a 10 %-noisy frame, so two in a row by chance are a one-in-a-billion event,
/// and well below a load step; smaller moves are followed by the 4-sample mean within 4 frames).
pub(crate) const STEP_RATIO: f64 = 0.40;

/// How a cost grows with the workload size `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CostLaw {
    /// `1`: independent of `n`.
    Constant,
    /// `n`.
    Linear,
    /// `n ln n` (sorting, broad phases).
    NLogN,
    /// `n^2` (naive pairwise work).
    Quadratic,
}

impl CostLaw {
    /// All laws, simplest first (the order the selection walks).
    pub(crate) const ALL: [CostLaw; 4] = [
        CostLaw::Constant,
        CostLaw::Linear,
        CostLaw::NLogN,
        CostLaw::Quadratic,
    ];

    /// `f(n)`. `n` below 2 is treated as 2 for `n ln n` so that `f` stays positive.
    pub(crate) fn eval(self, n: u64) -> f64 {
        let x = n as f64;
        match self {
            CostLaw::Constant => 1.0,
            CostLaw::Linear => x,
            CostLaw::NLogN => {
                let x = x.max(2.0);
                x * x.ln()
            }
            CostLaw::Quadratic => x * x,
        }
    }
}

/// The cost laws' table and evaluation, for the cost-model tests and the simulator's callers.
pub trait CostLawHooks {
    /// All laws, simplest first (the order the selection walks).
    const ALL: [CostLaw; 4];

    /// `f(n)`. `n` below 2 is treated as 2 for `n ln n` so that `f` stays positive.
    fn eval(self, n: u64) -> f64;
}

impl CostLawHooks for CostLaw {
    const ALL: [CostLaw; 4] = CostLaw::ALL;

    fn eval(self, n: u64) -> f64 {
        CostLaw::eval(self, n)
    }
}

/// The result of fitting one window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// The chosen law.
    pub law: CostLaw,
    /// Its coefficient: `ms = coefficient * law(n)`.
    pub coefficient: f64,
    /// Weighted RMS relative error of the chosen law (0.05 = 5 %).
    pub rel_error: f64,
    /// Every law's error, in `CostLaw` declaration order (simplest first) (for reports and tests).
    pub errors: [f64; 4],
    /// False when the window's `n` did not vary enough to tell laws apart.
    pub identifiable: bool,
    /// Samples fitted.
    pub samples: usize,
}

/// A bounded forgetting window of `(n, ms)` samples. Samples with `ms <= 0` (a frame with no
/// work, e.g. a fixed step that did not run) say nothing about the law and are not stored.
#[derive(Debug, Clone)]
pub struct CostModel {
    ring: [(u64, f64); WINDOW],
    len: usize,
    head: usize,
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel {
            ring: [(0, 0.0); WINDOW],
            len: 0,
            head: 0,
        }
    }
}

impl CostModel {
    /// An empty window.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a sample; the oldest falls out once [`WINDOW`] are held.
    pub fn push(&mut self, n: u64, ms: f64) {
        if !(ms.is_finite() && ms > 0.0) {
            return;
        }
        self.ring[self.head] = (n, ms);
        self.head = (self.head + 1) % WINDOW;
        self.len = (self.len + 1).min(WINDOW);
    }

    /// Samples held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no sample is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Samples newest first, with their forgetting weights.
    fn weighted(&self) -> impl Iterator<Item = (f64, (u64, f64))> + '_ {
        (0..self.len).scan(1.0, move |w, age| {
            let idx = (self.head + WINDOW - 1 - age) % WINDOW;
            let out = (*w, self.ring[idx]);
            *w *= FORGET;
            Some(out)
        })
    }

    /// Fits every law and picks one by the criterion in the module docs. `None` below
    /// `MIN_FIT_SAMPLES` samples.
    pub fn fit(&self) -> Option<Fit> {
        if self.len < MIN_FIT_SAMPLES {
            return None;
        }
        let (mut lo, mut hi) = (u64::MAX, 0u64);
        for (_, (n, _)) in self.weighted() {
            lo = lo.min(n);
            hi = hi.max(n);
        }
        let identifiable = hi as f64 >= MIN_SPREAD * (lo.max(1) as f64);
        let mut coefs = [0.0; 4];
        let mut errors = [0.0; 4];
        for (k, law) in CostLaw::ALL.iter().enumerate() {
            let (mut swr, mut swr2, mut sw) = (0.0, 0.0, 0.0);
            for (w, (n, y)) in self.weighted() {
                let r = law.eval(n) / y;
                swr += w * r;
                swr2 += w * r * r;
                sw += w;
            }
            let c = if swr2 > 0.0 { swr / swr2 } else { 0.0 };
            let mut se = 0.0;
            for (w, (n, y)) in self.weighted() {
                let e = 1.0 - c * law.eval(n) / y;
                se += w * e * e;
            }
            coefs[k] = c;
            errors[k] = (se / sw).sqrt();
        }
        let mut best = 0;
        if identifiable {
            for k in 1..4 {
                if errors[k] < (1.0 - OCCAM_MARGIN) * errors[best] {
                    best = k;
                }
            }
        }
        Some(Fit {
            law: CostLaw::ALL[best],
            coefficient: coefs[best],
            rel_error: errors[best],
            errors,
            identifiable,
            samples: self.len,
        })
    }
}

/// The fast level tracker: the recent mean of `ms / f(n)` with step detection (module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct LevelTracker {
    ratios: [f64; LEVEL_SAMPLES],
    len: usize,
    head: usize,
    /// A sample that was off the level, waiting for a second one to confirm a step.
    pending: Option<f64>,
}

impl LevelTracker {
    /// Adds one ratio `ms / f(n)` (zero allowed: a frame where the work did not run).
    pub(crate) fn push(&mut self, ratio: f64) {
        if !(ratio.is_finite() && ratio >= 0.0) {
            return;
        }
        let Some(level) = self.level() else {
            self.put(ratio);
            return;
        };
        let off = |r: f64| {
            if level <= 0.0 {
                0
            } else if r > level * (1.0 + STEP_RATIO) {
                1
            } else if r < level * (1.0 - STEP_RATIO) {
                -1
            } else {
                0
            }
        };
        let dir = off(ratio);
        match (self.pending, dir) {
            (Some(p), d) if d != 0 && off(p) == d => {
                // Two in a row, the same way: a step. Keep only the new regime.
                self.len = 0;
                self.head = 0;
                self.pending = None;
                self.put(p);
                self.put(ratio);
            }
            (_, 0) => {
                if let Some(p) = self.pending.take() {
                    self.put(p);
                }
                self.put(ratio);
            }
            (_, _) => {
                if let Some(p) = self.pending.replace(ratio) {
                    // A lone outlier the other way, or replaced: it joins the mean.
                    self.put(p);
                }
            }
        }
    }

    fn put(&mut self, r: f64) {
        self.ratios[self.head] = r;
        self.head = (self.head + 1) % LEVEL_SAMPLES;
        self.len = (self.len + 1).min(LEVEL_SAMPLES);
    }

    /// Relative standard error of [`Self::level`]: the sample standard deviation of the held
    /// ratios over `sqrt(count)`, divided by the mean. 0 with fewer than 2 samples or a zero
    /// mean. The controller widens an upgrade's margin by it, so a noisy agent needs more
    /// evidence before it upgrades.
    pub(crate) fn rel_std_error(&self) -> f64 {
        let Some(mean) = self.level() else {
            return 0.0;
        };
        if self.len < 2 || mean <= 0.0 {
            return 0.0;
        }
        let mut ss = 0.0;
        for age in (0..self.len).rev() {
            let r = self.ratios[(self.head + LEVEL_SAMPLES - 1 - age) % LEVEL_SAMPLES];
            ss += (r - mean) * (r - mean);
        }
        let sd = (ss / (self.len - 1) as f64).sqrt();
        sd / (self.len as f64).sqrt() / mean
    }

    /// Relative spread of the held ratios: their sample standard deviation over their mean (0
    /// with fewer than 2 samples or a zero mean). Frame to frame, not of the mean: what a single
    /// frame may add on top of the level.
    pub(crate) fn rel_spread(&self) -> f64 {
        self.rel_std_error() * (self.len as f64).sqrt()
    }

    /// The mean of the held ratios, `None` before the first sample.
    pub(crate) fn level(&self) -> Option<f64> {
        if self.len == 0 {
            return None;
        }
        // Summed oldest to newest so the result does not depend on the ring's rotation.
        let mut sum = 0.0;
        for age in (0..self.len).rev() {
            sum += self.ratios[(self.head + LEVEL_SAMPLES - 1 - age) % LEVEL_SAMPLES];
        }
        Some(sum / self.len as f64)
    }
}

/// Smallest and largest calibration factor: three decades either way. The seed's controller
/// clamps to `[0.25, 4]` on the ground that a quote wrong by more than 4x is more likely a bad
/// sample than a bad quote; here bad samples are already held back upstream (the factor is the
/// [`LevelTracker`]'s 8-sample mean, and a lone outlier waits for a second one before it
/// counts), and quotes are wrong by far more than 4x across real machines: the demo's render
/// quote is a laptop GPU's, and lavapipe measures it at about 60x. Clamped at 4x, the render
/// agent saw a 4 ms cost in a 63 ms GPU frame and stopped two rungs above its cheapest.
/// The bound only keeps the factor finite and positive.
pub(crate) const FACTOR_RANGE: (f64, f64) = (1.0 / 1024.0, 1024.0);

/// Measured-to-quoted factor for an agent: `measured / quoted` for its current strategy at the
/// current workload, clamped to [`FACTOR_RANGE`]. Every strategy's quote is multiplied by the
/// same factor, so their order is preserved.
pub(crate) fn calibration_factor(measured_ms: f64, quoted_ms: f64) -> f64 {
    if !(measured_ms.is_finite() && quoted_ms.is_finite() && quoted_ms > 0.0) {
        return 1.0;
    }
    (measured_ms / quoted_ms).clamp(FACTOR_RANGE.0, FACTOR_RANGE.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_linear_data_is_linear() {
        let mut m = CostModel::new();
        for i in 0..32u64 {
            let n = 100 + i * 50;
            m.push(n, 0.01 * n as f64);
        }
        let fit = m.fit().unwrap();
        assert_eq!(fit.law, CostLaw::Linear);
        assert!((fit.coefficient - 0.01).abs() < 1e-12);
        assert!(fit.rel_error < 1e-12);
    }

    #[test]
    fn constant_n_is_not_identifiable_and_falls_back_to_constant() {
        let mut m = CostModel::new();
        for _ in 0..20 {
            m.push(500, 3.0);
        }
        let fit = m.fit().unwrap();
        assert!(!fit.identifiable);
        assert_eq!(fit.law, CostLaw::Constant);
        assert!((fit.coefficient - 3.0).abs() < 1e-12);
    }

    #[test]
    fn too_few_samples_give_no_fit_and_zero_samples_are_skipped() {
        let mut m = CostModel::new();
        for _ in 0..7 {
            m.push(10, 1.0);
        }
        m.push(10, 0.0);
        assert_eq!(m.len(), 7);
        assert!(m.fit().is_none());
    }

    #[test]
    fn window_is_bounded() {
        let mut m = CostModel::new();
        for i in 0..1000u64 {
            m.push(i + 1, 1.0);
        }
        assert_eq!(m.len(), WINDOW);
    }

    #[test]
    fn level_ignores_one_spike_and_follows_a_step() {
        let mut t = LevelTracker::default();
        for _ in 0..4 {
            t.push(1.0);
        }
        t.push(2.0); // spike: pending
        assert_eq!(t.level(), Some(1.0));
        t.push(1.0); // not confirmed: the spike joins the mean
        assert!(t.level().unwrap() > 1.0 && t.level().unwrap() < 1.5);
        for _ in 0..4 {
            t.push(1.0);
        }
        t.push(3.0);
        t.push(3.0);
        assert_eq!(t.level(), Some(3.0));
    }

    #[test]
    fn alternating_zero_work_averages() {
        let mut t = LevelTracker::default();
        for i in 0..8 {
            t.push(if i % 2 == 0 { 0.0 } else { 2.0 });
        }
        let l = t.level().unwrap();
        assert!((0.5..=1.5).contains(&l), "{l}");
    }

    #[test]
    fn factor_is_clamped() {
        // A software rasteriser 60x a laptop GPU's quote is taken as measured.
        assert_eq!(calibration_factor(60.0, 1.0), 60.0);
        assert_eq!(calibration_factor(1e6, 1.0), 1024.0);
        assert_eq!(calibration_factor(1e-6, 1.0), 1.0 / 1024.0);
        assert_eq!(calibration_factor(2.0, 1.0), 2.0);
        assert_eq!(calibration_factor(2.0, 0.0), 1.0);
    }
}
