//! Naming lane worker threads' trace tracks from inside their jobs.
//!
//! Owns: the once-per-thread naming of a lane worker's track (`physics 0`), read from the
//! thread's name, which the lane runtime sets to `lg-<lane>-<index>`. Must never: allocate or
//! lock after a thread's first call (a thread-local flag short-circuits it).

use std::cell::Cell;

use super::{spans, TrackKind};

thread_local! {
    static NAMED: Cell<bool> = const { Cell::new(false) };
}

/// Names the calling thread's track after its lane, once. Call at the top of a job body.
#[inline]
pub fn name_lane_thread() {
    if NAMED.with(Cell::get) {
        return;
    }
    NAMED.with(|n| n.set(true));
    let thread = std::thread::current();
    let Some(name) = thread.name() else {
        return;
    };
    let kind = match parse_worker_name(name) {
        Some((lane, index)) => TrackKind::LaneWorker {
            lane: lane.to_string(),
            index,
        },
        None => TrackKind::Thread,
    };
    let label = match &kind {
        TrackKind::LaneWorker { lane, index } => format!("{lane} {index}"),
        _ => name.to_string(),
    };
    spans::name_current_thread(label, kind);
}

/// `lg-<lane>-<index>` -> `(lane, index)`.
pub fn parse_worker_name(name: &str) -> Option<(&str, u32)> {
    let rest = name.strip_prefix("lg-")?;
    let (lane, index) = rest.rsplit_once('-')?;
    Some((lane, index.parse().ok()?))
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_worker_names() {
        assert_eq!(
            super::parse_worker_name("lg-physics-1"),
            Some(("physics", 1))
        );
        assert_eq!(
            super::parse_worker_name("lg-my-lane-0"),
            Some(("my-lane", 0))
        );
        assert_eq!(super::parse_worker_name("main"), None);
    }
}
