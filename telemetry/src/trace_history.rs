//! The last N frames of spans, kept for export (the HTML report and `trace.json` read it).
//!
//! Owns: one fixed buffer of spans, allocated when the history is made, in which each held
//! frame is one contiguous range; collecting a frame into it, and evicting the oldest frames
//! to make room. Must never: allocate after it is made (a frame with more spans than the whole
//! buffer keeps what fits and counts the rest as lost), or be called from more than the owner
//! thread's end-of-frame step (it is not shared; collecting is global).
//!
//! # Layout
//! Frames are written one after another; one that does not fit before the end of the buffer
//! starts again at 0 (the tail stays unused). Before a frame is written, the oldest frames are
//! evicted until no held frame overlaps the range it takes (and fewer than the most frames are
//! held). Frames are evicted in the order they were written, so what goes is always the
//! oldest. (`frames_of_any_size_read_back_exactly_in_a_small_buffer` checks 500 random frame
//! sizes; an earlier version that only looked at the oldest frame let an empty frame hide an
//! overlapping one.)

use std::collections::VecDeque;

use super::chrome_trace::chrome_trace_json_with_memory;
use super::spans::{self, SpanRecord, TrackId};
use lanegraph_jobs::clock::Stamp;

/// Spans the buffer holds per frame kept (`TraceHistory::new(frames)` holds `frames` times
/// this many spans in all; busy frames borrow room from quiet ones).
pub(crate) const SPANS_PER_FRAME: usize = 256;

/// The spans collected at the end of one frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameSpans<'a> {
    /// The frame's index.
    pub frame: u64,
    /// Spans collected at its end, in collection order (exporters sort them).
    pub spans: &'a [SpanRecord],
    /// Spans lost since the previous frame's collection: overwritten in a thread's ring, or
    /// beyond the history's buffer.
    pub dropped: u64,
}

#[derive(Debug, Clone, Copy)]
struct Held {
    frame: u64,
    start: usize,
    len: usize,
    dropped: u64,
    /// Live heap bytes at the frame's collection (the tracking allocator's, when installed).
    memory_bytes: Option<u64>,
}

const EMPTY: SpanRecord = SpanRecord {
    name: "",
    track: TrackId(0),
    start: Stamp(0),
    end: Stamp(0),
    n: None,
};

/// A bounded, allocation-free history of per-frame span batches.
#[derive(Debug, Clone)]
pub struct TraceHistory {
    buf: Vec<SpanRecord>,
    /// Where one frame's collection lands before it is placed (capacity: the whole buffer).
    staging: Vec<SpanRecord>,
    held: VecDeque<Held>,
    max_frames: usize,
    /// Where the next frame goes.
    head: usize,
}

impl TraceHistory {
    /// The body of [`TraceHistoryHooks::new`](crate::hooks::TraceHistoryHooks::new), which documents it.
    pub(crate) fn new(max_frames: usize) -> Self {
        let max_frames = max_frames.max(1);
        TraceHistory::with_capacity(max_frames, max_frames * SPANS_PER_FRAME)
    }

    /// The body of [`TraceHistoryHooks::with_capacity`](crate::hooks::TraceHistoryHooks::with_capacity), which documents it.
    pub(crate) fn with_capacity(max_frames: usize, spans: usize) -> Self {
        let spans = spans.max(1);
        TraceHistory {
            buf: vec![EMPTY; spans],
            staging: Vec::with_capacity(spans),
            held: VecDeque::with_capacity(max_frames.max(1)),
            max_frames: max_frames.max(1),
            head: 0,
        }
    }

    /// The body of [`TraceHistoryHooks::collect_frame`](crate::hooks::TraceHistoryHooks::collect_frame), which documents it.
    pub(crate) fn collect_frame(&mut self, frame: u64) -> FrameSpans<'_> {
        let mut staging = std::mem::take(&mut self.staging);
        staging.clear();
        let dropped = spans::collect_into_at_most(&mut staging, self.buf.len());
        self.place(frame, &staging, dropped);
        self.staging = staging;
        self.newest()
    }

    /// The body of [`TraceHistoryHooks::push`](crate::hooks::TraceHistoryHooks::push), which documents it.
    pub(crate) fn push(
        &mut self,
        frame: u64,
        spans: &[SpanRecord],
        dropped: u64,
    ) -> FrameSpans<'_> {
        let kept = spans.len().min(self.buf.len());
        self.place(frame, &spans[..kept], dropped + (spans.len() - kept) as u64);
        self.newest()
    }

    fn newest(&self) -> FrameSpans<'_> {
        let h = self.held.back().expect("a frame was just placed");
        FrameSpans {
            frame: h.frame,
            spans: &self.buf[h.start..h.start + h.len],
            dropped: h.dropped,
        }
    }

    /// Writes `spans` (at most the buffer's size) as frame `frame` (see the module docs).
    fn place(&mut self, frame: u64, spans: &[SpanRecord], dropped: u64) {
        let cap = self.buf.len();
        let n = spans.len();
        let mut pos = self.head;
        if pos + n > cap {
            pos = 0;
        }
        let overlaps = |h: &Held| n > 0 && h.len > 0 && h.start < pos + n && pos < h.start + h.len;
        // Oldest first until no held frame overlaps: the frames in the way are the oldest but
        // for any left behind the wrap point, which are older still.
        while self.held.len() == self.max_frames || self.held.iter().any(overlaps) {
            self.held.pop_front();
        }
        self.buf[pos..pos + n].copy_from_slice(spans);
        self.head = pos + n;
        self.held.push_back(Held {
            frame,
            start: pos,
            len: n,
            dropped,
            memory_bytes: super::alloc::is_installed()
                .then(|| super::alloc::memory_stats().current_bytes.max(0) as u64),
        });
    }

    /// The frames held, oldest first.
    pub(crate) fn frames(&self) -> impl Iterator<Item = FrameSpans<'_>> {
        self.held.iter().map(|h| FrameSpans {
            frame: h.frame,
            spans: &self.buf[h.start..h.start + h.len],
            dropped: h.dropped,
        })
    }

    /// Spans lost over the frames held.
    pub(crate) fn dropped(&self) -> u64 {
        self.held.iter().map(|h| h.dropped).sum()
    }

    /// The frames held as one Chrome Trace Event document, with a memory counter track when
    /// the tracking allocator is installed.
    pub fn to_chrome_trace(&self) -> String {
        let all: Vec<SpanRecord> = self
            .frames()
            .flat_map(|f| f.spans.iter().copied())
            .collect();
        let memory: Vec<(u64, u64)> = self
            .held
            .iter()
            .filter_map(|h| Some((h.frame, h.memory_bytes?)))
            .collect();
        chrome_trace_json_with_memory(&all, &spans::tracks(), self.dropped(), &memory)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_last_frames() {
        let _serial = spans::TEST_COLLECT_LOCK
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let mut h = TraceHistory::new(2);
        for frame in 0..3u64 {
            std::thread::spawn(|| drop(spans::span("work")))
                .join()
                .unwrap();
            let f = h.collect_frame(frame);
            assert!(f.spans.iter().any(|s| s.name == "work"));
        }
        let kept: Vec<u64> = h.frames().map(|f| f.frame).collect();
        assert_eq!(kept, vec![1, 2]);
        let doc: serde_json::Value = serde_json::from_str(&h.to_chrome_trace()).unwrap();
        let works = doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["name"] == "work")
            .count();
        assert_eq!(works, 2);
    }

    /// Frames of varying size placed in a small buffer: every held frame still reads back
    /// exactly the spans it was given, the newest is always held, and nothing overlaps.
    #[test]
    fn frames_of_any_size_read_back_exactly_in_a_small_buffer() {
        let mut h = TraceHistory::with_capacity(4, 10);
        let names: [&'static str; 7] = ["a", "b", "c", "d", "e", "f", "g"];
        let mut x = 7u64;
        for frame in 0..500u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = (x >> 59) as usize % 8; // 0..=7 spans
            let name = names[frame as usize % 7];
            let spans: Vec<SpanRecord> = (0..n)
                .map(|i| SpanRecord {
                    name,
                    track: TrackId(1),
                    start: Stamp(frame * 100 + i as u64),
                    end: Stamp(frame * 100 + i as u64),
                    n: Some(frame),
                })
                .collect();
            let f = h.push(frame, &spans, 0);
            assert_eq!(f.spans, &spans[..], "frame {frame}");
            let held: Vec<_> = h.frames().collect();
            assert_eq!(held.last().map(|f| f.frame), Some(frame));
            assert!(held.len() <= 4);
            assert!(held.iter().map(|f| f.spans.len()).sum::<usize>() <= 10);
            for f in &held {
                let want = names[f.frame as usize % 7];
                assert!(
                    f.spans
                        .iter()
                        .all(|s| s.name == want && s.n == Some(f.frame)),
                    "frame {} read back another frame's spans",
                    f.frame
                );
            }
        }
        // A frame with more spans than the whole buffer keeps what fits and counts the rest.
        let big = vec![EMPTY; 25];
        let f = h.push(999, &big, 1);
        assert_eq!((f.spans.len(), f.dropped), (10, 16));
        assert_eq!(h.frames().count(), 1);
    }
}
