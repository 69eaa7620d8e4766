//! OpenMetrics 1.0 text exposition of every registered metric.
//!
//! Owns: rendering a registry snapshot as `application/openmetrics-text`. Must never: run on a
//! hot path (it snapshots and allocates), or emit a document a conforming parser rejects.
//!
//! # Shape
//! Per metric family, in name order: `# TYPE`, `# UNIT` (when the metric has one; the family name
//! ends with it, see [`super::names::export_name`]), `# HELP`, then its samples:
//! - counter: `<family>_total <integer>`;
//! - gauge: `<family> <float>`;
//! - histogram: cumulative `<family>_bucket{le="<bound>"}` samples ending with `le="+Inf"`, then
//!   `<family>_count` and `<family>_sum`. OpenMetrics forbids `_sum` when a bucket bound is
//!   negative (the sum would not be monotonic), and `_count` requires `_sum`, so such a histogram
//!   exports its buckets only.
//!
//! The document ends with `# EOF` and a newline. Floats are written exactly enough to round-trip
//! (Rust's shortest representation), infinities as `+Inf`/`-Inf`, NaN as `NaN`.

use std::fmt::Write;

use super::registry::{MetricSnapshot, MetricValue, Registry};

/// The `Content-Type` of an exposition.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Renders every metric of `registry`.
pub fn render(registry: &Registry) -> String {
    render_snapshot(&registry.snapshot())
}

impl Registry {
    /// Every metric as OpenMetrics 1.0 text, for a scraper or a file (`metrics.prom`): what
    /// [`render`] writes and the HTTP endpoint serves. (Declared here, beside the format, so
    /// the registry does not import its exporter.)
    pub fn to_openmetrics(&self) -> String {
        render(self)
    }
}

/// Renders a snapshot (already sorted by name, then labels, by [`RegistryHooks::snapshot`](crate::hooks::RegistryHooks::snapshot)): one
/// `TYPE`/`UNIT`/`HELP` header per family, then every label set's samples.
pub fn render_snapshot(metrics: &[MetricSnapshot]) -> String {
    let mut out = String::with_capacity(256 * metrics.len() + 8);
    let mut family: Option<&str> = None;
    for m in metrics {
        let d = &m.desc;
        let fam = &d.exported;
        // Writing to a String cannot fail.
        if family != Some(fam.as_str()) {
            family = Some(fam.as_str());
            let _ = writeln!(out, "# TYPE {fam} {}", d.kind.as_str());
            if !d.unit.as_str().is_empty() {
                let _ = writeln!(out, "# UNIT {fam} {}", d.unit.as_str());
            }
            if !d.help.is_empty() {
                let _ = writeln!(out, "# HELP {fam} {}", escape(&d.help));
            }
        }
        let labels = label_text(&d.labels, None);
        match &m.value {
            MetricValue::Counter { value } => {
                let _ = writeln!(out, "{fam}_total{labels} {value}");
            }
            MetricValue::Gauge { value } => {
                let _ = writeln!(out, "{fam}{labels} {}", float(*value));
            }
            MetricValue::Histogram(h) => {
                let cumulative = h.cumulative();
                for (i, c) in cumulative.iter().enumerate() {
                    let le = h
                        .bounds
                        .get(i)
                        .map_or_else(|| "+Inf".to_string(), |b| float(*b));
                    let with_le = label_text(&d.labels, Some(&le));
                    let _ = writeln!(out, "{fam}_bucket{with_le} {c}");
                }
                if h.bounds.iter().all(|b| *b >= 0.0) {
                    let _ = writeln!(out, "{fam}_count{labels} {}", h.count);
                    let _ = writeln!(out, "{fam}_sum{labels} {}", float(h.sum));
                }
            }
        }
    }
    out.push_str("# EOF\n");
    out
}

/// `{a="x",b="y"}` (with `le` last when given), or nothing without labels.
fn label_text(labels: &[(String, String)], le: Option<&str>) -> String {
    if labels.is_empty() && le.is_none() {
        return String::new();
    }
    let mut out = String::from("{");
    for (i, (l, v)) in labels.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{l}=\"{}\"", escape(v));
    }
    if let Some(le) = le {
        if !labels.is_empty() {
            out.push(',');
        }
        let _ = write!(out, "le=\"{le}\"");
    }
    out.push('}');
    out
}

/// An OpenMetrics float.
pub fn float(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

/// Escapes a `HELP` text or a label value: backslash, double quote and newline.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{Buckets, Unit};
    use super::*;

    #[test]
    fn renders_all_three_kinds() {
        let r = Registry::default();
        r.register_counter("frame.completed", &[], Unit::None, "Frames completed.")
            .unwrap()
            .add(3);
        r.register_gauge(
            "budget.multiplier",
            &[],
            Unit::Ratio,
            "PID \"output\"\nline two",
        )
        .unwrap()
        .set(0.75);
        let h = r
            .register_histogram(
                "frame.time",
                &[],
                Unit::Milliseconds,
                "Frame time.",
                Buckets::new(vec![8.0, 16.0]).unwrap(),
            )
            .unwrap();
        for v in [5.0, 10.0, 20.0] {
            h.observe(v);
        }
        let text = render(&r);
        let expected = "\
# TYPE lanegraph_budget_multiplier_ratio gauge
# UNIT lanegraph_budget_multiplier_ratio ratio
# HELP lanegraph_budget_multiplier_ratio PID \\\"output\\\"\\nline two
lanegraph_budget_multiplier_ratio 0.75
# TYPE lanegraph_frame_completed counter
# HELP lanegraph_frame_completed Frames completed.
lanegraph_frame_completed_total 3
# TYPE lanegraph_frame_time_milliseconds histogram
# UNIT lanegraph_frame_time_milliseconds milliseconds
# HELP lanegraph_frame_time_milliseconds Frame time.
lanegraph_frame_time_milliseconds_bucket{le=\"8.0\"} 1
lanegraph_frame_time_milliseconds_bucket{le=\"16.0\"} 2
lanegraph_frame_time_milliseconds_bucket{le=\"+Inf\"} 3
lanegraph_frame_time_milliseconds_count 3
lanegraph_frame_time_milliseconds_sum 35.0
# EOF
";
        assert_eq!(text, expected);
    }

    #[test]
    fn label_sets_of_one_name_are_one_family() {
        let r = Registry::default();
        r.register_gauge("lane.busy", &[("lane", "render")], Unit::Ratio, "Busy.")
            .unwrap()
            .set(0.5);
        r.register_gauge("lane.busy", &[("lane", "phys\"ics")], Unit::Ratio, "Busy.")
            .unwrap()
            .set(0.25);
        let text = render(&r);
        assert_eq!(
            text,
            "# TYPE lanegraph_lane_busy_ratio gauge\n# UNIT lanegraph_lane_busy_ratio ratio\n\
             # HELP lanegraph_lane_busy_ratio Busy.\n\
             lanegraph_lane_busy_ratio{lane=\"phys\\\"ics\"} 0.25\n\
             lanegraph_lane_busy_ratio{lane=\"render\"} 0.5\n# EOF\n"
        );
        // A label set may not change the family's kind; bad label names are typed errors.
        assert!(r
            .register_counter("lane.busy", &[("lane", "asset")], Unit::Ratio, "")
            .is_err());
        for bad in ["le", "__x", "9a", "a-b", ""] {
            let e = r
                .register_gauge("lane.other", &[(bad, "v")], Unit::None, "")
                .unwrap_err();
            assert!(e.to_string().contains("fix:"), "{e}");
        }
        let long = "x".repeat(300);
        assert!(r
            .register_gauge("lane.other", &[("lane", &long)], Unit::None, "")
            .is_err());
    }

    #[test]
    fn negative_bounds_drop_sum_and_count() {
        let r = Registry::default();
        let h = r
            .register_histogram(
                "budget.error",
                &[],
                Unit::Milliseconds,
                "",
                Buckets::new(vec![-1.0, 1.0]).unwrap(),
            )
            .unwrap();
        h.observe(-5.0);
        let text = render(&r);
        assert!(text.contains("le=\"-1.0\"} 1"));
        assert!(!text.contains("_sum") && !text.contains("_count"));
    }

    #[test]
    fn floats_round_trip() {
        assert_eq!(float(1.0), "1.0");
        assert_eq!(float(0.1), "0.1");
        assert_eq!(float(f64::INFINITY), "+Inf");
        assert_eq!(float(f64::NAN), "NaN");
        assert_eq!(float(1e-7).parse::<f64>().unwrap(), 1e-7);
    }
}
