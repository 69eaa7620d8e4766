//! `lanegraph bench`: every benchmark suite in quick, machine-readable form.
//!
//! Owns: the figure format shared by every suite, the suite list, and small statistics helpers.
//! Must never: assert on timing (figures are reported, never enforced: machines are noisy) or
//! compare against a baseline measured in another run.
//!
//! # Output contract
//! With `--json`, one JSON object per line per figure:
//! `{"suite", "case", "threads", "metric", "unit", "ours", "baseline", "baseline_value", "ratio"}`,
//! the last three only where the figure has a baseline; `ratio = ours / baseline_value`.
//! Without `--json`, an aligned table. Machine facts (CPU model, core count, build level) go to
//! stderr so stdout stays one figure per line.

pub mod budget;
pub mod dispatch;
pub mod ecs;
mod ecs_changed;
pub mod ecs_soa;
pub mod ecs_suite;
#[cfg(feature = "bevy-baseline")]
mod ecs_suite_bevy;
pub mod gpu;
pub mod gpu_rig;
pub mod lanes;
pub mod simd;
pub mod simd_engine_path;
pub mod snapshot;
mod snapshot_hash;
mod snapshot_hecs;
mod snapshot_incremental;
pub mod stats;
pub mod telemetry;
pub mod timing;

use std::fmt;

/// One measured figure of one case of one suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Suite name (`dispatch`, `timing`, ...).
    pub suite: &'static str,
    /// Case name, stable across releases (documented per suite).
    pub case: String,
    /// Worker threads the case ran with.
    pub threads: usize,
    /// What was measured (`ns_per_node`, `p50_us`, `allocs_per_frame`, ...).
    pub metric: String,
    /// Unit of `ours` and `baseline_value` (`ns`, `us`, `count`, `ratio`, ...).
    pub unit: String,
    /// Our value.
    pub ours: f64,
    /// What the baseline is (`rayon`, `untimed loop`, `scalar AoS`), when there is one.
    pub baseline: Option<String>,
    /// The baseline's value, measured in the same run.
    pub baseline_value: Option<f64>,
}

impl Figure {
    /// A figure without a baseline.
    pub fn new(
        suite: &'static str,
        case: impl Into<String>,
        threads: usize,
        metric: impl Into<String>,
        unit: impl Into<String>,
        ours: f64,
    ) -> Self {
        Figure {
            suite,
            case: case.into(),
            threads,
            metric: metric.into(),
            unit: unit.into(),
            ours,
            baseline: None,
            baseline_value: None,
        }
    }

    /// Adds the baseline this figure is compared against (measured in the same run).
    pub fn with_baseline(mut self, name: impl Into<String>, value: f64) -> Self {
        self.baseline = Some(name.into());
        self.baseline_value = Some(value);
        self
    }

    /// `ours / baseline_value`, when there is a baseline.
    pub fn ratio(&self) -> Option<f64> {
        self.baseline_value.map(|b| self.ours / b)
    }

    /// The figure as one line of JSON (the `--json` contract above).
    pub fn to_json(&self) -> String {
        let mut obj = serde_json::Map::new();
        obj.insert("suite".into(), self.suite.into());
        obj.insert("case".into(), self.case.clone().into());
        obj.insert("threads".into(), self.threads.into());
        obj.insert("metric".into(), self.metric.clone().into());
        obj.insert("unit".into(), self.unit.clone().into());
        obj.insert("ours".into(), json_number(self.ours));
        if let (Some(name), Some(value)) = (&self.baseline, self.baseline_value) {
            obj.insert("baseline".into(), name.clone().into());
            obj.insert("baseline_value".into(), json_number(value));
            obj.insert("ratio".into(), json_number(self.ours / value));
        }
        serde_json::Value::Object(obj).to_string()
    }
}

fn json_number(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v)
        .map(serde_json::Value::Number)
        .unwrap_or(serde_json::Value::Null)
}

impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<10} {:<20} {:>3}t {:<22} {:>12.3} {:<6}",
            self.suite, self.case, self.threads, self.metric, self.ours, self.unit
        )?;
        if let (Some(name), Some(value)) = (&self.baseline, self.baseline_value) {
            write!(
                f,
                "  vs {name} {value:.3} -> ratio {:.3}",
                self.ours / value
            )?;
        }
        Ok(())
    }
}

/// How a suite should run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BenchOptions {
    /// Short runs: every suite finishes in under two minutes on a 2-core machine.
    pub quick: bool,
}

/// A suite could not run (not a slow result: slowness is a figure, never an error).
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The suite needs something this machine or build lacks (e.g. a Vulkan driver).
    #[error("bench {suite}: unavailable: {why} (fix: {fix})")]
    Unavailable {
        /// The suite.
        suite: &'static str,
        /// What is missing.
        why: String,
        /// How to get it.
        fix: String,
    },
    /// The suite failed while running.
    #[error("bench {suite}: failed: {why}")]
    Failed {
        /// The suite.
        suite: &'static str,
        /// What went wrong.
        why: String,
    },
}

impl BenchError {
    /// A [`BenchError::Failed`] for `suite`.
    pub fn failed(suite: &'static str, why: impl Into<String>) -> Self {
        BenchError::Failed {
            suite,
            why: why.into(),
        }
    }
}

/// Busy-waits `ns` on the shared clock: a stand-in for real work that the OS cannot shorten
/// (sleeping would let the scheduler hide contention).
pub fn busy(ns: u64) {
    let t = lanegraph_jobs::clock::now();
    while lanegraph_jobs::clock::now().ns_since(t) < ns {
        std::hint::spin_loop();
    }
}

/// The suites, in the order `all` runs them.
pub const SUITES: &[&str] = &[
    "dispatch",
    "timing",
    "telemetry",
    "budget",
    "simd",
    "gpu",
    "lanes",
    "ecs",
    "snapshot",
];

/// Runs one suite by name; `Ok(None)` when the name is unknown.
pub fn run_suite(name: &str, opts: BenchOptions) -> Option<Result<Vec<Figure>, BenchError>> {
    Some(match name {
        "dispatch" => dispatch::run(opts),
        "timing" => timing::run(opts),
        "telemetry" => telemetry::run(opts),
        "budget" => budget::run(opts),
        "simd" => simd::run(opts),
        "gpu" => gpu::run(opts),
        "lanes" => lanes::run(opts),
        "snapshot" => snapshot::run(opts),
        "ecs" => ecs::run(opts).and_then(|mut figures| {
            figures.extend(ecs_suite::run(opts)?);
            figures.extend(ecs_soa::run(opts.quick)?);
            figures.extend(ecs_changed::rows(if opts.quick { 15 } else { 41 })?);
            Ok(figures)
        }),
        _ => return None,
    })
}

/// One line of machine facts for stderr: CPU model, logical cores, build level.
pub fn machine_line() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let level = if cfg!(target_feature = "avx2") && cfg!(target_feature = "fma") {
        "x86-64-v3 (AVX2+FMA)"
    } else {
        "baseline"
    };
    format!("# machine: {cpu}; {cores} logical cores; build level {level}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_has_ratio_only_with_baseline() {
        let f = Figure::new("dispatch", "chain", 1, "ns_per_link", "ns", 12.0);
        let v: serde_json::Value = serde_json::from_str(&f.to_json()).unwrap();
        assert_eq!(v["suite"], "dispatch");
        assert!(v.get("ratio").is_none());
        let f = f.with_baseline("rayon", 48.0);
        let v: serde_json::Value = serde_json::from_str(&f.to_json()).unwrap();
        assert_eq!(v["ratio"], 0.25);
        assert_eq!(v["baseline"], "rayon");
        assert_eq!(v["baseline_value"], 48.0);
    }

    #[test]
    fn unknown_suite_is_none() {
        assert!(run_suite("nope", BenchOptions::default()).is_none());
    }
}
