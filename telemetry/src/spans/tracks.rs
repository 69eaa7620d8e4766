//! Tracks: the rows of a trace timeline (the owner thread, each lane worker, later GPU queues).
//!
//! Owns: the table of track names and kinds. Must never: be touched on a span's hot path except
//! for the one relaxed load in [`is_registered`].

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// A track's id, handed out by [`register_track`] (never reused, never invalidated).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct TrackId(pub u32);

/// What a track shows; decides its place in the timeline (owner first, then lanes, then GPU).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TrackKind {
    /// The owner thread (the one calling `frame()`).
    Owner,
    /// Worker `index` of lane `lane`.
    LaneWorker {
        /// The lane's name.
        lane: String,
        /// The worker's index within the lane.
        index: u32,
    },
    /// A GPU queue (pass timings placed on the CPU timeline).
    GpuQueue {
        /// The queue's name.
        queue: String,
    },
    /// A window's presentation: each frame's swapchain acquire and present, placed on the
    /// CPU timeline (its gaps are the present-to-present intervals).
    Present,
    /// Any other thread.
    Thread,
}

impl TrackKind {
    /// Sort key of the kind: owner, lanes, GPU, others.
    pub fn order(&self) -> u32 {
        match self {
            TrackKind::Owner => 0,
            TrackKind::LaneWorker { .. } => 1,
            TrackKind::GpuQueue { .. } | TrackKind::Present => 2,
            TrackKind::Thread => 3,
        }
    }
}

/// A track's name and kind.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TrackInfo {
    /// Its id.
    pub id: TrackId,
    /// The name shown in the timeline.
    pub name: String,
    /// What it shows.
    #[serde(flatten)]
    pub kind: TrackKind,
}

/// Writer: `register_track` and `rename_track` (cold). Readers: exporters.
static TRACKS: Mutex<Vec<TrackInfo>> = Mutex::new(Vec::new());
/// Number of tracks handed out (written under `TRACKS`' lock after the push; read relaxed by
/// `is_registered`, a bounds check that tolerates a stale, smaller value).
static TRACK_COUNT: AtomicU32 = AtomicU32::new(0);

fn lock() -> std::sync::MutexGuard<'static, Vec<TrackInfo>> {
    TRACKS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Adds a track and returns its id.
pub fn register_track(name: impl Into<String>, kind: TrackKind) -> TrackId {
    let mut t = lock();
    let id = TrackId(t.len() as u32);
    t.push(TrackInfo {
        id,
        name: name.into(),
        kind,
    });
    TRACK_COUNT.store(t.len() as u32, Ordering::Release);
    id
}

/// Renames a track and changes its kind (unknown ids are ignored: ids come from
/// [`register_track`], so one that is unknown was never handed out).
pub fn rename_track(id: TrackId, name: impl Into<String>, kind: TrackKind) {
    if let Some(t) = lock().get_mut(id.0 as usize) {
        t.name = name.into();
        t.kind = kind;
    }
}

/// Whether `id` was handed out.
#[inline]
pub(super) fn is_registered(id: TrackId) -> bool {
    id.0 < TRACK_COUNT.load(Ordering::Acquire)
}

/// Every track, in id order.
pub fn tracks() -> Vec<TrackInfo> {
    lock().clone()
}
