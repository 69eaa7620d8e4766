//! The tracking allocator installed the way a game installs it (one line), checked against
//! allocations whose sizes we know.

use lanegraph::telemetry::{self, memory_stats, MetricValue, Registry, TrackingAllocator};

#[global_allocator]
static ALLOC: TrackingAllocator = TrackingAllocator::new();

/// Serialises the tests: they read process-wide totals.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

const MIB: usize = 1 << 20;

#[test]
fn a_known_allocation_moves_every_total() {
    let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    assert!(telemetry::alloc::is_installed());
    let before = memory_stats();
    let block: Vec<u8> = Vec::with_capacity(MIB);
    let during = memory_stats();
    drop(std::hint::black_box(block));
    let after = memory_stats();
    // Other threads of the test harness may allocate meanwhile: allow a little slack upward.
    let slack = 64 * 1024;
    let grew = during.current_bytes - before.current_bytes;
    assert!(
        grew >= MIB as i64 && grew < (MIB + slack) as i64,
        "grew {grew}"
    );
    assert!(during.bytes_allocated_lifetime - before.bytes_allocated_lifetime >= MIB as u64);
    assert!(during.net_allocations > before.net_allocations);
    let back = after.current_bytes - before.current_bytes;
    assert!(back.abs() < slack as i64, "did not shrink back: {back}");
    assert!(after.bytes_allocated_lifetime >= during.bytes_allocated_lifetime);
}

#[test]
fn threads_allocating_at_once_are_all_counted() {
    let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    const THREADS: usize = 4;
    const ROUNDS: usize = 2000;
    const SIZE: usize = 1000;
    let before = memory_stats();
    let kept: Vec<Vec<Box<[u8]>>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    let mut keep = Vec::with_capacity(ROUNDS);
                    for i in 0..ROUNDS {
                        let b = vec![0u8; SIZE].into_boxed_slice();
                        if i % 2 == 0 {
                            keep.push(b);
                        }
                    }
                    keep
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let after = memory_stats();
    let live = THREADS * (ROUNDS / 2) * SIZE;
    let grew = after.current_bytes - before.current_bytes;
    assert!(grew >= live as i64, "live {live}, grew {grew}");
    assert!(
        grew < (live + 256 * 1024) as i64,
        "live {live}, grew {grew}"
    );
    let lifetime = after.bytes_allocated_lifetime - before.bytes_allocated_lifetime;
    assert!(lifetime >= (THREADS * ROUNDS * SIZE) as u64);
    assert!(after.net_allocations - before.net_allocations >= (THREADS * ROUNDS / 2) as i64);
    drop(kept);
}

#[test]
fn memory_metrics_export_the_allocator_totals() {
    let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let r = Registry::new();
    telemetry::register_memory_metrics(&r).unwrap();
    let snap = r.snapshot();
    let names: Vec<&str> = snap.iter().map(|m| m.desc.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "memory.bytes_allocated_lifetime",
            "memory.current_bytes",
            "memory.net_allocations"
        ]
    );
    match &snap[1].value {
        MetricValue::Gauge { value } => assert!(*value > 0.0, "live heap is never empty here"),
        other => panic!("memory.current_bytes is a gauge, got {other:?}"),
    }
    let text = telemetry::openmetrics::render(&r);
    assert!(text.contains("lanegraph_memory_bytes_allocated_lifetime_bytes_total "));
    // Registering twice is a clash (a computed metric has one source), not a second copy.
    assert!(telemetry::register_memory_metrics(&r).is_err());
}
