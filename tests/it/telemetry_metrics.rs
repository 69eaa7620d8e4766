//! Metrics through the public API: counters and histograms updated from many threads at once
//! (one per core and then some, as lanes would) sum exactly; bad registrations are typed errors;
//! the well-known names register; agent cost events reach the controller's side.

use lanegraph::telemetry::names::{self, WELL_KNOWN_METRICS};
use lanegraph::telemetry::{
    AgentCostEvent, AgentId, Buckets, CostEventQueue, MetricKind, MetricValue, RegisterError,
    Registry, Unit,
};

fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()) * 2 + 1
}

#[test]
fn concurrent_counter_increments_sum_exactly() {
    let r = Registry::new();
    const PER_THREAD: u64 = 100_000;
    let n = threads();
    std::thread::scope(|s| {
        for t in 0..n {
            let r = r.clone();
            s.spawn(move || {
                // Each "lane" registers the same name and gets the same metric.
                let c = r
                    .register_counter("lane.physics.jobs", Unit::None, "Jobs run.")
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
    let r = Registry::new();
    let h = r
        .register_histogram(
            "system.move_ships.time",
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
    let r = Registry::new();
    assert!(matches!(
        r.register_counter("Frame Time", Unit::None, ""),
        Err(RegisterError::InvalidName(_))
    ));
    r.register_gauge("asset.pending", Unit::None, "").unwrap();
    let e = r
        .register_histogram("asset.pending", Unit::None, "", Buckets::job_time_us())
        .unwrap_err();
    match &e {
        RegisterError::Clash(c) => {
            assert_eq!(
                (c.existing, c.requested),
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
        Err(lanegraph::telemetry::InvalidBuckets { .. })
    ));
}

#[test]
fn every_well_known_metric_registers() {
    let r = Registry::new();
    for m in WELL_KNOWN_METRICS {
        let name = m
            .pattern
            .replace("<lane>", &names::sanitize_segment("Physics"))
            .replace("<system>", &names::sanitize_segment("MoveShips"))
            .replace("<pass>", &names::sanitize_segment("shadow-map"));
        let res = match m.kind {
            MetricKind::Counter => r.register_counter(&name, m.unit, m.help).map(drop),
            MetricKind::Gauge => r.register_gauge(&name, m.unit, m.help).map(drop),
            MetricKind::Histogram => r
                .register_histogram(&name, m.unit, m.help, Buckets::frame_time_ms())
                .map(drop),
        };
        res.unwrap_or_else(|e| panic!("{}: {e}", m.pattern));
    }
    assert_eq!(r.len(), WELL_KNOWN_METRICS.len());
    assert!(r.describe("system.move_ships.time").is_some());
    assert!(r.describe("gpu.pass.shadow_map.time").is_some());
}

#[test]
fn agent_costs_flow_from_many_threads_to_one_reader() {
    let q = CostEventQueue::with_capacity(4096);
    std::thread::scope(|s| {
        for agent in 0..4u32 {
            let q = q.clone();
            s.spawn(move || {
                for frame in 0..100u64 {
                    q.push(AgentCostEvent {
                        agent: AgentId(agent),
                        frame,
                        n: frame * 10,
                        time_ms: 0.5,
                    })
                    .unwrap();
                }
            });
        }
    });
    let mut out = Vec::new();
    assert_eq!(q.drain_into(&mut out), 400);
    for agent in 0..4 {
        let frames: Vec<u64> = out
            .iter()
            .filter(|e| e.agent == AgentId(agent))
            .map(|e| e.frame)
            .collect();
        assert_eq!(
            frames,
            (0..100).collect::<Vec<_>>(),
            "per-producer order kept"
        );
    }
    assert_eq!(q.dropped(), 0);
}
