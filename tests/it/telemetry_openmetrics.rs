//! The OpenMetrics exposition, checked by an external parser: Python `prometheus_client`'s
//! OpenMetrics parser (`pip install prometheus_client`), fed both the rendered text and what the
//! scrape endpoint serves on 127.0.0.1.
//!
//! Without python3 or the module the tests print `skipped` and pass, except under `CI=true`,
//! where they fail: CI must run them (`scripts/test` installs the module).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

use lanegraph::hooks::telemetry::{
    openmetrics, Buckets, EndpointOptions, MetricsEndpoint, Registry, Unit,
};
use lanegraph::hooks::{BucketsHooks, RegistryHooks};
use serde_json::Value;

const PARSER: &str = r#"
import sys, json
from prometheus_client.openmetrics.parser import text_string_to_metric_families
out = {}
for fam in text_string_to_metric_families(sys.stdin.read()):
    out[fam.name] = {
        "type": fam.type,
        "unit": fam.unit,
        "help": fam.documentation,
        "samples": [[s.name, s.labels, s.value] for s in fam.samples],
    }
print(json.dumps(out))
"#;

fn python() -> String {
    std::env::var("LANEGRAPH_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Whether the parser is available; panics under `CI=true` when it is not.
fn parser_available(test: &str) -> bool {
    let ok = Command::new(python())
        .args(["-c", "import prometheus_client.openmetrics.parser"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        let msg = format!(
            "{test}: {} cannot import prometheus_client.openmetrics.parser \
             (fix: `pip install prometheus_client`, or point LANEGRAPH_PYTHON at a python that has it)",
            python()
        );
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{msg}");
        }
        println!("skipped: {msg}");
    }
    ok
}

/// Parses `text` with the Python parser; panics with the parser's message when it rejects it.
fn parse(text: &str) -> Value {
    match try_parse(text) {
        Ok(v) => v,
        Err(e) => {
            panic!("the OpenMetrics parser rejected our exposition:\n{e}\n--- text ---\n{text}")
        }
    }
}

fn try_parse(text: &str) -> Result<Value, String> {
    let mut child = Command::new(python())
        .args(["-c", PARSER])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(serde_json::from_slice(&out.stdout).unwrap())
}

fn sample<'a>(fam: &'a Value, name: &str, le: Option<&str>) -> &'a Value {
    fam["samples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s[0] == name && le.is_none_or(|le| s[1]["le"] == le))
        .map(|s| &s[2])
        .unwrap_or_else(|| panic!("no sample {name} {le:?} in {fam}"))
}

fn populated_registry() -> Registry {
    let r = Registry::default();
    r.register_counter("frame.completed", &[], Unit::None, "Frames completed.")
        .unwrap()
        .add(120);
    r.register_counter(
        "memory.allocated_lifetime",
        &[],
        Unit::Bytes,
        "Heap bytes ever allocated.",
    )
    .unwrap()
    .add(4096);
    r.register_gauge(
        "budget.multiplier",
        &[],
        Unit::Ratio,
        "The PID's \"global\" multiplier\\nsecond line",
    )
    .unwrap()
    .set(0.8125);
    r.register_gauge("asset.pending", &[], Unit::None, "")
        .unwrap()
        .set(-0.0);
    let h = r
        .register_histogram(
            "frame.time",
            &[],
            Unit::Milliseconds,
            "Wall time of one frame.",
            Buckets::frame_time_ms(),
        )
        .unwrap();
    for v in [3.0, 7.5, 16.0, 16.6, 17.0, 40.0, 2000.0] {
        h.observe(v);
    }
    // Labelled series, as the engine registers per lane (a histogram's `le` comes last).
    let us = r
        .register_histogram(
            "lane.job_time",
            &[("lane", "physics")],
            Unit::Seconds,
            "Run time of one job.",
            Buckets::exponential(1e-6, 2.0, 15).unwrap(),
        )
        .unwrap();
    us.observe(0.25e-6);
    for (lane, v) in [("physics", 0.5), ("ren\"der\\x\ny", 0.25)] {
        r.register_gauge("lane.busy", &[("lane", lane)], Unit::Ratio, "Busy share.")
            .unwrap()
            .set(v);
    }
    r.register_gauge_fn(
        "memory.current_bytes",
        Unit::Bytes,
        "Live heap bytes.",
        || 1.5e9,
    )
    .unwrap();
    r
}

fn check(families: &Value) {
    let c = &families["lanegraph_frame_completed"];
    assert_eq!(c["type"], "counter");
    assert_eq!(*sample(c, "lanegraph_frame_completed_total", None), 120.0);

    let b = &families["lanegraph_memory_allocated_lifetime_bytes"];
    assert_eq!(b["unit"], "bytes");
    assert_eq!(
        *sample(b, "lanegraph_memory_allocated_lifetime_bytes_total", None),
        4096.0
    );

    let g = &families["lanegraph_budget_multiplier_ratio"];
    assert_eq!(g["type"], "gauge");
    assert_eq!(g["unit"], "ratio");
    assert_eq!(g["help"], "The PID's \"global\" multiplier\\nsecond line");
    assert_eq!(
        *sample(g, "lanegraph_budget_multiplier_ratio", None),
        0.8125
    );

    let h = &families["lanegraph_frame_time_milliseconds"];
    assert_eq!(h["type"], "histogram");
    assert_eq!(h["unit"], "milliseconds");
    let n = "lanegraph_frame_time_milliseconds_bucket";
    assert_eq!(*sample(h, n, Some("4.0")), 1.0);
    assert_eq!(*sample(h, n, Some("8.33")), 2.0);
    assert_eq!(*sample(h, n, Some("16.67")), 4.0);
    assert_eq!(*sample(h, n, Some("20.0")), 5.0);
    assert_eq!(*sample(h, n, Some("50.0")), 6.0);
    assert_eq!(*sample(h, n, Some("1000.0")), 6.0);
    assert_eq!(*sample(h, n, Some("+Inf")), 7.0);
    assert_eq!(
        *sample(h, "lanegraph_frame_time_milliseconds_count", None),
        7.0
    );
    let sum = sample(h, "lanegraph_frame_time_milliseconds_sum", None)
        .as_f64()
        .unwrap();
    assert!((sum - 2100.1).abs() < 1e-9, "sum {sum}");

    let m = &families["lanegraph_memory_current_bytes"];
    assert_eq!(*sample(m, "lanegraph_memory_current_bytes", None), 1.5e9);
    let j = &families["lanegraph_lane_job_time_seconds"];
    let first = &j["samples"][0];
    assert_eq!(first[1]["lane"], "physics", "{j}");
    let busy = &families["lanegraph_lane_busy_ratio"];
    let lanes: Vec<&str> = busy["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[1]["lane"].as_str().unwrap())
        .collect();
    assert_eq!(lanes, ["physics", "ren\"der\\x\ny"], "{busy}");
    assert!(families["lanegraph_asset_pending"].is_object());
}

#[test]
fn rendered_text_passes_the_reference_parser() {
    if !parser_available("rendered_text_passes_the_reference_parser") {
        return;
    }
    let text = openmetrics::render(&populated_registry());
    assert!(text.ends_with("# EOF\n"));
    check(&parse(&text));
}

#[test]
fn empty_registry_is_a_valid_document() {
    if !parser_available("empty_registry_is_a_valid_document") {
        return;
    }
    let v = parse(&openmetrics::render(&Registry::default()));
    assert_eq!(v, serde_json::json!({}));
}

#[test]
fn scraped_endpoint_passes_the_reference_parser() {
    if !parser_available("scraped_endpoint_passes_the_reference_parser") {
        return;
    }
    let registry = populated_registry();
    let ep = MetricsEndpoint::start(
        "127.0.0.1:0".parse().unwrap(),
        registry.clone(),
        EndpointOptions::default(),
    )
    .unwrap();
    let mut s = TcpStream::connect(ep.local_addr()).unwrap();
    s.write_all(
        b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/openmetrics-text\r\n\r\n",
    )
    .unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    let (head, body) = resp.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    assert!(head.contains(openmetrics::CONTENT_TYPE), "{head}");
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(len, body.len());
    check(&parse(body));
}

#[test]
fn the_reference_parser_rejects_broken_documents() {
    // Proves the checks above can fail: damaged copies of our own output are refused.
    if !parser_available("the_reference_parser_rejects_broken_documents") {
        return;
    }
    let text = openmetrics::render(&populated_registry());
    let no_eof = text.replace("# EOF\n", "");
    assert!(try_parse(&no_eof).is_err(), "missing # EOF accepted");
    let bad_count = text.replace(
        "lanegraph_frame_time_milliseconds_count 7",
        "lanegraph_frame_time_milliseconds_count 8",
    );
    assert_ne!(bad_count, text);
    assert!(
        try_parse(&bad_count).is_err(),
        "_count != +Inf bucket accepted"
    );
    let wrong_unit = text.replace(
        "# UNIT lanegraph_budget_multiplier_ratio ratio",
        "# UNIT lanegraph_budget_multiplier_ratio seconds",
    );
    assert!(
        try_parse(&wrong_unit).is_err(),
        "unit not matching the family accepted"
    );
}
