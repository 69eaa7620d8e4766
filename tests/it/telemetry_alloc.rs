//! The tracking allocator (installed by the suite's `main.rs` the way a game installs it, one
//! line), checked against allocations whose sizes we know.

use lanegraph::hooks::telemetry::{
    self, memory_stats, thread_memory_stats, MemoryStats, MetricValue, Registry,
};
use lanegraph::hooks::BucketsHooks;
use lanegraph::hooks::RegistryHooks;

/// Serialises the tests: they read process-wide totals.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

const MIB: usize = 1 << 20;

#[test]
fn a_known_allocation_moves_every_total() {
    let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    assert!(telemetry::alloc::is_installed());
    // Per-thread totals are exact whatever the harness' other threads do.
    let before = thread_memory_stats().unwrap();
    let global_before = memory_stats();
    let block: Vec<u8> = Vec::with_capacity(MIB);
    let during = thread_memory_stats().unwrap();
    let global_during = memory_stats();
    drop(std::hint::black_box(block));
    let after = thread_memory_stats().unwrap();
    assert_eq!(during.current_bytes - before.current_bytes, MIB as i64);
    assert_eq!(
        during.bytes_allocated_lifetime - before.bytes_allocated_lifetime,
        MIB as u64
    );
    assert_eq!(during.net_allocations - before.net_allocations, 1);
    assert_eq!(after.current_bytes, before.current_bytes);
    assert_eq!(after.net_allocations, before.net_allocations);
    assert_eq!(
        after.bytes_allocated_lifetime,
        during.bytes_allocated_lifetime
    );
    // The process-wide lifetime total is monotonic and saw the block.
    assert!(
        global_during.bytes_allocated_lifetime
            >= global_before.bytes_allocated_lifetime + MIB as u64
    );
}

#[test]
fn threads_allocating_at_once_are_all_counted() {
    let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    const THREADS: usize = 4;
    const ROUNDS: usize = 2000;
    const SIZE: usize = 1000;
    let global_before = memory_stats();
    let per_thread: Vec<(MemoryStats, Vec<Box<[u8]>>)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    let mut keep = Vec::with_capacity(ROUNDS);
                    let before = thread_memory_stats().unwrap();
                    for i in 0..ROUNDS {
                        let b = vec![0u8; SIZE].into_boxed_slice();
                        if i % 2 == 0 {
                            keep.push(b);
                        }
                    }
                    let after = thread_memory_stats().unwrap();
                    let delta = MemoryStats {
                        current_bytes: after.current_bytes - before.current_bytes,
                        bytes_allocated_lifetime: after.bytes_allocated_lifetime
                            - before.bytes_allocated_lifetime,
                        net_allocations: after.net_allocations - before.net_allocations,
                        allocations: after.allocations - before.allocations,
                        frees: after.frees - before.frees,
                    };
                    (delta, keep)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (d, _) in &per_thread {
        assert_eq!(d.current_bytes, ((ROUNDS / 2) * SIZE) as i64);
        assert_eq!(d.bytes_allocated_lifetime, (ROUNDS * SIZE) as u64);
        assert_eq!(d.net_allocations, (ROUNDS / 2) as i64);
        assert_eq!(
            (d.allocations, d.frees),
            (ROUNDS as u64, (ROUNDS / 2) as u64)
        );
    }
    // The process-wide total is the sum of every thread's slot: it saw all of them.
    let global_after = memory_stats();
    assert!(
        global_after.bytes_allocated_lifetime - global_before.bytes_allocated_lifetime
            >= (THREADS * ROUNDS * SIZE) as u64
    );
    drop(per_thread);
}

#[test]
fn memory_metrics_export_the_allocator_totals() {
    let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let r = Registry::default();
    telemetry::register_memory_metrics(&r).unwrap();
    let snap = r.snapshot();
    let names: Vec<&str> = snap.iter().map(|m| m.desc.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "memory.allocated_lifetime",
            "memory.current_bytes",
            "memory.net_allocations"
        ]
    );
    match &snap[1].value {
        MetricValue::Gauge { value } => assert!(*value > 0.0, "live heap is never empty here"),
        other => panic!("memory.current_bytes is a gauge, got {other:?}"),
    }
    let text = telemetry::openmetrics::render(&r);
    assert!(text.contains("lanegraph_memory_allocated_lifetime_bytes_total "));
    // Registering twice is a clash (a computed metric has one source), not a second copy.
    assert!(telemetry::register_memory_metrics(&r).is_err());
}

#[test]
fn hot_paths_allocate_nothing() {
    let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let r = Registry::default();
    let c = r
        .register_counter(
            "frame.completed",
            &[],
            lanegraph::hooks::telemetry::Unit::None,
            "",
        )
        .unwrap();
    let h = r
        .register_histogram(
            "frame.time",
            &[],
            lanegraph::hooks::telemetry::Unit::Milliseconds,
            "",
            lanegraph::hooks::telemetry::Buckets::frame_time_ms(),
        )
        .unwrap();
    let track = telemetry::spans::register_track("gpu", telemetry::TrackKind::Thread);
    let (before, after) = std::thread::spawn(move || {
        // First use on this thread binds its span ring and metric slot (allowed to allocate).
        drop(telemetry::spans::span("warm"));
        c.inc();
        h.observe(1.0);
        let before = thread_memory_stats().unwrap();
        for i in 0..(2 * telemetry::spans::RING_CAPACITY as u64) {
            let _s = telemetry::span_n("hot", i);
            c.inc();
            h.observe(i as f64 * 0.01);
            let t = lanegraph::jobs::clock::now();
            telemetry::record_span(track, "pre_timed", t, t, Some(i)).unwrap();
        }
        (before, thread_memory_stats().unwrap())
    })
    .join()
    .unwrap();
    assert_eq!(
        after.allocations - before.allocations,
        0,
        "spans, counter adds and histogram observations allocated"
    );
    let _ = telemetry::spans::collect();
}
