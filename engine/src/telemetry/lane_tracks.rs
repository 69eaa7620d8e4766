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
    // Only a lane worker is renamed: the owner thread runs lane jobs too when it serves its
    // lane, and must keep its `owner` track (it used to be renamed after its thread, `main`,
    // and sorted last).
    let Some((lane, index)) = parse_worker_name(name) else {
        return;
    };
    let kind = TrackKind::LaneWorker {
        lane: lane.to_string(),
        index,
    };
    spans::name_current_thread(format!("{lane} {index}"), kind);
}

/// `lg-<lane>-<index>` -> `(lane, index)`.
pub fn parse_worker_name(name: &str) -> Option<(&str, u32)> {
    let rest = name.strip_prefix("lg-")?;
    let (lane, index) = rest.rsplit_once('-')?;
    Some((lane, index.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::super::spans::{self as sp, TrackKind};

    /// The owner thread running a lane job (it serves the physics lane) keeps its owner track.
    #[test]
    fn a_lane_job_on_the_owner_thread_keeps_the_owner_track() {
        std::thread::Builder::new()
            .name("main".into())
            .spawn(|| {
                let id = sp::name_current_thread("owner", TrackKind::Owner).unwrap();
                super::name_lane_thread();
                let t = sp::tracks().into_iter().find(|t| t.id == id).unwrap();
                assert_eq!((t.name.as_str(), t.kind), ("owner", TrackKind::Owner));
            })
            .unwrap()
            .join()
            .unwrap();
        std::thread::Builder::new()
            .name("lg-physics-1".into())
            .spawn(|| {
                super::name_lane_thread();
                let id = sp::current_thread_track().unwrap();
                let t = sp::tracks().into_iter().find(|t| t.id == id).unwrap();
                assert_eq!(t.name, "physics 1");
            })
            .unwrap()
            .join()
            .unwrap();
    }

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
