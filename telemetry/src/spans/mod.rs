//! Trace spans: every frame, system run, lane job and graph node as (name, track, start, end,
//! optional workload n), into per-thread bounded rings.
//!
//! Owns: the recording API ([`span`], [`record_span`]), the global on/off switch, tracks and the
//! collector. Must never: allocate, lock or log on a span's hot path (after the thread's first
//! span), or block a recording thread on the collector.
//!
//! # Cost
//! A recorded span is two clock reads (`lanegraph_jobs::clock::now`: one `RDTSC` each on the TSC
//! source; `Instant` elsewhere), one thread-local read and five relaxed stores plus two cursor
//! stores (plain `mov`s on x86_64). With recording off, [`span`] is one relaxed load and a branch.
//! `lanegraph bench telemetry` measures both against an empty loop and `puffin`'s scope.
//!
//! # Timestamps
//! Stamps are raw clock ticks ([`Stamp`]); exporters convert them once with [`Stamp::as_ns`]
//! (nanoseconds since the clock's epoch, exact 32.32 fixed-point tick scaling), so every track of
//! every thread lands on one timeline.
//!
//! With the `tracing-spans` cargo feature, [`span`] also enters a `tracing` span named
//! `lanegraph.span` (field `name`), and [`record_span`] emits a `tracing` event, so a game's own
//! subscriber sees them. That path allocates and costs what the subscriber costs.

pub(crate) mod ring;
pub(crate) mod store;
mod tracks;

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};

use lanegraph_jobs::clock::{self, Stamp};

pub use store::{
    collect, collect_into, collect_into_at_most, dropped_total, ring_pool_bytes, SpanBatch,
    RING_CAPACITY,
};
pub use tracks::{register_track, rename_track, tracks, TrackId, TrackInfo, TrackKind};

use super::RecordSpanError;

/// `n` stored for a span without a workload size.
pub(crate) const NO_WORKLOAD: u64 = u64::MAX;

/// One recorded span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanRecord {
    /// What ran (`frame`, a system's name, a graph node's name).
    pub name: &'static str,
    /// Where it ran.
    pub track: TrackId,
    /// When it started.
    pub start: Stamp,
    /// When it ended (`>= start`).
    pub end: Stamp,
    /// Its workload size, when it has one (entities, bodies, draw calls...).
    pub n: Option<u64>,
}

impl SpanRecord {
    /// Duration in nanoseconds.
    pub fn duration_ns(&self) -> u64 {
        self.end.ns_since(self.start)
    }
}

/// The global switch (writer: [`set_enabled`]; readers: every span, relaxed: a span that starts
/// just after a flip may still see the old value, which only decides whether it is recorded).
static ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns span recording on or off for every thread (on by default).
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether spans are being recorded.
#[inline]
pub fn is_enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Records a span on the current thread's track from now until the guard drops.
#[inline(always)]
#[must_use = "the span ends when the guard drops; bind it with `let _span = ...`"]
pub fn span(name: &'static str) -> SpanGuard {
    span_with_n(name, NO_WORKLOAD)
}

/// As [`span`], with a workload size `n`.
#[inline(always)]
#[must_use = "the span ends when the guard drops; bind it with `let _span = ...`"]
pub fn span_n(name: &'static str, n: u64) -> SpanGuard {
    span_with_n(name, n)
}

/// Longest span name accepted, in bytes (puffin's limit for a scope's data; a trace row's label
/// stays readable).
pub const MAX_SPAN_NAME_LEN: usize = 127;

/// Whether `name` can name a span: 1 to [`MAX_SPAN_NAME_LEN`] bytes, no control characters.
/// `const`, so [`span!`](macro@crate::span) checks its literal at compile time.
pub const fn check_name(name: &str) -> Result<(), &'static str> {
    let b = name.as_bytes();
    if b.is_empty() {
        return Err("it is empty");
    }
    if b.len() > MAX_SPAN_NAME_LEN {
        return Err("it is longer than 127 bytes");
    }
    let mut i = 0;
    while i < b.len() {
        if b[i] < 0x20 || b[i] == 0x7f {
            return Err("it holds a control character");
        }
        i += 1;
    }
    Ok(())
}

/// The `tracing` crate, for [`span!`](macro@crate::span): the macro's callsite lives in the caller's
/// crate and must reach `tracing` through this one.
#[doc(hidden)]
pub use tracing as __tracing;

/// What [`span!`](macro@crate::span) expands to: [`span_n`], whose `tracing` twin (feature
/// `tracing-spans`) is made by `make` from the macro's own static callsite, so it carries the
/// span's real name (no allocation: the name is in the callsite's metadata).
#[doc(hidden)]
#[inline(always)]
pub fn __span_named(name: &'static str, n: u64, make: impl FnOnce() -> tracing::Span) -> SpanGuard {
    let active = is_enabled();
    #[cfg(not(feature = "tracing-spans"))]
    let _ = make;
    SpanGuard {
        name,
        start: if active { clock::now() } else { Stamp(0) },
        n,
        active,
        #[cfg(feature = "tracing-spans")]
        _tracing: active.then(|| make().entered()),
        _not_send: PhantomData,
    }
}

/// A span named by a literal: `let _s = lanegraph_telemetry::span!("ai.plan");`, or with a workload
/// size, `lanegraph_telemetry::span!("physics.chunk", rows)`. The same as [`span`] /
/// [`span_n`](crate::span_n), except that with the `tracing-spans` feature the
/// `tracing` span it enters is named after the literal (target `lanegraph::span`) rather than
/// the generic `lanegraph.span`. The literal is checked at compile time:
///
/// ```compile_fail
/// let _s = lanegraph_telemetry::span!(""); // an empty span name does not compile
/// ```
#[macro_export]
macro_rules! span {
    ($name:literal) => {
        $crate::span!($name, u64::MAX)
    };
    ($name:literal, $n:expr) => {{
        // An empty, over-long or control-character name does not compile.
        const _: () = assert!(
            $crate::spans::check_name($name).is_ok(),
            "span name must be 1 to 127 bytes without control characters"
        );
        $crate::spans::__span_named($name, $n, || {
            $crate::spans::__tracing::trace_span!(target: "lanegraph::span", $name)
        })
    }};
}

// `inline(always)` here and on the guard's `drop`: measured through criterion (a closure in
// another crate), plain `#[inline]` left a call on both ends of a disabled span, several times
// the cost of the inlined check (docs/bench-notes/telemetry.md).
#[inline(always)]
fn span_with_n(name: &'static str, n: u64) -> SpanGuard {
    let active = is_enabled();
    SpanGuard {
        name,
        start: if active { clock::now() } else { Stamp(0) },
        n,
        active,
        #[cfg(feature = "tracing-spans")]
        _tracing: active.then(|| tracing::trace_span!("lanegraph.span", name).entered()),
        _not_send: PhantomData,
    }
}

/// An open span; it is recorded when dropped. Not `Send`: it records into the thread that
/// opened it, so it cannot end on another thread:
///
/// ```compile_fail
/// let guard = lanegraph_telemetry::spans::span("moved");
/// std::thread::spawn(move || drop(guard)); // error: `*const ()` cannot be sent between threads
/// ```
#[derive(Debug)]
pub struct SpanGuard {
    name: &'static str,
    start: Stamp,
    n: u64,
    active: bool,
    #[cfg(feature = "tracing-spans")]
    _tracing: Option<tracing::span::EnteredSpan>,
    _not_send: PhantomData<*const ()>,
}

impl SpanGuard {
    /// Sets the workload size once it is known.
    #[inline]
    pub fn set_n(&mut self, n: u64) {
        self.n = n;
    }
}

impl Drop for SpanGuard {
    #[inline(always)]
    fn drop(&mut self) {
        if !self.active {
            return;
        }
        let end = clock::now();
        if let Some(ring) = store::current_ring() {
            ring.push(self.name, store::home_track(ring), self.start, end, self.n);
        }
    }
}

/// Pushes a span that was timed elsewhere (a lane's per-node timings, GPU passes placed on the
/// CPU timeline) onto `track`, through the calling thread's ring. Does nothing while recording
/// is off. `n` is the workload size, if any.
#[inline]
pub fn record_span(
    track: TrackId,
    name: &'static str,
    start: Stamp,
    end: Stamp,
    n: Option<u64>,
) -> Result<(), RecordSpanError> {
    if let Err(why) = check_name(name) {
        return Err(RecordSpanError::InvalidName { name, why });
    }
    if end < start {
        return Err(RecordSpanError::EndBeforeStart {
            name,
            start_ns: start.as_ns(),
            end_ns: end.as_ns(),
        });
    }
    if !tracks::is_registered(track) {
        return Err(RecordSpanError::UnknownTrack {
            name,
            track: track.0,
        });
    }
    if !is_enabled() {
        return Ok(());
    }
    #[cfg(feature = "tracing-spans")]
    tracing::trace!(
        target: "lanegraph::span",
        name,
        track = track.0,
        start_ns = start.as_ns(),
        dur_ns = end.ns_since(start),
        n = n.unwrap_or(0)
    );
    if let Some(ring) = store::current_ring() {
        ring.push(name, track, start, end, n.unwrap_or(NO_WORKLOAD));
    }
    Ok(())
}

/// The calling thread's own track (binds its ring on first use).
pub fn current_thread_track() -> Option<TrackId> {
    store::current_ring().map(store::home_track)
}

/// Names the calling thread's track (e.g. `"owner"`, `"physics 0"`) and says what it is.
/// Lane workers call this once when they start; the owner thread when the game loop starts.
pub fn name_current_thread(name: impl Into<String>, kind: TrackKind) -> Option<TrackId> {
    let id = current_thread_track()?;
    rename_track(id, name, kind);
    Some(id)
}

/// Registers `telemetry.spans_dropped` in `registry` (a counter read from [`dropped_total`]).
pub fn register_metrics(registry: &super::Registry) -> Result<(), super::RegisterError> {
    registry.register_counter_fn(
        "telemetry.spans_dropped",
        super::Unit::None,
        "Trace spans overwritten before collection.",
        dropped_total,
    )
}

/// Sorts spans by track, then start, then longest first: the order Chrome's format wants per
/// track, with parents before the children they contain.
pub fn sort_for_export(spans: &mut [SpanRecord]) {
    // Unstable: a stable sort allocates a merge buffer on every call, and the frame's
    // collection must not allocate. The name and workload break the remaining ties, so the
    // order is still a function of the spans.
    spans.sort_unstable_by(|a, b| {
        a.track
            .cmp(&b.track)
            .then(a.start.cmp(&b.start))
            .then(b.end.cmp(&a.end))
            .then(a.name.cmp(b.name))
            .then(a.n.cmp(&b.n))
    });
}

/// Serialises unit tests that record spans and call [`collect`] (a collect drains every
/// thread's ring, so two such tests running at once would steal each other's spans).
#[cfg(test)]
pub(crate) static TEST_COLLECT_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;

    fn serial() -> std::sync::MutexGuard<'static, ()> {
        TEST_COLLECT_LOCK.lock().unwrap_or_else(|p| p.into_inner())
    }

    #[test]
    fn nested_spans_nest_and_order() {
        let _serial = serial();
        let track = std::thread::spawn(|| {
            let _outer = span("outer");
            {
                let mut inner = span("inner");
                inner.set_n(7);
            }
            let _second = span_n("second", 3);
            current_thread_track().unwrap()
        })
        .join()
        .unwrap();
        let batch = collect();
        let mine: Vec<_> = batch.spans.iter().filter(|s| s.track == track).collect();
        let names: Vec<_> = mine.iter().map(|s| s.name).collect();
        assert_eq!(names, vec!["outer", "inner", "second"], "{mine:?}");
        let (outer, inner, second) = (mine[0], mine[1], mine[2]);
        assert!(outer.start <= inner.start && inner.end <= outer.end);
        assert!(inner.end <= second.start && second.end <= outer.end);
        assert_eq!(inner.n, Some(7));
        assert_eq!(second.n, Some(3));
        assert_eq!(outer.n, None);
    }

    #[test]
    fn record_span_validates_input() {
        let _serial = serial();
        let t = register_track(
            "gpu",
            TrackKind::GpuQueue {
                queue: "graphics".into(),
            },
        );
        let a = clock::now();
        let b = clock::now();
        assert!(matches!(
            record_span(t, "late", b, Stamp(b.0.saturating_sub(1_000)), None),
            Err(RecordSpanError::EndBeforeStart { .. })
        ));
        for bad in ["", "tab\there", "x".repeat(128).leak()] {
            assert!(matches!(
                record_span(t, bad, a, b, None),
                Err(RecordSpanError::InvalidName { .. })
            ));
        }
        assert!(matches!(
            record_span(TrackId(u32::MAX), "x", a, b, None),
            Err(RecordSpanError::UnknownTrack {
                track: u32::MAX,
                ..
            })
        ));
        record_span(t, "pass", a, b, Some(12)).unwrap();
        let batch = collect();
        let r = super::super::Registry::default();
        register_metrics(&r).unwrap();
        assert_eq!(
            r.describe("telemetry.spans_dropped").unwrap().kind,
            super::super::MetricKind::Counter
        );
        assert!(batch
            .spans
            .iter()
            .any(|s| s.track == t && s.name == "pass" && s.n == Some(12)));
    }
}

#[cfg(all(test, feature = "tracing-spans"))]
mod tracing_tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::layer::{Context, SubscriberExt};

    /// Records the names of spans and the targets of events it sees.
    struct Seen(Arc<Mutex<Vec<String>>>);

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Seen {
        fn on_new_span(
            &self,
            attrs: &tracing::span::Attributes<'_>,
            _: &tracing::span::Id,
            _: Context<'_, S>,
        ) {
            self.0
                .lock()
                .unwrap()
                .push(attrs.metadata().name().to_string());
        }

        fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
            self.0
                .lock()
                .unwrap()
                .push(event.metadata().target().to_string());
        }
    }

    #[test]
    fn spans_and_pre_timed_spans_reach_tracing() {
        let _serial = TEST_COLLECT_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let subscriber = tracing_subscriber::registry().with(Seen(seen.clone()));
        let track = register_track("gpu", TrackKind::GpuQueue { queue: "q".into() });
        tracing::subscriber::with_default(subscriber, || {
            drop(span("traced"));
            drop(crate::span!("physics.named"));
            drop(crate::span!("physics.sized", 7));
            let a = clock::now();
            record_span(track, "pass", a, clock::now(), None).unwrap();
        });
        let seen = seen.lock().unwrap().clone();
        assert!(seen.contains(&"lanegraph.span".to_string()), "{seen:?}");
        // The macro's spans carry their real names.
        assert!(seen.contains(&"physics.named".to_string()), "{seen:?}");
        assert!(seen.contains(&"physics.sized".to_string()), "{seen:?}");
        assert!(seen.contains(&"lanegraph::span".to_string()), "{seen:?}");
        let _ = collect();
    }
}
