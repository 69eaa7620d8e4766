//! The process's log output: the runtime's `tracing` events, formatted on stderr, and the
//! `tracing` spans of code running in the process recorded into the trace (`SpanLayer`).
//!
//! Owns: installing the subscriber once, first thing in `main`. Must never: write to stdout
//! (the bench suites print figures and JSON there), or refuse to start over a bad `RUST_LOG`
//! (it says what is wrong and falls back to the default).

use tracing_subscriber::prelude::*;
use tracing_subscriber::EnvFilter;

/// What prints without `RUST_LOG`: warnings and errors (asset failures, budget overruns,
/// dropped steps, a refused core pin).
///
/// winit's own warnings are left out by default: on a bare X server (Xvfb) it warns about a
/// missing XSETTINGS manager on every start, which is nothing a player can act on.
pub const DEFAULT_FILTER: &str = "warn,winit=error";

/// Installs the stderr subscriber, filtered by `RUST_LOG` when it is set and valid.
pub fn install() {
    let (filter, bad) = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.trim().is_empty() => match EnvFilter::try_new(&spec) {
            Ok(f) => (f, None),
            Err(e) => (EnvFilter::new(DEFAULT_FILTER), Some((spec, e.to_string()))),
        },
        _ => (EnvFilter::new(DEFAULT_FILTER), None),
    };
    // The formatted log, filtered; beside it the span layer, unfiltered, so a game's own
    // `tracing` spans reach trace.json whatever RUST_LOG prints.
    let log = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        // Colour codes only for a terminal: a redirected log stays plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(filter);
    let installed = tracing_subscriber::registry()
        .with(log)
        .with(lanegraph::telemetry::SpanLayer)
        .try_init()
        .is_ok();
    if let (true, Some((spec, why))) = (installed, bad) {
        tracing::warn!(
            "RUST_LOG={spec:?} is not a valid filter ({why}); using {DEFAULT_FILTER:?}; \
             fix: e.g. RUST_LOG=info or RUST_LOG=lanegraph=debug"
        );
    }
}
