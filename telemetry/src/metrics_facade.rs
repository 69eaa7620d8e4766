//! A recorder for the `metrics` facade: a game's `metrics::counter!` / `gauge!` / `histogram!`
//! land in the engine's [`Registry`], beside its own metrics, in the same OpenMetrics export.
//!
//! Owns: [`MetricsRecorder`] and the mapping from `metrics` keys to registry series. Must never:
//! allocate once a key is registered (a lookup by the borrowed key, then an atomic update), break
//! the export with a name or label the registry refuses (such a key gets a handle that records
//! nothing, and the refusal is kept, typed, in [`MetricsRecorder::rejected`]), or panic.
//!
//! Names: a `metrics` key name is used as the registry's dot name as it is (`game.enemies`),
//! so it must follow the registry's rules (lowercase snake_case segments); its labels become the
//! series' labels. Units from `describe_*` are not applied (the registry's unit is part of the
//! family name, fixed at first registration); the description becomes the family's help when it
//! arrives first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};

use super::{Buckets, RegisterError, Registry};

/// Buckets of a facade histogram (the facade gives none): 1e-6 to ~1e6, a factor of 2 apart,
/// enough for seconds from a microsecond up and for counts alike.
fn facade_buckets() -> Buckets {
    Buckets::exponential(1e-6, 2.0, 40).expect("constant bounds are valid")
}

#[derive(Default)]
struct Tables {
    counters: HashMap<Key, Counter>,
    gauges: HashMap<Key, Gauge>,
    histograms: HashMap<Key, Histogram>,
    help: HashMap<String, String>,
    rejected: Vec<(String, RegisterError)>,
}

/// The `metrics` recorder over a [`Registry`]. Install it once with
/// [`MetricsRecorder::install`] (or `metrics::set_global_recorder`).
#[derive(Clone)]
pub struct MetricsRecorder {
    registry: Registry,
    tables: Arc<Mutex<Tables>>,
}

impl std::fmt::Debug for MetricsRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsRecorder").finish_non_exhaustive()
    }
}

impl MetricsRecorder {
    /// A recorder writing into `registry` (an engine's: `engine.metrics().clone()`).
    pub fn new(registry: Registry) -> Self {
        MetricsRecorder {
            registry,
            tables: Arc::default(),
        }
    }

    /// Installs it as the process's `metrics` recorder; an error when one is installed already.
    pub fn install(self) -> Result<(), metrics::SetRecorderError<MetricsRecorder>> {
        metrics::set_global_recorder(self)
    }

    /// Keys the registry refused (an invalid name or label, a clash with another kind), each
    /// with its typed error; their handles record nothing.
    pub(crate) fn rejected(&self) -> Vec<(String, RegisterError)> {
        self.lock().rejected.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Finds or registers `key` in `table`, through `make` (the registry's registration).
    fn handle<H: Clone>(
        &self,
        key: &Key,
        table: impl Fn(&mut Tables) -> &mut HashMap<Key, H>,
        make: impl FnOnce(&Registry, &str, &[(&str, &str)], &str) -> Result<H, RegisterError>,
        noop: impl FnOnce() -> H,
    ) -> H {
        let mut t = self.lock();
        if let Some(h) = table(&mut t).get(key) {
            return h.clone();
        }
        let name = key.name();
        let labels: Vec<(&str, &str)> = key.labels().map(|l| (l.key(), l.value())).collect();
        let help = t.help.get(name).cloned().unwrap_or_default();
        let h = match make(&self.registry, name, &labels, &help) {
            Ok(h) => h,
            Err(e) => {
                tracing::warn!(target: "lanegraph", metric = name, error = %e, "metrics facade: key refused; its updates are dropped");
                t.rejected.push((name.to_string(), e));
                noop()
            }
        };
        table(&mut t).insert(key.clone(), h.clone());
        h
    }
}

/// A registry counter as a `metrics` counter.
struct CounterCell(super::Counter);

impl metrics::CounterFn for CounterCell {
    fn increment(&self, value: u64) {
        self.0.add(value);
    }
    fn absolute(&self, value: u64) {
        // A counter only grows: raise it to `value` (a lower value is ignored).
        let cur = self.0.get();
        if value > cur {
            self.0.add(value - cur);
        }
    }
}

/// A registry gauge as a `metrics` gauge.
struct GaugeCell(super::Gauge);

impl metrics::GaugeFn for GaugeCell {
    fn increment(&self, value: f64) {
        self.0.add(value);
    }
    fn decrement(&self, value: f64) {
        self.0.add(-value);
    }
    fn set(&self, value: f64) {
        self.0.set(value);
    }
}

/// A registry histogram as a `metrics` histogram.
struct HistogramCell(super::Histogram);

impl metrics::HistogramFn for HistogramCell {
    fn record(&self, value: f64) {
        self.0.observe(value);
    }
}

impl Recorder for MetricsRecorder {
    fn describe_counter(&self, key: KeyName, _unit: Option<Unit>, description: SharedString) {
        self.describe(key, description);
    }
    fn describe_gauge(&self, key: KeyName, _unit: Option<Unit>, description: SharedString) {
        self.describe(key, description);
    }
    fn describe_histogram(&self, key: KeyName, _unit: Option<Unit>, description: SharedString) {
        self.describe(key, description);
    }

    fn register_counter(&self, key: &Key, _metadata: &Metadata<'_>) -> Counter {
        self.handle(
            key,
            |t| &mut t.counters,
            |r, name, labels, help| {
                let c = r.register_counter(name, labels, super::Unit::None, help)?;
                Ok(Counter::from_arc(Arc::new(CounterCell(c))))
            },
            Counter::noop,
        )
    }

    fn register_gauge(&self, key: &Key, _metadata: &Metadata<'_>) -> Gauge {
        self.handle(
            key,
            |t| &mut t.gauges,
            |r, name, labels, help| {
                let g = r.register_gauge(name, labels, super::Unit::None, help)?;
                Ok(Gauge::from_arc(Arc::new(GaugeCell(g))))
            },
            Gauge::noop,
        )
    }

    fn register_histogram(&self, key: &Key, _metadata: &Metadata<'_>) -> Histogram {
        self.handle(
            key,
            |t| &mut t.histograms,
            |r, name, labels, help| {
                let h =
                    r.register_histogram(name, labels, super::Unit::None, help, facade_buckets())?;
                Ok(Histogram::from_arc(Arc::new(HistogramCell(h))))
            },
            Histogram::noop,
        )
    }
}

impl MetricsRecorder {
    fn describe(&self, key: KeyName, description: SharedString) {
        self.lock()
            .help
            .entry(key.as_str().to_string())
            .or_insert_with(|| description.to_string());
    }
}
