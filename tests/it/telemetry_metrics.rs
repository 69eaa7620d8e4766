//! Metrics through the public API: counters and histograms updated from many threads at once
//! (one per core and then some, as lanes would) sum exactly; bad registrations are typed errors;
//! the well-known names register; agent cost events reach the controller's side.

use lanegraph::hooks::telemetry::names::{self, WELL_KNOWN_METRICS};
use lanegraph::hooks::telemetry::{
    Buckets, MetricKind, MetricValue, RegisterError, Registry, Unit,
};
use lanegraph::hooks::BucketsHooks;
use lanegraph::hooks::MetricsRecorderHooks;
use lanegraph::hooks::{EngineHooks, HistogramHooks, RegistryHooks};

fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()) * 2 + 1
}

#[test]
fn concurrent_counter_increments_sum_exactly() {
    let r = Registry::default();
    const PER_THREAD: u64 = 100_000;
    let n = threads();
    std::thread::scope(|s| {
        for t in 0..n {
            let r = r.clone();
            s.spawn(move || {
                // Each "lane" registers the same name and gets the same metric.
                let c = r
                    .register_counter("lane.physics.jobs", &[], Unit::None, "Jobs run.")
                    .unwrap();
                for _ in 0..PER_THREAD {
                    c.inc();
                }
                c.add(t as u64);
            });
        }
    });
    let expected = n as u64 * PER_THREAD + (0..n as u64).sum::<u64>();
    let snap = r.snapshot();
    assert_eq!(snap.len(), 1);
    assert_eq!(snap[0].value, MetricValue::Counter { value: expected });
}

#[test]
fn concurrent_histogram_buckets_sum_and_count_are_exact() {
    let r = Registry::default();
    let h = r
        .register_histogram(
            "system.move_ships.time",
            &[],
            Unit::Milliseconds,
            "",
            Buckets::new(vec![1.0, 2.0, 4.0]).unwrap(),
        )
        .unwrap();
    let n = threads();
    // Values exactly representable, so the float sum is exact whatever the order.
    let values = [0.5, 1.0, 1.5, 3.0, 8.0];
    std::thread::scope(|s| {
        for _ in 0..n {
            let h = h.clone();
            s.spawn(move || {
                for _ in 0..10_000 {
                    for v in values {
                        h.observe(v);
                    }
                }
            });
        }
    });
    let snap = h.snapshot();
    let k = n as u64 * 10_000;
    assert_eq!(snap.counts, vec![2 * k, k, k, k]);
    assert_eq!(snap.count, 5 * k);
    assert_eq!(snap.sum, 14.0 * k as f64);
}

#[test]
fn bad_registrations_are_typed_errors() {
    let r = Registry::default();
    assert!(matches!(
        r.register_counter("Frame Time", &[], Unit::None, ""),
        Err(RegisterError::InvalidName { .. })
    ));
    r.register_gauge("asset.pending", &[], Unit::None, "")
        .unwrap();
    let e = r
        .register_histogram("asset.pending", &[], Unit::None, "", Buckets::job_time_us())
        .unwrap_err();
    match &e {
        RegisterError::Clash {
            existing,
            requested,
            ..
        } => {
            assert_eq!(
                (*existing, *requested),
                (MetricKind::Gauge, MetricKind::Histogram)
            );
        }
        other => panic!("expected a clash, got {other:?}"),
    }
    let msg = e.to_string();
    assert!(
        msg.contains("asset.pending") && msg.contains("fix:"),
        "{msg}"
    );
    assert!(matches!(
        Buckets::new(vec![3.0, 2.0]),
        Err(RegisterError::InvalidBuckets { .. })
    ));
}

/// A small game runs 30 frames; its live endpoint's scrape holds exactly the families of
/// `WELL_KNOWN_METRICS` (both directions: nothing undocumented emitted, nothing documented
/// missing), each per-lane family with a series per lane, kinds and units as listed; and the
/// list is exactly the table in docs/telemetry.md (both directions again).
#[test]
fn a_running_engine_emits_exactly_the_documented_metrics() {
    use lanegraph::hooks::telemetry::{EndpointOptions, MetricsEndpoint};
    use lanegraph::systems::SystemDef;
    use std::collections::BTreeSet;
    use std::io::{Read, Write};

    use lanegraph::runtime::{DrawOutput, GpuFrame, GpuPass, RenderPass, RenderSettings};
    // A pass that reports GPU pass timings, as a Vulkan renderer's profiler does, and GPU
    // memory readings (a new one every draw, churning far over the alert threshold).
    struct Timed(u64);
    impl RenderPass<Vec<f32>> for Timed {
        fn draw(
            &mut self,
            v: &Vec<f32>,
            _: &RenderSettings,
            out: &mut DrawOutput,
        ) -> Result<(), String> {
            out.instances = v.len() as u64;
            self.0 += 1;
            let reading = self.0;
            out.gpu_memory = Some(lanegraph::runtime::GpuMemoryFigures {
                reading,
                source: "memory_budget",
                heaps: vec![lanegraph::runtime::GpuHeap {
                    heap: 0,
                    device_local: true,
                    usage: Some(1 << 20),
                    budget: 1 << 30,
                }],
                live_bytes: 1 << 20,
                events: reading * 1_000_000,
                by_name: vec![("churner", reading * 1_000_000)],
                used_bytes: 1 << 20,
                budget_bytes: 1 << 30,
            });
            out.gpu = Some(GpuFrame {
                frame: 1,
                total_ms: 2.0,
                passes: vec![GpuPass {
                    name: "shadow map".into(),
                    raw_ms: 1.5,
                    ema_ms: 1.25,
                    cpu_mono_ns: (0, 0),
                }],
            });
            // And present figures, as a pass presenting to a window does (two presents, so
            // an interval is observed).
            out.present = Some(lanegraph::runtime::PresentFigures {
                presented: 2,
                interval_ns: 16_000_000,
                frames_in_flight: 1,
                mode: "fifo",
                ..Default::default()
            });
            Ok(())
        }
    }
    let mut engine = lanegraph_tests::engine_with_pass(Timed(0), 120);
    engine
        .world_mut()
        .register_system(SystemDef::new("tick", 1.0, |_, _| {}))
        .unwrap();
    for _ in 0..30 {
        // A new entity each frame changes the view, and waiting for the draw makes every frame
        // one draw: the pass's GPU memory readings change, so churn is measured.
        engine.world_mut().spawn();
        engine.frame().unwrap();
        engine.finish_render();
    }
    let endpoint = MetricsEndpoint::start(
        "127.0.0.1:0".parse().unwrap(),
        engine.metrics().clone(),
        EndpointOptions::default(),
    )
    .unwrap();
    let mut conn = std::net::TcpStream::connect(endpoint.local_addr()).unwrap();
    conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut scrape = String::new();
    conn.read_to_string(&mut scrape).unwrap();
    assert!(scrape.contains("200"), "{scrape}");

    // From the scrape: each family's TYPE and UNIT, and the label names of its samples.
    let mut families: std::collections::BTreeMap<String, (String, String, BTreeSet<String>)> =
        Default::default();
    for line in scrape.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (fam, kind) = rest.split_once(' ').unwrap();
            families.entry(fam.into()).or_default().0 = kind.into();
        } else if let Some(rest) = line.strip_prefix("# UNIT ") {
            let (fam, unit) = rest.split_once(' ').unwrap();
            families.entry(fam.into()).or_default().1 = unit.into();
        } else if line.starts_with("lanegraph_") {
            if let Some((series, labels)) = line.split_once('{') {
                let fam = families
                    .keys()
                    .filter(|f| series.starts_with(f.as_str()))
                    .max_by_key(|f| f.len())
                    .cloned()
                    .unwrap();
                let labels = labels.split('}').next().unwrap();
                for pair in labels.split(',') {
                    let name = pair.split('=').next().unwrap();
                    if name != "le" {
                        families.get_mut(&fam).unwrap().2.insert(name.into());
                    }
                }
            }
        }
    }
    let expected: std::collections::BTreeMap<String, (String, String, BTreeSet<String>)> =
        WELL_KNOWN_METRICS
            .iter()
            .map(|m| {
                (
                    names::export_name(m.pattern, m.unit),
                    (
                        m.kind.to_string(),
                        m.unit.to_string(),
                        m.labels.iter().map(|l| l.to_string()).collect(),
                    ),
                )
            })
            .collect();
    let got: BTreeSet<_> = families.keys().collect();
    let want: BTreeSet<_> = expected.keys().collect();
    let undocumented: Vec<_> = got.difference(&want).collect();
    let missing: Vec<_> = want.difference(&got).collect();
    assert!(
        undocumented.is_empty() && missing.is_empty(),
        "emitted but not listed: {undocumented:?}; listed but not emitted: {missing:?}"
    );
    assert_eq!(families, expected);
    assert!(
        scrape.contains("lanegraph_gpu_pass_time_seconds{pass=\"shadow map\"} 0.00125"),
        "the GPU pass series: {scrape}"
    );
    for lane in ["physics", "render", "asset"] {
        assert!(
            scrape.contains(&format!("lanegraph_lane_busy_ratio{{lane=\"{lane}\"}}")),
            "no busy series for {lane}"
        );
    }

    // The docs table: first cell of each row in the well-known section, against the list.
    let docs = include_str!("../../docs/telemetry.md");
    let section = docs
        .split("### Well-known metrics")
        .nth(1)
        .expect("docs/telemetry.md has the well-known section");
    let section = section.split("\n### ").next().unwrap();
    let documented: BTreeSet<String> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .map(|l| l.split('`').next().unwrap().to_string())
        .collect();
    let listed: BTreeSet<String> = WELL_KNOWN_METRICS
        .iter()
        .map(|m| {
            if m.labels.is_empty() {
                m.pattern.to_string()
            } else {
                format!("{}{{{}}}", m.pattern, m.labels.join(","))
            }
        })
        .collect();
    assert_eq!(
        documented, listed,
        "docs/telemetry.md's table and WELL_KNOWN_METRICS differ"
    );
}

/// A game's `metrics::counter!` / `gauge!` / `histogram!` land in the engine's registry and its
/// export (labels too); an invalid name is a typed refusal, never a broken export; updates after
/// registration allocate nothing.
#[test]
fn the_metrics_facade_records_into_the_registry() {
    use lanegraph::hooks::telemetry::{openmetrics, MetricsRecorder, RegisterError};
    let registry = Registry::default();
    let recorder = MetricsRecorder::new(registry.clone());
    metrics::with_local_recorder(&recorder, || {
        metrics::describe_counter!("game.kills", "Enemies defeated.");
        metrics::counter!("game.kills").increment(3);
        metrics::gauge!("game.players", "team" => "red").set(2.0);
        metrics::gauge!("game.players", "team" => "blue").increment(5.0);
        metrics::histogram!("game.path_seconds").record(0.5);
        metrics::counter!("Bad-Name").increment(1);
        metrics::gauge!("game.odd", "le" => "x").set(1.0);
        // Warm handles and keys: further updates allocate nothing.
        let kills = metrics::counter!("game.kills");
        let ((), allocs) = lanegraph_tests::count_allocs(|| {
            for _ in 0..100 {
                kills.increment(1);
                metrics::counter!("game.kills").increment(1);
            }
        });
        assert_eq!(allocs, 0, "facade updates allocated");
    });
    let text = openmetrics::render(&registry);
    assert!(
        text.contains("# HELP lanegraph_game_kills Enemies defeated."),
        "{text}"
    );
    assert!(text.contains("lanegraph_game_kills_total 203"), "{text}");
    assert!(
        text.contains("lanegraph_game_players{team=\"blue\"} 5.0"),
        "{text}"
    );
    assert!(
        text.contains("lanegraph_game_players{team=\"red\"} 2.0"),
        "{text}"
    );
    assert!(
        text.contains("lanegraph_game_path_seconds_count 1"),
        "{text}"
    );
    assert!(
        !text.contains("Bad") && !text.contains("game_odd"),
        "{text}"
    );
    let rejected = recorder.rejected();
    assert_eq!(rejected.len(), 2, "{rejected:?}");
    assert!(matches!(rejected[0].1, RegisterError::InvalidName { .. }));
    assert!(matches!(rejected[1].1, RegisterError::InvalidLabel { .. }));
}
