//! Decoding one frame's timestamp results into figures.
//!
//! Owns: [`FrameTimings`] / [`PassTiming`] and the pure decode from `(value, availability)`
//! query results to nanoseconds and CPU-timeline instants. Must never: touch a device or
//! allocate (the pass list keeps its capacity; unit-tested with synthetic 36-bit, 52 ns tables).

use super::ticks::TimestampCaps;
use super::timeline::ClockMapping;
use super::{PassId, RESULT_STRIDE};

/// One pass of one frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PassTiming {
    /// Which pass.
    pub pass: PassId,
    /// GPU time of the pass in this frame, ns.
    pub raw_ns: f64,
    /// EMA of the pass's GPU time (alpha [`super::ema::EMA_ALPHA`]), ns.
    pub ema_ns: f64,
    /// When the pass began on the GPU, `CLOCK_MONOTONIC` ns.
    pub begin_cpu_ns: u64,
    /// When the pass ended on the GPU, `CLOCK_MONOTONIC` ns.
    pub end_cpu_ns: u64,
}

/// The GPU figures of one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameTimings {
    /// The frame they belong to (read two frames later).
    pub frame: u64,
    /// The caller's tag for that frame ([`GpuProfiler::tag_frame`](super::GpuProfiler::tag_frame);
    /// 0 when untagged).
    pub tag: u64,
    /// Frame begin to frame end on the GPU, ns.
    pub total_ns: f64,
    /// EMA of `total_ns`.
    pub total_ema_ns: f64,
    /// Sum of the passes' `raw_ns`.
    pub passes_sum_ns: f64,
    /// Frame begin on the GPU, `CLOCK_MONOTONIC` ns.
    pub begin_cpu_ns: u64,
    /// Frame end on the GPU, `CLOCK_MONOTONIC` ns.
    pub end_cpu_ns: u64,
    pub(crate) passes: Vec<PassTiming>,
}

impl FrameTimings {
    /// The passes, in recording order.
    pub fn passes(&self) -> &[PassTiming] {
        &self.passes
    }
    /// GPU time inside the frame not covered by any pass (barriers, clears, gaps), ns.
    pub fn unattributed_ns(&self) -> f64 {
        self.total_ns - self.passes_sum_ns
    }
}

/// Query `i` of a copied slot: its value when its availability word is non-zero.
pub(crate) fn query_bytes(bytes: &[u8]) -> impl Fn(usize) -> Option<u64> + '_ {
    move |i: usize| {
        let at = i * RESULT_STRIDE as usize;
        let word = |o: usize| {
            bytes
                .get(o..o + 8)
                .and_then(|s| <[u8; 8]>::try_from(s).ok())
                .map(u64::from_le_bytes)
        };
        let (value, available) = (word(at)?, word(at + 8)?);
        (available != 0).then_some(value)
    }
}

/// Decodes one slot's queries (`query(i)`: value of query `i` when available) into `out` (raw figures and CPU placement;
/// EMAs are the caller's). Returns `false`, leaving `out` unspecified, when any query is
/// unavailable. Never allocates: `out.passes` keeps its capacity of [`MAX_PASSES`].
pub(crate) fn decode(
    caps: &TimestampCaps,
    clock: &ClockMapping,
    query: &impl Fn(usize) -> Option<u64>,
    passes: &[PassId],
    out: &mut FrameTimings,
) -> bool {
    let (Some(begin), Some(end)) = (query(0), query(1)) else {
        return false;
    };
    out.total_ns = caps.delta_ns(begin, end);
    out.begin_cpu_ns = clock.cpu_ns_of(caps, begin);
    out.end_cpu_ns = clock.cpu_ns_of(caps, end);
    out.passes.clear();
    out.passes_sum_ns = 0.0;
    for (k, &pass) in passes.iter().enumerate() {
        let (Some(b), Some(e)) = (query(2 + 2 * k), query(3 + 2 * k)) else {
            return false;
        };
        let raw_ns = caps.delta_ns(b, e);
        out.passes_sum_ns += raw_ns;
        out.passes.push(PassTiming {
            pass,
            raw_ns,
            ema_ns: raw_ns,
            begin_cpu_ns: clock.cpu_ns_of(caps, b),
            end_cpu_ns: clock.cpu_ns_of(caps, e),
        });
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::timeline::CalibrationMethod;
    use crate::profiler::MAX_PASSES;

    fn pairs(words: &[(u64, u64)]) -> Vec<u8> {
        words
            .iter()
            .flat_map(|(v, a)| v.to_le_bytes().into_iter().chain(a.to_le_bytes()))
            .collect()
    }

    fn empty_timings() -> FrameTimings {
        FrameTimings {
            frame: 0,
            tag: 0,
            total_ns: 0.0,
            total_ema_ns: 0.0,
            passes_sum_ns: 0.0,
            begin_cpu_ns: 0,
            end_cpu_ns: 0,
            passes: Vec::with_capacity(MAX_PASSES),
        }
    }

    #[test]
    fn decodes_a_36_bit_52_ns_frame_across_a_wrap() {
        let caps = TimestampCaps::new(0, 36, 52.0).unwrap();
        let clock = ClockMapping {
            gpu_tick: caps.mask - 99,
            cpu_ns: 5_000_000,
            uncertainty_ns: 0.0,
            method: CalibrationMethod::OffsetEstimate,
        };
        let junk = 0xdead_0000_0000_0000u64; // above the valid bits: must be ignored
        let b = caps.mask - 99;
        // Frame: begin at b, end 1000 ticks later (wrapped). Pass 0: ticks 10..410; pass 1:
        // 420..900 (crosses the wrap at tick 100 from b).
        let bytes = pairs(&[
            (b | junk, 1),
            ((b + 1000) & caps.mask, 1),
            (b + 10, 1),
            ((b + 410) & caps.mask, 1),
            ((b + 420) & caps.mask, 1),
            ((b + 900) & caps.mask | junk, 1),
        ]);
        let mut out = empty_timings();
        let cap_before = out.passes.capacity();
        assert!(decode(
            &caps,
            &clock,
            &query_bytes(&bytes),
            &[PassId::from_index(0), PassId::from_index(1)],
            &mut out
        ));
        assert_eq!(out.total_ns, 1000.0 * 52.0);
        assert_eq!(out.passes()[0].raw_ns, 400.0 * 52.0);
        assert_eq!(out.passes()[1].raw_ns, 480.0 * 52.0);
        assert_eq!(out.passes_sum_ns, 880.0 * 52.0);
        assert_eq!(out.unattributed_ns(), 120.0 * 52.0);
        assert_eq!(out.begin_cpu_ns, 5_000_000);
        assert_eq!(out.end_cpu_ns, 5_000_000 + 52_000);
        assert_eq!(out.passes()[1].begin_cpu_ns, 5_000_000 + 420 * 52);
        assert_eq!(
            out.passes.capacity(),
            cap_before,
            "decode must not reallocate"
        );
    }

    #[test]
    fn unavailable_query_is_skipped() {
        let caps = TimestampCaps::new(0, 64, 1.0).unwrap();
        let clock = ClockMapping {
            gpu_tick: 0,
            cpu_ns: 0,
            uncertainty_ns: 0.0,
            method: CalibrationMethod::OffsetEstimate,
        };
        let mut out = empty_timings();
        let bytes = pairs(&[(1, 1), (9, 1), (2, 1), (3, 0)]);
        assert!(!decode(
            &caps,
            &clock,
            &query_bytes(&bytes),
            &[PassId::from_index(0)],
            &mut out
        ));
        let bytes = pairs(&[(1, 0), (9, 1)]);
        assert!(!decode(&caps, &clock, &query_bytes(&bytes), &[], &mut out));
        // Too short a buffer reads as unavailable, not a panic.
        assert!(!decode(
            &caps,
            &clock,
            &query_bytes(&bytes[..20]),
            &[],
            &mut out
        ));
    }
}
