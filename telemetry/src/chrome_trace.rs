//! Chrome Trace Event JSON: the format Perfetto (ui.perfetto.dev) and `chrome://tracing` open.
//!
//! Owns: turning spans and tracks into one trace document. Must never: run on a hot path (it
//! allocates the whole document), or emit events out of order within a track.
//!
//! # Format (the "JSON Object Format" of the Trace Event Format document)
//! `{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}` where:
//! - one `process_name` metadata event (`"ph": "M"`) names the process `lanegraph`;
//! - per track, a `thread_name` and a `thread_sort_index` metadata event: `tid` is the track id,
//!   so every lane worker, the owner thread and each GPU queue get a row: the owner first, then
//!   the lane workers grouped by lane (lanes in name order, workers by index), then GPU queues;
//! - per span, a complete event (`"ph": "X"`) with `ts` and `dur` in **microseconds** as floats
//!   (nanosecond precision: `f64` holds integer nanoseconds exactly for 104 days of uptime),
//!   `ts` on the clock's common timeline (`Stamp::as_ns`), `cat` = `lane.<name>` on a lane
//!   worker's track (`gpu` on a GPU queue's, `lanegraph` elsewhere), `args.n` when the span has
//!   a workload size, and `args.frame`, the number of the owner's frame span it starts in (the
//!   owner's `frame` spans carry their own number);
//! - per frame, counter events (`"ph": "C"`): [`COUNTER_FRAME_MS`] and, per lane,
//!   [`COUNTER_LANE_BUSY`] (the union of its workers' spans inside the frame, over the frame's
//!   length times its workers);
//! - events of one track are strictly ordered by `ts`, and at equal `ts` longest first, so a
//!   parent precedes the children it contains.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::spans::{sort_for_export, SpanRecord, TrackId, TrackInfo, TrackKind};

/// The `cat` of span events on the owner's track and other threads' tracks.
pub(crate) const CATEGORY: &str = "lanegraph";

/// The name of the owner's per-frame span; its `n` is the frame number.
pub const FRAME_SPAN: &str = "frame";

/// The counter tracks a trace carries, one sample per frame (at the frame's start).
pub const COUNTER_FRAME_MS: &str = "frame time (ms)";
/// Per lane, the share of its workers' time inside the frame spent in spans (0 to 1).
pub const COUNTER_LANE_BUSY: &str = "lane busy share";
/// Live heap at each frame's end, MiB (the tracking allocator's; absent without it).
pub const COUNTER_MEMORY: &str = "live heap (MiB)";

/// An event's `cat`: `lane.<name>` on a lane worker's track, `gpu` on a GPU queue's, else
/// [`CATEGORY`] (so a viewer can filter by lane).
fn category(tracks: &[TrackInfo], id: TrackId) -> String {
    match tracks.iter().find(|t| t.id == id).map(|t| &t.kind) {
        Some(TrackKind::LaneWorker { lane, .. }) => format!("lane.{lane}"),
        Some(TrackKind::GpuQueue { .. }) => "gpu".into(),
        Some(TrackKind::Present) => "present".into(),
        _ => CATEGORY.into(),
    }
}

/// A track's row order: the owner, then lane workers grouped by lane (lanes in name order,
/// workers by index), then GPU queues, then other threads.
fn sort_index(tracks: &[TrackInfo], t: &TrackInfo) -> u32 {
    let base = t.kind.order() * 100_000;
    match &t.kind {
        TrackKind::LaneWorker { lane, index } => {
            let mut lanes: Vec<&str> = tracks
                .iter()
                .filter_map(|t| match &t.kind {
                    TrackKind::LaneWorker { lane, .. } => Some(lane.as_str()),
                    _ => None,
                })
                .collect();
            lanes.sort_unstable();
            lanes.dedup();
            let rank = lanes.iter().position(|l| l == lane).unwrap_or(0) as u32;
            base + rank * 1_000 + (*index).min(999)
        }
        _ => base + t.id.0.min(99_999),
    }
}

/// The counter events: per frame, its time in ms and each lane's busy share.
fn counters(
    spans: &[SpanRecord],
    tracks: &[TrackInfo],
    frames: &[&SpanRecord],
    pid: u32,
) -> Vec<Value> {
    // Each lane's worker tracks, and the spans on each track (sorted by start already).
    let mut lanes: Vec<(&str, Vec<TrackId>)> = Vec::new();
    for t in tracks {
        if let TrackKind::LaneWorker { lane, .. } = &t.kind {
            match lanes.iter_mut().find(|(l, _)| *l == lane.as_str()) {
                Some((_, ids)) => ids.push(t.id),
                None => lanes.push((lane.as_str(), vec![t.id])),
            }
        }
    }
    let mut out = Vec::with_capacity(frames.len() * 2);
    for f in frames {
        let ts = f.start.as_ns() as f64 / 1000.0;
        let dur = f.duration_ns();
        out.push(json!({
            "ph": "C", "name": COUNTER_FRAME_MS, "pid": pid, "ts": ts,
            "args": {"ms": dur as f64 / 1e6},
        }));
        if lanes.is_empty() || dur == 0 {
            continue;
        }
        let mut args = serde_json::Map::new();
        for (lane, ids) in &lanes {
            let busy: u64 = ids
                .iter()
                .map(|&id| busy_ns(spans.iter().filter(|s| s.track == id), f.start, f.end))
                .sum();
            let share = busy as f64 / (dur as f64 * ids.len() as f64);
            args.insert((*lane).into(), share.min(1.0).into());
        }
        out.push(json!({
            "ph": "C", "name": COUNTER_LANE_BUSY, "pid": pid, "ts": ts, "args": args,
        }));
    }
    out
}

/// Nanoseconds of `[from, to]` covered by the union of `spans` (sorted by start; nested
/// spans count once).
fn busy_ns<'a>(
    spans: impl Iterator<Item = &'a SpanRecord>,
    from: lanegraph_jobs::clock::Stamp,
    to: lanegraph_jobs::clock::Stamp,
) -> u64 {
    let (mut busy, mut reach) = (0u64, from);
    for s in spans {
        let (a, b) = (s.start.max(reach), s.end.min(to));
        if b > a {
            busy += b.as_ns().saturating_sub(a.as_ns());
            reach = b;
        }
    }
    busy
}

/// Builds the trace document. `dropped` (spans lost to overwriting) goes into `otherData` so a
/// reader knows the trace has holes.
pub fn chrome_trace_json(spans: &[SpanRecord], tracks: &[TrackInfo], dropped: u64) -> String {
    chrome_trace_json_with_memory(spans, tracks, dropped, &[])
}

/// [`chrome_trace_json`] with a [`COUNTER_MEMORY`] sample per frame: `memory` holds (frame
/// number, live heap bytes), placed at that frame's `frame` span start. The track metadata,
/// the complete events and the per-frame counter samples come from one sorted copy of the
/// spans, in the order the document lists them.
pub fn chrome_trace_json_with_memory(
    spans: &[SpanRecord],
    tracks: &[TrackInfo],
    dropped: u64,
    memory: &[(u64, u64)],
) -> String {
    let pid = std::process::id();
    let mut sorted = spans.to_vec();
    sort_for_export(&mut sorted);
    let mut events: Vec<Value> = Vec::with_capacity(sorted.len() + 2 * tracks.len() + 1);
    track_metadata(&sorted, tracks, pid, &mut events);
    // The owner's frame spans (`n` = the frame number), by start: every event inside one gets
    // its frame number, and each frame adds counter samples.
    let mut frames: Vec<&SpanRecord> = sorted
        .iter()
        .filter(|s| s.name == FRAME_SPAN && s.n.is_some())
        .collect();
    frames.sort_by_key(|f| f.start);
    let frame_at = |t: lanegraph_jobs::clock::Stamp| -> Option<u64> {
        let i = frames.partition_point(|f| f.start <= t);
        let f = frames.get(i.checked_sub(1)?)?;
        (t <= f.end).then_some(f.n).flatten()
    };
    for s in &sorted {
        events.push(complete_event(s, tracks, pid, frame_at(s.start)));
    }
    events.extend(counters(&sorted, tracks, &frames, pid));
    for f in &frames {
        let Some(&(_, bytes)) = memory.iter().find(|(n, _)| Some(*n) == f.n) else {
            continue;
        };
        events.push(json!({
            "ph": "C", "name": COUNTER_MEMORY, "pid": pid, "ts": f.start.as_ns() as f64 / 1000.0,
            "args": {"MiB": bytes as f64 / (1024.0 * 1024.0)},
        }));
    }
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "producer": "lanegraph",
            "clock": format!("{:?}", lanegraph_jobs::clock::source()),
            "spans_dropped": dropped,
        }
    })
    .to_string()
}

/// The process's name, then each track's name and sort index (tracks with spans, and the
/// owner's, workers' and helpers' tracks even without).
fn track_metadata(sorted: &[SpanRecord], tracks: &[TrackInfo], pid: u32, events: &mut Vec<Value>) {
    let used: BTreeSet<TrackId> = sorted.iter().map(|s| s.track).collect();
    events.push(json!({
        "ph": "M", "name": "process_name", "pid": pid, "tid": 0,
        "args": {"name": "lanegraph"}
    }));
    for t in tracks
        .iter()
        .filter(|t| used.contains(&t.id) || t.kind.order() < 3)
    {
        events.push(json!({
            "ph": "M", "name": "thread_name", "pid": pid, "tid": t.id.0,
            "args": {"name": t.name}
        }));
        events.push(json!({
            "ph": "M", "name": "thread_sort_index", "pid": pid, "tid": t.id.0,
            "args": {"sort_index": sort_index(tracks, t)}
        }));
    }
}

/// One span as a complete (`X`) event: a frame span carries its number; any other span its
/// `n` and the number of the frame it falls in.
fn complete_event(s: &SpanRecord, tracks: &[TrackInfo], pid: u32, frame: Option<u64>) -> Value {
    let mut e = json!({
        "ph": "X", "cat": category(tracks, s.track), "name": s.name, "pid": pid,
        "tid": s.track.0, "ts": s.start.as_ns() as f64 / 1000.0,
        "dur": s.duration_ns() as f64 / 1000.0,
    });
    let mut args = serde_json::Map::new();
    if s.name == FRAME_SPAN {
        if let Some(n) = s.n {
            args.insert("frame".into(), n.into());
        }
    } else {
        if let Some(n) = s.n {
            args.insert("n".into(), n.into());
        }
        if let Some(f) = frame {
            args.insert("frame".into(), f.into());
        }
    }
    if !args.is_empty() {
        e["args"] = Value::Object(args);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::super::spans::TrackKind;
    use super::*;
    use lanegraph_jobs::clock::{self, Stamp};

    #[test]
    fn lanes_sit_together_whatever_order_their_workers_registered_in() {
        let lw = |id, lane: &str, index| TrackInfo {
            id: TrackId(id),
            name: format!("{lane} {index}"),
            kind: TrackKind::LaneWorker {
                lane: lane.into(),
                index,
            },
        };
        let tracks = vec![
            TrackInfo {
                id: TrackId(0),
                name: "gpu graphics".into(),
                kind: TrackKind::GpuQueue {
                    queue: "graphics".into(),
                },
            },
            lw(1, "physics", 1),
            lw(2, "render", 0),
            TrackInfo {
                id: TrackId(3),
                name: "owner".into(),
                kind: TrackKind::Owner,
            },
            lw(4, "physics", 0),
        ];
        let mut order: Vec<&TrackInfo> = tracks.iter().collect();
        order.sort_by_key(|t| sort_index(&tracks, t));
        let names: Vec<&str> = order.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "owner",
                "physics 0",
                "physics 1",
                "render 0",
                "gpu graphics"
            ]
        );
    }

    #[test]
    fn events_have_units_metadata_and_order() {
        let tracks = vec![
            TrackInfo {
                id: TrackId(0),
                name: "owner".into(),
                kind: TrackKind::Owner,
            },
            TrackInfo {
                id: TrackId(1),
                name: "physics 0".into(),
                kind: TrackKind::LaneWorker {
                    lane: "physics".into(),
                    index: 0,
                },
            },
        ];
        let t0 = clock::now();
        let at = |ns: u64| Stamp(t0.0 + (ns as f64 / clock::ns_per_tick()) as u64);
        let spans = vec![
            SpanRecord {
                name: "child",
                track: TrackId(0),
                start: at(1000),
                end: at(2000),
                n: Some(5),
            },
            SpanRecord {
                name: "job",
                track: TrackId(1),
                start: at(0),
                end: at(500),
                n: None,
            },
            SpanRecord {
                name: "frame",
                track: TrackId(0),
                start: at(1000),
                end: at(9000),
                n: None,
            },
        ];
        let doc: Value = serde_json::from_str(&chrome_trace_json(&spans, &tracks, 3)).unwrap();
        assert_eq!(doc["otherData"]["spans_dropped"], 3);
        let ev = doc["traceEvents"].as_array().unwrap();
        let names: Vec<&str> = ev
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, vec!["owner", "physics 0"]);
        let x: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(x[0]["name"], "frame", "parent first at equal ts");
        assert_eq!(x[1]["name"], "child");
        assert_eq!(x[1]["args"]["n"], 5);
        assert_eq!(x[1]["cat"], "lanegraph");
        assert_eq!(x[2]["cat"], "lane.physics");
        let dur = x[0]["dur"].as_f64().unwrap();
        assert!((dur - 8.0).abs() < 0.01, "8000 ns is 8 us, got {dur}");
        assert!((x[1]["ts"].as_f64().unwrap() - x[0]["ts"].as_f64().unwrap()).abs() < 1e-9);
    }
}
