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
//!
//! | file | idea |
//! |------|------|
//! | `alloc` | The tracking global allocator: live bytes, lifetime bytes and net allocations, per thread |
//! | `chrome_trace` | Chrome Trace Event JSON: the format Perfetto (ui.perfetto.dev) and `chrome://tracing` open |
//! | `endpoint` | The OpenMetrics scrape endpoint: `GET /metrics` over plain HTTP/1.1 on a background thread |
//! | `error` | Telemetry's errors, one per subsystem (metric registration, pre-timed spans, the scrape endpoint), each variant saying what, why and how ... |
//! | `gpu` | GPU timings as the runtime reports them: per pass and per frame, in milliseconds |
//! | `handles` | Typed metric handles: `Counter` and `Gauge` (`super::Histogram` has its own file) |
//! | `histogram` | Histograms with fixed buckets chosen at registration, plus sum and count |
//! | `hooks` | What the runtime crate (`lanegraph`) calls into telemetry for, beyond what a game uses: the system scheduler records the spans it timed ... |
//! | `lane_tracks` | Which trace track a lane worker's spans land on |
//! | `loom_models` | Loom models of telemetry's lock-free protocols: the span ring's seqlock and the metric shards |
//! | `metrics_facade` | A recorder for the `metrics` facade: a game's `metrics::counter!` / `gauge!` / `histogram!` land in the engine's `Registry`, beside its ... |
//! | `monotonic` | Placing `CLOCK_MONOTONIC` instants on the engine's clock: what the GPU profiler and the swapchain report (the Vulkan crate's times are ... |
//! | `names` | Metric names, units and the list of well-known metrics |
//! | `openmetrics` | OpenMetrics 1.0 text exposition of every registered metric |
//! | `puffin_live` | The live view: each frame's spans streamed, while the game runs, over puffin's wire protocol (`puffin_http`), so `puffin_viewer --url ... |
//! | `quantiles` | Percentiles: the one definition the runtime, the demo's summary and report, and the benches share |
//! | `registry` | The metrics registry: names, units and help text bound once to typed handles |
//! | `shard` | Per-thread shard slots: how counters and histograms avoid serialising concurrent writers |
//! | `spans` | Trace spans: every frame, system run, lane job and graph node as (name, track, start, end, optional workload n), into per-thread bounded ... |
//! | `sync` | The seam between telemetry's lock-free hot paths and their atomics |
//! | `trace_history` | The last N frames of spans, kept for export (the HTML report and `trace.json` read it) |
//! | `tracing_layer` | A `tracing` layer that records a game's own `tracing` spans and events into the engine's span rings, so they appear in `trace.json` ... |

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
