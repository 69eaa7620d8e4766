//! The two-pass GPU timestamp profiler: per-pass and whole-frame GPU times, read two frames
//! late without ever waiting.
//!
//! Owns: the timestamp query pool (one slot of queries per frame in flight), the mapped buffer
//! the results are copied into, per-pass raw and smoothed figures, and placing GPU spans on the
//! CPU timeline. Must never: wait for the GPU on the frame path (a result not yet there is
//! skipped and counted), allocate per frame, or read a query that was not reset first.
//!
//! # Read model (frame `n`, `F` frames in flight, `F >= 2`)
//! 1. `begin_frame` (recording frame `n` into slot `s = n % F`): `vkCmdResetQueryPool` on the
//!    slot's `2 + 2 * MAX_PASSES` queries, then a `TOP_OF_PIPE` timestamp (frame begin, query 0).
//!    `tag_frame` may then give the frame the caller's own number (an engine's frame), which the
//!    figures read at step 4 carry back (`FrameTimings::tag`).
//! 2. `begin_pass` / `end_pass`: a `TOP_OF_PIPE` / `BOTTOM_OF_PIPE` timestamp pair per pass
//!    (queries `2 + 2k`, `3 + 2k` for the `k`-th pass recorded this frame).
//! 3. `end_frame`: a `BOTTOM_OF_PIPE` timestamp (frame end, query 1), then
//!    `vkCmdCopyQueryPoolResults` of the queries written (64-bit, with availability, `WAIT` so
//!    the *GPU* waits for its own timestamps, never the CPU) into slot `s` of a persistently
//!    mapped host buffer, and a transfer -> host barrier.
//! 4. `collect` at frame `n + 2`, before step 1 of that frame: if frame `n`'s fence is signalled
//!    (polled with `vkGetFenceStatus`; with `F = 2` it was just waited for the free slot) its
//!    results are read from the mapped buffer; otherwise the frame is skipped and counted. The
//!    slot is only rewritten at frame `n + F >= n + 2`, after this read.
//!
//! Why copy instead of `vkGetQueryPoolResults`: lavapipe's version waits for the whole device
//! (about 1 ms, up to 9 ms measured), and on any driver it is a call per read; the copy rides
//! in the frame's own command buffer and the read is plain memory.
//!
//! Ticks are masked to the queue's `timestampValidBits`, differenced wrap-safely and scaled by
//! `timestampPeriod` ([`ticks`]); figures are smoothed by an EMA ([`ema`], alpha 0.1); spans are
//! placed on `CLOCK_MONOTONIC` ([`timeline`]). The sum of the passes is checked against the
//! frame total: passes recorded back to back with barriers between them cannot sum to more
//! (beyond one tick of rounding per timestamp); a frame whose passes overlap (no barrier) is
//! counted in [`ProfilerStats::sum_exceeds_total`], not treated as an error.

pub mod ema;
pub mod readout;
pub mod ticks;
pub mod timeline;

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use crate::context::{Gpu, Shared};
use crate::error::{vk_err, GpuError};
use crate::frames::Recording;
use crate::memory::GpuBuffer;
use ema::Ema;
use readout::{decode, query_bytes};
pub use readout::{FrameTimings, PassTiming};
use ticks::TimestampCaps;
use timeline::ClockMapping;

/// Most passes timed per frame (and most distinct passes registered). 16: twice the bench's 8,
/// and `(2 + 32) * 16` bytes of results per frame stays under one 1 KiB page-let per slot.
pub const MAX_PASSES: usize = 16;

/// Queries per frame slot: frame begin, frame end, and a pair per pass.
const QUERIES_PER_SLOT: u32 = 2 + 2 * MAX_PASSES as u32;
/// Bytes per query in the results buffer: the 64-bit value and the 64-bit availability word.
pub(crate) const RESULT_STRIDE: u64 = 16;

/// A registered pass (index into the profiler's pass table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PassId(u16);

impl PassId {
    #[cfg(test)]
    pub(crate) fn from_index(i: u16) -> PassId {
        PassId(i)
    }

    /// Its index, `0..registered passes`.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// An open pass: hand it back to [`GpuProfiler::end_pass`].
#[derive(Debug)]
#[must_use = "a pass that is begun must be ended (end_frame closes it otherwise)"]
pub struct PassToken {
    /// Position of the pass in this frame's recording order; `None` when over `MAX_PASSES`.
    k: Option<u8>,
}

/// Counters over the profiler's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProfilerStats {
    /// Frames recorded (`end_frame` calls).
    pub frames_recorded: u64,
    /// Frames whose figures were read.
    pub frames_read: u64,
    /// Reads at `n + 2` that found frame `n` not yet complete (skipped, never waited for).
    pub frames_skipped: u64,
    /// Skipped frames read later, at `n + F` (only with `F > 2`).
    pub frames_recovered: u64,
    /// Frames with a query the copy marked unavailable (skipped).
    pub frames_unavailable: u64,
    /// Frames whose passes summed to more than the frame total (overlapping passes).
    pub sum_exceeds_total: u64,
    /// Passes not timed because a frame had more than [`MAX_PASSES`].
    pub passes_dropped: u64,
    /// Passes begun but not ended, closed by `end_frame`.
    pub passes_unclosed: u64,
}

/// What one slot holds: which frame, and which passes in which order.
#[derive(Debug, Clone, Copy)]
struct SlotRecord {
    frame: Option<u64>,
    /// The caller's number for the frame ([`GpuProfiler::tag_frame`]; 0 when untagged).
    tag: u64,
    /// `end_frame` recorded the frame's closing commands. A frame begun but never ended (its
    /// recording abandoned on an error) has no results of its own in the slot: never read.
    closed: bool,
    read: bool,
    pass_count: u8,
    passes: [PassId; MAX_PASSES],
    ended: [bool; MAX_PASSES],
}

const EMPTY_SLOT: SlotRecord = SlotRecord {
    frame: None,
    tag: 0,
    closed: false,
    read: false,
    pass_count: 0,
    passes: [PassId(0); MAX_PASSES],
    ended: [false; MAX_PASSES],
};

/// How results come back to the CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadPath {
    /// `vkCmdCopyQueryPoolResults` into a mapped buffer, read as memory (the default; see the
    /// module docs for why).
    #[default]
    CopyToMappedBuffer,
    /// `vkGetQueryPoolResults` without `WAIT` at read time: the obvious alternative, kept as
    /// the bench's baseline (on lavapipe it stalls until the device is idle).
    GetQueryPoolResults,
}

/// The profiler (see the module docs for the read model).
pub struct GpuProfiler {
    read_path: ReadPath,
    scratch: Vec<[u64; 2]>,
    shared: Arc<Shared>,
    pool: vk::QueryPool,
    results: GpuBuffer,
    caps: TimestampCaps,
    frames_in_flight: u32,
    names: Vec<String>,
    pass_ema: Vec<Ema>,
    total_ema: Ema,
    slots: Vec<SlotRecord>,
    open_slot: Option<u32>,
    latest: FrameTimings,
    has_latest: bool,
    stats: ProfilerStats,
    clock: ClockMapping,
}

impl GpuProfiler {
    /// A profiler for a ring of `frames_in_flight` slots on `gpu`'s queue.
    ///
    /// Errors: [`GpuError::NoTimestamps`] when the queue family writes no timestamps (frames
    /// still render; report the profiler unavailable); [`GpuError::BadInput`] for fewer than 2
    /// frames in flight (frame `n` is read at `n + 2`).
    pub fn new(gpu: &Gpu, frames_in_flight: u32) -> Result<GpuProfiler, GpuError> {
        GpuProfiler::with_read_path(gpu, frames_in_flight, ReadPath::default())
    }

    /// [`new`](Self::new) with a chosen [`ReadPath`] (the bench compares the two).
    pub fn with_read_path(
        gpu: &Gpu,
        frames_in_flight: u32,
        read_path: ReadPath,
    ) -> Result<GpuProfiler, GpuError> {
        let info = gpu.info();
        let caps = TimestampCaps::new(
            info.queue_family,
            info.timestamp_valid_bits,
            info.timestamp_period_ns,
        )?;
        if frames_in_flight < 2 {
            return Err(GpuError::BadInput {
                what: "frames_in_flight",
                why: format!("{frames_in_flight}: the profiler reads frame n at n+2, needs >= 2"),
            });
        }
        let shared = gpu.shared.clone();
        let results = GpuBuffer::new(
            gpu,
            "profiler results",
            u64::from(frames_in_flight * QUERIES_PER_SLOT) * RESULT_STRIDE,
            vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuToCpu,
        )?;
        if results.mapped().is_none() {
            return Err(GpuError::BadInput {
                what: "profiler results",
                why: "the allocator returned unmapped memory for a GpuToCpu buffer".into(),
            });
        }
        let ci = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(frames_in_flight * QUERIES_PER_SLOT);
        // SAFETY: valid device and create info.
        let pool = unsafe { shared.device.create_query_pool(&ci, None) }
            .map_err(vk_err("vkCreateQueryPool"))?;
        let clock = match timeline::calibrate(&shared, info.queue_family) {
            Ok(c) => c,
            Err(e) => {
                // SAFETY: the pool was never used.
                unsafe { shared.device.destroy_query_pool(pool, None) };
                return Err(e);
            }
        };
        Ok(GpuProfiler {
            read_path,
            scratch: vec![[0; 2]; QUERIES_PER_SLOT as usize],
            shared,
            pool,
            results,
            caps,
            frames_in_flight,
            names: Vec::with_capacity(MAX_PASSES),
            pass_ema: Vec::with_capacity(MAX_PASSES),
            total_ema: Ema::default(),
            slots: vec![EMPTY_SLOT; frames_in_flight as usize],
            open_slot: None,
            latest: FrameTimings {
                frame: 0,
                tag: 0,
                total_ns: 0.0,
                total_ema_ns: 0.0,
                passes_sum_ns: 0.0,
                begin_cpu_ns: 0,
                end_cpu_ns: 0,
                passes: Vec::with_capacity(MAX_PASSES),
            },
            has_latest: false,
            stats: ProfilerStats::default(),
            clock,
        })
    }

    /// Registers a pass by name (cold path); the same name gives the same id.
    pub fn register_pass(&mut self, name: &str) -> Result<PassId, GpuError> {
        if let Some(i) = self.names.iter().position(|n| n == name) {
            return Ok(PassId(i as u16));
        }
        if self.names.len() >= MAX_PASSES {
            return Err(GpuError::BadInput {
                what: "pass name",
                why: format!(
                    "{name:?} would be pass {} but at most {MAX_PASSES} can be registered",
                    self.names.len() + 1
                ),
            });
        }
        self.names.push(name.to_owned());
        self.pass_ema.push(Ema::default());
        Ok(PassId((self.names.len() - 1) as u16))
    }

    /// A registered pass's name (`"?"` for an id from another profiler).
    pub fn pass_name(&self, id: PassId) -> &str {
        self.names
            .get(id.index())
            .map(String::as_str)
            .unwrap_or("?")
    }

    /// The timestamp capabilities in use.
    pub fn caps(&self) -> &TimestampCaps {
        &self.caps
    }

    /// The current GPU -> CPU clock mapping.
    pub fn clock(&self) -> &ClockMapping {
        &self.clock
    }

    /// Remakes the clock mapping (cold path: the offset estimate waits for the GPU).
    pub fn recalibrate(&mut self) -> Result<&ClockMapping, GpuError> {
        self.clock = timeline::calibrate(&self.shared, self.shared.info.queue_family)?;
        Ok(&self.clock)
    }

    /// Counters so far.
    pub fn stats(&self) -> ProfilerStats {
        self.stats
    }

    /// The figures read most recently (`None` until the first read).
    pub fn latest(&self) -> Option<&FrameTimings> {
        self.has_latest.then_some(&self.latest)
    }

    fn base(&self, slot: u32) -> u32 {
        slot * QUERIES_PER_SLOT
    }

    /// Step 1: reset the slot's queries and write the frame-begin timestamp. Call right after
    /// [`collect`](Self::collect), first thing in the frame's command buffer, outside any
    /// render pass.
    pub fn begin_frame(&mut self, rec: &Recording) {
        let slot = rec.slot() % self.frames_in_flight;
        let base = self.base(slot);
        self.slots[slot as usize] = SlotRecord {
            frame: Some(rec.frame()),
            ..EMPTY_SLOT
        };
        self.open_slot = Some(slot);
        // SAFETY: `rec` is recording (only FrameRing::begin makes one); the range lies in the
        // pool; reset precedes every write of these queries in this command buffer.
        unsafe {
            let d = &self.shared.device;
            d.cmd_reset_query_pool(rec.cmd(), self.pool, base, QUERIES_PER_SLOT);
            d.cmd_write_timestamp(
                rec.cmd(),
                vk::PipelineStageFlags::TOP_OF_PIPE,
                self.pool,
                base,
            );
        }
    }

    /// Step 1b (optional): tags the frame being recorded with the caller's own number for it
    /// (an engine's frame: `DrawOutput::frame` in `lanegraph`), which its [`FrameTimings::tag`]
    /// carries back when it is read, frames later. Call after [`begin_frame`](Self::begin_frame);
    /// a frame not tagged reads back 0.
    pub fn tag_frame(&mut self, rec: &Recording, tag: u64) {
        let slot = rec.slot() % self.frames_in_flight;
        self.slots[slot as usize].tag = tag;
    }

    /// Step 2a: a pass begins (timestamp at `TOP_OF_PIPE`). Record outside or inside a render
    /// pass, but end it at the same level.
    pub fn begin_pass(&mut self, rec: &Recording, pass: PassId) -> PassToken {
        let Some(slot) = self.open_slot else {
            return PassToken { k: None };
        };
        let r = &mut self.slots[slot as usize];
        let k = r.pass_count as usize;
        if k >= MAX_PASSES || pass.index() >= self.names.len() {
            self.stats.passes_dropped += 1;
            return PassToken { k: None };
        }
        r.passes[k] = pass;
        r.pass_count += 1;
        let q = self.base(slot) + 2 + 2 * k as u32;
        // SAFETY: recording buffer; query `q` was reset in begin_frame of this buffer.
        unsafe {
            self.shared.device.cmd_write_timestamp(
                rec.cmd(),
                vk::PipelineStageFlags::TOP_OF_PIPE,
                self.pool,
                q,
            )
        };
        PassToken { k: Some(k as u8) }
    }

    /// Step 2b: the pass ends (timestamp at `BOTTOM_OF_PIPE`).
    pub fn end_pass(&mut self, rec: &Recording, token: PassToken) {
        let (Some(slot), Some(k)) = (self.open_slot, token.k) else {
            return;
        };
        let k = usize::from(k);
        if self.slots[slot as usize].ended[k] {
            return;
        }
        self.slots[slot as usize].ended[k] = true;
        let q = self.base(slot) + 3 + 2 * k as u32;
        // SAFETY: recording buffer; query `q` was reset in begin_frame and not yet written.
        unsafe {
            self.shared.device.cmd_write_timestamp(
                rec.cmd(),
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                self.pool,
                q,
            )
        };
    }

    /// Step 3: frame-end timestamp, copy of the written queries into the mapped buffer, and the
    /// transfer -> host barrier. Call last in the frame's command buffer, outside render passes.
    pub fn end_frame(&mut self, rec: &Recording) {
        let Some(slot) = self.open_slot.take() else {
            return;
        };
        let base = self.base(slot);
        let d = &self.shared.device;
        self.slots[slot as usize].closed = true;
        let r = self.slots[slot as usize];
        // Close passes left open: the copy WAITs for every query it covers, and an unwritten
        // query would hang the queue.
        for k in 0..r.pass_count as usize {
            if !r.ended[k] {
                self.stats.passes_unclosed += 1;
                self.slots[slot as usize].ended[k] = true;
                // SAFETY: recording buffer; the query was reset and not yet written.
                unsafe {
                    d.cmd_write_timestamp(
                        rec.cmd(),
                        vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                        self.pool,
                        base + 3 + 2 * k as u32,
                    )
                };
            }
        }
        let used = 2 + 2 * u32::from(r.pass_count);
        let offset = u64::from(base) * RESULT_STRIDE;
        let barrier = vk::BufferMemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .buffer(self.results.raw())
            .offset(offset)
            .size(u64::from(used) * RESULT_STRIDE);
        // SAFETY: recording buffer; every query in [base, base + used) was reset and written in
        // this buffer (passes closed above), so the GPU-side WAIT terminates; the destination
        // range lies inside the results buffer (slot * QUERIES_PER_SLOT * 16 + used * 16).
        unsafe {
            d.cmd_write_timestamp(
                rec.cmd(),
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                self.pool,
                base + 1,
            );
            if self.read_path == ReadPath::GetQueryPoolResults {
                self.stats.frames_recorded += 1;
                return;
            }
            d.cmd_copy_query_pool_results(
                rec.cmd(),
                self.pool,
                base,
                used,
                self.results.raw(),
                offset,
                RESULT_STRIDE,
                vk::QueryResultFlags::TYPE_64
                    | vk::QueryResultFlags::WITH_AVAILABILITY
                    | vk::QueryResultFlags::WAIT,
            );
            d.cmd_pipeline_barrier(
                rec.cmd(),
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[],
                &[barrier],
                &[],
            );
        }
        self.stats.frames_recorded += 1;
    }

    /// Step 4: reads frame `now - 2` if it is complete (`is_complete(slot)` must poll, never
    /// wait), else counts it skipped; a skipped frame is read late, at `now - F` (just before
    /// its slot is reused, when the ring has waited for it), so no frame's figures are lost.
    /// With `F = 2` both are the same frame. Returns the newest figures read by this call.
    /// Call at the start of frame `now`, before [`begin_frame`](Self::begin_frame).
    pub fn collect(
        &mut self,
        now: u64,
        is_complete: impl Fn(u32) -> Result<bool, GpuError>,
    ) -> Result<Option<&FrameTimings>, GpuError> {
        let f = u64::from(self.frames_in_flight);
        let mut read_any = false;
        // A frame skipped at its `n + 2` read, about to lose its slot: the last chance.
        if let Some(old) = now.checked_sub(f).filter(|_| f > 2) {
            let slot = (old % f) as u32;
            let r = self.slots[slot as usize];
            if r.frame == Some(old) && r.closed && !r.read && is_complete(slot)? {
                read_any |= self.read_slot(slot, old)?;
                if read_any {
                    self.stats.frames_recovered += 1;
                }
            }
        }
        let Some(target) = now.checked_sub(2) else {
            return Ok(read_any.then_some(&self.latest));
        };
        let slot = (target % f) as u32;
        let r = self.slots[slot as usize];
        if r.frame == Some(target) && r.closed && !r.read {
            if is_complete(slot)? {
                read_any |= self.read_slot(slot, target)?;
            } else {
                self.stats.frames_skipped += 1;
            }
        }
        Ok(read_any.then_some(&self.latest))
    }

    /// Reads slot `slot` (holding frame `frame`, complete) into `latest`; false when a query
    /// was unavailable.
    fn read_slot(&mut self, slot: u32, frame: u64) -> Result<bool, GpuError> {
        let r = self.slots[slot as usize];
        self.slots[slot as usize].read = true;
        let passes = &r.passes[..usize::from(r.pass_count)];
        let used = 2 + 2 * usize::from(r.pass_count);
        let ok = match self.read_path {
            ReadPath::CopyToMappedBuffer => {
                let base = self.base(slot) as usize * RESULT_STRIDE as usize;
                // Only this slot's range: the GPU may be writing the other slots right now.
                let bytes = self
                    .results
                    .mapped_range(base, used * RESULT_STRIDE as usize)
                    .unwrap_or(&[]);
                decode(
                    &self.caps,
                    &self.clock,
                    &query_bytes(bytes),
                    passes,
                    &mut self.latest,
                )
            }
            ReadPath::GetQueryPoolResults => {
                let first = self.base(slot);
                let dst = &mut self.scratch[..used];
                // SAFETY: the queries [base, base + used) were reset and written by a submitted
                // frame; `dst` holds `used` (value, availability) pairs of u64, matching the
                // TYPE_64 | WITH_AVAILABILITY layout and stride.
                let got = unsafe {
                    self.shared.device.get_query_pool_results(
                        self.pool,
                        first,
                        dst,
                        vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WITH_AVAILABILITY,
                    )
                };
                match got {
                    Ok(()) | Err(vk::Result::NOT_READY) => {}
                    Err(e) => return Err(vk_err("vkGetQueryPoolResults")(e)),
                }
                let pairs = &self.scratch[..used];
                let query = |i: usize| pairs.get(i).filter(|p| p[1] != 0).map(|p| p[0]);
                decode(&self.caps, &self.clock, &query, passes, &mut self.latest)
            }
        };
        if !ok {
            self.stats.frames_unavailable += 1;
            return Ok(false);
        }
        self.latest.frame = frame;
        self.latest.tag = r.tag;
        self.latest.total_ema_ns = self.total_ema.update(self.latest.total_ns);
        for p in self.latest.passes.iter_mut() {
            if let Some(e) = self.pass_ema.get_mut(p.pass.index()) {
                p.ema_ns = e.update(p.raw_ns);
            }
        }
        // One tick of rounding per timestamp: 2 per pass.
        let tolerance = 2.0 * self.caps.period_ns * f64::from(r.pass_count);
        if self.latest.passes_sum_ns > self.latest.total_ns + tolerance {
            self.stats.sum_exceeds_total += 1;
        }
        self.stats.frames_read += 1;
        self.has_latest = true;
        Ok(true)
    }
}

impl Drop for GpuProfiler {
    fn drop(&mut self) {
        self.shared.idle_before_destroy();
        // SAFETY: the device is idle, so no frame still writes or copies these queries; the
        // results buffer is freed after the pool by field drop order.
        unsafe { self.shared.device.destroy_query_pool(self.pool, None) };
    }
}
