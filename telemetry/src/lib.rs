//! Telemetry: everything timed or counted in the engine, and the formats it leaves through.
//!
//! Owns: the metrics [`Registry`] and its typed handles ([`Counter`], [`Gauge`], [`Histogram`]),
//! the [`TrackingAllocator`], trace [`spans`], and the exporters
//! (Chrome Trace Event JSON, OpenMetrics text, the scrape
//! `MetricsEndpoint`, feature `metrics-http`). Must never: look a name up, lock, allocate or log on a hot path (metric
//! updates and span pushes), or let a slow exporter block a recording thread.
//!
//! A game reaches it as `lanegraph::telemetry` (the runtime re-exports this crate whole). Start
//! with `docs/telemetry.md`: the well-known metrics, recording your own, opening a trace in
//! Perfetto, scraping the endpoint.

#![deny(unreachable_pub, missing_docs)]

pub mod alloc;
pub(crate) mod chrome_trace;
#[cfg(feature = "metrics-http")]
pub(crate) mod endpoint;
pub(crate) mod error;
pub(crate) mod gpu;
pub(crate) mod handles;
pub(crate) mod histogram;
pub mod hooks;
pub(crate) mod lane_tracks;
// Opted in from the workspace's `unsafe_code = "deny"`: one `clock_gettime` FFI call.
#[cfg(feature = "metrics-facade")]
pub(crate) mod metrics_facade;
#[allow(unsafe_code)]
pub(crate) mod monotonic;
pub mod names;
pub mod openmetrics;
#[cfg(feature = "puffin")]
pub(crate) mod puffin_live;
pub mod quantiles;
pub(crate) mod registry;
pub(crate) mod shard;
pub mod spans;
pub(crate) mod sync;
pub(crate) mod trace_history;
#[cfg(feature = "tracing-layer")]
pub(crate) mod tracing_layer;

#[cfg(all(test, loom))]
pub(crate) mod loom_models;

pub use alloc::{
    memory_stats, register_memory_metrics, reset_thread_peak, thread_memory_stats,
    thread_peak_bytes, MemoryStats, TrackingAllocator,
};
pub use chrome_trace::{
    chrome_trace_json, chrome_trace_json_with_memory, COUNTER_FRAME_MS, COUNTER_LANE_BUSY,
    COUNTER_MEMORY, FRAME_SPAN,
};
#[cfg(feature = "metrics-http")]
pub use endpoint::{EndpointOptions, MetricsEndpoint};
pub use error::{EndpointError, RecordSpanError, RegisterError};
pub use gpu::{GpuFrame, GpuPass};
pub use handles::{Counter, Gauge};
pub use histogram::{Buckets, Histogram, HistogramSnapshot};
#[cfg(feature = "metrics-facade")]
pub use metrics_facade::MetricsRecorder;
pub use monotonic::{monotonic_ns, stamp_of_monotonic_ns};
pub use names::{MetricKind, Unit, WELL_KNOWN_METRICS};
#[cfg(feature = "puffin")]
pub use puffin_live::PuffinServer;
pub use registry::{global, MetricDesc, MetricSnapshot, MetricValue, Registry};
pub use spans::{
    is_enabled as spans_enabled, record_span, span_n, SpanGuard, SpanRecord, TrackId, TrackKind,
};
pub use trace_history::{FrameSpans, TraceHistory};
#[cfg(feature = "tracing-layer")]
pub use tracing_layer::{SpanLayer, MAX_DEPTH as SPAN_LAYER_MAX_DEPTH};
