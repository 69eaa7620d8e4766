//! The HTML report: one self-contained page (inline SVG and CSS, no script, no network) that
//! shows where a run's time went, for any game's finished run: build [`ReportData`] from the
//! engine and the run record it keeps (`ReportData::from_engine`), then write
//! [`render_html`]'s page. The demo's `report.html` and the swarm example's are made this way.
//!
//! Owns: [`ReportData`] (what the page shows, gathered from a finished engine) and
//! [`render_html`]. Must never: fetch anything (no external fonts, scripts or images), or show a
//! figure that was not measured (absent figures say why).
//!
//! Sections: lane timeline of the slowest frames held (one row per thread, like a profiler; the
//! slowest open, the others a click away), frame time over the run against the target, a
//! frame-time histogram against the budget, per-system p50/p99 against budget (breaches highlighted),
//! the controller's decisions with reasons (also marked on the frame-time chart), each agent's
//! ladder (quoted against priced cost, [`ladder`]), lane busy share, memory over time, GPU pass
//! times.

#![deny(unreachable_pub, missing_docs)]

pub mod ladder;
pub mod svg;

use ladder::LadderRow;
use lanegraph::hooks::telemetry::spans::{self, TrackKind};
use lanegraph::hooks::ControllerDriver;
use lanegraph::hooks::{
    layout_rows, EngineHooks, FrameRow, LayoutRow, RunRecorderHooks, TraceHistoryHooks,
};
use lanegraph::runtime::{DecisionEntry, Engine, GpuPass};
use svg::{esc, Bar, Mark, Series};

/// Frames of spans the timeline shows: the slowest of those the trace history holds.
pub const TIMELINE_FRAMES: usize = 3;
/// Most bars drawn in the timeline (a page stays a few hundred KB).
pub const MAX_TIMELINE_BARS: usize = 4_000;

/// One frame's timeline: its number, its time (its `frame` span), its tracks and the window
/// they span, ms.
#[derive(Debug, Clone)]
pub struct TimelineFrame {
    /// The frame's number.
    pub frame: u64,
    /// Its owner-thread time, ms.
    pub ms: f64,
    /// Tracks and their bars.
    pub tracks: Vec<(String, Vec<Bar>)>,
    /// The window the bars span, ms.
    pub window_ms: f64,
}

/// One system's row.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemRow {
    /// Name.
    pub name: String,
    /// Median run, ms.
    pub p50_ms: f64,
    /// 99th percentile run, ms.
    pub p99_ms: f64,
    /// Budget, ms.
    pub budget_ms: Option<f64>,
    /// Runs recorded.
    pub runs: usize,
    /// Runs above budget.
    pub over: usize,
}

/// Everything the page shows.
#[derive(Debug, Clone)]
pub struct ReportData {
    /// Page title.
    pub title: String,
    /// A preformatted block of key figures.
    pub overview: String,
    /// Per-frame rows.
    pub frames: Vec<FrameRow>,
    /// Lane names, in the order of `FrameRow::lane_busy`.
    pub lanes: Vec<String>,
    /// The slowest frames the trace holds, slowest first, each as timeline tracks.
    pub timeline: Vec<TimelineFrame>,
    /// Systems.
    pub systems: Vec<SystemRow>,
    /// Decisions.
    pub decisions: Vec<DecisionEntry>,
    /// GPU passes `(name, raw ms, ema ms)`, or why there are none.
    pub gpu: Result<Vec<GpuPass>, String>,
    /// The configured frame budget, ms.
    pub budget_ms: Option<f64>,
    /// The layout advisor's word on each component.
    pub layout: Vec<LayoutRow>,
    /// Presenting to a window: every present interval (ms), the refresh period (ms) and the
    /// one-line figures; `None` headless.
    pub present: Option<PresentReport>,
    /// The GPU memory monitor's last reading and findings; `None` without one.
    pub gpu_memory: Option<lanegraph::hooks::GpuMemoryEntry>,
    /// Every agent's ladder: quoted against priced cost per strategy ([`ladder`]).
    pub ladders: Vec<LadderRow>,
}

/// The report's present-pacing section.
#[derive(Debug, Clone, PartialEq)]
pub struct PresentReport {
    /// Every present-to-present interval, ms.
    pub intervals_ms: Vec<f64>,
    /// The display's refresh period, ms, when the platform says.
    pub refresh_ms: Option<f64>,
    /// Mode, counts and percentiles in words.
    pub line: String,
}

impl Default for ReportData {
    fn default() -> Self {
        ReportData {
            title: String::new(),
            overview: String::new(),
            frames: Vec::new(),
            lanes: Vec::new(),
            timeline: Vec::new(),
            systems: Vec::new(),
            decisions: Vec::new(),
            gpu: Err("GPU unavailable".into()),
            budget_ms: None,
            layout: Vec::new(),
            present: None,
            gpu_memory: None,
            ladders: Vec::new(),
        }
    }
}

impl ReportData {
    /// Gathers the page's data from a finished run.
    pub fn from_engine(engine: &Engine, title: &str, overview: &str) -> ReportData {
        let rec = engine.run_record();
        let mut systems: Vec<SystemRow> = rec
            .systems()
            .iter()
            .map(|s| SystemRow {
                name: s.name.clone(),
                p50_ms: s.time_ns.percentile(50.0).unwrap_or(0.0) / 1e6,
                p99_ms: s.time_ns.percentile(99.0).unwrap_or(0.0) / 1e6,
                budget_ms: Some(s.budget_ms),
                runs: s.time_ns.count() as usize,
                over: s.over_budget as usize,
            })
            .collect();
        systems.sort_by(|a, b| a.name.cmp(&b.name));
        let decisions = engine
            .controller()
            .log()
            .iter()
            .map(DecisionEntry::from)
            .collect();
        let rs = engine.render_stats();
        let dev = engine.render_device();
        let (device, why) = (dev.name, dev.unavailable);
        let gpu = match (&rs.gpu, device, why) {
            (Some(g), _, _) => Ok(g.passes.clone()),
            (None, Some(d), _) => Err(format!("{d}: no timestamps read yet")),
            (None, None, Some(w)) => Err(format!("GPU unavailable: {w}")),
            (None, None, None) => Err("GPU unavailable".into()),
        };
        ReportData {
            title: title.to_string(),
            overview: overview.to_string(),
            frames: rec.recent(),
            lanes: engine
                .lanes()
                .plan()
                .lanes()
                .iter()
                .map(|l| l.name.clone())
                .collect(),
            timeline: timeline_of(engine),
            systems,
            decisions,
            gpu,
            budget_ms: Some(1000.0 / engine.config().target_fps),
            layout: layout_rows(engine.world()),
            ladders: ladder::ladders_of(engine),
            gpu_memory: lanegraph::hooks::gpu_memory_of(&rs),
            present: rs.present.map(|p| {
                let refresh_ms = (p.refresh_ns > 0).then(|| p.refresh_ns as f64 / 1e6);
                PresentReport {
                    intervals_ms: engine.present_intervals_ms(),
                    refresh_ms,
                    line: format!(
                        "{} frames presented ({}), {} swapchain rebuilds, {} draws skipped while minimised; interval p50 / p99 / max {}",
                        p.presented,
                        p.mode,
                        p.recreated,
                        p.skipped_minimised,
                        rs.present_interval_ms.map_or("n/a".into(), |[a, b, c]| format!("{a:.2} / {b:.2} / {c:.2} ms")),
                    ),
                }
            }),
        }
    }
}

/// The slowest [`TIMELINE_FRAMES`] frames the trace history holds (by their `frame` span),
/// slowest first, each as timeline tracks.
fn timeline_of(engine: &Engine) -> Vec<TimelineFrame> {
    let frame_ms = |f: &lanegraph::hooks::telemetry::FrameSpans<'_>| {
        f.spans
            .iter()
            .filter(|s| s.name == lanegraph::hooks::telemetry::FRAME_SPAN)
            .map(|s| s.duration_ns())
            .max()
            .map(|ns| ns as f64 / 1e6)
    };
    let mut frames: Vec<_> = engine
        .trace()
        .frames()
        .filter_map(|f| Some((frame_ms(&f)?, f)))
        .collect();
    frames.sort_by(|a, b| b.0.total_cmp(&a.0));
    frames
        .into_iter()
        .take(TIMELINE_FRAMES)
        .map(|(ms, f)| {
            let (tracks, window_ms) = tracks_of(f.spans.to_vec());
            TimelineFrame {
                frame: f.frame,
                ms,
                tracks,
                window_ms,
            }
        })
        .collect()
}

/// One frame's spans as timeline tracks, and the window they span, ms.
fn tracks_of(
    mut all: Vec<lanegraph::hooks::telemetry::SpanRecord>,
) -> (Vec<(String, Vec<Bar>)>, f64) {
    if all.is_empty() {
        return (Vec::new(), 0.0);
    }
    spans::sort_for_export(&mut all);
    let t0 = all.iter().map(|s| s.start.as_ns()).min().unwrap_or(0);
    let t1 = all.iter().map(|s| s.end.as_ns()).max().unwrap_or(t0);
    let mut infos = spans::tracks();
    infos.sort_by(|a, b| {
        a.kind
            .order()
            .cmp(&b.kind.order())
            .then(a.name.cmp(&b.name))
    });
    let mut tracks = Vec::new();
    let mut budget = MAX_TIMELINE_BARS / TIMELINE_FRAMES;
    for info in infos {
        let mut bars = Vec::new();
        let mut stack: Vec<u64> = Vec::new();
        for s in all.iter().filter(|s| s.track == info.id) {
            while stack.last().is_some_and(|&end| end <= s.start.as_ns()) {
                stack.pop();
            }
            if budget == 0 {
                break;
            }
            budget -= 1;
            bars.push(Bar {
                name: s.name.to_string(),
                start_ms: (s.start.as_ns() - t0) as f64 / 1e6,
                dur_ms: s.duration_ns() as f64 / 1e6,
                depth: stack.len() as u32,
            });
            stack.push(s.end.as_ns());
        }
        if !bars.is_empty() {
            let label = match &info.kind {
                TrackKind::Owner => "owner".to_string(),
                _ => info.name.clone(),
            };
            tracks.push((label, bars));
        }
    }
    (tracks, (t1 - t0) as f64 / 1e6)
}

const CSS: &str = r#"
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:960px;color:#1d2330;background:#fafbfc}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #dde2ea;padding-bottom:4px}
pre{background:#fff;border:1px solid #dde2ea;padding:10px;overflow:auto;font-size:12px}
.chart{width:100%;height:auto;background:#fff;border:1px solid #dde2ea}
.grid{stroke:#eef1f5;stroke-width:1}.axis{font-size:10px;fill:#667}.track{font-size:11px;fill:#334}
.line{fill:none;stroke-width:1.5}.frame{stroke:#2f6fd6}.target{stroke:#d2452f;stroke-dasharray:5 4}
.memory{stroke:#7a3fc4}.budgetline{stroke:#1d2330;stroke-dasharray:2 3}.legend.budgetline{fill:#1d2330}.legend{font-size:11px}.legend.frame{fill:#2f6fd6}.legend.target{fill:#d2452f}.legend.memory{fill:#7a3fc4}
.mark{stroke:#e08a1e;stroke-width:1;opacity:.7}tr.current td{font-weight:600}
.busy0{stroke:#2f6fd6}.busy1{stroke:#2aa876}.busy2{stroke:#e08a1e}.busy3{stroke:#7a3fc4}.busy4{stroke:#c43f6b}
.legend.busy0{fill:#2f6fd6}.legend.busy1{fill:#2aa876}.legend.busy2{fill:#e08a1e}.legend.busy3{fill:#7a3fc4}.legend.busy4{fill:#c43f6b}
.span.d0{fill:#2f6fd6}.span.d1{fill:#5d97ea}.span.d2{fill:#92bbf3}.span.d3{fill:#c3d9f9}
.p50{fill:#2f6fd6}.p99{fill:#9dbbe9}.p99.breach{fill:#e0523c}.track.breach{fill:#c0301c;font-weight:600}.budget{stroke:#1d2330;stroke-width:2}
table{border-collapse:collapse;width:100%;background:#fff;font-size:12px}th,td{border:1px solid #dde2ea;padding:4px 6px;text-align:left;vertical-align:top}
tr.breach td{background:#fdecea}.empty{color:#667;font-style:italic}
"#;

/// The page.
pub fn render_html(d: &ReportData) -> String {
    let mut h = String::with_capacity(64 * 1024);
    h.push_str("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">");
    h.push_str(&format!(
        "<title>{}</title><style>{CSS}</style></head><body>",
        esc(&d.title)
    ));
    h.push_str(&format!(
        "<h1>{}</h1><pre id=\"overview\">{}</pre>",
        esc(&d.title),
        esc(&d.overview)
    ));

    h.push_str(&format!(
        "<h2>Lane timeline: the {TIMELINE_FRAMES} slowest frames held</h2><p>One row per thread: the owner, then each lane worker. Hover a bar for its name and time. Open a frame to see it; the slowest is open.</p>"
    ));
    if d.timeline.is_empty() {
        h.push_str("<p class=\"empty\" id=\"timeline\">No frames in the trace (spans off, or no frame ran).</p>");
    }
    for (i, f) in d.timeline.iter().enumerate() {
        let id = if i == 0 {
            "timeline".to_string()
        } else {
            format!("timeline-{i}")
        };
        h.push_str(&format!(
            "<details{}><summary>frame {}: {:.2} ms</summary>{}</details>",
            if i == 0 { " open" } else { "" },
            f.frame,
            f.ms,
            svg::timeline(&id, &f.tracks, f.window_ms)
        ));
    }

    let frame_pts = |f: fn(&FrameRow) -> f64| {
        d.frames
            .iter()
            .map(|r| (r.frame as f64, f(r)))
            .collect::<Vec<_>>()
    };
    h.push_str("<h2>Frame time against target</h2><p>Blue: the owner thread's frame time. Red dashed: the budget controller's target (the frame budget less headroom, lowered by the controller under pressure). Black dotted: the configured frame budget. Thin orange lines: the budget controller's decisions (hover for the change and its reason).</p>");
    let marks: Vec<Mark> = d
        .decisions
        .iter()
        .map(|x| Mark {
            x: x.frame as f64,
            label: format!(
                "frame {}: {}: {} -> {} — {}",
                x.frame, x.agent, x.from, x.to, x.reason
            ),
        })
        .collect();
    h.push_str(&svg::line_chart_marked(
        "frame-time",
        &[
            Series {
                label: "frame time",
                class: "frame",
                points: frame_pts(|r| r.frame_ms),
            },
            Series {
                label: "controller target",
                class: "target",
                points: frame_pts(|r| r.target_ms),
            },
            Series {
                label: "frame budget",
                class: "budgetline",
                points: d
                    .budget_ms
                    .map(|b| d.frames.iter().map(|r| (r.frame as f64, b)).collect())
                    .unwrap_or_default(),
            },
        ],
        "frame",
        "ms",
        &marks,
    ));

    h.push_str("<h2>Frame-time histogram</h2><p>Frames per 1/8 of the frame budget (the last bin holds everything past twice the budget); the black line is the budget, the dashed red line the controller's target (its median over the run).</p>");
    let median_target = {
        let mut t: Vec<f64> = d.frames.iter().map(|r| r.target_ms).collect();
        t.sort_by(f64::total_cmp);
        t.get(t.len() / 2).copied()
    };
    h.push_str(&svg::histogram(
        "frame-histogram",
        &d.frames.iter().map(|r| r.frame_ms).collect::<Vec<_>>(),
        d.budget_ms,
        median_target,
    ));

    if let Some(p) = &d.present {
        // The display's refresh period when it says; otherwise the frame budget the game
        // paces to (Xvfb, for one, reports no refresh rate).
        let (reference, what) = match (p.refresh_ms, d.budget_ms) {
            (Some(r), _) => (Some(r), "the display's refresh period"),
            (None, b) => (b, "the frame budget (the display reports no refresh rate)"),
        };
        h.push_str(&format!("<h2>Present pacing</h2><p>Present-to-present intervals of the window, per 1/8 of {what} (the last bin holds everything past twice it); the black line is {what}, the dashed red line 1.5 times it.</p>"));
        h.push_str(&format!("<p id=\"present-line\">{}</p>", esc(&p.line)));
        h.push_str(&svg::histogram(
            "present-histogram",
            &p.intervals_ms,
            reference,
            reference.map(|r| r * 1.5),
        ));
    }

    h.push_str("<h2>Systems: p50 / p99 against budget</h2><p>Dark bar p50, light bar p99, black line the budget; red: p99 over budget.</p>");
    let rows: Vec<_> = d
        .systems
        .iter()
        .map(|s| (s.name.clone(), s.p50_ms, s.p99_ms, s.budget_ms))
        .collect();
    h.push_str(&svg::budget_bars("systems", &rows));
    h.push_str("<table id=\"systems-table\"><tr><th>system</th><th>runs</th><th>p50 ms</th><th>p99 ms</th><th>budget ms</th><th>runs over budget</th></tr>");
    for s in &d.systems {
        let breach = s.budget_ms.is_some_and(|b| s.p99_ms > b);
        h.push_str(&format!(
            "<tr{}><td>{}</td><td>{}</td><td>{:.4}</td><td>{:.4}</td><td>{}</td><td>{}</td></tr>",
            if breach { " class=\"breach\"" } else { "" },
            esc(&s.name),
            s.runs,
            s.p50_ms,
            s.p99_ms,
            s.budget_ms.map_or("-".into(), |b| format!("{b:.3}")),
            s.over
        ));
    }
    h.push_str("</table>");

    h.push_str("<h2>Budget controller decisions</h2>");
    if d.decisions.is_empty() {
        h.push_str("<p class=\"empty\" id=\"decisions\">No strategy switches: every agent held its strategy (the frame fit its target, or strategies were pinned).</p>");
    } else {
        h.push_str("<table id=\"decisions\"><tr><th>frame</th><th>agent</th><th>from</th><th>to</th><th>reason</th></tr>");
        for x in &d.decisions {
            h.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                x.frame,
                esc(&x.agent),
                esc(&x.from),
                esc(&x.to),
                esc(&x.reason)
            ));
        }
        h.push_str("</table>");
    }

    h.push_str(&ladder::ladder_table(&d.ladders));

    h.push_str("<h2>Component layouts</h2><p>The layout advisor's word on each component, from the World's access telemetry over the run (advice only: nothing is repacked).</p>");
    if d.layout.is_empty() {
        h.push_str("<p class=\"empty\" id=\"layout\">No components.</p>");
    } else {
        h.push_str("<table id=\"layout\"><tr><th>component</th><th>layout</th><th>advice</th><th>why</th></tr>");
        for x in &d.layout {
            h.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&x.component),
                esc(&x.layout),
                esc(&x.recommendation),
                esc(&x.reason)
            ));
        }
        h.push_str("</table>");
    }

    h.push_str("<h2>Lane busy share</h2>");
    let busy: Vec<Series<'_>> = d
        .lanes
        .iter()
        .enumerate()
        .map(|(i, name)| Series {
            label: name.as_str(),
            class: ["busy0", "busy1", "busy2", "busy3", "busy4"][i % 5],
            points: d
                .frames
                .iter()
                .map(|r| {
                    (
                        r.frame as f64,
                        r.lane_busy.get(i).copied().unwrap_or(0.0) * 100.0,
                    )
                })
                .collect(),
        })
        .collect();
    h.push_str(&svg::line_chart_to(
        "lane-busy",
        &busy,
        "frame",
        "% busy",
        Some(100.0),
    ));

    h.push_str("<h2>Memory</h2>");
    h.push_str(&svg::line_chart(
        "memory",
        &[Series {
            label: "live heap (MiB)",
            class: "memory",
            points: frame_pts(|r| r.memory_bytes as f64 / (1024.0 * 1024.0)),
        }],
        "frame",
        "MiB",
    ));

    if let Some(m) = &d.gpu_memory {
        let mib = |b: u64| format!("{:.1}", b as f64 / (1 << 20) as f64);
        h.push_str(&format!(
            "<h2>GPU memory</h2><p id=\"gpu-memory-line\">Source: {} ({}). {} MiB live in the renderer's allocations; the controller's GPU memory pressure {:.0} %; allocation churn peaked at {:.0} allocations and frees per second, {} alerts.</p>",
            esc(&m.source),
            if m.source == "memory_budget" {
                "the driver's per-heap usage and budget"
            } else {
                "the renderer's own allocations; budgets are heap sizes"
            },
            mib(m.live_bytes),
            m.pressure * 100.0,
            m.churn_peak_per_second,
            m.churn_alerts
        ));
        h.push_str("<table id=\"gpu-memory\"><tr><th>heap</th><th>device-local</th><th>usage MiB</th><th>budget MiB</th></tr>");
        for heap in &m.heaps {
            h.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                heap.heap,
                if heap.device_local { "yes" } else { "no" },
                heap.usage_bytes.map_or("n/a".into(), mib),
                mib(heap.budget_bytes)
            ));
        }
        h.push_str("</table>");
    }

    h.push_str("<h2>GPU passes</h2>");
    match &d.gpu {
        Ok(passes) if !passes.is_empty() => {
            let rows: Vec<_> = passes
                .iter()
                .map(|p| (p.name.clone(), p.ema_ms, p.raw_ms, None))
                .collect();
            h.push_str(
                "<p>Dark bar EMA, light bar the last raw reading (read two frames late).</p>",
            );
            h.push_str(&svg::bars_with("gpu", &rows, ("EMA", "raw")));
        }
        Ok(_) => h.push_str("<p class=\"empty\" id=\"gpu\">No GPU passes recorded.</p>"),
        Err(why) => h.push_str(&format!("<p class=\"empty\" id=\"gpu\">{}</p>", esc(why))),
    }
    h.push_str("<p>Made by lanegraph. The trace (trace.json) opens in Perfetto; metrics.prom is OpenMetrics text.</p></body></html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run with a GPU memory reading gets its section: the heaps and the churn line.
    #[test]
    fn the_gpu_memory_section_lists_heaps_and_churn() {
        let mut d = ReportData::default();
        assert!(!render_html(&d).contains("id=\"gpu-memory\""));
        d.gpu_memory = Some(lanegraph::hooks::GpuMemoryEntry {
            source: "ledger".into(),
            heaps: vec![lanegraph::hooks::GpuHeapEntry {
                heap: 0,
                device_local: true,
                usage_bytes: None,
                budget_bytes: 2 << 30,
            }],
            live_bytes: 3 << 20,
            pressure: 0.25,
            churn_peak_per_second: 12.0,
            churn_alerts: 1,
        });
        let html = render_html(&d);
        assert!(html.contains("<h2>GPU memory</h2>"));
        assert!(
            html.contains("<td>0</td><td>yes</td><td>n/a</td><td>2048.0</td>"),
            "{html}"
        );
        assert!(html.contains("3.0 MiB live") && html.contains("1 alerts"));
    }

    /// A run that presented gets the present-pacing section: its line and its histogram
    /// against the refresh period; a headless run has neither.
    #[test]
    fn a_windowed_run_shows_its_present_intervals_against_the_refresh() {
        let mut d = ReportData::default();
        assert!(!render_html(&d).contains("present-histogram"));
        d.present = Some(PresentReport {
            intervals_ms: vec![16.6, 16.7, 16.8, 33.4],
            refresh_ms: Some(16.667),
            line: "4 frames presented (fifo)".into(),
        });
        let html = render_html(&d);
        assert!(html.contains("<h2>Present pacing</h2>"));
        assert!(html.contains("id=\"present-histogram\""));
        assert!(html.contains("4 frames presented (fifo)"));
    }

    /// The timeline shows the slowest frames held, slowest first and open, not the last ones.
    #[test]
    fn the_timeline_shows_the_slowest_frames() {
        use lanegraph::systems::SystemDef;
        let mut engine = Engine::builder()
            .lanes_spec("physics=1,render=1,asset=1")
            .lockstep(true)
            .telemetry(true, 32)
            .build()
            .unwrap();
        // Frame 7 (tick 6) is slow by 200 ms, frame 12 by 100 ms; the rest take well under a
        // millisecond (margins wide enough for a loaded machine).
        engine
            .world_mut()
            .register_system(SystemDef::new("stall", 100.0, |_, ctx| {
                let ms = match ctx.tick() {
                    6 => 200,
                    11 => 100,
                    _ => 0,
                };
                std::thread::sleep(std::time::Duration::from_millis(ms));
            }))
            .unwrap();
        for _ in 0..20 {
            engine.frame().unwrap();
        }
        let d = ReportData::from_engine(&engine, "t", "o");
        let frames: Vec<u64> = d.timeline.iter().map(|f| f.frame).collect();
        assert_eq!(&frames[..2], &[7, 12], "{frames:?}");
        assert!(d.timeline[0].ms >= 200.0);
        let html = render_html(&d);
        assert!(
            html.contains("<details open><summary>frame 7:"),
            "the slowest is open"
        );
        assert!(html.contains("id=\"frame-histogram\""));
    }

    #[test]
    fn decisions_are_marked_on_the_frame_plot_and_ladders_are_tabled() {
        let row = |frame: u64, ms: f64| FrameRow {
            frame,
            frame_ms: ms,
            target_ms: 15.0,
            steps: 1,
            physics_ms: 0.0,
            memory_bytes: 0,
            lane_busy: Vec::new(),
            multiplier: 1.0,
        };
        let rung = |strategy: &str, quality: u16, quoted_ms: f64, priced_ms: f64| LadderRow {
            agent: "physics".into(),
            strategy: strategy.into(),
            quality,
            quoted_ms,
            priced_ms,
            evidence: "measured",
            current: quality == 1,
            barred: quality == 2,
        };
        let d = ReportData {
            frames: (1..=50).map(|f| row(f, 10.0)).collect(),
            decisions: vec![
                DecisionEntry {
                    frame: 20,
                    agent: "physics".into(),
                    from: "full".into(),
                    to: "no_detail".into(),
                    reason: "cpu <pressure>".into(),
                },
                // Outside the frames the record holds: no mark.
                DecisionEntry {
                    frame: 900,
                    agent: "physics".into(),
                    from: "no_detail".into(),
                    to: "full".into(),
                    reason: "later".into(),
                },
            ],
            ladders: vec![rung("full", 2, 2.0, 28.0), rung("no_detail", 1, 0.5, 0.5)],
            ..ReportData::default()
        };
        let html = render_html(&d);
        assert_eq!(
            html.matches("class=\"mark\"").count(),
            1,
            "one decision in range"
        );
        assert!(html.contains(
            "<title>frame 20: physics: full -&gt; no_detail — cpu &lt;pressure&gt;</title>"
        ));
        assert!(html.contains("id=\"ladders\""));
        assert!(html.contains("<td>full</td><td>2</td><td>2.000</td><td>28.000</td><td>14.0x</td><td>measured</td><td>barred</td>"), "{html}");
        assert!(html.contains("<tr class=\"current\"><td>physics</td><td>no_detail</td>"));
    }

    #[test]
    fn the_page_is_self_contained_and_escapes_text() {
        let d = ReportData {
            title: "t <b>".into(),
            overview: "a & b".into(),
            decisions: vec![DecisionEntry {
                frame: 3,
                agent: "render".into(),
                from: "full".into(),
                to: "half_res".into(),
                reason: "gpu 14 ms > 12 ms".into(),
            }],
            gpu: Err("GPU unavailable: no driver".into()),
            layout: vec![LayoutRow {
                component: "Pos<x>".into(),
                layout: "AoS".into(),
                recommendation: "SimdFieldSoa".into(),
                reason: "all-f32 rows of 8 B".into(),
            }],
            ..ReportData::default()
        };
        let html = render_html(&d);
        assert!(html.contains("Pos&lt;x&gt;") && html.contains("SimdFieldSoa"));
        assert!(html.contains("t &lt;b&gt;") && html.contains("a &amp; b"));
        assert!(html.contains("gpu 14 ms &gt; 12 ms"));
        assert!(html.contains("GPU unavailable: no driver"));
        for forbidden in ["<script", "http://", "https://", "<link", "@import", "<img"] {
            let hits = html.matches(forbidden).count();
            let allowed = if forbidden == "http://" {
                html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
            } else {
                0
            };
            assert_eq!(hits, allowed, "{forbidden}");
        }
    }
}
