//! Chrome Trace Event JSON: the format Perfetto (ui.perfetto.dev) and `chrome://tracing` open.
//!
//! Owns: turning spans and tracks into one trace document. Must never: run on a hot path (it
//! allocates the whole document), or emit events out of order within a track.
//!
//! # Format (the "JSON Object Format" of the Trace Event Format document)
//! `{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}` where:
//! - one `process_name` metadata event (`"ph": "M"`) names the process `lanegraph`;
//! - per track, a `thread_name` and a `thread_sort_index` metadata event: `tid` is the track id,
//!   so every lane worker, the owner thread and each GPU queue get a row, owner first;
//! - per span, a complete event (`"ph": "X"`) with `ts` and `dur` in **microseconds** as floats
//!   (nanosecond precision: `f64` holds integer nanoseconds exactly for 104 days of uptime),
//!   `ts` on the clock's common timeline (`Stamp::as_ns`), and `args.n` when the span has a
//!   workload size;
//! - events of one track are strictly ordered by `ts`, and at equal `ts` longest first, so a
//!   parent precedes the children it contains.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::spans::{sort_for_export, SpanRecord, TrackId, TrackInfo};

/// The `cat` of every span event.
pub const CATEGORY: &str = "lanegraph";

/// Builds the trace document. `dropped` (spans lost to overwriting) goes into `otherData` so a
/// reader knows the trace has holes.
pub fn chrome_trace_json(spans: &[SpanRecord], tracks: &[TrackInfo], dropped: u64) -> String {
    let pid = std::process::id();
    let mut sorted = spans.to_vec();
    sort_for_export(&mut sorted);

    let used: BTreeSet<TrackId> = sorted.iter().map(|s| s.track).collect();
    let mut events: Vec<Value> = Vec::with_capacity(sorted.len() + 2 * tracks.len() + 1);
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
            "args": {"sort_index": t.kind.order() * 100_000 + t.id.0}
        }));
    }
    for s in &sorted {
        let start_ns = s.start.as_ns();
        let dur_ns = s.duration_ns();
        let mut e = json!({
            "ph": "X", "cat": CATEGORY, "name": s.name, "pid": pid, "tid": s.track.0,
            "ts": start_ns as f64 / 1000.0, "dur": dur_ns as f64 / 1000.0,
        });
        if let Some(n) = s.n {
            e["args"] = json!({ "n": n });
        }
        events.push(e);
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

#[cfg(test)]
mod tests {
    use super::super::spans::TrackKind;
    use super::*;
    use lanegraph_jobs::clock::{self, Stamp};

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
        let dur = x[0]["dur"].as_f64().unwrap();
        assert!((dur - 8.0).abs() < 0.01, "8000 ns is 8 us, got {dur}");
        assert!((x[1]["ts"].as_f64().unwrap() - x[0]["ts"].as_f64().unwrap()).abs() < 1e-9);
    }
}
