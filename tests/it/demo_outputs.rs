//! A short demo run writes every export, each in its format: summary.json with the issue's
//! fields, trace.json (Chrome trace events), metrics.prom (OpenMetrics), report.html, and
//! frame.png exactly when a GPU drew.

use lanegraph_demo::{self as demo, DemoOptions};

#[test]
fn a_run_writes_every_export() {
    let dir = std::env::temp_dir().join(format!("lanegraph-demo-outputs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = DemoOptions {
        frames: Some(30),
        entities: 2_000,
        out: Some(dir.clone()),
        progress: false,
        pace: false,
        validation: true,
        ..DemoOptions::default()
    };
    let run = demo::run(&opts).expect("the demo runs");

    let text = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    let s: serde_json::Value = serde_json::from_str(&text).expect("summary.json parses");
    assert_eq!(s["frames"], 30);
    // Every key docs/quickstart.md's summary.json table lists is one the demo writes.
    for key in documented_summary_keys() {
        assert!(
            s.get(&key).is_some(),
            "docs/quickstart.md lists `{key}`, which summary.json lacks: {text}"
        );
    }
    assert!(s["entities"].as_u64().unwrap() >= 2_000);
    assert!(s["world_hash"].as_str().unwrap().starts_with("0x"));
    assert!(s["frame_ms"]["p50"].as_f64().unwrap() > 0.0);
    assert!(s["frame_ms"]["p99"].as_f64().unwrap() >= s["frame_ms"]["p50"].as_f64().unwrap());
    assert!(s["target_ms"].as_f64().unwrap() > 0.0);
    let lanes: Vec<&str> = s["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert!(lanes.contains(&"physics") && lanes.contains(&"render") && lanes.contains(&"asset"));
    assert!(s["gpu"]["available"].is_boolean());
    assert!(s["gpu"]["passes"].is_array());
    assert!(s["dropped_steps"].is_u64());
    assert!(s["decisions"].is_array());
    // Eight good textures load; the corrupt one and the missing one are reported and skipped.
    assert_eq!(s["assets"]["loaded"], 8);
    assert_eq!(s["assets"]["failed"], 2);
    let failures = s["assets"]["failures"].to_string();
    assert!(
        failures.contains("corrupt") && failures.contains("missing"),
        "{failures}"
    );

    let gpu = s["gpu"]["available"].as_bool().unwrap();
    if gpu {
        // Under validation, zero messages is the bar.
        assert_eq!(s["validation_messages"], 0, "{text}");
        assert!(!s["gpu"]["passes"].as_array().unwrap().is_empty(), "{text}");
        // Decoded on the asset lane, uploaded to GPU images by the render lane.
        assert_eq!(s["assets"]["uploaded_gpu"], 8, "{text}");
        let png = std::fs::read(dir.join("frame.png")).expect("frame.png when the GPU drew");
        assert_eq!(&png[1..4], b"PNG");
    } else {
        assert!(s["gpu"]["unavailable_reason"].is_string());
        assert!(!dir.join("frame.png").exists());
        assert_eq!(s["assets"]["uploaded_gpu"], 0);
        eprintln!("note: no Vulkan device here; frame.png and the GPU checks were not exercised");
    }

    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("trace.json")).unwrap()).unwrap();
    let names: Vec<&str> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["name"].as_str())
        .collect();
    for want in ["frame", "physics.step", "physics.chunk"] {
        assert!(names.contains(&want), "trace.json lacks `{want}`");
    }

    let prom = std::fs::read_to_string(dir.join("metrics.prom")).unwrap();
    assert!(
        prom.contains("lanegraph_frame_time_seconds_bucket"),
        "{prom}"
    );
    assert!(prom.trim_end().ends_with("# EOF"));

    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    for id in [
        "timeline",
        "frame-time",
        "systems",
        "lane-busy",
        "memory",
        "ladders",
    ] {
        assert!(
            html.contains(&format!("id=\"{id}\"")),
            "report.html lacks #{id}"
        );
    }
    // Every built-in agent's ladder is tabled, one row per strategy, with the one in force.
    for agent in ["physics", "render", "asset"] {
        assert!(
            html.contains(&format!("<tr class=\"current\"><td>{agent}</td>")),
            "no strategy in force for {agent}"
        );
    }
    assert!(run.files.iter().any(|f| f.ends_with("report.html")));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The top-level keys in the first column of docs/quickstart.md's `summary.json` table (every
/// backticked name there; a row may list several).
fn documented_summary_keys() -> Vec<String> {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/quickstart.md"),
    )
    .expect("docs/quickstart.md");
    let table = doc
        .split("### summary.json")
        .nth(1)
        .expect("docs/quickstart.md has a summary.json section");
    let keys: Vec<String> = table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2) // the header and its rule
        .filter_map(|row| row.split('|').nth(1))
        .flat_map(|cell| {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        keys.len() >= 20,
        "the table parsed to too few keys: {keys:?}"
    );
    keys
}
