//! Which trace track a lane worker's spans land on.
//!
//! Owns: reading a lane worker's identity from its thread name, which the lane runtime sets to
//! `lg-<lane>-<index>`; the span store names the thread's track from it (`physics 0`) when the
//! thread records its first span, so no game or job names lane threads itself. Must never:
//! allocate.

/// `lg-<lane>-<index>` -> `(lane, index)`.
pub(crate) fn parse_worker_name(name: &str) -> Option<(&str, u32)> {
    let rest = name.strip_prefix("lg-")?;
    let (lane, index) = rest.rsplit_once('-')?;
    Some((lane, index.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::super::spans::{self as sp, TrackKind};

    /// A lane worker's first span puts it on its lane's track with nothing called by the job;
    /// the owner thread running a lane job (it serves the physics lane) keeps its owner track.
    #[test]
    fn a_lane_workers_track_is_named_by_its_first_span_and_the_owner_keeps_its_own() {
        std::thread::Builder::new()
            .name("lg-physics-1".into())
            .spawn(|| {
                let id = sp::current_thread_track().unwrap();
                let t = sp::tracks().into_iter().find(|t| t.id == id).unwrap();
                assert_eq!(t.name, "physics 1");
                assert_eq!(
                    t.kind,
                    TrackKind::LaneWorker {
                        lane: "physics".into(),
                        index: 1
                    }
                );
            })
            .unwrap()
            .join()
            .unwrap();
        std::thread::Builder::new()
            .name("main".into())
            .spawn(|| {
                let id = sp::name_current_thread("owner", TrackKind::Owner).unwrap();
                let t = sp::tracks().into_iter().find(|t| t.id == id).unwrap();
                assert_eq!((t.name.as_str(), t.kind), ("owner", TrackKind::Owner));
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(super::parse_worker_name("lg-render-0"), Some(("render", 0)));
        assert_eq!(super::parse_worker_name("main"), None);
        assert_eq!(super::parse_worker_name("lg-physics-x"), None);
    }
}
