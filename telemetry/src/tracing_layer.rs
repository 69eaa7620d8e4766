//! A `tracing` layer that records a game's own `tracing` spans and events into the engine's span
//! rings, so they appear in `trace.json` beside the engine's, on the thread that ran them.
//!
//! Owns: [`SpanLayer`]. Must never: allocate per span (names come from the callsite's
//! `&'static` metadata; enter stamps sit in a fixed per-thread stack), block, or record the
//! engine's own spans twice (events and spans whose target is one of the runtime's crates are
//! skipped: the engine records those itself).
//!
//! Each enter/exit pair of a span on a thread is one trace span on that thread's track (a span
//! entered several times shows as several slices, as in any sampling of `tracing` spans).
//! Events are zero-length spans named after their callsite (`event src/game.rs:42`). Nothing is
//! recorded while trace spans are off (`spans::set_enabled(false)`).

use std::cell::Cell;

use lanegraph_jobs::clock::{self, Stamp};
use tracing::span::Id;
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

use super::spans;

/// Deepest nesting of entered spans kept per thread; deeper enters are not recorded (and their
/// exits ignored), never a panic or an allocation.
pub const MAX_DEPTH: usize = 32;

/// The layer: add it to a `tracing_subscriber::registry()` (or any subscriber stack).
///
/// ```
/// use tracing_subscriber::prelude::*;
///
/// let subscriber = tracing_subscriber::registry().with(lanegraph_telemetry::SpanLayer);
/// tracing::subscriber::with_default(subscriber, || {
///     let _s = tracing::info_span!("ai.plan").entered(); // lands in trace.json as `ai.plan`
/// });
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SpanLayer;

std::thread_local! {
    /// Enter stamps of the spans this thread is inside, innermost last: (span id, name, start).
    static STACK: Cell<[(u64, &'static str, Stamp); MAX_DEPTH]> =
        const { Cell::new([(0, "", Stamp(0)); MAX_DEPTH]) };
    /// How many of `STACK` are in use (may exceed `MAX_DEPTH`: those levels are not kept).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Whether the layer records this callsite: not the runtime's own (target `lanegraph`, one of
/// its crates `lanegraph_telemetry`, `lanegraph_budget`, `lanegraph_jobs`, `lanegraph_simd`,
/// `lanegraph_vk`, or a path in one, which the engine records itself); another crate named
/// `lanegraph_*` is a game.
fn is_game(meta: &Metadata<'_>) -> bool {
    let t = meta.target();
    const RUNTIME: [&str; 6] = [
        "lanegraph",
        "lanegraph_telemetry",
        "lanegraph_budget",
        "lanegraph_jobs",
        "lanegraph_simd",
        "lanegraph_vk",
    ];
    !RUNTIME
        .iter()
        .any(|r| t == *r || t.strip_prefix(r).is_some_and(|rest| rest.starts_with("::")))
}

/// `name` as a span name: cut at a character boundary to [`spans::MAX_SPAN_NAME_LEN`] bytes
/// (an event's callsite name can be a long path); `None` when it is empty or holds a control
/// character (see [`spans::check_name`]).
fn usable_name(name: &'static str) -> Option<&'static str> {
    let mut end = name.len().min(spans::MAX_SPAN_NAME_LEN);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &name[..end];
    spans::check_name(cut).is_ok().then_some(cut)
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for SpanLayer {
    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        let depth = DEPTH.with(Cell::get);
        DEPTH.with(|d| d.set(depth + 1));
        if depth >= MAX_DEPTH {
            return;
        }
        // Every kept level gets a fresh entry, even one that will not be recorded (spans off,
        // no metadata, the engine's own, an unusable name): a stale entry of an earlier span
        // with a reused id must never be matched by this span's exit.
        let entry = match ctx.metadata(id) {
            Some(meta) if spans::is_enabled() && is_game(meta) => usable_name(meta.name())
                .map_or((0, "", Stamp(0)), |name| {
                    (id.into_u64(), name, clock::now())
                }),
            _ => (0, "", Stamp(0)),
        };
        STACK.with(|s| {
            let mut st = s.get();
            st[depth] = entry;
            s.set(st);
        });
    }

    fn on_exit(&self, id: &Id, _ctx: Context<'_, S>) {
        let depth = DEPTH.with(Cell::get);
        let Some(top) = depth.checked_sub(1) else {
            return;
        };
        DEPTH.with(|d| d.set(top));
        if top >= MAX_DEPTH {
            return;
        }
        let (sid, name, start) = STACK.with(|s| s.get()[top]);
        // The entry is this span's when enters and exits nest (they do for guards); a fresh
        // entry made while spans were off, for the engine's own span or for an unusable name
        // (start 0, no name) is skipped.
        if sid != id.into_u64() || name.is_empty() || start.0 == 0 || !spans::is_enabled() {
            return;
        }
        if let Some(here) = crate::hooks::Here::now() {
            here.record(name, start, clock::now());
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        if !is_game(meta) {
            return;
        }
        let (Some(name), Some(here)) = (usable_name(meta.name()), crate::hooks::Here::now()) else {
            return;
        };
        let now = clock::now();
        here.record(name, now, now);
    }
}
