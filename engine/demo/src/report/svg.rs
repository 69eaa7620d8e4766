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

/// A line chart of `series` with axis labels (`x_unit`, `y_unit`).
pub fn line_chart(id: &str, series: &[Series<'_>], x_unit: &str, y_unit: &str) -> String {
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
    let y1 = if y1 <= 0.0 { 1.0 } else { y1 * 1.1 };
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
    if rows.is_empty() {
        return format!("<p class=\"empty\" id=\"{id}\">no systems</p>");
    }
    const ROW: f64 = 24.0;
    const LABEL: f64 = 150.0;
    let max = rows
        .iter()
        .map(|r| r.2.max(r.3.unwrap_or(0.0)))
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
            "<text class=\"track{}\" x=\"4\" y=\"{:.1}\">{}</text><rect class=\"p99{}\" x=\"{LABEL}\" y=\"{:.1}\" width=\"{:.2}\" height=\"8\"><title>p99 {:.4} ms</title></rect><rect class=\"p50\" x=\"{LABEL}\" y=\"{:.1}\" width=\"{:.2}\" height=\"8\"><title>p50 {:.4} ms</title></rect>",
            if breach { " breach" } else { "" },
            y + 15.0,
            esc(name),
            if breach { " breach" } else { "" },
            y + 4.0,
            (sx(*p99) - LABEL).max(0.5),
            p99,
            y + 12.0,
            (sx(*p50) - LABEL).max(0.5),
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
