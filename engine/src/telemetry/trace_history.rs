//! The last N frames of spans, kept for export (the HTML report and `--trace` dumps read it).
//!
//! Owns: grouping collected spans by frame and evicting the oldest frames. Must never: be called
//! from more than the owner thread's end-of-frame step (it is not shared; collecting is global).

use std::collections::VecDeque;

use super::chrome_trace::chrome_trace_json;
use super::spans::{self, SpanRecord};

/// The spans collected at the end of one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameSpans {
    /// The frame's index.
    pub frame: u64,
    /// Spans collected at its end, in collection order (exporters sort them).
    pub spans: Vec<SpanRecord>,
    /// Spans lost to overwriting since the previous frame's collection.
    pub dropped: u64,
}

/// A bounded history of per-frame span batches.
#[derive(Debug, Clone)]
pub struct TraceHistory {
    frames: VecDeque<FrameSpans>,
    max_frames: usize,
}

impl TraceHistory {
    /// Keeps at most `max_frames` frames (at least one).
    pub fn new(max_frames: usize) -> Self {
        TraceHistory {
            frames: VecDeque::with_capacity(max_frames.max(1)),
            max_frames: max_frames.max(1),
        }
    }

    /// Collects every thread's spans (see [`spans::collect`]) as frame `frame`, evicting the
    /// oldest frame when full. Call once at the end of each frame.
    ///
    /// Allocates nothing in steady state: the evicted frame's buffer takes the new spans.
    pub fn collect_frame(&mut self, frame: u64) -> &FrameSpans {
        let mut f = if self.frames.len() == self.max_frames {
            self.frames
                .pop_front()
                .expect("a full history is not empty")
        } else {
            FrameSpans {
                frame,
                spans: Vec::new(),
                dropped: 0,
            }
        };
        f.frame = frame;
        f.spans.clear();
        f.dropped = spans::collect_into(&mut f.spans);
        self.push(f)
    }

    /// Adds an already-collected frame.
    pub fn push(&mut self, f: FrameSpans) -> &FrameSpans {
        if self.frames.len() == self.max_frames {
            self.frames.pop_front();
        }
        self.frames.push_back(f);
        self.frames.back().expect("just pushed")
    }

    /// The frames held, oldest first.
    pub fn frames(&self) -> impl Iterator<Item = &FrameSpans> {
        self.frames.iter()
    }

    /// Spans lost over the frames held.
    pub fn dropped(&self) -> u64 {
        self.frames.iter().map(|f| f.dropped).sum()
    }

    /// The frames held as one Chrome Trace Event document.
    pub fn to_chrome_trace(&self) -> String {
        let all: Vec<SpanRecord> = self
            .frames
            .iter()
            .flat_map(|f| f.spans.iter().copied())
            .collect();
        chrome_trace_json(&all, &spans::tracks(), self.dropped())
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
}
