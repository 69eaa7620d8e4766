//! What the render lane puts on the trace after a draw: the window's acquire and present on
//! the `present` track, and each newly read GPU frame's passes on the `gpu graphics` track,
//! both placed on the engine's clock from the `CLOCK_MONOTONIC` times the pass reported.
//!
//! Owns: the two tracks (one per process) and the clock pairing. Must never: record while
//! spans are off, or a span whose end reads before its begin.

use super::render_pass::PresentFigures;

/// Places the last acquire and present on the trace's `present` track (one per process), the
/// present span's `n` being the frames in flight.
pub(super) fn trace_present(p: &PresentFigures) {
    use lanegraph_telemetry::{spans, TrackId, TrackKind};
    static TRACK: std::sync::OnceLock<TrackId> = std::sync::OnceLock::new();
    if !lanegraph_telemetry::spans_enabled() {
        return;
    }
    let track = *TRACK.get_or_init(|| spans::register_track("present", TrackKind::Present));
    let at = lanegraph_telemetry::stamp_of_monotonic_ns;
    for (name, (a, b), n) in [
        ("acquire", p.acquire_mono_ns, None),
        (
            "present",
            p.present_mono_ns,
            Some(u64::from(p.frames_in_flight)),
        ),
    ] {
        if a != 0 && b >= a {
            // Names are constants that pass the checks; a refusal only loses the span.
            let _ = spans::record_span(track, name, at(a), at(b), n);
        }
    }
}

/// Places one pass of a newly read GPU frame on the trace's `gpu graphics` track (one per
/// process), where the pass says it ran on `CLOCK_MONOTONIC` (`cpu_mono_ns`): the runtime pairs
/// that clock with the engine's, so a game's pass only reports the profiler's figures. A pass
/// without a placement, or one whose end reads before its begin (a broken mapping), is skipped.
/// `name` is interned by the caller once per pass name (the render lane's per-pass table).
pub(super) fn trace_gpu_pass(name: &'static str, (begin_ns, end_ns): (u64, u64)) {
    use lanegraph_telemetry::{spans, TrackId, TrackKind};
    static TRACK: std::sync::OnceLock<TrackId> = std::sync::OnceLock::new();
    if !lanegraph_telemetry::spans_enabled() || begin_ns == 0 || end_ns < begin_ns {
        return;
    }
    let track = *TRACK.get_or_init(|| {
        spans::register_track(
            "gpu graphics",
            TrackKind::GpuQueue {
                queue: "graphics".into(),
            },
        )
    });
    let at = lanegraph_telemetry::stamp_of_monotonic_ns;
    // A refused name loses its span, nothing more.
    let _ = spans::record_span(track, name, at(begin_ns), at(end_ns), None);
}
