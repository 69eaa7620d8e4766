//! Telemetry's errors, one per subsystem (metric registration, pre-timed spans, the scrape
//! endpoint), each variant saying what, why and how to fix.
//!
//! Owns: error types only. Must never: log (the caller decides whether a failure is worth a line).

use super::names::MetricKind;

/// Registering a metric (or building its buckets) failed: each variant says what, why and how
/// to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// The name breaks the naming rules (see [`super::names`]).
    #[error(
        "invalid metric name `{name}`: {why} (fix: use dot-separated lowercase snake_case segments, \
         e.g. `system.move_ships.time`; `names::sanitize_segment` turns any label into a valid segment)"
    )]
    InvalidName {
        /// The name as given.
        name: String,
        /// Which rule it breaks.
        why: String,
    },
    /// The name is already registered with a different type, unit or bucket layout.
    #[error(
        "metric `{name}` is already registered as {existing}, cannot register it as {requested}: \
         {detail} (fix: register it once with one definition and share the handle, or pick another name)"
    )]
    Clash {
        /// The clashing name (or, for an export-name clash, the new name).
        name: String,
        /// What the existing registration is.
        existing: MetricKind,
        /// What was asked for.
        requested: MetricKind,
        /// What differs.
        detail: String,
    },
    /// Histogram bucket bounds that cannot describe a histogram.
    #[error(
        "invalid histogram buckets: {why} (fix: give 1 to {max} finite upper bounds in strictly \
         increasing order; `+Inf` is implicit)",
        max = super::histogram::MAX_BUCKETS
    )]
    InvalidBuckets {
        /// Which rule the bounds break.
        why: String,
    },
    /// A label name or value that cannot be exported.
    #[error(
        "invalid label `{label}` on metric `{metric}`: {why} (fix: label names are \
         [a-zA-Z_][a-zA-Z0-9_]*, not starting with `__`, not `le`; values are at most 256 bytes)"
    )]
    InvalidLabel {
        /// The metric's name.
        metric: String,
        /// The label (name, or `name=value`).
        label: String,
        /// Which rule it breaks.
        why: String,
    },
}

/// A pre-timed span could not be recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RecordSpanError {
    /// The span ends before it starts.
    #[error(
        "span `{name}` ends before it starts ({end_ns} ns < {start_ns} ns on the clock's timeline) \
         (fix: pass the stamps in (start, end) order, both from `lanegraph_jobs::clock::now`)"
    )]
    EndBeforeStart {
        /// The span's name.
        name: &'static str,
        /// Start on the common timeline.
        start_ns: u64,
        /// End on the common timeline.
        end_ns: u64,
    },
    /// The name is empty, too long or holds control characters (it would break a trace
    /// viewer's rows or the live view's stream).
    #[error(
        "span name {name:?} is invalid: {why} (fix: a name of 1 to {max} bytes without control \
         characters, e.g. `physics.chunk`)",
        max = crate::spans::MAX_SPAN_NAME_LEN
    )]
    InvalidName {
        /// The name as given.
        name: &'static str,
        /// Which rule it breaks.
        why: &'static str,
    },
    /// The track id was never handed out by `register_track`.
    #[error(
        "span `{name}` names track {track}, which was never registered \
         (fix: get track ids from `spans::register_track` or `spans::current_thread_track`)"
    )]
    UnknownTrack {
        /// The span's name.
        name: &'static str,
        /// The unknown id.
        track: u32,
    },
}

/// A telemetry server could not start: the metrics scrape endpoint
/// (`MetricsEndpoint::start`) or the puffin live view (`Engine::serve_puffin`).
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// The address is not loopback and exposure beyond this machine was not asked for.
    #[error(
        "refusing to serve metrics on {addr}: not a loopback address \
         (fix: use 127.0.0.1:PORT, or, if you mean to expose metrics to the network, pass \
         --metrics-remote to the lanegraph binary or set `EndpointOptions::allow_non_loopback` \
         in a game)"
    )]
    NotLoopback {
        /// The refused address.
        addr: std::net::SocketAddr,
    },
    /// Binding or configuring the socket failed.
    #[error("cannot serve metrics on {addr}: {source} (fix: pick a free port, or port 0 for any)")]
    Bind {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The background thread could not be started.
    #[error("cannot start the metrics endpoint thread: {0} (fix: check thread limits)")]
    Spawn(#[source] std::io::Error),
    /// The puffin live view could not listen.
    #[error(
        "the puffin live view cannot listen on {addr}: {why} (fix: pick a free port, e.g. \
         127.0.0.1:8585, or stop the other program listening there)"
    )]
    Puffin {
        /// The address asked for.
        addr: String,
        /// Why it failed.
        why: String,
    },
}
