//! Frames in flight: one command buffer and one fence per slot, recycled in order.
//!
//! Owns: [`FrameRing`] and [`Recording`] (a command buffer known to be recording). Must never:
//! wait on the GPU except in [`FrameRing::begin`], for the slot it is about to reuse, and in the
//! explicit [`FrameRing::finish`] (shutdown, tests, a blocking readback).
//!
//! # Protocol (frame `n`, `F` slots)
//! 1. `begin`: slot `s = n % F`. Wait for the slot's fence (signalled by frame `n - F`'s
//!    submit; signalled at creation so the first round does not wait). Record how long that
//!    took ([`FrameRing::last_wait_ns`]): on a GPU-bound frame this is where the lane idles.
//! 2. Reset the slot's command pool (frees last use's commands) and begin its buffer.
//! 3. The caller records passes into the [`Recording`].
//! 4. `submit`: end the buffer, reset the fence (only now, so an error between 1 and 4 never
//!    leaves an unsignalled fence that nothing will signal), submit with the fence.
//!
//! Readers of frame `n - 2`'s results ask [`FrameRing::is_complete`], which polls the fence
//! (`vkGetFenceStatus`) and never waits.

use ash::vk;

use crate::clock::monotonic_ns;
use crate::context::Gpu;
use crate::error::{vk_err, GpuError};

/// Fewest frames in flight: the profiler reads frame `n` at `n + 2`, so slot `n % F` must not
/// be reused before then (`F >= 2`).
pub const MIN_FRAMES_IN_FLIGHT: u32 = 2;
/// Most frames in flight: a third frame hides a late GPU; more only adds latency.
pub const MAX_FRAMES_IN_FLIGHT: u32 = 3;

struct Slot {
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    /// A submission on this slot succeeded and has not been waited for: the only case in
    /// which its fence will be signalled by the GPU. (After a failed submit the fence stays
    /// unsignalled with nothing to signal it; waiting on it would never return.)
    in_flight: bool,
}

/// The longest any fence wait of the ring waits before it reports [`GpuError::Timeout`].
pub const FENCE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// A command buffer in the recording state for frame [`frame`](Self::frame) in slot
/// [`slot`](Self::slot). Only [`FrameRing::begin`] makes one.
#[derive(Debug)]
pub struct Recording {
    cmd: vk::CommandBuffer,
    slot: u32,
    frame: u64,
}

impl Recording {
    /// The command buffer, for recording passes (it stays valid until `submit`).
    pub fn cmd(&self) -> vk::CommandBuffer {
        self.cmd
    }
    /// The frame-in-flight slot (`frame % frames_in_flight`).
    pub fn slot(&self) -> u32 {
        self.slot
    }
    /// The frame number (0, 1, 2, ...).
    pub fn frame(&self) -> u64 {
        self.frame
    }
}

/// `F` slots of command buffer + fence (see the module docs for the protocol).
pub struct FrameRing {
    gpu: Gpu,
    slots: Vec<Slot>,
    next_frame: u64,
    last_wait_ns: u64,
    /// Test seam: the next submit fails after resetting its fence, as a driver's would.
    fail_next_submit: bool,
}

impl FrameRing {
    /// A ring of `frames_in_flight` slots (2 or 3).
    pub fn new(gpu: &Gpu, frames_in_flight: u32) -> Result<FrameRing, GpuError> {
        if !(MIN_FRAMES_IN_FLIGHT..=MAX_FRAMES_IN_FLIGHT).contains(&frames_in_flight) {
            return Err(GpuError::BadInput {
                what: "frames_in_flight",
                why: format!(
                    "{frames_in_flight}: must be {MIN_FRAMES_IN_FLIGHT}..={MAX_FRAMES_IN_FLIGHT} \
                     (the profiler reads frame n at n+2)"
                ),
            });
        }
        let mut ring = FrameRing {
            gpu: gpu.clone(),
            slots: Vec::with_capacity(frames_in_flight as usize),
            next_frame: 0,
            last_wait_ns: 0,
            fail_next_submit: false,
        };
        let d = &gpu.shared.device;
        for _ in 0..frames_in_flight {
            // SAFETY: plain creation on a valid device; each handle is pushed (so Drop frees
            // it) before the next creation can fail.
            unsafe {
                let pool = d
                    .create_command_pool(
                        &vk::CommandPoolCreateInfo::default()
                            .queue_family_index(gpu.info().queue_family)
                            .flags(vk::CommandPoolCreateFlags::TRANSIENT),
                        None,
                    )
                    .map_err(vk_err("vkCreateCommandPool"))?;
                ring.slots.push(Slot {
                    pool,
                    cmd: vk::CommandBuffer::null(),
                    fence: vk::Fence::null(),
                    in_flight: false,
                });
                let slot = ring.slots.last_mut().ok_or(GpuError::BadInput {
                    what: "frames_in_flight",
                    why: "internal: slot vanished".into(),
                })?;
                slot.fence = d
                    .create_fence(
                        &vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED),
                        None,
                    )
                    .map_err(vk_err("vkCreateFence"))?;
                slot.cmd = d
                    .allocate_command_buffers(
                        &vk::CommandBufferAllocateInfo::default()
                            .command_pool(pool)
                            .level(vk::CommandBufferLevel::PRIMARY)
                            .command_buffer_count(1),
                    )
                    .map_err(vk_err("vkAllocateCommandBuffers"))?[0];
            }
        }
        Ok(ring)
    }

    /// Frames in flight.
    pub fn frames_in_flight(&self) -> u32 {
        self.slots.len() as u32
    }

    /// The number the next [`begin`](Self::begin) will give its frame.
    pub fn next_frame(&self) -> u64 {
        self.next_frame
    }

    /// Nanoseconds the last `begin` waited for a free slot (0 when the GPU kept up).
    pub fn last_wait_ns(&self) -> u64 {
        self.last_wait_ns
    }

    /// Steps 1-2 of the protocol: waits for the next slot to be free, then opens its buffer.
    pub fn begin(&mut self) -> Result<Recording, GpuError> {
        let frame = self.next_frame;
        let slot_index = (frame % self.slots.len() as u64) as u32;
        self.last_wait_ns = 0;
        if self.slots[slot_index as usize].in_flight {
            let fence = self.slots[slot_index as usize].fence;
            let t0 = monotonic_ns();
            // SAFETY: the fence belongs to this device.
            let done = unsafe { self.gpu.shared.device.get_fence_status(fence) }
                .map_err(vk_err("vkGetFenceStatus"))?;
            if !done {
                wait(&self.gpu, &[fence], "vkWaitForFences (frame slot)")?;
                self.last_wait_ns = monotonic_ns().saturating_sub(t0);
            }
            self.slots[slot_index as usize].in_flight = false;
        }
        let slot = &self.slots[slot_index as usize];
        let d = &self.gpu.shared.device;
        // SAFETY: the fence and pool belong to this device; the slot is not in flight (waited
        // above, or its last submit failed, so no GPU work uses its command buffer), so
        // resetting its pool is allowed.
        unsafe {
            d.reset_command_pool(slot.pool, vk::CommandPoolResetFlags::empty())
                .map_err(vk_err("vkResetCommandPool"))?;
            d.begin_command_buffer(
                slot.cmd,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .map_err(vk_err("vkBeginCommandBuffer"))?;
        }
        self.next_frame += 1;
        Ok(Recording {
            cmd: slot.cmd,
            slot: slot_index,
            frame,
        })
    }

    /// Step 4: ends `rec` and submits it with its slot's fence.
    pub fn submit(&mut self, rec: Recording) -> Result<(), GpuError> {
        self.submit_with(rec, None, None)
    }

    /// Step 4 for a frame that presents: as [`submit`](Self::submit), waiting on `wait` (a
    /// semaphore and the stage that waits for it, e.g. a swapchain image's acquire at the
    /// transfer stage) and signalling `signal` (what the present waits on).
    pub fn submit_with(
        &mut self,
        rec: Recording,
        wait: Option<(vk::Semaphore, vk::PipelineStageFlags)>,
        signal: Option<vk::Semaphore>,
    ) -> Result<(), GpuError> {
        let fail = std::mem::take(&mut self.fail_next_submit);
        let slot = &mut self.slots[rec.slot as usize];
        let d = &self.gpu.shared.device;
        let cmds = [rec.cmd];
        // Zero or one of each, as slices of stack arrays: a presenting frame allocates nothing.
        let (wait_sem, wait_stage) = (wait.map(|(s, _)| [s]), wait.map(|(_, st)| [st]));
        let signal = signal.map(|s| [s]);
        // A semaphore array is set only when it has members: an empty slice still sets its
        // pointer, which the best-practices layer reports (`SemaphoreCount`) on every submit.
        let mut submit = vk::SubmitInfo::default().command_buffers(&cmds);
        if let (Some(sems), Some(stages)) = (wait_sem.as_ref(), wait_stage.as_ref()) {
            submit = submit.wait_semaphores(sems).wait_dst_stage_mask(stages);
        }
        if let Some(sems) = signal.as_ref() {
            submit = submit.signal_semaphores(sems);
        }
        // SAFETY: `rec` is this slot's recording buffer (only `begin` makes a Recording); the
        // slot is not in flight (`begin` waited for it), so no pending submission uses the
        // fence and resetting it is valid; the queue is locked for the submit; the semaphores
        // are the caller's, of this device (a wait semaphore has a signal queued before it,
        // as the swapchain's acquire guarantees).
        unsafe {
            d.end_command_buffer(rec.cmd)
                .map_err(vk_err("vkEndCommandBuffer"))?;
            d.reset_fences(&[slot.fence])
                .map_err(vk_err("vkResetFences"))?;
            if fail {
                return Err(GpuError::OutOfMemory {
                    call: "vkQueueSubmit (injected)",
                    which: "device",
                });
            }
            let queue = self.gpu.shared.queue();
            d.queue_submit(*queue, &[submit], slot.fence)
                .map_err(vk_err("vkQueueSubmit"))?;
        }
        // Only now will the GPU signal the fence.
        slot.in_flight = true;
        Ok(())
    }

    /// Test seam: the next [`submit`](Self::submit) fails after resetting its fence, the way
    /// an out-of-memory `vkQueueSubmit` does, so the recovery path can be tested on any device.
    #[doc(hidden)]
    pub fn fail_next_submit(&mut self) {
        self.fail_next_submit = true;
    }

    /// Submissions not finished yet (polls each slot's fence, never waits): the frames in
    /// flight right now.
    pub fn in_flight_now(&self) -> u32 {
        self.slots
            .iter()
            .enumerate()
            .filter(|(i, s)| s.in_flight && !self.is_complete(*i as u32).unwrap_or(true))
            .count() as u32
    }

    /// Whether slot `slot`'s last submission has finished (polls, never waits). False for a
    /// slot whose last submit failed: nothing of that frame ran, so nothing of it is to be read.
    pub fn is_complete(&self, slot: u32) -> Result<bool, GpuError> {
        let Some(s) = self.slots.get(slot as usize) else {
            return Ok(false);
        };
        // SAFETY: the fence belongs to this device.
        unsafe { self.gpu.shared.device.get_fence_status(s.fence) }
            .map_err(vk_err("vkGetFenceStatus"))
    }

    /// Waits for every slot's last submission (shutdown, tests, a blocking readback).
    pub fn finish(&mut self) -> Result<(), GpuError> {
        let fences: Vec<vk::Fence> = self
            .slots
            .iter()
            .filter(|s| s.in_flight)
            .map(|s| s.fence)
            .collect();
        if fences.is_empty() {
            return Ok(());
        }
        wait(&self.gpu, &fences, "vkWaitForFences (finish)")?;
        for s in &mut self.slots {
            s.in_flight = false;
        }
        Ok(())
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }
}

/// Waits for every fence in `fences` (each of an in-flight submission), at most
/// [`FENCE_TIMEOUT`].
fn wait(gpu: &Gpu, fences: &[vk::Fence], call: &'static str) -> Result<(), GpuError> {
    let timeout = FENCE_TIMEOUT.as_nanos() as u64;
    // SAFETY: fences of this device, each of a successful submission (so the GPU will signal
    // it, or the device is lost and the wait returns an error).
    match unsafe { gpu.shared.device.wait_for_fences(fences, true, timeout) } {
        Ok(()) => Ok(()),
        Err(vk::Result::TIMEOUT) => Err(GpuError::Timeout {
            call,
            waited_ms: FENCE_TIMEOUT.as_millis() as u64,
        }),
        Err(e) => Err(vk_err(call)(e)),
    }
}

impl Drop for FrameRing {
    fn drop(&mut self) {
        if let Err(e) = self.finish() {
            tracing::warn!(error = %e, "waiting for frames in flight at teardown failed");
        }
        let d = &self.gpu.shared.device;
        for s in self.slots.drain(..) {
            // SAFETY: all fences waited above (or the device is lost, where destroying is
            // still allowed); null handles are no-ops; the pool frees its buffer.
            unsafe {
                d.destroy_fence(s.fence, None);
                d.destroy_command_pool(s.pool, None);
            }
        }
    }
}
