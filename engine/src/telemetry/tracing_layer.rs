//! A `tracing` layer that records a game's own `tracing` spans and events into the engine's span
//! rings, so they appear in `trace.json` beside the engine's, on the thread that ran them.
//!
//! Owns: [`SpanLayer`]. Must never: allocate per span (names come from the callsite's
//! `&'static` metadata; enter stamps sit in a fixed per-thread stack), block, or record the
//! engine's own spans twice (events and spans whose target starts with `lanegraph` are skipped:
//! the engine records those itself).
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
/// let subscriber = tracing_subscriber::registry().with(lanegraph::telemetry::SpanLayer);
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

/// Whether the layer records this callsite (not the engine's own).
fn is_game(meta: &Metadata<'_>) -> bool {
    !meta.target().starts_with("lanegraph")
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for SpanLayer {
    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        let depth = DEPTH.with(Cell::get);
        DEPTH.with(|d| d.set(depth + 1));
        if depth >= MAX_DEPTH || !spans::is_enabled() {
            return;
        }
        let Some(meta) = ctx.metadata(id) else {
            return;
        };
        let name = if is_game(meta) { meta.name() } else { "" };
        STACK.with(|s| {
            let mut st = s.get();
            st[depth] = (id.into_u64(), name, clock::now());
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
        // The entry is this span's when enters and exits nest (they do for guards); an entry
        // recorded while spans were off (start 0) or for the engine's own span (no name) is
        // skipped.
        if sid != id.into_u64() || name.is_empty() || start.0 == 0 || !spans::is_enabled() {
            return;
        }
        if let Some(here) = spans::Here::now() {
            here.record(name, start, clock::now());
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        if !is_game(meta) {
            return;
        }
        if let Some(here) = spans::Here::now() {
            let now = clock::now();
            here.record(meta.name(), now, now);
        }
    }
}
