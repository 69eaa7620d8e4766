//! The metrics registry: names, units and help text bound once to typed handles.
//!
//! Owns: the table of registered metrics and the snapshot every exporter reads. Must never: sit
//! on a hot path (registration and snapshots lock a mutex; updates go through handles and never
//! touch the registry).
//!
//! Registering a name that is already registered with the *same* definition (kind, unit, help
//! aside, and buckets) returns a handle to the same metric, so two lanes can both register
//! `frame.completed` without coordinating. A different kind, unit or bucket layout is a
//! [`RegisterError::Clash`]; so is a name whose OpenMetrics family collides with another's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::histogram::{Buckets, Histogram, HistogramSnapshot};
use super::names::{self, MetricKind, Unit};
use super::{Counter, Gauge, RegisterError};

/// A metric value computed when read (e.g. the tracking allocator's totals).
type CounterFn = Arc<dyn Fn() -> u64 + Send + Sync>;
type GaugeFn = Arc<dyn Fn() -> f64 + Send + Sync>;

#[derive(Clone)]
enum Cell {
    Counter(Counter),
    Gauge(Gauge),
    Histogram(Histogram),
    CounterFn(CounterFn),
    GaugeFn(GaugeFn),
}

impl Cell {
    fn kind(&self) -> MetricKind {
        match self {
            Cell::Counter(_) | Cell::CounterFn(_) => MetricKind::Counter,
            Cell::Gauge(_) | Cell::GaugeFn(_) => MetricKind::Gauge,
            Cell::Histogram(_) => MetricKind::Histogram,
        }
    }
}

/// What a metric is: its name, unit and help, and the family name it exports under.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MetricDesc {
    /// The dot name.
    pub name: String,
    /// Its kind.
    pub kind: MetricKind,
    /// Its unit.
    pub unit: Unit,
    /// One line saying what it measures.
    pub help: String,
    /// The OpenMetrics family name (see [`names::export_name`]).
    pub exported: String,
    /// Label pairs (`lane="physics"`), in registration order; empty for most metrics. Entries
    /// of one name with different labels are one OpenMetrics family.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<(String, String)>,
}

struct Entry {
    desc: MetricDesc,
    cell: Cell,
}

#[derive(Default)]
struct State {
    entries: Vec<Entry>,
    /// By name and labels (see [`series_key`]).
    by_name: HashMap<String, usize>,
    /// Family name -> the first entry of that family.
    by_exported: HashMap<String, usize>,
}

/// The registry key of a series: its name, then each `label=value`, separated by NUL (which
/// neither a name nor a valid label can hold).
fn series_key(name: &str, labels: &[(&str, &str)]) -> String {
    let mut k = name.to_string();
    for (l, v) in labels {
        k.push('\0');
        k.push_str(l);
        k.push('=');
        k.push_str(v);
    }
    k
}

/// Longest label value accepted, in bytes.
pub(crate) const MAX_LABEL_VALUE_LEN: usize = 256;

/// Checks label names (`[a-zA-Z_][a-zA-Z0-9_]*`, no `__` prefix, not `le`, no repeats) and
/// value lengths.
fn validate_labels(metric: &str, labels: &[(&str, &str)]) -> Result<(), RegisterError> {
    let bad = |label: &str, why: &str| RegisterError::InvalidLabel {
        metric: metric.to_string(),
        label: label.to_string(),
        why: why.to_string(),
    };
    for (i, (l, v)) in labels.iter().enumerate() {
        let ok_start = l
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        if !ok_start || !l.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(bad(l, "the name must match [a-zA-Z_][a-zA-Z0-9_]*"));
        }
        if l.starts_with("__") {
            return Err(bad(l, "names starting with `__` are reserved"));
        }
        if *l == "le" {
            return Err(bad(l, "`le` is the histogram bucket label"));
        }
        if labels[..i].iter().any(|(m, _)| m == l) {
            return Err(bad(l, "the label is given twice"));
        }
        if v.len() > MAX_LABEL_VALUE_LEN {
            return Err(bad(
                &format!("{l}={v}"),
                &format!(
                    "the value is {} bytes long (at most {MAX_LABEL_VALUE_LEN})",
                    v.len()
                ),
            ));
        }
    }
    Ok(())
}

/// A concurrent set of named metrics. Cloning shares the same set. `Registry::default()` is an
/// empty one (an engine's own and [`global`] are the usual ones).
#[derive(Clone, Default)]
pub struct Registry {
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.lock().entries.len();
        f.debug_struct("Registry").field("metrics", &n).finish()
    }
}

/// One metric's value at snapshot time.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MetricValue {
    /// A counter's total.
    Counter {
        /// The total.
        value: u64,
    },
    /// A gauge's value.
    Gauge {
        /// The value.
        value: f64,
    },
    /// A histogram's buckets, sum and count.
    Histogram(HistogramSnapshot),
}

/// A metric and its value.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MetricSnapshot {
    /// What it is.
    pub desc: MetricDesc,
    /// Its value.
    pub value: MetricValue,
}

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the table half-updated: every mutation is
        // a push followed by two inserts of the pushed index, all infallible.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers (or finds) the series of counter `name` with these labels (`&[]` for none,
    /// `&[("lane", "physics")]`): every label set of one name is one OpenMetrics family.
    pub fn register_counter(
        &self,
        name: &str,
        labels: &[(&str, &str)],
        unit: Unit,
        help: &str,
    ) -> Result<Counter, RegisterError> {
        match self.register(name, labels, MetricKind::Counter, unit, help, None, || {
            Cell::Counter(Counter::new_detached())
        })? {
            Cell::Counter(c) => Ok(c),
            other => Err(clash(
                name,
                other.kind(),
                MetricKind::Counter,
                "computed metric",
            )),
        }
    }

    /// Registers (or finds) the series of gauge `name` with these labels (`&[]` for none).
    pub fn register_gauge(
        &self,
        name: &str,
        labels: &[(&str, &str)],
        unit: Unit,
        help: &str,
    ) -> Result<Gauge, RegisterError> {
        match self.register(name, labels, MetricKind::Gauge, unit, help, None, || {
            Cell::Gauge(Gauge::new_detached())
        })? {
            Cell::Gauge(g) => Ok(g),
            other => Err(clash(
                name,
                other.kind(),
                MetricKind::Gauge,
                "computed metric",
            )),
        }
    }

    /// Registers (or finds) the series of histogram `name` with these labels (`&[]` for none)
    /// and buckets.
    pub fn register_histogram(
        &self,
        name: &str,
        labels: &[(&str, &str)],
        unit: Unit,
        help: &str,
        buckets: Buckets,
    ) -> Result<Histogram, RegisterError> {
        let b = buckets.clone();
        match self.register(
            name,
            labels,
            MetricKind::Histogram,
            unit,
            help,
            Some(&buckets),
            move || Cell::Histogram(Histogram::new_detached(b)),
        )? {
            Cell::Histogram(h) => Ok(h),
            other => Err(clash(
                name,
                other.kind(),
                MetricKind::Histogram,
                "computed metric",
            )),
        }
    }

    /// The body of [`RegistryHooks::register_counter_fn`](crate::hooks::RegistryHooks::register_counter_fn), which documents it.
    pub(crate) fn register_counter_fn(
        &self,
        name: &str,
        unit: Unit,
        help: &str,
        read: impl Fn() -> u64 + Send + Sync + 'static,
    ) -> Result<(), RegisterError> {
        self.register_fn(
            name,
            &[],
            MetricKind::Counter,
            unit,
            help,
            Cell::CounterFn(Arc::new(read)),
        )
    }

    /// The body of [`RegistryHooks::register_gauge_fn`](crate::hooks::RegistryHooks::register_gauge_fn), which documents it.
    pub(crate) fn register_gauge_fn(
        &self,
        name: &str,
        unit: Unit,
        help: &str,
        read: impl Fn() -> f64 + Send + Sync + 'static,
    ) -> Result<(), RegisterError> {
        self.register_fn(
            name,
            &[],
            MetricKind::Gauge,
            unit,
            help,
            Cell::GaugeFn(Arc::new(read)),
        )
    }

    fn register_fn(
        &self,
        name: &str,
        labels: &[(&str, &str)],
        kind: MetricKind,
        unit: Unit,
        help: &str,
        cell: Cell,
    ) -> Result<(), RegisterError> {
        let mut made = false;
        self.register(name, labels, kind, unit, help, None, || {
            made = true;
            cell
        })?;
        if made {
            Ok(())
        } else {
            Err(clash(
                name,
                kind,
                kind,
                "a name holds one computed metric; it is already registered",
            ))
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn register(
        &self,
        name: &str,
        labels: &[(&str, &str)],
        kind: MetricKind,
        unit: Unit,
        help: &str,
        buckets: Option<&Buckets>,
        make: impl FnOnce() -> Cell,
    ) -> Result<Cell, RegisterError> {
        names::validate(name)?;
        validate_labels(name, labels)?;
        let exported = names::export_name(name, unit);
        names::check_reserved_suffix(name, &exported)?;
        let key = series_key(name, labels);
        let mut st = self.lock();
        if let Some(&i) = st.by_name.get(&key) {
            let e = &st.entries[i];
            if e.desc.kind != kind {
                return Err(clash(name, e.desc.kind, kind, "the types differ"));
            }
            if e.desc.unit != unit {
                let detail = format!("units differ ({:?} vs {:?})", e.desc.unit, unit);
                return Err(clash(name, kind, kind, &detail));
            }
            if let (Cell::Histogram(h), Some(b)) = (&e.cell, buckets) {
                if h.buckets() != b {
                    let detail = format!(
                        "buckets differ ({:?} vs {:?})",
                        h.buckets().bounds(),
                        b.bounds()
                    );
                    return Err(clash(name, kind, kind, &detail));
                }
            }
            return Ok(e.cell.clone());
        }
        if let Some(&i) = st.by_exported.get(&exported) {
            let other = &st.entries[i].desc;
            if other.name != name {
                let detail = format!("`{}` already exports as `{exported}`", other.name);
                return Err(clash(name, other.kind, kind, &detail));
            }
            // Another label set of the same family: it must be the same kind of metric.
            if other.kind != kind {
                return Err(clash(name, other.kind, kind, "the types differ"));
            }
        }
        let cell = make();
        let i = st.entries.len();
        st.entries.push(Entry {
            desc: MetricDesc {
                name: name.to_string(),
                kind,
                unit,
                help: help.to_string(),
                exported: exported.clone(),
                labels: labels
                    .iter()
                    .map(|(l, v)| (l.to_string(), v.to_string()))
                    .collect(),
            },
            cell: cell.clone(),
        });
        st.by_name.insert(key, i);
        st.by_exported.entry(exported).or_insert(i);
        Ok(cell)
    }

    /// The body of [`RegistryHooks::describe`](crate::hooks::RegistryHooks::describe), which documents it.
    pub(crate) fn describe(&self, name: &str) -> Option<MetricDesc> {
        let st = self.lock();
        st.by_name.get(name).map(|&i| st.entries[i].desc.clone())
    }

    /// The body of [`RegistryHooks::len`](crate::hooks::RegistryHooks::len), which documents it.
    pub(crate) fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// The body of [`RegistryHooks::is_empty`](crate::hooks::RegistryHooks::is_empty), which documents it.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The body of [`RegistryHooks::snapshot`](crate::hooks::RegistryHooks::snapshot), which documents it.
    pub(crate) fn snapshot(&self) -> Vec<MetricSnapshot> {
        let cells: Vec<(MetricDesc, Cell)> = {
            let st = self.lock();
            st.entries
                .iter()
                .map(|e| (e.desc.clone(), e.cell.clone()))
                .collect()
        };
        let mut out: Vec<MetricSnapshot> = cells
            .into_iter()
            .map(|(desc, cell)| {
                let value = match cell {
                    Cell::Counter(c) => MetricValue::Counter { value: c.get() },
                    Cell::CounterFn(f) => MetricValue::Counter { value: f() },
                    Cell::Gauge(g) => MetricValue::Gauge { value: g.get() },
                    Cell::GaugeFn(f) => MetricValue::Gauge { value: f() },
                    Cell::Histogram(h) => MetricValue::Histogram(h.snapshot()),
                };
                MetricSnapshot { desc, value }
            })
            .collect();
        out.sort_by(|a, b| (&a.desc.name, &a.desc.labels).cmp(&(&b.desc.name, &b.desc.labels)));
        out
    }
}

fn clash(name: &str, existing: MetricKind, requested: MetricKind, detail: &str) -> RegisterError {
    RegisterError::Clash {
        name: name.to_string(),
        existing,
        requested,
        detail: detail.to_string(),
    }
}

/// The process-wide registry the engine registers its well-known metrics in.
pub fn global() -> &'static Registry {
    static GLOBAL: OnceLock<Registry> = OnceLock::new();
    GLOBAL.get_or_init(Registry::default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_definition_returns_the_same_metric() {
        let r = Registry::default();
        let a = r
            .register_counter("frame.completed", &[], Unit::None, "frames")
            .unwrap();
        let b = r
            .register_counter("frame.completed", &[], Unit::None, "frames")
            .unwrap();
        assert!(a.same_metric(&b));
        a.inc();
        assert_eq!(b.get(), 1);
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn type_unit_and_bucket_clashes_are_errors() {
        let r = Registry::default();
        r.register_counter("asset.loaded", &[], Unit::None, "")
            .unwrap();
        let e = r
            .register_gauge("asset.loaded", &[], Unit::None, "")
            .unwrap_err();
        assert!(matches!(
            e,
            RegisterError::Clash {
                existing: MetricKind::Counter,
                requested: MetricKind::Gauge,
                ..
            }
        ));
        let e = r
            .register_counter("asset.loaded", &[], Unit::Bytes, "")
            .unwrap_err();
        assert!(e.to_string().contains("units differ"), "{e}");
        let b1 = Buckets::new(vec![1.0]).unwrap();
        let b2 = Buckets::new(vec![2.0]).unwrap();
        r.register_histogram("frame.time", &[], Unit::Milliseconds, "", b1.clone())
            .unwrap();
        r.register_histogram("frame.time", &[], Unit::Milliseconds, "", b1)
            .unwrap();
        let e = r
            .register_histogram("frame.time", &[], Unit::Milliseconds, "", b2)
            .unwrap_err();
        assert!(e.to_string().contains("buckets differ"), "{e}");
    }

    #[test]
    fn bad_names_and_export_collisions_are_errors() {
        let r = Registry::default();
        assert!(matches!(
            r.register_counter("Bad Name", &[], Unit::None, ""),
            Err(RegisterError::InvalidName { .. })
        ));
        assert!(matches!(
            r.register_counter("asset.load_count", &[], Unit::None, ""),
            Err(RegisterError::InvalidName { .. })
        ));
        r.register_gauge("a.b_c", &[], Unit::None, "").unwrap();
        let e = r.register_gauge("a_b.c", &[], Unit::None, "").unwrap_err();
        assert!(e.to_string().contains("already exports"), "{e}");
    }

    #[test]
    fn computed_metrics_are_read_at_snapshot_and_registered_once() {
        let r = Registry::default();
        r.register_gauge_fn("memory.current_bytes", Unit::Bytes, "", || 42.0)
            .unwrap();
        assert!(r
            .register_gauge_fn("memory.current_bytes", Unit::Bytes, "", || 1.0)
            .is_err());
        assert!(r
            .register_gauge("memory.current_bytes", &[], Unit::Bytes, "")
            .is_err());
        let snap = r.snapshot();
        assert_eq!(snap[0].value, MetricValue::Gauge { value: 42.0 });
    }

    #[test]
    fn concurrent_registration_yields_one_metric() {
        let r = Registry::default();
        std::thread::scope(|s| {
            for _ in 0..4 {
                let r = r.clone();
                s.spawn(move || {
                    let c = r
                        .register_counter("lane.physics.jobs", &[], Unit::None, "")
                        .unwrap();
                    (0..1000).for_each(|_| c.inc());
                });
            }
        });
        assert_eq!(r.len(), 1);
        assert_eq!(r.snapshot()[0].value, MetricValue::Counter { value: 4000 });
    }
}
