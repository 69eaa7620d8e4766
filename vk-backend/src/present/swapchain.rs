//! The swapchain: images to present, acquired and presented once per frame, recreated when the
//! window changes.
//!
//! Owns: the `VkSwapchainKHR`, its images, one "image acquired" semaphore per frame-in-flight
//! slot and one "ready to present" semaphore per image, the present-mode choice, recreation,
//! and the pacing figures ([`PresentStats`]). Must never: wait on the GPU outside
//! [`Swapchain::acquire`]'s recreation path (a cold path: a resize) and the acquire itself
//! (which is where FIFO paces the render lane), or present an image no submit signalled.
//!
//! # One frame (slot `s` of the caller's frame ring, which already waited for `s`'s fence)
//! 1. [`acquire`](Swapchain::acquire)`(s)`: recreate first if the last present said the
//!    swapchain is stale; a zero-sized (minimised) window gives `Ok(None)` at once: present
//!    nothing this frame. Otherwise `vkAcquireNextImageKHR` signals `acquired[s]`. Reusing
//!    `acquired[s]` is safe because the submit that waited on it used slot `s`, whose fence the
//!    ring waited for. `OUT_OF_DATE` recreates and tries once more; `SUBOPTIMAL` keeps the
//!    image (its semaphore is signalled) and recreates after its present.
//! 2. The caller records its passes, then [`record_copy_in`](Swapchain::record_copy_in): the
//!    image goes `UNDEFINED -> TRANSFER_DST`, is cleared, gets the picture blitted in (aspect
//!    kept, centred), and goes `-> PRESENT_SRC`.
//! 3. The caller submits waiting on [`AcquiredImage::wait`] at the transfer stage and
//!    signalling [`AcquiredImage::signal`] (`ready[image]`, one per image: a present may hold
//!    its semaphore until the image is acquired again, so it is never shared across images).
//! 4. [`present`](Swapchain::present): `vkQueuePresentKHR` waits on `ready[image]`.
//!    `OUT_OF_DATE` / `SUBOPTIMAL` mark the swapchain stale for step 1 of the next frame.
//!
//! # Recreation
//! Waits for the device to be idle (every submit that used an old image or semaphore is done),
//! creates the new swapchain with the old one as `oldSwapchain`, destroys the old one, and
//! makes the per-image semaphores anew.

use std::time::Duration;

use ash::vk;

use super::choice::choose;
pub use super::choice::PresentMode;
use super::surface::Surface;
use crate::clock::monotonic_ns;
use crate::context::Gpu;
use crate::error::{vk_err, GpuError};

/// How to build a [`Swapchain`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwapchainConfig {
    /// The mode asked for (FIFO where the surface does not offer it).
    pub mode: PresentMode,
    /// The caller's frames in flight: one acquire semaphore each.
    pub frames_in_flight: u32,
    /// The window's size in pixels, used where the surface leaves the extent to the
    /// swapchain (Wayland); X11 and Win32 report theirs.
    pub extent: (u32, u32),
}

impl Default for SwapchainConfig {
    fn default() -> Self {
        SwapchainConfig {
            mode: PresentMode::Fifo,
            frames_in_flight: 2,
            extent: (1280, 720),
        }
    }
}

/// An image acquired for this frame: record into it, submit with its semaphores, present it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcquiredImage {
    /// The image's index in the swapchain.
    pub index: u32,
    /// The image.
    pub image: vk::Image,
    /// Its size.
    pub extent: vk::Extent2D,
    /// Wait on this (transfer stage) before writing the image.
    pub wait: vk::Semaphore,
    /// Signal this when the image is written; the present waits on it.
    pub signal: vk::Semaphore,
}

/// What the presents so far did, and the newest frame's pacing.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PresentStats {
    /// Images presented.
    pub presented: u64,
    /// Swapchains built after the first (resize, `OUT_OF_DATE`, `SUBOPTIMAL`).
    pub recreated: u64,
    /// Frames that presented nothing because the window had no area (minimised).
    pub skipped_minimised: u64,
    /// Frames that presented nothing because the swapchain was out of date again right after
    /// its rebuild (the window still changing size).
    pub skipped_stale: u64,
    /// Frames abandoned between acquire and present by an error ([`Swapchain::abandon`]).
    pub abandoned: u64,
    /// `ERROR_OUT_OF_DATE_KHR` results (acquire or present).
    pub out_of_date: u64,
    /// `SUBOPTIMAL_KHR` results (acquire or present).
    pub suboptimal: u64,
    /// How long the last acquire blocked, ns (FIFO paces here).
    pub last_acquire_wait_ns: u64,
    /// When the last acquire began (`CLOCK_MONOTONIC` ns; 0 before the first).
    pub last_acquire_start_ns: u64,
    /// When the last present call began (`CLOCK_MONOTONIC` ns; 0 before the first).
    pub last_present_start_ns: u64,
    /// Between the last two presents, ns (0 before the second).
    pub last_interval_ns: u64,
    /// When the last present returned (`CLOCK_MONOTONIC` ns; 0 before the first).
    pub last_present_ns: u64,
    /// The present mode in use.
    pub mode: PresentMode,
    /// The images' size now.
    pub extent: (u32, u32),
}

/// The longest an acquire may block before it is reported as a timeout.
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// A swapchain on a [`Surface`] (see the module docs for one frame).
pub struct Swapchain {
    gpu: Gpu,
    loader: ash::khr::swapchain::Device,
    handle: vk::SwapchainKHR,
    images: Vec<vk::Image>,
    format: vk::Format,
    extent: vk::Extent2D,
    wanted: PresentMode,
    /// Hint for surfaces that leave the extent to us.
    extent_hint: (u32, u32),
    acquired: Vec<vk::Semaphore>,
    ready: Vec<vk::Semaphore>,
    stale: bool,
    /// The last source format `record_copy_in` checked, and its blit filter.
    blit_src: std::cell::Cell<Option<(vk::Format, vk::Filter)>>,
    stats: PresentStats,
    /// Last: dropped after `Drop for Swapchain` destroyed the swapchain.
    surface: Surface,
}

impl std::fmt::Debug for Swapchain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Swapchain")
            .field("format", &self.format)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl Swapchain {
    /// Builds the swapchain for `surface` (its device must be the one `surface` was made with).
    /// A window that is minimised at this moment gets its images on the first acquire after it
    /// is restored.
    ///
    /// Errors: [`GpuError::BadInput`] for frames in flight outside 1..=3;
    /// [`GpuError::NoPresent`] when the surface offers no 8-bit UNORM format or cannot be a
    /// transfer destination; a driver error.
    pub fn new(surface: Surface, config: SwapchainConfig) -> Result<Swapchain, GpuError> {
        if !(1..=crate::frames::MAX_FRAMES_IN_FLIGHT).contains(&config.frames_in_flight) {
            return Err(GpuError::BadInput {
                what: "SwapchainConfig::frames_in_flight",
                why: format!(
                    "{}: give the frame ring's slot count (1..={})",
                    config.frames_in_flight,
                    crate::frames::MAX_FRAMES_IN_FLIGHT
                ),
            });
        }
        let gpu = surface.gpu().clone();
        let loader = ash::khr::swapchain::Device::new(&gpu.shared.instance, &gpu.shared.device);
        let mut me = Swapchain {
            gpu,
            loader,
            handle: vk::SwapchainKHR::null(),
            images: Vec::new(),
            format: vk::Format::UNDEFINED,
            extent: vk::Extent2D::default(),
            wanted: config.mode,
            extent_hint: config.extent,
            acquired: Vec::new(),
            ready: Vec::new(),
            stale: true,
            blit_src: std::cell::Cell::new(None),
            stats: PresentStats {
                mode: config.mode,
                ..PresentStats::default()
            },
            surface,
        };
        for _ in 0..config.frames_in_flight {
            let s = me.semaphore()?;
            me.acquired.push(s);
        }
        me.rebuild()?;
        Ok(me)
    }

    /// The figures so far.
    pub fn stats(&self) -> PresentStats {
        self.stats
    }

    /// The images' format.
    pub fn format(&self) -> vk::Format {
        self.format
    }

    /// Tells the swapchain the window's new size (from the window's resize event): it is
    /// rebuilt before the next acquire. X11 reports `OUT_OF_DATE` on its own; this makes the
    /// rebuild happen on the first frame after the event on every platform.
    pub fn resized(&mut self, width: u32, height: u32) {
        self.extent_hint = (width, height);
        if (width, height) != (self.extent.width, self.extent.height) {
            self.stale = true;
        }
    }

    /// Asks for another present mode; the swapchain is rebuilt before the next acquire.
    pub fn set_mode(&mut self, mode: PresentMode) {
        if mode != self.wanted {
            self.wanted = mode;
            self.stale = true;
        }
    }

    /// Step 1 of the module docs: an image to draw into, or `None` when the window has no area
    /// (minimised): present nothing this frame. `slot` is the frame ring's slot, whose fence the
    /// ring has already waited for.
    pub fn acquire(&mut self, slot: u32) -> Result<Option<AcquiredImage>, GpuError> {
        let Some(&wait) = self.acquired.get(slot as usize) else {
            return Err(GpuError::BadInput {
                what: "slot",
                why: format!(
                    "slot {slot} of {} frames in flight: pass the frame ring's slot",
                    self.acquired.len()
                ),
            });
        };
        for attempt in 0..2 {
            if self.stale && !self.rebuild()? {
                self.stats.skipped_minimised += 1;
                return Ok(None);
            }
            let t0 = monotonic_ns();
            // SAFETY: the swapchain and semaphore belong to this device; `wait` is unsignalled
            // with no pending signal: its last signal was waited on by the submit of slot
            // `slot`'s previous frame, whose fence the ring waited for (module docs, step 1), or
            // its last acquire failed (which signals nothing).
            let r = unsafe {
                self.loader.acquire_next_image(
                    self.handle,
                    ACQUIRE_TIMEOUT.as_nanos() as u64,
                    wait,
                    vk::Fence::null(),
                )
            };
            self.stats.last_acquire_start_ns = t0;
            self.stats.last_acquire_wait_ns = monotonic_ns().saturating_sub(t0);
            match r {
                Ok((index, suboptimal)) => {
                    if suboptimal {
                        self.stats.suboptimal += 1;
                        self.stale = true;
                    }
                    return Ok(Some(AcquiredImage {
                        index,
                        image: self.images[index as usize],
                        extent: self.extent,
                        wait,
                        signal: self.ready[index as usize],
                    }));
                }
                Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                    self.stats.out_of_date += 1;
                    self.stale = true;
                    if attempt == 1 {
                        // Out of date right after a rebuild: the window is still changing (a
                        // drag resize); present nothing now and rebuild next frame.
                        self.stats.skipped_stale += 1;
                        return Ok(None);
                    }
                }
                Err(vk::Result::TIMEOUT) | Err(vk::Result::NOT_READY) => {
                    return Err(GpuError::Timeout {
                        call: "vkAcquireNextImageKHR",
                        waited_ms: ACQUIRE_TIMEOUT.as_millis() as u64,
                    })
                }
                Err(e) => return Err(vk_err("vkAcquireNextImageKHR")(e)),
            }
        }
        // Unreachable: the second attempt returns from the loop.
        Ok(None)
    }

    /// Step 2: records the copy of `src` (in `TRANSFER_SRC_OPTIMAL`, `src_extent` pixels of
    /// `src_format`, made with `TRANSFER_SRC` usage) into the acquired image: cleared to `clear`, the
    /// picture scaled to fit with its aspect kept and centred, then made ready to present.
    ///
    /// Errors: [`GpuError::BadInput`] when `src_format` cannot be a blit source (nothing is
    /// recorded then).
    pub fn record_copy_in(
        &self,
        cmd: vk::CommandBuffer,
        img: &AcquiredImage,
        src: vk::Image,
        src_extent: vk::Extent2D,
        src_format: vk::Format,
        clear: [f32; 4],
    ) -> Result<(), GpuError> {
        let filter = match self.blit_src.get() {
            Some((f, filter)) if f == src_format => filter,
            _ => {
                let features = self.format_features(src_format);
                if !features.contains(vk::FormatFeatureFlags::BLIT_SRC) {
                    return Err(GpuError::BadInput {
                        what: "src_format",
                        why: format!(
                            "{src_format:?} cannot be a blit source on this device: render the \
                             picture in a format with BLIT_SRC (e.g. R8G8B8A8_UNORM)"
                        ),
                    });
                }
                let filter =
                    if features.contains(vk::FormatFeatureFlags::SAMPLED_IMAGE_FILTER_LINEAR) {
                        vk::Filter::LINEAR
                    } else {
                        vk::Filter::NEAREST
                    };
                self.blit_src.set(Some((src_format, filter)));
                filter
            }
        };
        let d = &self.gpu.shared.device;
        let range = vk::ImageSubresourceRange {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            base_mip_level: 0,
            level_count: 1,
            base_array_layer: 0,
            layer_count: 1,
        };
        let barrier = |src: vk::AccessFlags,
                       dst: vk::AccessFlags,
                       old: vk::ImageLayout,
                       new: vk::ImageLayout| {
            vk::ImageMemoryBarrier::default()
                .src_access_mask(src)
                .dst_access_mask(dst)
                .old_layout(old)
                .new_layout(new)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .image(img.image)
                .subresource_range(range)
        };
        let (write, dst) = (
            vk::AccessFlags::TRANSFER_WRITE,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
        );
        let to_dst = barrier(
            vk::AccessFlags::empty(),
            write,
            vk::ImageLayout::UNDEFINED,
            dst,
        );
        let clear_between = barrier(write, write, dst, dst);
        let to_present = barrier(
            write,
            vk::AccessFlags::empty(),
            dst,
            vk::ImageLayout::PRESENT_SRC_KHR,
        );
        let dst_rect = fit(src_extent, img.extent);
        let layers = vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        };
        let blit = vk::ImageBlit {
            src_subresource: layers,
            src_offsets: [
                vk::Offset3D::default(),
                vk::Offset3D {
                    x: src_extent.width as i32,
                    y: src_extent.height as i32,
                    z: 1,
                },
            ],
            dst_subresource: layers,
            dst_offsets: dst_rect,
        };
        // SAFETY: `cmd` is recording (the caller's frame); the image was acquired for this
        // frame and the submit waits on `img.wait` at the transfer stage, which the first
        // barrier's source stage (TRANSFER) chains to, so no write starts before the
        // presentation engine released the image. `src` is in TRANSFER_SRC_OPTIMAL with its
        // writes made visible to transfer reads by the caller (a render pass's external
        // dependency). Clear-then-blit both write at the transfer stage, ordered by the middle
        // barrier. The last barrier hands the image to the present (which waits on the
        // submit's signal semaphore, so no access mask is needed on the destination side).
        unsafe {
            // A barrier after transfer-stage work (the acquire's wait stage, the clear, the
            // blit), before `dst_stage`.
            let transfer_barrier = |b: vk::ImageMemoryBarrier<'_>, dst_stage| {
                d.cmd_pipeline_barrier(
                    cmd,
                    vk::PipelineStageFlags::TRANSFER,
                    dst_stage,
                    vk::DependencyFlags::empty(),
                    &[],
                    &[],
                    &[b],
                )
            };
            transfer_barrier(to_dst, vk::PipelineStageFlags::TRANSFER);
            d.cmd_clear_color_image(
                cmd,
                img.image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &vk::ClearColorValue { float32: clear },
                &[range],
            );
            transfer_barrier(clear_between, vk::PipelineStageFlags::TRANSFER);
            d.cmd_blit_image(
                cmd,
                src,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                img.image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &[blit],
                filter,
            );
            transfer_barrier(to_present, vk::PipelineStageFlags::BOTTOM_OF_PIPE);
        }
        Ok(())
    }

    /// The optimal-tiling features of `format` on this device (a property query).
    fn format_features(&self, format: vk::Format) -> vk::FormatFeatureFlags {
        // SAFETY: a plain property query on a valid physical device.
        unsafe {
            self.gpu
                .shared
                .instance
                .get_physical_device_format_properties(self.gpu.shared.physical, format)
        }
        .optimal_tiling_features
    }

    /// Step 4: presents `img` (its submit signals `img.signal`). A stale result
    /// (`OUT_OF_DATE`, `SUBOPTIMAL`) rebuilds the swapchain before the next acquire.
    pub fn present(&mut self, img: &AcquiredImage) -> Result<(), GpuError> {
        let waits = [img.signal];
        let chains = [self.handle];
        let indices = [img.index];
        let info = vk::PresentInfoKHR::default()
            .wait_semaphores(&waits)
            .swapchains(&chains)
            .image_indices(&indices);
        let t0 = monotonic_ns();
        let r = {
            let queue = self.gpu.shared.queue();
            // SAFETY: the queue is locked (external synchronisation); the image was acquired
            // from this swapchain and its submit signals `img.signal`, queued before this call.
            unsafe { self.loader.queue_present(*queue, &info) }
        };
        match r {
            Ok(suboptimal) => {
                if suboptimal {
                    self.stats.suboptimal += 1;
                    self.stale = true;
                }
            }
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                // The present was queued (its semaphore wait consumed) but not shown: not
                // counted as presented, not an interval.
                self.stats.out_of_date += 1;
                self.stale = true;
                return Ok(());
            }
            Err(e) => {
                // Not queued: `ready[index]` stays signalled and the image acquired.
                self.abandon(img, true);
                return Err(vk_err("vkQueuePresentKHR")(e));
            }
        }
        let now = monotonic_ns();
        if self.stats.last_present_ns != 0 {
            self.stats.last_interval_ns = now.saturating_sub(self.stats.last_present_ns);
        }
        self.stats.last_present_ns = now;
        self.stats.last_present_start_ns = t0;
        self.stats.presented += 1;
        Ok(())
    }

    /// Gives up `img` after an error between [`acquire`](Self::acquire) and a queued
    /// [`present`](Self::present) (a failed record or submit, or a present that was not
    /// queued): its acquire semaphore may be signalled with no wait queued, and (when
    /// `presented_failed`) its ready semaphore signalled with no present to wait on it. Waits for
    /// the device, makes both semaphores anew, and rebuilds the swapchain before the next
    /// acquire, which retires the image still held. Cold path: errors only.
    pub fn abandon(&mut self, img: &AcquiredImage, present_failed: bool) {
        self.stats.abandoned += 1;
        self.stale = true;
        if let Err(e) = self.gpu.wait_idle() {
            tracing::warn!(error = %e, "waiting for the device before abandoning a frame");
        }
        let d = &self.gpu.shared.device;
        let renew = |old: vk::Semaphore| -> Option<vk::Semaphore> {
            // SAFETY: the device is idle, so no queued operation uses `old`; it is replaced in
            // its slot before anything can use it again.
            unsafe { d.destroy_semaphore(old, None) };
            // SAFETY: plain creation on a valid device.
            unsafe { d.create_semaphore(&vk::SemaphoreCreateInfo::default(), None) }.ok()
        };
        if let Some(slot) = self.acquired.iter().position(|&s| s == img.wait) {
            match renew(img.wait) {
                Some(s) => self.acquired[slot] = s,
                None => tracing::warn!("could not make an acquire semaphore anew"),
            }
        }
        if present_failed {
            if let Some(i) = self.ready.iter().position(|&s| s == img.signal) {
                match renew(img.signal) {
                    Some(s) => self.ready[i] = s,
                    None => tracing::warn!("could not make a present semaphore anew"),
                }
            }
        }
    }

    fn semaphore(&self) -> Result<vk::Semaphore, GpuError> {
        // SAFETY: plain creation on a valid device.
        unsafe {
            self.gpu
                .shared
                .device
                .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
        }
        .map_err(vk_err("vkCreateSemaphore"))
    }

    /// Builds (or rebuilds) the swapchain for the surface as it is now. `Ok(false)`: the window
    /// has no area; nothing was built and the swapchain stays stale.
    fn rebuild(&mut self) -> Result<bool, GpuError> {
        let offer = self.surface.query()?;
        let Some(c) = choose(&offer, self.extent_hint, self.wanted, |f| {
            self.format_features(f)
        })?
        else {
            return Ok(false);
        };
        let (extent, format, mode, count, alpha, caps) =
            (c.extent, c.format, c.mode, c.count, c.alpha, offer.caps);
        self.gpu.wait_idle()?;
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(self.surface.raw())
            .min_image_count(count)
            .image_format(format.format)
            .image_color_space(format.color_space)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(vk::ImageUsageFlags::TRANSFER_DST)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(caps.current_transform)
            .composite_alpha(alpha)
            .present_mode(mode.vk())
            .clipped(true)
            .old_swapchain(self.handle);
        // SAFETY: the device is idle (waited above), so nothing uses the old swapchain, its
        // images or the per-image semaphores any more; the surface is alive and was checked to
        // support this family at device creation; `info` lives across the call.
        unsafe {
            let new = match self.loader.create_swapchain(&info, None) {
                Ok(new) => new,
                Err(e) => {
                    // The old swapchain is retired even when creation fails: it may not be
                    // passed as `oldSwapchain` again. Destroy it (the device is idle) and start
                    // the next rebuild from nothing.
                    if self.handle != vk::SwapchainKHR::null() {
                        self.loader.destroy_swapchain(self.handle, None);
                        self.handle = vk::SwapchainKHR::null();
                        self.images.clear();
                    }
                    return Err(vk_err("vkCreateSwapchainKHR")(e));
                }
            };
            if self.handle != vk::SwapchainKHR::null() {
                self.loader.destroy_swapchain(self.handle, None);
                self.stats.recreated += 1;
            }
            self.handle = new;
            self.images = self
                .loader
                .get_swapchain_images(new)
                .map_err(vk_err("vkGetSwapchainImagesKHR"))?;
            for s in self.ready.drain(..) {
                self.gpu.shared.device.destroy_semaphore(s, None);
            }
        }
        for _ in 0..self.images.len() {
            let s = self.semaphore()?;
            self.ready.push(s);
        }
        self.format = format.format;
        self.extent = extent;
        self.stale = false;
        self.stats.mode = mode;
        self.stats.extent = (extent.width, extent.height);
        tracing::debug!(width = extent.width, height = extent.height, %mode,
            images = self.images.len(), "swapchain built");
        Ok(true)
    }
}

/// The largest rectangle of `src`'s aspect that fits in `dst`, centred.
fn fit(src: vk::Extent2D, dst: vk::Extent2D) -> [vk::Offset3D; 2] {
    let (sw, sh) = (u64::from(src.width.max(1)), u64::from(src.height.max(1)));
    let (dw, dh) = (u64::from(dst.width), u64::from(dst.height));
    // Width-limited when dw/dh < sw/sh.
    let (w, h) = if dw * sh <= dh * sw {
        (dw, (dw * sh / sw).max(1))
    } else {
        ((dh * sw / sh).max(1), dh)
    };
    let x = (dw - w) / 2;
    let y = (dh - h) / 2;
    [
        vk::Offset3D {
            x: x as i32,
            y: y as i32,
            z: 0,
        },
        vk::Offset3D {
            x: (x + w) as i32,
            y: (y + h) as i32,
            z: 1,
        },
    ]
}

impl Drop for Swapchain {
    fn drop(&mut self) {
        if let Err(e) = self.gpu.wait_idle() {
            tracing::warn!(error = %e, "waiting for the device before destroying the swapchain");
        }
        let d = &self.gpu.shared.device;
        // SAFETY: the device is idle (or lost, where destroying is still allowed); each handle
        // is destroyed once; the swapchain goes before its surface (a field, dropped after).
        unsafe {
            for s in self.acquired.drain(..).chain(self.ready.drain(..)) {
                d.destroy_semaphore(s, None);
            }
            if self.handle != vk::SwapchainKHR::null() {
                self.loader.destroy_swapchain(self.handle, None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(width: u32, height: u32) -> vk::Extent2D {
        vk::Extent2D { width, height }
    }

    #[test]
    fn the_picture_fits_centred_with_its_aspect_kept() {
        // A square into a wide window: full height, centred horizontally.
        let [a, b] = fit(ext(512, 512), ext(800, 600));
        assert_eq!((a.x, a.y, b.x, b.y), (100, 0, 700, 600));
        // Into a tall window: full width, centred vertically.
        let [a, b] = fit(ext(512, 512), ext(300, 700));
        assert_eq!((a.x, a.y, b.x, b.y), (0, 200, 300, 500));
        // Same aspect: the whole image.
        let [a, b] = fit(ext(256, 128), ext(1024, 512));
        assert_eq!((a.x, a.y, b.x, b.y), (0, 0, 1024, 512));
        // A 1-pixel window still gets a 1-pixel picture.
        let [a, b] = fit(ext(512, 512), ext(1, 1));
        assert_eq!((b.x - a.x, b.y - a.y), (1, 1));
    }
}
