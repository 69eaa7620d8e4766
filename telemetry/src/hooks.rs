//! What the runtime crate (`lanegraph`) calls into telemetry for, beyond what a game uses: the
//! system scheduler records the spans it timed itself through [`Here`], and names them with
//! [`intern_name`].
//!
//! Owns: nothing of its own (thin handles on the span store). Must never: be needed by a game
//! (`span!` is a game's way to record spans; `spans::span`, `span_n` and `record_span` serve
//! the runtime's tools, which name spans at run time or time them elsewhere).

use lanegraph_jobs::clock::Stamp;

#[cfg(feature = "metrics-http")]
use crate::endpoint::MetricsEndpoint;
#[cfg(feature = "puffin")]
use crate::puffin_live::PuffinServer;
#[cfg(feature = "puffin")]
use crate::spans::TrackInfo;
#[cfg(feature = "metrics-facade")]
use crate::MetricsRecorder;
use crate::{
    Buckets, Counter, FrameSpans, Gauge, Histogram, HistogramSnapshot, MetricDesc, MetricSnapshot,
    RegisterError, Registry, SpanRecord, TraceHistory, TrackingAllocator, Unit,
};

use crate::spans::ring::Ring;
use crate::spans::{is_enabled, store, TrackId, NO_WORKLOAD};

/// The calling thread's ring and track while recording is on: for a loop that records spans
/// it timed itself (the scheduler's system runs), looked up once per loop, not per span.
#[derive(Clone, Copy)]
pub struct Here(&'static Ring, TrackId);

impl Here {
    /// `None` while recording is off.
    #[inline]
    pub fn now() -> Option<Here> {
        if !is_enabled() {
            return None;
        }
        store::current_ring().map(|r| Here(r, store::home_track(r)))
    }

    /// Pushes a span timed by the caller onto this thread's track.
    #[inline(always)]
    pub fn record(self, name: &'static str, start: Stamp, end: Stamp) {
        self.0.push(name, self.1, start, end, NO_WORKLOAD);
    }
}

/// A `&'static str` equal to `name`: span names are static, and a run-time name (a system's)
/// is interned once per distinct name (a bounded set: names a game registers, not data).
pub fn intern_name(name: &str) -> &'static str {
    type Names = std::sync::Mutex<std::collections::HashSet<&'static str>>;
    static NAMES: std::sync::OnceLock<Names> = std::sync::OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(&n) = names.get(name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(n);
    n
}

/// The tracking allocator's self-check, for tests.
pub trait AllocatorHooks {
    /// Allocates `size` bytes (8-aligned) through this allocator and frees them again; returns
    /// whether the allocation succeeded. Exists so benches can time the tracking cost of one
    /// alloc+free without `unsafe`; it records like any other allocation.
    fn alloc_free_roundtrip(&self, size: usize) -> bool;
}

impl AllocatorHooks for TrackingAllocator {
    fn alloc_free_roundtrip(&self, size: usize) -> bool {
        TrackingAllocator::alloc_free_roundtrip(self, size)
    }
}

/// A counter's or gauge's calls for tests and benches: a handle on no registry, and whether two
/// handles are one metric.
pub trait HandleHooks {
    /// A handle not (yet) in any registry; [`super::Registry::register_counter`] (or
    /// `register_gauge`) is the usual way to get one.
    fn new_detached() -> Self
    where
        Self: Sized;

    /// Whether two handles update the same metric.
    fn same_metric(&self, other: &Self) -> bool;
}

impl HandleHooks for Counter {
    fn new_detached() -> Self {
        Counter::new_detached()
    }

    fn same_metric(&self, other: &Counter) -> bool {
        Counter::same_metric(self, other)
    }
}

impl HandleHooks for Gauge {
    fn new_detached() -> Self {
        Gauge::new_detached()
    }

    fn same_metric(&self, other: &Gauge) -> bool {
        Gauge::same_metric(self, other)
    }
}

/// The metrics endpoint's served-request count, for tests.
#[cfg(feature = "metrics-http")]
pub trait EndpointHooks {
    /// Requests answered so far (any status).
    fn requests_served(&self) -> u64;
}

#[cfg(feature = "metrics-http")]
impl EndpointHooks for MetricsEndpoint {
    fn requests_served(&self) -> u64 {
        MetricsEndpoint::requests_served(self)
    }
}

/// A histogram's calls for tests and the exporters: a handle on no registry, whether two handles
/// are one metric, and its bucket snapshot.
pub trait HistogramHooks {
    /// A histogram not (yet) in any registry.
    fn new_detached(buckets: Buckets) -> Self
    where
        Self: Sized;

    /// Counts, sum and count summed over all threads (see the module's semantics).
    fn snapshot(&self) -> HistogramSnapshot;

    /// Whether two handles update the same metric.
    fn same_metric(&self, other: &Histogram) -> bool;

    /// The bucket layout.
    fn buckets(&self) -> &Buckets;
}

impl HistogramHooks for Histogram {
    fn new_detached(buckets: Buckets) -> Self {
        Histogram::new_detached(buckets)
    }

    fn snapshot(&self) -> HistogramSnapshot {
        Histogram::snapshot(self)
    }

    fn same_metric(&self, other: &Histogram) -> bool {
        Histogram::same_metric(self, other)
    }

    fn buckets(&self) -> &Buckets {
        Histogram::buckets(self)
    }
}

/// The puffin server's per-frame publish, which the engine makes.
#[cfg(feature = "puffin")]
pub trait PuffinHooks {
    /// Sends one frame: its spans as one puffin stream per track, then ends the puffin frame.
    /// The engine ends puffin's frame once per engine frame: a game that also profiles with
    /// puffin's macros should not call `GlobalProfiler::new_frame` itself.
    fn publish(&mut self, frame: &FrameSpans<'_>, tracks: &[TrackInfo]);

    /// Viewers connected now.
    fn clients(&self) -> usize;
}

#[cfg(feature = "puffin")]
impl PuffinHooks for PuffinServer {
    fn publish(&mut self, frame: &FrameSpans<'_>, tracks: &[TrackInfo]) {
        PuffinServer::publish(self, frame, tracks)
    }

    fn clients(&self) -> usize {
        PuffinServer::clients(self)
    }
}

/// A registry's reads for the exporters and tests: a metric's description, the metric count, and
/// the snapshot every export renders.
pub trait RegistryHooks {
    /// The description of a registered name (cold path).
    fn describe(&self, name: &str) -> Option<MetricDesc>;

    /// Number of registered metrics.
    fn len(&self) -> usize;

    /// Whether nothing is registered.
    fn is_empty(&self) -> bool;

    /// Every metric and its value, sorted by name. Computed metrics are read outside the lock.
    fn snapshot(&self) -> Vec<MetricSnapshot>;

    /// Registers a counter whose value `read` computes at snapshot time (it must be monotonic):
    /// the runtime's own computed metrics (allocator totals, dropped spans, pending assets).
    /// A name can hold one computed metric: registering it again is a clash.
    fn register_counter_fn(
        &self,
        name: &str,
        unit: Unit,
        help: &str,
        read: impl Fn() -> u64 + Send + Sync + 'static,
    ) -> Result<(), RegisterError>;

    /// Registers a gauge whose value `read` computes at snapshot time (as
    /// [`register_counter_fn`](Self::register_counter_fn)).
    fn register_gauge_fn(
        &self,
        name: &str,
        unit: Unit,
        help: &str,
        read: impl Fn() -> f64 + Send + Sync + 'static,
    ) -> Result<(), RegisterError>;
}

impl RegistryHooks for Registry {
    fn describe(&self, name: &str) -> Option<MetricDesc> {
        Registry::describe(self, name)
    }

    fn len(&self) -> usize {
        Registry::len(self)
    }

    fn is_empty(&self) -> bool {
        Registry::is_empty(self)
    }

    fn snapshot(&self) -> Vec<MetricSnapshot> {
        Registry::snapshot(self)
    }

    fn register_counter_fn(
        &self,
        name: &str,
        unit: Unit,
        help: &str,
        read: impl Fn() -> u64 + Send + Sync + 'static,
    ) -> Result<(), RegisterError> {
        Registry::register_counter_fn(self, name, unit, help, read)
    }

    fn register_gauge_fn(
        &self,
        name: &str,
        unit: Unit,
        help: &str,
        read: impl Fn() -> f64 + Send + Sync + 'static,
    ) -> Result<(), RegisterError> {
        Registry::register_gauge_fn(self, name, unit, help, read)
    }
}

/// The trace history's calls for the engine that fills it (one frame's spans at a time) and for
/// tests.
pub trait TraceHistoryHooks {
    /// Keeps at most `max_frames` frames (at least one), in a buffer of `max_frames` times
    /// 256 spans.
    fn new(max_frames: usize) -> Self
    where
        Self: Sized;

    /// Keeps at most `max_frames` frames (at least one) in a buffer of `spans` spans (at least
    /// one).
    fn with_capacity(max_frames: usize, spans: usize) -> Self
    where
        Self: Sized;

    /// Collects every thread's spans (see [`crate::spans::collect`]) as frame `frame`, evicting the
    /// oldest frames as needed (see the module docs). Call once at the end of each frame.
    fn collect_frame(&mut self, frame: u64) -> FrameSpans<'_>;

    /// Adds an already-collected frame (spans beyond the buffer are kept out and counted in
    /// `dropped`).
    fn push(&mut self, frame: u64, spans: &[SpanRecord], dropped: u64) -> FrameSpans<'_>;

    /// The frames held, oldest first.
    fn frames(&self) -> impl Iterator<Item = FrameSpans<'_>>;

    /// Spans lost over the frames held.
    fn dropped(&self) -> u64;
}

impl TraceHistoryHooks for TraceHistory {
    fn new(max_frames: usize) -> Self {
        TraceHistory::new(max_frames)
    }

    fn with_capacity(max_frames: usize, spans: usize) -> Self {
        TraceHistory::with_capacity(max_frames, spans)
    }

    fn collect_frame(&mut self, frame: u64) -> FrameSpans<'_> {
        TraceHistory::collect_frame(self, frame)
    }

    fn push(&mut self, frame: u64, spans: &[SpanRecord], dropped: u64) -> FrameSpans<'_> {
        TraceHistory::push(self, frame, spans, dropped)
    }

    fn frames(&self) -> impl Iterator<Item = FrameSpans<'_>> {
        TraceHistory::frames(self)
    }

    fn dropped(&self) -> u64 {
        TraceHistory::dropped(self)
    }
}

/// Bucket presets the engine registers its own histograms with, and a layout's bounds, for the engine, the exporters and tests.
pub trait BucketsHooks {
    /// Frame and system times in milliseconds: fine around the 60/120/30 Hz targets
    /// (8.33, 16.67, 33.33 ms), coarse beyond 100 ms.
    fn frame_time_ms() -> Self
    where
        Self: Sized;

    /// Frame and system times in seconds (OpenMetrics' base unit): `frame_time_ms`
    /// divided by 1000.
    fn frame_time_seconds() -> Self
    where
        Self: Sized;

    /// Job times in microseconds: 1 us to ~16 ms, doubling.
    fn job_time_us() -> Self
    where
        Self: Sized;

    /// The finite upper bounds.
    fn bounds(&self) -> &[f64];
}

impl BucketsHooks for Buckets {
    fn frame_time_ms() -> Self {
        Buckets::frame_time_ms()
    }

    fn frame_time_seconds() -> Self {
        Buckets::frame_time_seconds()
    }

    fn job_time_us() -> Self {
        Buckets::job_time_us()
    }

    fn bounds(&self) -> &[f64] {
        Buckets::bounds(self)
    }
}

/// The facade recorder's rejected registrations, for tests.
#[cfg(feature = "metrics-facade")]
pub trait MetricsRecorderHooks {
    /// Keys the registry refused (an invalid name or label, a clash with another kind), each
    /// with its typed error; their handles record nothing.
    fn rejected(&self) -> Vec<(String, RegisterError)>;
}

#[cfg(feature = "metrics-facade")]
impl MetricsRecorderHooks for MetricsRecorder {
    fn rejected(&self) -> Vec<(String, RegisterError)> {
        MetricsRecorder::rejected(self)
    }
}
