//! Metric names, units and the list of well-known metrics.
//!
//! Owns: the naming rules, the mapping from a dot name to its OpenMetrics family name, and
//! [`WELL_KNOWN_METRICS`], the names the engine itself registers. Must never: be consulted on a
//! hot path (names are checked once, at registration).
//!
//! # Rules
//! A name is 1 to [`MAX_NAME_LEN`] bytes of dot-separated segments; each segment is non-empty
//! lowercase ASCII snake_case (`[a-z0-9_]`), and the name starts with a letter. Lane, system and
//! pass names that come from users go through [`sanitize_segment`] first.
//!
//! The exported (OpenMetrics) family name is `lanegraph_` + the name with dots turned into
//! underscores + `_<unit>` when the metric has a unit and the name does not already end with it
//! (OpenMetrics requires a family with a `UNIT` line to end in that unit). Because two dot names
//! could map to one family (`a.b_c`, `a_b.c`), the registry also refuses export-name clashes; and
//! because OpenMetrics gives `_total`, `_bucket`, `_count`, `_sum`, `_created`, `_info`, `_gcount`
//! and `_gsum` meaning, a family may not end in one of them.

use std::fmt;

/// Longest accepted metric name, in bytes (long enough for `gpu.pass.<name>.time` with a
/// 64-byte pass name; short enough that an exposition line stays readable).
pub const MAX_NAME_LEN: usize = 128;

/// The prefix of every exported family name.
pub const EXPORT_PREFIX: &str = "lanegraph_";

/// Suffixes OpenMetrics reserves for samples of a family; a family name may not end in one.
pub const RESERVED_SUFFIXES: &[&str] = &[
    "_total", "_bucket", "_count", "_sum", "_created", "_info", "_gcount", "_gsum",
];

/// What kind of metric a name holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    /// Monotonic count (`add` only), exported with `_total`.
    Counter,
    /// A value that goes up and down (last write wins).
    Gauge,
    /// Observations counted into fixed buckets, with their sum and count.
    Histogram,
}

impl MetricKind {
    /// The OpenMetrics `TYPE` keyword (also its `Display`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            MetricKind::Counter => "counter",
            MetricKind::Gauge => "gauge",
            MetricKind::Histogram => "histogram",
        }
    }
}

impl fmt::Display for MetricKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The unit of a metric's values. OpenMetrics prefers base units (seconds, bytes); frame-level
/// timings are kept in the unit people read them in (milliseconds) and say so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Dimensionless count, no `UNIT` line.
    None,
    /// Bytes.
    Bytes,
    /// Seconds.
    Seconds,
    /// Milliseconds.
    Milliseconds,
    /// Microseconds.
    Microseconds,
    /// Nanoseconds.
    Nanoseconds,
    /// A dimensionless ratio (1.0 = 100%).
    Ratio,
}

impl Unit {
    /// The OpenMetrics unit string (empty for [`Unit::None`]; also its `Display`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::Bytes => "bytes",
            Unit::Seconds => "seconds",
            Unit::Milliseconds => "milliseconds",
            Unit::Microseconds => "microseconds",
            Unit::Nanoseconds => "nanoseconds",
            Unit::Ratio => "ratio",
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Checks `name` against the rules above.
pub fn validate(name: &str) -> Result<(), crate::RegisterError> {
    let fail = |why: &str| {
        Err(crate::RegisterError::InvalidName {
            name: name.to_string(),
            why: why.to_string(),
        })
    };
    if name.is_empty() {
        return fail("it is empty");
    }
    if name.len() > MAX_NAME_LEN {
        return fail(&format!(
            "it is {} bytes long (at most {MAX_NAME_LEN})",
            name.len()
        ));
    }
    if !name.as_bytes()[0].is_ascii_lowercase() {
        return fail("it must start with a lowercase letter");
    }
    for segment in name.split('.') {
        if segment.is_empty() {
            return fail("it has an empty segment (a leading, trailing or doubled dot)");
        }
        if let Some(c) = segment
            .chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_'))
        {
            return fail(&format!(
                "segment `{segment}` contains {c:?} (only a-z, 0-9 and _ are allowed)"
            ));
        }
    }
    Ok(())
}

/// The OpenMetrics family name of a (valid) metric name with `unit`.
pub fn export_name(name: &str, unit: Unit) -> String {
    let mut out = String::with_capacity(EXPORT_PREFIX.len() + name.len() + 16);
    out.push_str(EXPORT_PREFIX);
    out.extend(name.chars().map(|c| if c == '.' { '_' } else { c }));
    let u = unit.as_str();
    if !u.is_empty() && !out.ends_with(&format!("_{u}")) {
        out.push('_');
        out.push_str(u);
    }
    out
}

/// Checks that the family name does not end in a suffix OpenMetrics reserves.
pub fn check_reserved_suffix(name: &str, exported: &str) -> Result<(), crate::RegisterError> {
    match RESERVED_SUFFIXES.iter().find(|s| exported.ends_with(*s)) {
        None => Ok(()),
        Some(s) => Err(crate::RegisterError::InvalidName {
            name: name.to_string(),
            why: format!(
                "its exported name `{exported}` ends in `{s}`, which OpenMetrics reserves for \
                 sample suffixes (e.g. name a counter `asset.loads`, not `asset.load_count`)"
            ),
        }),
    }
}

/// Turns any label (a lane, system or pass name such as `MoveShips` or `shadow-map`) into a valid
/// name segment: lowercase, CamelCase split with `_`, anything else `_`, never empty, never
/// starting with a digit (a leading `n` is added).
pub fn sanitize_segment(label: &str) -> String {
    let mut out = String::with_capacity(label.len() + 4);
    let mut prev_lower = false;
    for c in label.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
            prev_lower = true;
        } else {
            if !out.ends_with('_') {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    let trimmed = out.trim_matches('_');
    let mut s = if trimmed.is_empty() {
        "unnamed".to_string()
    } else {
        trimmed.to_string()
    };
    if s.as_bytes()[0].is_ascii_digit() {
        s.insert(0, 'n');
    }
    s
}

/// `lane.<lane>.<metric>` with the lane name sanitised.
pub fn lane_metric(lane: &str, metric: &str) -> String {
    format!("lane.{}.{metric}", sanitize_segment(lane))
}

/// `system.<system>.<metric>` with the system name sanitised.
pub fn system_metric(system: &str, metric: &str) -> String {
    format!("system.{}.{metric}", sanitize_segment(system))
}

/// `gpu.pass.<pass>.<metric>` with the pass name sanitised.
pub fn gpu_pass_metric(pass: &str, metric: &str) -> String {
    format!("gpu.pass.{}.{metric}", sanitize_segment(pass))
}

/// One entry of the well-known list: the engine registers these names itself; games may read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WellKnownMetric {
    /// The dot name (its labels, if any, are in `labels`).
    pub pattern: &'static str,
    /// Label names each series carries (`lane`): one series per lane, one family in all.
    pub labels: &'static [&'static str],
    /// Its kind.
    pub kind: MetricKind,
    /// Its unit.
    pub unit: Unit,
    /// What it measures.
    pub help: &'static str,
}

const fn wk(
    pattern: &'static str,
    kind: MetricKind,
    unit: Unit,
    help: &'static str,
) -> WellKnownMetric {
    labelled(pattern, &[], kind, unit, help)
}

/// A metric with one series per value of `labels` (`lane`, `system`, `pass`, `agent`).
const fn labelled(
    pattern: &'static str,
    labels: &'static [&'static str],
    kind: MetricKind,
    unit: Unit,
    help: &'static str,
) -> WellKnownMetric {
    WellKnownMetric {
        pattern,
        labels,
        kind,
        unit,
        help,
    }
}

use MetricKind::{Counter as C, Gauge as G, Histogram as H};

/// Every metric a running engine registers (the `Engine`, with the tracking allocator's and the
/// span store's). `docs/telemetry.md` renders this table; `tests/it/telemetry_metrics.rs`
/// scrapes a running engine and checks the scrape against this list and this list against the
/// docs, both directions.
pub const WELL_KNOWN_METRICS: &[WellKnownMetric] = &[
    wk(
        "frame.time",
        H,
        Unit::Seconds,
        "Wall time of one frame on the owner thread.",
    ),
    wk("frame.completed", C, Unit::None, "Frames completed."),
    wk(
        "frame.sim_steps",
        C,
        Unit::None,
        "Fixed simulation steps taken.",
    ),
    wk(
        "frame.steps_dropped",
        C,
        Unit::None,
        "Fixed steps dropped by the 5-step cap (slow motion).",
    ),
    wk(
        "frame.target",
        G,
        Unit::Seconds,
        "The budget controller's current frame-time target.",
    ),
    wk(
        "frame.over_target",
        C,
        Unit::None,
        "Frames whose wall time exceeded the target.",
    ),
    wk(
        "frame.interpolation_alpha",
        G,
        Unit::Ratio,
        "Leftover of the fixed-step accumulator, 0..1.",
    ),
    labelled(
        "lane.jobs",
        &["lane"],
        C,
        Unit::None,
        "Jobs the lane's workers popped.",
    ),
    labelled(
        "lane.busy",
        &["lane"],
        G,
        Unit::Ratio,
        "Share of the last frame the lane's workers were busy.",
    ),
    labelled(
        "lane.queue_depth",
        &["lane"],
        G,
        Unit::None,
        "Jobs waiting on the lane at the frame's end.",
    ),
    labelled(
        "lane.panics",
        &["lane"],
        C,
        Unit::None,
        "Detached jobs on the lane that panicked (the lane lives on).",
    ),
    labelled(
        "system.runs",
        &["system"],
        C,
        Unit::None,
        "Runs of the system.",
    ),
    labelled(
        "system.over_budget",
        &["system"],
        C,
        Unit::None,
        "Runs strictly above the system's budget.",
    ),
    labelled(
        "system.last_time",
        &["system"],
        G,
        Unit::Seconds,
        "The system's last run time.",
    ),
    wk(
        "gpu.frame.time",
        G,
        Unit::Seconds,
        "GPU time of the whole frame (EMA-smoothed).",
    ),
    labelled(
        "gpu.pass.time",
        &["pass"],
        G,
        Unit::Seconds,
        "GPU time of one pass (EMA-smoothed).",
    ),
    labelled(
        "gpu.memory.usage",
        &["heap"],
        G,
        Unit::Bytes,
        "GPU memory this process uses in the heap (VK_EXT_memory_budget).",
    ),
    labelled(
        "gpu.memory.budget",
        &["heap"],
        G,
        Unit::Bytes,
        "GPU memory this process may use in the heap.",
    ),
    wk(
        "gpu.memory.churn",
        G,
        Unit::None,
        "GPU allocations plus frees per second, between the last two readings.",
    ),
    wk(
        "gpu.memory.churn_alerts",
        C,
        Unit::None,
        "GPU allocation churn warnings logged (at most one per 10 s).",
    ),
    wk(
        "present.frames",
        C,
        Unit::None,
        "Images presented to the window.",
    ),
    wk(
        "present.acquire_wait",
        G,
        Unit::Seconds,
        "How long the last swapchain acquire blocked (FIFO paces here).",
    ),
    wk(
        "present.interval",
        H,
        Unit::Seconds,
        "Time between consecutive presents.",
    ),
    wk(
        "present.frames_in_flight",
        G,
        Unit::None,
        "GPU frames submitted and not finished, after the last submit.",
    ),
    wk(
        "memory.current_bytes",
        G,
        Unit::Bytes,
        "Heap bytes live now (tracking allocator).",
    ),
    wk(
        "memory.allocated_lifetime",
        C,
        Unit::Bytes,
        "Heap bytes ever allocated (tracking allocator).",
    ),
    wk(
        "memory.net_allocations",
        G,
        Unit::None,
        "Allocations minus frees (tracking allocator).",
    ),
    wk("asset.pending", G, Unit::None, "Asset requests in flight."),
    wk("asset.loaded", C, Unit::None, "Assets loaded and applied."),
    wk(
        "asset.failed",
        C,
        Unit::None,
        "Asset requests that ended in an error.",
    ),
    wk(
        "budget.multiplier",
        G,
        Unit::Ratio,
        "The PID's global budget multiplier.",
    ),
    labelled(
        "budget.strategy",
        &["agent"],
        G,
        Unit::None,
        "Index of the agent's current strategy (0: its first, fullest one).",
    ),
    wk(
        "budget.switches",
        C,
        Unit::None,
        "Strategy switches, each logged with its reason.",
    ),
    wk(
        "telemetry.spans_dropped",
        C,
        Unit::None,
        "Trace spans overwritten before collection.",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_good_names() {
        for n in [
            "frame.time",
            "lane.physics.jobs",
            "a",
            "gpu.pass.shadow_map2.time",
        ] {
            validate(n).unwrap();
        }
    }

    #[test]
    fn rejects_bad_names_with_the_rule_broken() {
        for (n, part) in [
            ("", "empty"),
            ("Frame.time", "lowercase letter"),
            ("1frame", "lowercase letter"),
            ("frame..time", "empty segment"),
            ("frame.", "empty segment"),
            ("frame.Time", "contains 'T'"),
            ("frame-time", "contains '-'"),
        ] {
            let e = validate(n).unwrap_err();
            assert!(e.to_string().contains(part), "{n}: {e}");
            assert!(e.to_string().contains("fix:"));
        }
        assert!(validate(&"a".repeat(MAX_NAME_LEN + 1)).is_err());
    }

    #[test]
    fn export_names_append_the_unit_once() {
        assert_eq!(
            export_name("frame.time", Unit::Milliseconds),
            "lanegraph_frame_time_milliseconds"
        );
        assert_eq!(
            export_name("memory.current_bytes", Unit::Bytes),
            "lanegraph_memory_current_bytes"
        );
        assert_eq!(
            export_name("frame.completed", Unit::None),
            "lanegraph_frame_completed"
        );
    }

    #[test]
    fn reserved_suffixes_are_refused() {
        let e =
            check_reserved_suffix("asset.load_count", "lanegraph_asset_load_count").unwrap_err();
        assert!(e.to_string().contains("_count"), "{e}");
        check_reserved_suffix("asset.loads", "lanegraph_asset_loads").unwrap();
    }

    #[test]
    fn sanitize_gives_valid_segments() {
        assert_eq!(sanitize_segment("MoveShips"), "move_ships");
        assert_eq!(sanitize_segment("shadow-map"), "shadow_map");
        assert_eq!(sanitize_segment("2d UI"), "n2d_ui");
        assert_eq!(sanitize_segment("--"), "unnamed");
        for l in ["MoveShips", "shadow-map", "2d UI", "--", "é"] {
            validate(&lane_metric(l, "jobs")).unwrap();
        }
    }

    #[test]
    fn every_well_known_pattern_is_a_valid_exportable_name() {
        for m in WELL_KNOWN_METRICS {
            let name = m
                .pattern
                .replace("<lane>", "physics")
                .replace("<system>", "move_ships")
                .replace("<pass>", "shadow");
            validate(&name).unwrap();
            check_reserved_suffix(&name, &export_name(&name, m.unit)).unwrap();
        }
    }
}
