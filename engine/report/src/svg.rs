//! Inline SVG charts: line charts and the lane timeline, as strings.
//!
//! Owns: the chart geometry. Must never: reference anything outside the document (no fonts,
//! scripts or images from the network: the report is self-contained).

use std::fmt::Write;

/// Escapes text for HTML and SVG.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// One series of a line chart.
#[derive(Debug, Clone)]
pub struct Series<'a> {
    /// Legend label.
    pub label: &'a str,
    /// CSS class (colour).
    pub class: &'a str,
    /// Points, x then y.
    pub points: Vec<(f64, f64)>,
}

const W: f64 = 900.0;
const H: f64 = 220.0;
const PAD_L: f64 = 56.0;
const PAD_B: f64 = 28.0;
const PAD_T: f64 = 12.0;

/// A line chart of `series` with axis labels (`x_unit`, `y_unit`); the y axis tops at 1.1x the
/// largest value.
pub fn line_chart(id: &str, series: &[Series<'_>], x_unit: &str, y_unit: &str) -> String {
    line_chart_to(id, series, x_unit, y_unit, None)
}

/// [`line_chart`] whose y axis tops at `y_max` exactly when given (a share's 100 %: an axis
/// must not promise more than the quantity can reach).
pub fn line_chart_to(
    id: &str,
    series: &[Series<'_>],
    x_unit: &str,
    y_unit: &str,
    y_max: Option<f64>,
) -> String {
    chart(id, series, x_unit, y_unit, y_max, &[])
}

/// A mark on a chart's x axis: a thin vertical line at `x` whose hover text is `label` (the
/// frame-time chart marks each budget controller decision this way).
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// Where, in the x axis' units.
    pub x: f64,
    /// Hover text.
    pub label: String,
}

/// [`line_chart`] with [`Mark`]s; marks outside the series' x range are left out.
pub fn line_chart_marked(
    id: &str,
    series: &[Series<'_>],
    x_unit: &str,
    y_unit: &str,
    marks: &[Mark],
) -> String {
    chart(id, series, x_unit, y_unit, None, marks)
}

fn chart(
    id: &str,
    series: &[Series<'_>],
    x_unit: &str,
    y_unit: &str,
    y_max: Option<f64>,
    marks: &[Mark],
) -> String {
    let pts = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0.0f64);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        if y.is_finite() {
            y1 = y1.max(y);
        }
    }
    if x0 > x1 {
        return format!("<p class=\"empty\" id=\"{id}\">no data</p>");
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let y1 = match y_max {
        Some(m) if m > 0.0 => m,
        _ if y1 <= 0.0 => 1.0,
        _ => y1 * 1.1,
    };
    let sx = |x: f64| PAD_L + (x - x0) / (x1 - x0) * (W - PAD_L - 8.0);
    let sy = |y: f64| PAD_T + (1.0 - y / y1) * (H - PAD_T - PAD_B);
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg id=\"{id}\" class=\"chart\" viewBox=\"0 0 {W} {H}\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    for k in 0..=4 {
        let y = y1 * f64::from(k) / 4.0;
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{PAD_L}\" x2=\"{}\" y1=\"{:.1}\" y2=\"{:.1}\"/><text class=\"axis\" x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            W - 8.0,
            sy(y),
            sy(y),
            PAD_L - 4.0,
            sy(y) + 4.0,
            fmt_num(y)
        );
    }
    let _ = write!(
        s,
        "<text class=\"axis\" x=\"{PAD_L}\" y=\"{}\">{}</text><text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{} ({})</text><text class=\"axis\" x=\"4\" y=\"10\">{}</text>",
        H - 8.0,
        fmt_num(x0),
        W - 8.0,
        H - 8.0,
        fmt_num(x1),
        esc(x_unit),
        esc(y_unit)
    );
    for m in marks.iter().filter(|m| (x0..=x1).contains(&m.x)) {
        let _ = write!(
            s,
            "<line class=\"mark\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{PAD_T}\" y2=\"{:.1}\"><title>{}</title></line>",
            H - PAD_B,
            esc(&m.label),
            x = sx(m.x),
        );
    }
    for (i, se) in series.iter().enumerate() {
        let mut d = String::new();
        for (j, &(x, y)) in se.points.iter().enumerate() {
            let y = if y.is_finite() { y } else { 0.0 };
            let _ = write!(
                d,
                "{}{:.1},{:.1}",
                if j == 0 { "M" } else { " L" },
                sx(x),
                sy(y)
            );
        }
        let _ = write!(
            s,
            "<path class=\"line {}\" d=\"{d}\"/><text class=\"legend {}\" x=\"{}\" y=\"{}\">{}</text>",
            esc(se.class),
            esc(se.class),
            PAD_L + 10.0 + 160.0 * i as f64,
            PAD_T + 12.0,
            esc(se.label)
        );
    }
    s.push_str("</svg>");
    s
}

/// One bar of the timeline.
#[derive(Debug, Clone)]
pub struct Bar {
    /// Label (shown on hover).
    pub name: String,
    /// Start, ms from the window's start.
    pub start_ms: f64,
    /// Duration, ms.
    pub dur_ms: f64,
    /// Nesting depth on its track (0: top level).
    pub depth: u32,
}

/// A profiler-style timeline: one row per track, bars by time.
pub fn timeline(id: &str, tracks: &[(String, Vec<Bar>)], window_ms: f64) -> String {
    if tracks.is_empty() || window_ms <= 0.0 {
        return format!("<p class=\"empty\" id=\"{id}\">no spans recorded</p>");
    }
    const ROW: f64 = 26.0;
    const LABEL: f64 = 110.0;
    let h = ROW * tracks.len() as f64 + 24.0;
    let sx = |ms: f64| LABEL + ms / window_ms * (W - LABEL - 8.0);
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg id=\"{id}\" class=\"chart timeline\" viewBox=\"0 0 {W} {h}\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    for (row, (name, bars)) in tracks.iter().enumerate() {
        let y = row as f64 * ROW;
        let _ = write!(
            s,
            "<text class=\"track\" x=\"4\" y=\"{:.1}\">{}</text><line class=\"grid\" x1=\"{LABEL}\" x2=\"{}\" y1=\"{:.1}\" y2=\"{:.1}\"/>",
            y + 16.0,
            esc(name),
            W - 8.0,
            y + ROW,
            y + ROW
        );
        for b in bars {
            let depth = f64::from(b.depth.min(3));
            let x = sx(b.start_ms);
            let w = (sx(b.start_ms + b.dur_ms) - x).max(0.5);
            let _ = write!(
                s,
                "<rect class=\"span d{}\" x=\"{x:.2}\" y=\"{:.1}\" width=\"{w:.2}\" height=\"{:.1}\"><title>{} {:.3} ms</title></rect>",
                b.depth.min(3),
                y + 3.0 + depth * 4.0,
                ROW - 6.0 - depth * 4.0,
                esc(&b.name),
                b.dur_ms
            );
        }
    }
    let _ = write!(
        s,
        "<text class=\"axis\" x=\"{LABEL}\" y=\"{}\">0 ms</text><text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.2} ms</text></svg>",
        h - 4.0,
        W - 8.0,
        h - 4.0,
        window_ms
    );
    s
}

/// Horizontal bars with a budget marker: `(label, p50, p99, budget)`.
pub fn budget_bars(id: &str, rows: &[(String, f64, f64, Option<f64>)]) -> String {
    bars_with(id, rows, ("p50", "p99"))
}

/// [`budget_bars`] whose two bars are named `names` in their hover titles (`("EMA", "raw")`
/// for GPU passes). The axis covers both bars and the budget, whichever is larger.
pub fn bars_with(
    id: &str,
    rows: &[(String, f64, f64, Option<f64>)],
    names: (&str, &str),
) -> String {
    if rows.is_empty() {
        return format!("<p class=\"empty\" id=\"{id}\">no systems</p>");
    }
    const ROW: f64 = 24.0;
    const LABEL: f64 = 150.0;
    let max = rows
        .iter()
        .map(|r| r.1.max(r.2).max(r.3.unwrap_or(0.0)))
        .fold(0.0f64, f64::max)
        .max(1e-6)
        * 1.1;
    let h = ROW * rows.len() as f64 + 20.0;
    let sx = |ms: f64| LABEL + ms / max * (W - LABEL - 8.0);
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg id=\"{id}\" class=\"chart\" viewBox=\"0 0 {W} {h}\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    for (i, (name, p50, p99, budget)) in rows.iter().enumerate() {
        let y = i as f64 * ROW;
        let breach = budget.is_some_and(|b| *p99 > b);
        let _ = write!(
            s,
            "<text class=\"track{}\" x=\"4\" y=\"{:.1}\">{}</text><rect class=\"p99{}\" x=\"{LABEL}\" y=\"{:.1}\" width=\"{:.2}\" height=\"8\"><title>{} {:.4} ms</title></rect><rect class=\"p50\" x=\"{LABEL}\" y=\"{:.1}\" width=\"{:.2}\" height=\"8\"><title>{} {:.4} ms</title></rect>",
            if breach { " breach" } else { "" },
            y + 15.0,
            esc(name),
            if breach { " breach" } else { "" },
            y + 4.0,
            (sx(*p99) - LABEL).max(0.5),
            names.1,
            p99,
            y + 12.0,
            (sx(*p50) - LABEL).max(0.5),
            names.0,
            p50
        );
        if let Some(b) = budget {
            let x = sx(*b);
            let _ = write!(
                s,
                "<line class=\"budget\" x1=\"{x:.2}\" x2=\"{x:.2}\" y1=\"{:.1}\" y2=\"{:.1}\"><title>budget {b:.3} ms</title></line>",
                y + 2.0,
                y + ROW - 2.0
            );
        }
    }
    let _ = write!(
        s,
        "<text class=\"axis\" x=\"{LABEL}\" y=\"{}\">0</text><text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{} ms</text></svg>",
        h - 4.0,
        W - 8.0,
        h - 4.0,
        fmt_num(max)
    );
    s
}

/// Bins of [`histogram`] over `[0, 2 * budget)`, plus one for everything past it.
pub const HISTOGRAM_BINS: usize = 16;

/// A histogram of `values_ms`: [`HISTOGRAM_BINS`] bins of an eighth of `budget_ms` each (or of
/// the largest value over 16 when there is no budget), the last bin holding everything past
/// them, and a line at the budget.
pub fn histogram(
    id: &str,
    values_ms: &[f64],
    budget_ms: Option<f64>,
    target_ms: Option<f64>,
) -> String {
    let finite: Vec<f64> = values_ms
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    if finite.is_empty() {
        return format!("<p class=\"empty\" id=\"{id}\">no data</p>");
    }
    let largest = finite.iter().copied().fold(0.0f64, f64::max);
    let width = match budget_ms {
        Some(b) if b > 0.0 => b / 8.0,
        _ => (largest / HISTOGRAM_BINS as f64).max(1e-6),
    };
    let mut counts = [0usize; HISTOGRAM_BINS + 1];
    for v in &finite {
        let bin = ((v / width).floor().max(0.0) as usize).min(HISTOGRAM_BINS);
        counts[bin] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let n = counts.len() as f64;
    let bw = (W - PAD_L - 8.0) / n;
    let sy = |c: f64| PAD_T + (1.0 - c / top) * (H - PAD_T - PAD_B);
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg id=\"{id}\" class=\"chart\" viewBox=\"0 0 {W} {H}\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    for (i, &c) in counts.iter().enumerate() {
        let lo = width * i as f64;
        let label = if i == HISTOGRAM_BINS {
            format!(">= {:.2} ms: {c} frames", lo)
        } else {
            format!("{:.2}-{:.2} ms: {c} frames", lo, lo + width)
        };
        let _ = write!(
            s,
            "<rect class=\"frame\" x=\"{:.2}\" y=\"{:.1}\" width=\"{:.2}\" height=\"{:.1}\"><title>{}</title></rect>",
            PAD_L + bw * i as f64,
            sy(c as f64),
            (bw - 1.0).max(0.5),
            H - PAD_B - sy(c as f64),
            esc(&label)
        );
    }
    // The controller's target (a dashed red line), where it falls inside the drawn bins.
    if let Some(t) = target_ms.filter(|t| t.is_finite() && *t > 0.0) {
        let x = (PAD_L + bw * (t / width)).min(W - 8.0);
        let _ = write!(
            s,
            "<line class=\"line target\" x1=\"{x:.2}\" x2=\"{x:.2}\" y1=\"{PAD_T}\" y2=\"{:.1}\"><title>target {t:.2} ms (median over the run)</title></line>",
            H - PAD_B
        );
    }
    if let Some(b) = budget_ms.filter(|b| *b > 0.0) {
        let x = PAD_L + bw * (b / width);
        let _ = write!(
            s,
            "<line class=\"budget\" x1=\"{x:.2}\" x2=\"{x:.2}\" y1=\"{PAD_T}\" y2=\"{:.1}\"><title>budget {b:.2} ms</title></line>",
            H - PAD_B
        );
    }
    let _ = write!(
        s,
        "<text class=\"axis\" x=\"{PAD_L}\" y=\"{}\">0 ms</text><text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{} ms and over</text><text class=\"axis\" x=\"4\" y=\"10\">frames (top {})</text></svg>",
        H - 8.0,
        W - 8.0,
        H - 8.0,
        fmt_num(width * HISTOGRAM_BINS as f64),
        top as usize
    );
    s
}

fn fmt_num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_draws() {
        assert_eq!(esc("<a & 'b'>"), "&lt;a &amp; &#39;b&#39;&gt;");
        let c = line_chart(
            "t",
            &[Series {
                label: "x<y",
                class: "a",
                points: vec![(1.0, 2.0), (2.0, 3.0)],
            }],
            "frame",
            "ms",
        );
        assert!(c.starts_with("<svg") && c.ends_with("</svg>") && c.contains("x&lt;y"));
        assert!(line_chart("e", &[], "x", "y").contains("no data"));
        let b = budget_bars("b", &[("s".into(), 1.0, 3.0, Some(2.0))]);
        assert!(b.contains("breach"));
    }
}

#[cfg(test)]
mod chart_defects {
    use super::*;

    /// Every `width="..."` of the bars, and the axis's top value.
    fn widths(svg: &str) -> Vec<f64> {
        svg.split("width=\"")
            .skip(1)
            .filter_map(|r| r.split('"').next()?.parse().ok())
            .collect()
    }

    #[test]
    fn bars_stay_inside_their_axis_whichever_is_larger() {
        // GPU rows are (EMA, raw): an EMA above the last raw reading used to overrun the axis.
        let svg = bars_with("gpu", &[("draw".into(), 14.0, 9.0, None)], ("EMA", "raw"));
        let room = W - 150.0 - 8.0;
        for w in widths(&svg) {
            assert!(
                w <= room + 1e-6,
                "bar {w} wider than the axis {room}: {svg}"
            );
        }
        assert!(svg.contains("<title>EMA 14.0000 ms</title>"), "{svg}");
        assert!(svg.contains("<title>raw 9.0000 ms</title>"), "{svg}");
        assert!(!svg.contains("p99") || svg.contains("class=\"p99"), "{svg}");
        assert!(
            !svg.contains("<title>p99"),
            "hover labels name the GPU bars: {svg}"
        );
    }

    #[test]
    fn a_share_axis_tops_at_100_percent() {
        let s = [Series {
            label: "physics",
            class: "busy0",
            points: vec![(1.0, 94.0), (2.0, 97.0)],
        }];
        let svg = line_chart_to("lane-busy", &s, "frame", "% busy", Some(100.0));
        assert!(svg.contains(">100<"), "{svg}");
        assert!(!svg.contains(">107<") && !svg.contains(">103<"), "{svg}");
    }
}

#[cfg(test)]
mod histogram_tests {
    use super::*;

    #[test]
    fn frames_fall_in_their_bins_and_the_tail_is_kept() {
        // Budget 16 ms: bins of 2 ms. 1 ms, 1.5 ms -> bin 0; 17 ms -> bin 8; 100 ms -> the tail.
        let svg = histogram(
            "h",
            &[1.0, 1.5, 17.0, 100.0, f64::NAN],
            Some(16.0),
            Some(12.5),
        );
        assert!(
            svg.contains("<title>0.00-2.00 ms: 2 frames</title>"),
            "{svg}"
        );
        assert!(
            svg.contains("<title>16.00-18.00 ms: 1 frames</title>"),
            "{svg}"
        );
        assert!(
            svg.contains("<title>&gt;= 32.00 ms: 1 frames</title>"),
            "{svg}"
        );
        assert!(svg.contains("budget 16.00 ms"), "{svg}");
        assert!(svg.contains("target 12.50 ms"), "{svg}");
        assert!(histogram("e", &[], Some(16.0), None).contains("no data"));
    }
}
