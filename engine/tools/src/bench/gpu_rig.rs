//! The profiler's CPU-cost rig, shared by `lanegraph bench gpu` and the criterion bench.
//!
//! Its baseline, [`RawTimestampRig`], records timestamps with raw Vulkan calls through
//! `Gpu::device()`: each `unsafe` block has a SAFETY checklist.
#![allow(unsafe_code)]
//!
//! Owns: a frame ring and a profiler with N empty passes, and one frame of profiling with only
//! the profiler's own calls timed. Must never: time anything but profiler calls (ring waits and
//! submits are outside the window), or choose the clock (the caller passes its own: this leaf
//! cannot know the engine's).

use lanegraph_vk::FrameRing;
use lanegraph_vk::Gpu;
use lanegraph_vk::GpuError;
use lanegraph_vk::{GpuProfiler, PassId, ReadPath};

/// A ring and a profiler with `passes` empty passes (begin/end timestamps back to back).
pub struct ProfilerRig {
    ring: FrameRing,
    profiler: GpuProfiler,
    passes: Vec<PassId>,
}

impl ProfilerRig {
    /// Two frames in flight, `passes` passes (at most [`lanegraph_vk::profiler::MAX_PASSES`]),
    /// results read through `read_path`.
    pub fn new(gpu: &Gpu, passes: usize, read_path: ReadPath) -> Result<ProfilerRig, GpuError> {
        let ring = FrameRing::new(gpu, 2)?;
        let mut profiler = GpuProfiler::with_read_path(gpu, 2, read_path)?;
        let passes = (0..passes)
            .map(|i| profiler.register_pass(&format!("pass{i}")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ProfilerRig {
            ring,
            profiler,
            passes,
        })
    }

    /// One frame. Returns the `now()` ticks spent inside profiler calls: `collect` (reading
    /// frame n - 2), `begin_frame`, a `begin_pass` / `end_pass` pair per pass and `end_frame`.
    /// `now` is the caller's clock (raw ticks); two reads of it are inside the window.
    pub fn frame(&mut self, now: impl Fn() -> u64) -> Result<u64, GpuError> {
        let rec = self.ring.begin()?;
        let ring = &self.ring;
        let t0 = now();
        self.profiler
            .collect(rec.frame(), |s| ring.is_complete(s))?;
        self.profiler.begin_frame(&rec);
        for &p in &self.passes {
            let t = self.profiler.begin_pass(&rec, p);
            self.profiler.end_pass(&rec, t);
        }
        self.profiler.end_frame(&rec);
        let t1 = now();
        self.ring.submit(rec)?;
        Ok(t1.saturating_sub(t0))
    }

    /// The profiler (stats, latest figures).
    pub fn profiler(&self) -> &GpuProfiler {
        &self.profiler
    }

    /// Waits for every frame in flight.
    pub fn finish(&mut self) -> Result<(), GpuError> {
        self.ring.finish()
    }
}

/// The driver's floor under the profiler: the same Vulkan commands per frame (a fence poll, a
/// read of the mapped results, a query reset, `2 + 2 * passes` timestamps, the results copy and
/// its barrier) issued directly, with none of the profiler's bookkeeping (slot records, ticks
/// maths, EMAs, timeline placement). `ProfilerRig` minus this is what the profiler itself costs.
pub struct RawTimestampRig {
    ring: FrameRing,
    pool: lanegraph_vk::ash::vk::QueryPool,
    results: lanegraph_vk::memory::GpuBuffer,
    queries: u32,
    gpu: Gpu,
}

impl RawTimestampRig {
    /// Two frames in flight, `passes` passes.
    pub fn new(gpu: &Gpu, passes: usize) -> Result<RawTimestampRig, GpuError> {
        use lanegraph_vk::ash::vk;
        let queries = 2 + 2 * passes as u32;
        let ring = FrameRing::new(gpu, 2)?;
        let results = lanegraph_vk::memory::GpuBuffer::new(
            gpu,
            "raw rig results",
            u64::from(2 * queries) * 16,
            vk::BufferUsageFlags::TRANSFER_DST,
            gpu_allocator::MemoryLocation::GpuToCpu,
        )?;
        let ci = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(2 * queries);
        // SAFETY: valid device and create info.
        let pool = unsafe { gpu.device().create_query_pool(&ci, None) }
            .map_err(lanegraph_vk::error::vk_err("vkCreateQueryPool"))?;
        Ok(RawTimestampRig {
            ring,
            pool,
            results,
            queries,
            gpu: gpu.clone(),
        })
    }

    /// One frame; returns the `now()` ticks spent issuing the commands above.
    pub fn frame(&mut self, now: impl Fn() -> u64) -> Result<u64, GpuError> {
        use lanegraph_vk::ash::vk;
        let rec = self.ring.begin()?;
        let d = self.gpu.device();
        let base = rec.slot() * self.queries;
        let t0 = now();
        let done = self.ring.is_complete(rec.slot())?;
        let mut sum = 0u64;
        if done {
            if let Some(bytes) = self.results.mapped() {
                let at = base as usize * 16;
                for q in bytes[at..at + self.queries as usize * 16].chunks_exact(8) {
                    sum = sum
                        .wrapping_add(u64::from_le_bytes(<[u8; 8]>::try_from(q).unwrap_or([0; 8])));
                }
            }
        }
        std::hint::black_box(sum);
        let barrier = vk::BufferMemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .buffer(self.results.raw())
            .offset(u64::from(base) * 16)
            .size(u64::from(self.queries) * 16);
        // SAFETY: `rec` is recording; the slot's queries are reset before they are written and
        // all written before the WAIT copy; the copy's range lies in the results buffer.
        unsafe {
            let cmd = rec.cmd();
            d.cmd_reset_query_pool(cmd, self.pool, base, self.queries);
            for q in 0..self.queries {
                let stage = if q % 2 == 0 {
                    vk::PipelineStageFlags::TOP_OF_PIPE
                } else {
                    vk::PipelineStageFlags::BOTTOM_OF_PIPE
                };
                d.cmd_write_timestamp(cmd, stage, self.pool, base + q);
            }
            d.cmd_copy_query_pool_results(
                cmd,
                self.pool,
                base,
                self.queries,
                self.results.raw(),
                u64::from(base) * 16,
                16,
                vk::QueryResultFlags::TYPE_64
                    | vk::QueryResultFlags::WITH_AVAILABILITY
                    | vk::QueryResultFlags::WAIT,
            );
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[],
                &[barrier],
                &[],
            );
        }
        let t1 = now();
        self.ring.submit(rec)?;
        Ok(t1.saturating_sub(t0))
    }

    /// Waits for every frame in flight.
    pub fn finish(&mut self) -> Result<(), GpuError> {
        self.ring.finish()
    }
}

impl Drop for RawTimestampRig {
    fn drop(&mut self) {
        if let Err(e) = self.ring.finish() {
            eprintln!("# gpu: raw rig teardown wait failed: {e}");
        }
        // SAFETY: every frame using the pool finished above.
        unsafe { self.gpu.device().destroy_query_pool(self.pool, None) };
    }
}
