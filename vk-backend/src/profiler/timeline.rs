//! Placing GPU timestamps on the CPU timeline.
//!
//! Owns: [`ClockMapping`] (one GPU tick known to coincide with one CPU instant), the CPU clock
//! it is expressed in ([`monotonic_ns`]: `CLOCK_MONOTONIC` nanoseconds), and `calibrate`,
//! which makes a mapping. Must never: be called per frame (calibration is a cold-path call; the
//! offset estimate even waits for the GPU).
//!
//! # Two methods
//! 1. **Calibrated** (`VK_KHR_calibrated_timestamps`, else `VK_EXT_calibrated_timestamps`, when
//!    the device can sample `DEVICE` and `CLOCK_MONOTONIC` together): one call returns both
//!    clocks and the driver's bound on how far apart the samples were (`maxDeviation`).
//! 2. **Offset estimate** (no extension): submit a command buffer that only writes a
//!    timestamp, reading `CLOCK_MONOTONIC` just before the submit (t0) and just after its fence
//!    wait returns (t1). The timestamp was taken somewhere in [t0, t1]; we take the middle and
//!    report half the bracket as the uncertainty. Best of [`ESTIMATE_ROUNDS`] (the narrowest
//!    bracket) so a preempted round does not count. It is biased late by the submit latency
//!    (tens of µs on desktop drivers), which is why the calibrated path is preferred.
//!
//! Both drift as the two oscillators disagree (tens of ppm: ~50 µs a second at worst), so the
//! engine calls `GpuProfiler::recalibrate` on its cold-path tick (say once a second).
//!
//! # Why `CLOCK_MONOTONIC`
//! The leaf crates do not know each other, so this crate cannot hand out the engine's clock
//! stamps. `CLOCK_MONOTONIC` is what `std::time::Instant` reads on Linux and what the
//! calibrated-timestamps extension can sample, so the engine converts with one offset (read
//! `monotonic_ns()` and its own clock together once).

use std::sync::Arc;

use ash::vk;

use crate::context::{Calibrator, Shared};
use crate::error::{vk_err, GpuError};
use crate::profiler::ticks::TimestampCaps;

/// Offset-estimate rounds; the narrowest bracket wins (5: enough that one round without a
/// scheduler hiccup is near certain, few enough to stay under a few ms at start-up).
pub const ESTIMATE_ROUNDS: usize = 5;

pub use crate::clock::monotonic_ns;

/// How a [`ClockMapping`] was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CalibrationMethod {
    /// `vkGetCalibratedTimestamps*` through the named extension.
    Calibrated(&'static str),
    /// The submit-and-bracket estimate (see the module docs).
    OffsetEstimate,
}

/// One GPU tick known to coincide with one `CLOCK_MONOTONIC` instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockMapping {
    /// The GPU tick (raw, masked when used).
    pub gpu_tick: u64,
    /// The CPU instant, `CLOCK_MONOTONIC` ns.
    pub cpu_ns: u64,
    /// How far off the pairing may be, ns (driver's `maxDeviation`, or half the bracket).
    pub uncertainty_ns: f64,
    /// How it was made.
    pub method: CalibrationMethod,
}

impl ClockMapping {
    /// The `CLOCK_MONOTONIC` ns at which GPU tick `tick` happened: the signed, wrap-aware tick
    /// distance from the reference, scaled by the period (saturating at 0).
    #[inline]
    pub fn cpu_ns_of(&self, caps: &TimestampCaps, tick: u64) -> u64 {
        let d = caps.signed_delta_ticks(self.gpu_tick, tick) as f64 * caps.period_ns;
        let t = self.cpu_ns as f64 + d;
        if t <= 0.0 {
            0
        } else {
            t as u64
        }
    }
}

/// Makes a mapping: calibrated when the device enabled an extension for it, else the estimate.
/// Cold path: may submit and wait on the GPU.
pub(crate) fn calibrate(shared: &Arc<Shared>, family: u32) -> Result<ClockMapping, GpuError> {
    if let Some(cal) = &shared.calibrator {
        let infos = [
            vk::CalibratedTimestampInfoKHR::default().time_domain(vk::TimeDomainKHR::DEVICE),
            vk::CalibratedTimestampInfoKHR::default()
                .time_domain(vk::TimeDomainKHR::CLOCK_MONOTONIC),
        ];
        // SAFETY: the extension is enabled on this device and both domains were checked to be
        // calibrateable in `context::calibration_extension`.
        let (ts, dev, name) = unsafe {
            match cal {
                Calibrator::Khr(d) => {
                    let (t, m) = d
                        .get_calibrated_timestamps(&infos)
                        .map_err(vk_err("vkGetCalibratedTimestampsKHR"))?;
                    (t, m, "VK_KHR_calibrated_timestamps")
                }
                Calibrator::Ext(d) => {
                    let (t, m) = d
                        .get_calibrated_timestamps(&infos)
                        .map_err(vk_err("vkGetCalibratedTimestampsEXT"))?;
                    (t, m, "VK_EXT_calibrated_timestamps")
                }
            }
        };
        return Ok(ClockMapping {
            gpu_tick: ts[0],
            cpu_ns: ts[1],
            uncertainty_ns: dev as f64,
            method: CalibrationMethod::Calibrated(name),
        });
    }
    estimate(shared, family)
}

/// The offset estimate (module docs, method 2).
fn estimate(shared: &Arc<Shared>, family: u32) -> Result<ClockMapping, GpuError> {
    let once = OneShot::new(shared, family)?;
    let mut best: Option<ClockMapping> = None;
    for _ in 0..ESTIMATE_ROUNDS {
        let m = once.round()?;
        if best.is_none_or(|b| m.uncertainty_ns < b.uncertainty_ns) {
            best = Some(m);
        }
    }
    best.ok_or(GpuError::BadInput {
        what: "ESTIMATE_ROUNDS",
        why: "zero rounds".into(),
    })
}

/// A command pool, one command buffer, a fence and a one-query pool, destroyed on drop.
struct OneShot<'a> {
    shared: &'a Shared,
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    queries: vk::QueryPool,
}

impl<'a> OneShot<'a> {
    fn new(shared: &'a Shared, family: u32) -> Result<OneShot<'a>, GpuError> {
        let d = &shared.device;
        let mut me = OneShot {
            shared,
            pool: vk::CommandPool::null(),
            cmd: vk::CommandBuffer::null(),
            fence: vk::Fence::null(),
            queries: vk::QueryPool::null(),
        };
        // SAFETY: plain object creation on a valid device; each handle is stored in `me` at
        // once so Drop destroys whatever was made if a later step fails.
        unsafe {
            me.pool = d
                .create_command_pool(
                    // No per-buffer reset: the pool holds this one buffer, and each round resets
                    // the whole pool (what best practices asks for).
                    &vk::CommandPoolCreateInfo::default().queue_family_index(family),
                    None,
                )
                .map_err(vk_err("vkCreateCommandPool"))?;
            me.cmd = d
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(me.pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1),
                )
                .map_err(vk_err("vkAllocateCommandBuffers"))?[0];
            me.fence = d
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .map_err(vk_err("vkCreateFence"))?;
            me.queries = d
                .create_query_pool(
                    &vk::QueryPoolCreateInfo::default()
                        .query_type(vk::QueryType::TIMESTAMP)
                        .query_count(1),
                    None,
                )
                .map_err(vk_err("vkCreateQueryPool"))?;
        }
        Ok(me)
    }

    fn round(&self) -> Result<ClockMapping, GpuError> {
        let d = &self.shared.device;
        // SAFETY: the pool's one command buffer is not in use (each round waits for its fence
        // before returning), so the pool may be reset; the query is reset before it is written;
        // submission holds the queue lock.
        unsafe {
            d.reset_command_pool(self.pool, vk::CommandPoolResetFlags::empty())
                .map_err(vk_err("vkResetCommandPool"))?;
            d.begin_command_buffer(
                self.cmd,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .map_err(vk_err("vkBeginCommandBuffer"))?;
            d.cmd_reset_query_pool(self.cmd, self.queries, 0, 1);
            d.cmd_write_timestamp(
                self.cmd,
                vk::PipelineStageFlags::TOP_OF_PIPE,
                self.queries,
                0,
            );
            d.end_command_buffer(self.cmd)
                .map_err(vk_err("vkEndCommandBuffer"))?;
            d.reset_fences(&[self.fence])
                .map_err(vk_err("vkResetFences"))?;
            let cmds = [self.cmd];
            let submit = vk::SubmitInfo::default().command_buffers(&cmds);
            let t0;
            {
                let queue = self.shared.queue();
                t0 = monotonic_ns();
                d.queue_submit(*queue, &[submit], self.fence)
                    .map_err(vk_err("vkQueueSubmit"))?;
            }
            d.wait_for_fences(&[self.fence], true, u64::MAX)
                .map_err(vk_err("vkWaitForFences"))?;
            let t1 = monotonic_ns();
            let mut out = [0u64; 1];
            d.get_query_pool_results(
                self.queries,
                0,
                &mut out,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
            .map_err(vk_err("vkGetQueryPoolResults"))?;
            Ok(ClockMapping {
                gpu_tick: out[0],
                cpu_ns: t0 + (t1 - t0) / 2,
                uncertainty_ns: (t1 - t0) as f64 / 2.0,
                method: CalibrationMethod::OffsetEstimate,
            })
        }
    }
}

impl Drop for OneShot<'_> {
    fn drop(&mut self) {
        let d = &self.shared.device;
        // SAFETY: every round waited for its fence, so nothing here is in use; null handles
        // (a failed creation) are valid to destroy (a no-op per the spec).
        unsafe {
            d.destroy_query_pool(self.queries, None);
            d.destroy_fence(self.fence, None);
            d.destroy_command_pool(self.pool, None); // frees `cmd` with it
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_ticks_both_sides_of_the_reference() {
        let caps = TimestampCaps::new(0, 36, 52.0).unwrap();
        let m = ClockMapping {
            gpu_tick: 1_000,
            cpu_ns: 10_000_000,
            uncertainty_ns: 0.0,
            method: CalibrationMethod::OffsetEstimate,
        };
        assert_eq!(m.cpu_ns_of(&caps, 1_100), 10_005_200);
        assert_eq!(m.cpu_ns_of(&caps, 900), 9_994_800);
        // Garbage above the valid bits is ignored.
        assert_eq!(m.cpu_ns_of(&caps, (1 << 40) | 1_100), 10_005_200);
    }

    #[test]
    fn maps_across_a_wrap() {
        let caps = TimestampCaps::new(0, 36, 52.0).unwrap();
        let m = ClockMapping {
            gpu_tick: caps.mask - 9, // 10 ticks before the wrap
            cpu_ns: 1_000_000,
            uncertainty_ns: 0.0,
            method: CalibrationMethod::OffsetEstimate,
        };
        assert_eq!(m.cpu_ns_of(&caps, 10), 1_000_000 + 20 * 52);
        assert_eq!(m.cpu_ns_of(&caps, caps.mask - 19), 1_000_000 - 10 * 52);
    }

    #[test]
    fn monotonic_moves_forward() {
        let a = monotonic_ns();
        let b = monotonic_ns();
        assert!(a > 0 && b >= a);
    }
}
