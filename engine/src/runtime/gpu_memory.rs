//! The GPU memory monitor's runtime side: what a render pass reports of GPU memory, turned into
//! metrics, a churn alert and a pressure signal for the budget controller.
//!
//! Owns: [`GpuMemoryFigures`] (the pass's reading, no Vulkan type in it), the monitor the render
//! job updates after each draw that brought a new reading (per-heap gauges, the churn rate, the
//! rate-limited churn warning naming the allocation that churned most), and the pressure cell
//! the controller polls through a [`ReadingsProvider`]. Must never: query the GPU (the pass does,
//! every few frames), allocate per draw (heap gauges are registered once per heap; the name
//! table is reused), or block the owner (the pressure cell is two atomics).
//!
//! # The churn alert
//! Churn is allocations plus frees per second between two readings. Above the threshold
//! (`[gpu] churn_alert_per_second`, 1,000 by default) the render lane logs one warning (code
//! `LG-GPU-001`) naming the allocation name with the most events since the previous reading,
//! at most once per [`CHURN_ALERT_EVERY`]; every alert counts in `gpu.memory.churn_alerts`.
//!
//! # The pressure signal
//! The fullest heap's usage against its budget (or the backend's live bytes against the
//! device-local heaps, without `VK_EXT_memory_budget`) goes to the controller as its GPU-memory
//! reading: at 85 % it caps the budget multiplier at 0.8, at 95 % at 0.5 (critical), so the
//! render agent moves to cheaper strategies (lower resolution: smaller targets).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use lanegraph_budget::providers::{MemoryState, Readings, ReadingsProvider};
use lanegraph_jobs::clock::{self, Stamp};
use lanegraph_telemetry::{Counter, Gauge, Registry, Unit};

/// The least time between two churn warnings.
pub const CHURN_ALERT_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// The default churn alert threshold, allocations plus frees per second.
pub const DEFAULT_CHURN_ALERT_PER_SECOND: f64 = 1000.0;

/// One heap as a pass reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GpuHeap {
    /// The heap's index.
    pub heap: u32,
    /// Device-local memory.
    pub device_local: bool,
    /// This process's usage, bytes, when the driver reports it.
    pub usage: Option<u64>,
    /// What this process may use, bytes.
    pub budget: u64,
}

/// A render pass's GPU memory reading (`DrawOutput::gpu_memory`), updated in place every few
/// frames: bump [`reading`](Self::reading) with each new one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuMemoryFigures {
    /// Increases with each new reading (the monitor acts once per reading).
    pub reading: u64,
    /// Where the heap figures came from (`memory_budget` or `ledger`).
    pub source: &'static str,
    /// Every heap.
    pub heaps: Vec<GpuHeap>,
    /// Bytes live in the renderer's allocations.
    pub live_bytes: u64,
    /// Allocations plus frees so far.
    pub events: u64,
    /// Per allocation name, its allocations plus frees so far.
    pub by_name: Vec<(&'static str, u64)>,
    /// The pressure signal's numerator: the fullest heap's usage (or the live bytes), bytes.
    pub used_bytes: u64,
    /// Its denominator: that heap's budget (or the device-local total), bytes.
    pub budget_bytes: u64,
}

/// The controller's view of GPU memory: one reading's used / budget as `f64` bits in one
/// atomic (two atomics could pair one reading's usage with another's budget), written by the
/// render job, read by the provider. `NO_READING`: none (no reading yet, or withdrawn).
#[derive(Debug)]
pub(crate) struct PressureCell {
    fraction_bits: AtomicU64,
}

/// The cell's "no reading" value (a NaN no division produces here).
const NO_READING: u64 = u64::MAX;

/// The fraction is handed to the controller as used / budget over this many units.
const PRESSURE_SCALE: u64 = 1_000_000;

impl Default for PressureCell {
    fn default() -> Self {
        PressureCell {
            fraction_bits: AtomicU64::new(NO_READING),
        }
    }
}

impl PressureCell {
    fn set(&self, used: u64, budget: u64) {
        let bits = if budget == 0 {
            NO_READING
        } else {
            (used as f64 / budget as f64).to_bits()
        };
        self.fraction_bits.store(bits, Ordering::Relaxed);
    }

    pub(crate) fn clear(&self) {
        self.fraction_bits.store(NO_READING, Ordering::Relaxed);
    }
}

/// The engine's GPU memory provider for the controller (installed at build).
pub(crate) struct GpuMemoryProvider(pub(crate) Arc<PressureCell>);

impl ReadingsProvider for GpuMemoryProvider {
    fn read(&mut self) -> Readings {
        let bits = self.0.fraction_bits.load(Ordering::Relaxed);
        Readings {
            gpu_memory: (bits != NO_READING).then(|| MemoryState {
                used_bytes: (f64::from_bits(bits) * PRESSURE_SCALE as f64).round() as u64,
                budget_bytes: PRESSURE_SCALE,
            }),
            ..Readings::default()
        }
    }
}

/// What the monitor found over the run (for the summary and the report).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ChurnFigures {
    /// The highest churn between two readings, events per second.
    pub peak_per_second: f64,
    /// Warnings logged (at most one per [`CHURN_ALERT_EVERY`]).
    pub alerts: u64,
    /// Readings over the threshold.
    pub over_threshold: u64,
}

struct HeapSeries {
    usage: Option<Gauge>,
    budget: Option<Gauge>,
}

/// The render job's monitor (module docs).
pub(crate) struct GpuMemoryMonitor {
    registry: Registry,
    threshold: f64,
    seen: u64,
    last: Option<(Stamp, u64)>,
    last_names: Vec<(&'static str, u64)>,
    heaps: Vec<HeapSeries>,
    /// Registered at the first churn figure (`None` inside: the registry refused).
    churn: Option<Option<Gauge>>,
    alerts: Option<Option<Counter>>,
    last_alert: Option<Stamp>,
    pub(crate) figures: ChurnFigures,
    pub(crate) pressure: Arc<PressureCell>,
}

impl GpuMemoryMonitor {
    pub(crate) fn new(registry: Registry, threshold: f64) -> Self {
        GpuMemoryMonitor {
            registry,
            threshold,
            seen: 0,
            last: None,
            last_names: Vec::new(),
            heaps: Vec::new(),
            churn: None,
            alerts: None,
            last_alert: None,
            figures: ChurnFigures::default(),
            pressure: Arc::new(PressureCell::default()),
        }
    }

    /// Acts on `f` once per reading (module docs).
    pub(crate) fn update(&mut self, f: &GpuMemoryFigures) {
        if f.reading == self.seen {
            return;
        }
        self.seen = f.reading;
        let r = &self.registry;
        while self.heaps.len() < f.heaps.len() {
            let i = self.heaps.len().to_string();
            self.heaps.push(HeapSeries {
                usage: r
                    .register_gauge(
                        "gpu.memory.usage",
                        &[("heap", &i)],
                        Unit::Bytes,
                        "GPU memory this process uses in the heap (VK_EXT_memory_budget).",
                    )
                    .ok(),
                budget: r
                    .register_gauge(
                        "gpu.memory.budget",
                        &[("heap", &i)],
                        Unit::Bytes,
                        "GPU memory this process may use in the heap.",
                    )
                    .ok(),
            });
        }
        for (h, s) in f.heaps.iter().zip(&self.heaps) {
            if let (Some(u), Some(g)) = (h.usage, &s.usage) {
                g.set(u as f64);
            }
            if let Some(g) = &s.budget {
                g.set(h.budget as f64);
            }
        }
        self.pressure.set(f.used_bytes, f.budget_bytes);

        let now = clock::now();
        if let Some((t, events)) = self.last {
            let secs = now.ns_since(t) as f64 / 1e9;
            if secs > 0.0 {
                let rate = f.events.saturating_sub(events) as f64 / secs;
                self.figures.peak_per_second = self.figures.peak_per_second.max(rate);
                let registry = &self.registry;
                let churn = self.churn.get_or_insert_with(|| {
                    registry
                        .register_gauge(
                            "gpu.memory.churn",
                            &[],
                            Unit::None,
                            "GPU allocations plus frees per second, between the last two readings.",
                        )
                        .ok()
                });
                if let Some(g) = churn {
                    g.set(rate);
                }
                if rate > self.threshold {
                    self.figures.over_threshold += 1;
                    self.alert(rate, &f.by_name, now);
                }
            }
        }
        self.last = Some((now, f.events));
        self.last_names.clear();
        self.last_names.extend_from_slice(&f.by_name);
    }

    fn alert(&mut self, rate: f64, by_name: &[(&'static str, u64)], now: Stamp) {
        let due = self
            .last_alert
            .is_none_or(|t| now.ns_since(t) >= CHURN_ALERT_EVERY.as_nanos() as u64);
        if !due {
            return;
        }
        self.last_alert = Some(now);
        self.figures.alerts += 1;
        let registry = &self.registry;
        let alerts = self.alerts.get_or_insert_with(|| {
            registry
                .register_counter(
                    "gpu.memory.churn_alerts",
                    &[],
                    Unit::None,
                    "GPU allocation churn warnings logged (at most one per 10 s).",
                )
                .ok()
        });
        if let Some(c) = alerts {
            c.inc();
        }
        let before = |name: &str| {
            self.last_names
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(0, |(_, c)| *c)
        };
        let (top, top_events) = by_name
            .iter()
            .map(|&(n, c)| (n, c.saturating_sub(before(n))))
            .max_by_key(|&(_, d)| d)
            .unwrap_or(("(unnamed)", 0));
        tracing::warn!(
            code = "LG-GPU-001",
            per_second = rate,
            threshold = self.threshold,
            allocation = top,
            events = top_events,
            "GPU allocation churn: {rate:.0} allocations and frees per second (threshold {:.0}); \
             most from `{top}` ({top_events} since the last reading); fix: keep that resource \
             alive across frames, or pool it",
            self.threshold
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(n: u64, events: u64, name_events: u64) -> GpuMemoryFigures {
        GpuMemoryFigures {
            reading: n,
            source: "ledger",
            heaps: vec![GpuHeap {
                heap: 0,
                device_local: true,
                usage: Some(10),
                budget: 100,
            }],
            live_bytes: 10,
            events,
            by_name: vec![("steady", 5), ("churner", name_events)],
            used_bytes: 90,
            budget_bytes: 100,
        }
    }

    /// Collects what the `tracing` macros write, for checking a warning's text.
    #[derive(Clone, Default)]
    struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn churn_over_the_threshold_alerts_once_per_interval_and_names_the_churner() {
        let log = Captured::default();
        let sink = log.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || sink.clone())
            .with_ansi(false)
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);
        let mut m = GpuMemoryMonitor::new(Registry::default(), 100.0);
        m.update(&reading(1, 0, 0));
        std::thread::sleep(std::time::Duration::from_millis(20));
        // Thousands of events in 20 ms: far over 100 per second, nearly all from `churner`.
        m.update(&reading(2, 5000, 4995));
        let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
        assert!(text.contains("LG-GPU-001"), "{text}");
        assert!(
            text.contains("most from `churner` (4995 since the last reading)"),
            "{text}"
        );
        assert!(text.contains("fix:"), "{text}");
        assert_eq!(m.figures.alerts, 1);
        assert!(m.figures.peak_per_second > 100.0);
        std::thread::sleep(std::time::Duration::from_millis(20));
        m.update(&reading(3, 10_000, 9995));
        assert_eq!(m.figures.over_threshold, 2);
        assert_eq!(m.figures.alerts, 1, "rate-limited");
        // The same reading twice is acted on once.
        m.update(&reading(3, 10_000, 9995));
        assert_eq!(m.figures.over_threshold, 2);
        // The controller's provider sees the pressure, until it is withdrawn.
        let mut p = GpuMemoryProvider(m.pressure.clone());
        let m9 = p.read().gpu_memory.unwrap();
        assert_eq!(m9.used_bytes as f64 / m9.budget_bytes as f64, 0.9);
        m.pressure.clear();
        assert_eq!(p.read().gpu_memory, None);
    }

    #[test]
    fn no_reading_no_pressure() {
        let m = GpuMemoryMonitor::new(Registry::default(), 100.0);
        assert_eq!(
            GpuMemoryProvider(m.pressure.clone()).read().gpu_memory,
            None
        );
    }
}
