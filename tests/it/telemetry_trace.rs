//! Trace spans end to end: lane workers and the owner record nested spans, a GPU track gets
//! pre-timed spans, and the Chrome Trace Event export is parsed back and checked for units,
//! track metadata, per-track order and nesting. One test function: spans are process-global
//! (the on/off switch, the collector), so the steps run in sequence.

use std::collections::BTreeMap;

use lanegraph::hooks::telemetry::spans::{self, span};
use lanegraph::hooks::telemetry::{record_span, span_n, RecordSpanError, TraceHistory, TrackKind};
use lanegraph::hooks::{EngineHooks, TraceHistoryHooks};
use lanegraph::jobs::clock;
use serde_json::Value;

const WORKERS: u32 = 3;

/// The tests here share the process-wide span store: run them one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub(crate) fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}
const JOBS: u64 = 40;

fn run_frame(frame: u64, gpu: lanegraph::hooks::telemetry::TrackId) {
    let _frame = span_n("frame", frame);
    std::thread::scope(|s| {
        for w in 0..WORKERS {
            s.spawn(move || {
                spans::name_current_thread(
                    format!("physics {w}"),
                    TrackKind::LaneWorker {
                        lane: "physics".into(),
                        index: w,
                    },
                );
                for j in 0..JOBS {
                    let _job = span_n("physics.chunk", j);
                    let _inner = span("physics.integrate");
                    std::hint::black_box(j * 3);
                }
            });
        }
    });
    let a = clock::now();
    let b = clock::now();
    record_span(gpu, "gpu.pass.shadow", a, b, Some(12)).unwrap();
}

/// Checks one track's complete events: ts non-decreasing, and any two spans either disjoint or
/// one inside the other (what Chrome/Perfetto need to draw a flame stack).
fn check_track(events: &[&Value]) {
    let iv: Vec<(f64, f64)> = events
        .iter()
        .map(|e| {
            let ts = e["ts"].as_f64().unwrap();
            (ts, ts + e["dur"].as_f64().unwrap())
        })
        .collect();
    for w in iv.windows(2) {
        assert!(w[0].0 <= w[1].0, "events out of order on a track: {w:?}");
    }
    let mut stack: Vec<(f64, f64)> = Vec::new();
    for &(s, e) in &iv {
        while stack.last().is_some_and(|&(_, pe)| pe <= s + 1e-6) {
            stack.pop();
        }
        if let Some(&(_, pe)) = stack.last() {
            assert!(
                e <= pe + 1e-6,
                "span {s}..{e} overlaps its parent's end {pe}"
            );
        }
        stack.push((s, e));
    }
}

#[test]
fn spans_export_as_a_valid_chrome_trace() {
    let _serial = serial();
    clock::init();
    spans::set_enabled(true);
    spans::name_current_thread("owner", TrackKind::Owner);
    let gpu = spans::register_track(
        "gpu graphics",
        TrackKind::GpuQueue {
            queue: "graphics".into(),
        },
    );
    let _ = spans::collect(); // start from empty rings
    let mut history = TraceHistory::new(2);
    for frame in 0..3 {
        run_frame(frame, gpu);
        history.collect_frame(frame);
    }
    assert_eq!(
        history.frames().count(),
        2,
        "only the last 2 frames are kept"
    );
    assert_eq!(history.dropped(), 0);

    let doc: Value = serde_json::from_str(&history.to_chrome_trace()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let pid = events[0]["pid"].clone();
    assert!(events.iter().all(|e| e["pid"] == pid), "one process");
    assert!(events.iter().any(|e| e["ph"] == "M"
        && e["name"] == "process_name"
        && e["args"]["name"] == "lanegraph"));

    let names: BTreeMap<u64, String> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| {
            (
                e["tid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut by_tid: BTreeMap<u64, Vec<&Value>> = BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let cat = e["cat"].as_str().unwrap();
        assert!(["lanegraph", "lane.physics", "gpu"].contains(&cat), "{e}");
        assert!(e["ts"].is_f64() || e["ts"].is_u64());
        assert!(e["dur"].as_f64().unwrap() >= 0.0);
        let tid = e["tid"].as_u64().unwrap();
        assert!(names.contains_key(&tid), "track {tid} has no thread_name");
        by_tid.entry(tid).or_default().push(e);
    }
    for evs in by_tid.values() {
        check_track(evs);
    }

    let track_named = |prefix: &str| -> Vec<u64> {
        names
            .iter()
            .filter(|(tid, n)| n.starts_with(prefix) && by_tid.contains_key(tid))
            .map(|(t, _)| *t)
            .collect()
    };
    let owner = track_named("owner");
    assert_eq!(owner.len(), 1);
    let frames: Vec<&&Value> = by_tid[&owner[0]]
        .iter()
        .filter(|e| e["name"] == "frame")
        .collect();
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[0]["args"]["frame"], 1);
    assert_eq!(frames[1]["args"]["frame"], 2);

    // Each frame ran WORKERS fresh worker threads: 2 frames x 3 workers, each its own track.
    let workers = track_named("physics ");
    assert_eq!(workers.len(), 2 * WORKERS as usize, "{names:?}");
    for tid in &workers {
        let evs = &by_tid[tid];
        let chunks: Vec<_> = evs
            .iter()
            .filter(|e| e["name"] == "physics.chunk")
            .collect();
        let inner = evs
            .iter()
            .filter(|e| e["name"] == "physics.integrate")
            .count();
        assert_eq!((chunks.len() as u64, inner as u64), (JOBS, JOBS));
        for (j, c) in chunks.iter().enumerate() {
            assert_eq!(c["args"]["n"], j as u64);
        }
    }
    // Worker spans lie inside the frame that spawned them (one timeline for every thread).
    let (f_start, f_end) = {
        let f = frames[1];
        let ts = f["ts"].as_f64().unwrap();
        (ts, ts + f["dur"].as_f64().unwrap())
    };
    let inside = workers
        .iter()
        .flat_map(|t| by_tid[t].iter())
        .filter(|e| {
            let ts = e["ts"].as_f64().unwrap();
            ts >= f_start - 1e-3 && ts <= f_end + 1e-3
        })
        .count();
    assert_eq!(
        inside,
        (WORKERS as u64 * JOBS * 2) as usize,
        "last frame's jobs inside it"
    );
    // Every worker span names the frame it ran in, and lane spans are filterable by lane.
    for e in workers.iter().flat_map(|t| by_tid[t].iter()) {
        let f = e["args"]["frame"]
            .as_u64()
            .expect("a worker span without args.frame");
        assert!(f == 1 || f == 2, "{e}");
        assert_eq!(e["cat"], "lane.physics", "{e}");
    }
    // Counter tracks: per frame its time and the physics lane's busy share.
    let counters = |name: &str| -> Vec<Value> {
        events
            .iter()
            .filter(|e| e["ph"] == "C" && e["name"] == name)
            .cloned()
            .collect()
    };
    let frame_ms = counters(lanegraph::hooks::telemetry::COUNTER_FRAME_MS);
    assert_eq!(frame_ms.len(), 2, "one frame-time sample per frame");
    for (c, f) in frame_ms.iter().zip(&frames) {
        let ms = c["args"]["ms"].as_f64().unwrap();
        let dur_ms = f["dur"].as_f64().unwrap() / 1000.0;
        assert!((ms - dur_ms).abs() < 1e-6, "{ms} vs {dur_ms}");
        assert_eq!(c["ts"], f["ts"]);
    }
    // The test binary installs the tracking allocator: a live-heap sample per frame.
    let memory = counters(lanegraph::hooks::telemetry::COUNTER_MEMORY);
    assert_eq!(memory.len(), 2, "one memory sample per frame");
    for c in &memory {
        assert!(c["args"]["MiB"].as_f64().unwrap() > 0.0, "{c}");
    }
    let busy = counters(lanegraph::hooks::telemetry::COUNTER_LANE_BUSY);
    assert_eq!(busy.len(), 2);
    for c in &busy {
        let share = c["args"]["physics"].as_f64().expect("a physics series");
        assert!(share > 0.0 && share <= 1.0, "{c}");
    }

    let gpu_evs = &by_tid[&u64::from(gpu.0)];
    assert_eq!(gpu_evs.len(), 2);
    assert_eq!(gpu_evs[0]["name"], "gpu.pass.shadow");

    // Turned off, nothing is recorded; bad pre-timed spans are typed errors, even when off.
    spans::set_enabled(false);
    drop(span("while_off"));
    let a = clock::now();
    record_span(gpu, "while_off", a, a, None).unwrap();
    assert!(matches!(
        record_span(gpu, "backwards", clock::Stamp(a.0 + 1_000_000), a, None),
        Err(RecordSpanError::EndBeforeStart { .. })
    ));
    let batch = spans::collect();
    assert!(
        batch.spans.iter().all(|s| s.name != "while_off"),
        "{batch:?}"
    );
    spans::set_enabled(true);
}

#[test]
fn a_full_ring_overwrites_oldest_and_counts_drops() {
    let _serial = serial();
    let _ = spans::collect();
    let pushed = spans::RING_CAPACITY as u64 + 1000;
    let track = std::thread::spawn(move || {
        for i in 0..pushed {
            drop(span_n("flood", i));
        }
        spans::current_thread_track().unwrap()
    })
    .join()
    .unwrap();
    let b = spans::collect();
    let kept: Vec<_> = b.spans.into_iter().filter(|s| s.track == track).collect();
    assert_eq!(kept.len() as u64, spans::RING_CAPACITY as u64);
    assert_eq!(b.dropped, 1000);
    assert_eq!(kept[0].n, Some(1000), "the oldest 1000 were overwritten");
    assert_eq!(kept.last().unwrap().n, Some(pushed - 1));
}

/// A game's own `tracing` spans and events land in the engine's trace through `SpanLayer`:
/// named after their callsites, nested as entered, on the thread that ran them; the engine's
/// own targets are not recorded twice, and nothing is recorded while spans are off.
///
/// Alone in its own process: another test's engine collecting spans at the same moment would
/// take these.
#[test]
fn the_tracing_layer_records_a_games_spans_and_events() {
    lanegraph_tests::isolated(
        "telemetry_trace::the_tracing_layer_records_a_games_spans_and_events",
        tracing_layer_records,
    );
}

fn tracing_layer_records() {
    use tracing_subscriber::prelude::*;
    let _serial = serial();
    clock::init();
    spans::set_enabled(true);
    let _ = spans::collect();
    let subscriber = tracing_subscriber::registry().with(lanegraph::hooks::telemetry::SpanLayer);
    tracing::subscriber::with_default(subscriber, || {
        let outer = tracing::info_span!(target: "mygame", "game.update").entered();
        {
            let _inner = tracing::debug_span!(target: "mygame", "ai.plan").entered();
            tracing::info!(target: "mygame", agents = 3, "planned");
        }
        let _engine_own = tracing::info_span!(target: "lanegraph::x", "engine.own").entered();
        drop(_engine_own);
        drop(outer);
        spans::set_enabled(false);
        let _off = tracing::info_span!(target: "mygame", "while.off").entered();
    });
    spans::set_enabled(true);
    let got = spans::collect().spans;
    let named = |n: &str| got.iter().filter(|s| s.name == n).collect::<Vec<_>>();
    let (outer, inner) = (named("game.update"), named("ai.plan"));
    assert_eq!((outer.len(), inner.len()), (1, 1), "{got:?}");
    let (o, i) = (outer[0], inner[0]);
    assert_eq!(o.track, i.track, "same thread, same track");
    assert!(
        o.start <= i.start && i.end <= o.end,
        "ai.plan inside game.update"
    );
    let events: Vec<_> = got
        .iter()
        .filter(|s| s.name.starts_with("event "))
        .collect();
    assert_eq!(events.len(), 1, "{got:?}");
    assert!(events[0].start >= i.start && events[0].end <= i.end);
    assert!(
        named("engine.own").is_empty(),
        "the engine's own target is skipped"
    );
    assert!(named("while.off").is_empty(), "nothing while spans are off");
}

/// A running engine's own trace, read as a Perfetto user would: the owner's row first and
/// named `owner`, the game's systems as spans on it inside numbered frames, the render lane's
/// worker on its own row in its lane's category, and the counter tracks.
///
/// Alone in its own process: span collection is process-wide (a game has one engine), so
/// another test's engine collecting at the same moment would take this engine's spans.
#[test]
fn an_engines_trace_reads_the_way_a_perfetto_user_expects() {
    lanegraph_tests::isolated(
        "telemetry_trace::an_engines_trace_reads_the_way_a_perfetto_user_expects",
        an_engines_trace_reads_right,
    );
}

fn an_engines_trace_reads_right() {
    use lanegraph::systems::SystemDef;
    let _serial = serial();
    spans::set_enabled(true);
    let mut engine = lanegraph_tests::engine_with_pass(lanegraph_tests::NullPass, 64);
    engine
        .world_mut()
        .register_system(SystemDef::new("steer_ships", 5.0, |_, _| {}))
        .unwrap();
    // The render lane draws asynchronously (a frame it is still drawing when the next view
    // comes is skipped): give it time, then let three more frames collect what it recorded.
    for _ in 0..40 {
        engine.frame().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    engine.finish_render();
    for _ in 0..3 {
        engine.frame().unwrap();
    }
    let doc: Value = serde_json::from_str(&engine.chrome_trace()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let meta = |name: &str| -> BTreeMap<u64, Value> {
        events
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == name)
            .map(|e| (e["tid"].as_u64().unwrap(), e["args"].clone()))
            .collect()
    };
    let (names, order) = (meta("thread_name"), meta("thread_sort_index"));
    // This thread ran the frames: its row is the owner's. (Other tests' engines, in this same
    // process, have owner rows of their own; a game has one.)
    let first = u64::from(spans::current_thread_track().unwrap().0);
    assert_eq!(names[&first]["name"], "owner");
    // Owner rows sort before every row that is not an owner's.
    let key = |tid: &u64| order[tid]["sort_index"].as_u64().unwrap();
    for tid in order.keys() {
        if names[tid]["name"] != "owner" {
            assert!(
                key(&first) < key(tid),
                "row {} sorts before the owner",
                names[tid]
            );
        }
    }
    let on = |tid: u64, name: &str| -> Vec<&Value> {
        events
            .iter()
            .filter(|e| e["ph"] == "X" && e["tid"] == tid && e["name"] == name)
            .collect()
    };
    let frames = on(first, "frame");
    assert!(frames.len() >= 40, "{} frame spans", frames.len());
    assert!(frames.iter().all(|f| f["args"]["frame"].is_u64()));
    let systems = on(first, "steer_ships");
    assert!(!systems.is_empty(), "no system span on the owner's row");
    assert!(systems
        .iter()
        .all(|s| s["args"]["frame"].is_u64() && s["cat"] == "lanegraph"));
    // This engine's render worker: the `render 0` row with render.frame spans (other tests'
    // engines have render workers of their own).
    let draws: Vec<&Value> = names
        .iter()
        .filter(|(_, a)| a["name"] == "render 0")
        .flat_map(|(tid, _)| on(*tid, "render.frame"))
        .collect();
    assert!(!draws.is_empty() && draws.iter().all(|d| d["cat"] == "lane.render"));
    for counter in [
        lanegraph::hooks::telemetry::COUNTER_FRAME_MS,
        lanegraph::hooks::telemetry::COUNTER_LANE_BUSY,
        lanegraph::hooks::telemetry::COUNTER_MEMORY,
    ] {
        let n = events
            .iter()
            .filter(|e| e["ph"] == "C" && e["name"] == counter)
            .count();
        assert!(n >= 8, "{n} samples of {counter}");
    }
}
