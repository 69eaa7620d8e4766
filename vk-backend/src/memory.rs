//! Buffers and images with their `gpu-allocator` allocations.
//!
//! Owns: creating a Vulkan buffer or image, allocating and binding its memory, and freeing both
//! in the right order on drop (the handle first, then its memory: the spec forbids freeing memory
//! a live resource is bound to being *used*, and destroying first makes that impossible).
//! Must never: outlive the device (each resource holds an `Arc` of the device's shared state),
//! be destroyed under the GPU (drop waits for the device to idle: drops are cold-path), or
//! panic when freeing fails (it is logged: the memory is then leaked until the device goes).

use std::sync::Arc;

use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;

use crate::context::{Gpu, Shared};
use crate::error::{alloc_err, vk_err, GpuError};

/// A buffer and its memory.
pub struct GpuBuffer {
    shared: Arc<Shared>,
    buffer: vk::Buffer,
    allocation: Option<Allocation>,
    size: u64,
    /// The allocation's name (the memory monitor counts churn by it).
    name: &'static str,
}

impl std::fmt::Debug for GpuBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuBuffer")
            .field("buffer", &self.buffer)
            .field("size", &self.size)
            .finish()
    }
}

impl GpuBuffer {
    /// Creates a buffer of `size` bytes for `usage` in `location` (`CpuToGpu` and `GpuToCpu`
    /// are persistently mapped). `name` labels the allocation in leak reports and errors.
    pub fn new(
        gpu: &Gpu,
        name: &'static str,
        size: u64,
        usage: vk::BufferUsageFlags,
        location: MemoryLocation,
    ) -> Result<GpuBuffer, GpuError> {
        if size == 0 {
            return Err(GpuError::BadInput {
                what: name,
                why: "a buffer of 0 bytes: ask for at least 1".into(),
            });
        }
        let shared = gpu.shared.clone();
        let device = &shared.device;
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid device and create info.
        let buffer =
            unsafe { device.create_buffer(&info, None) }.map_err(vk_err("vkCreateBuffer"))?;
        // SAFETY: `buffer` was just created from `device`.
        let requirements = unsafe { device.get_buffer_memory_requirements(buffer) };
        let allocation = shared.allocator().allocate(&AllocationCreateDesc {
            name,
            requirements,
            location,
            linear: true,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        });
        let allocation = match allocation {
            Ok(a) => {
                shared.ledger.allocated(name, a.size());
                a
            }
            Err(e) => {
                // SAFETY: unused, unbound buffer of this device.
                unsafe { device.destroy_buffer(buffer, None) };
                return Err(alloc_err(name)(e));
            }
        };
        // SAFETY: memory and offset come from an allocation made for these requirements; the
        // buffer has no memory bound yet.
        let bound =
            unsafe { device.bind_buffer_memory(buffer, allocation.memory(), allocation.offset()) };
        let out = GpuBuffer {
            name,
            shared: shared.clone(),
            buffer,
            allocation: Some(allocation),
            size,
        };
        bound.map_err(vk_err("vkBindBufferMemory"))?;
        Ok(out)
    }

    /// The Vulkan handle.
    pub fn raw(&self) -> vk::Buffer {
        self.buffer
    }

    /// Size in bytes as requested.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The mapped bytes (`CpuToGpu` / `GpuToCpu` buffers), `None` for device-only memory.
    /// Only the first [`size`](Self::size) bytes are the buffer's.
    pub fn mapped(&self) -> Option<&[u8]> {
        let size = self.size as usize;
        self.allocation
            .as_ref()
            .and_then(|a| a.mapped_slice())
            .map(|s| &s[..size.min(s.len())])
    }

    /// `len` mapped bytes from `offset`, and no more: for reading a range the GPU has finished
    /// writing while it may be writing other ranges of the same buffer (a slice over the whole
    /// mapping would alias memory the device is writing). `None` for device-only memory or a
    /// range outside the buffer.
    ///
    /// The caller must know the GPU has finished writing this range (a fence, or a frame slot
    /// the ring reports complete) and does not write it while the slice lives.
    pub fn mapped_range(&self, offset: usize, len: usize) -> Option<&[u8]> {
        let end = offset.checked_add(len)?;
        if end > self.size as usize {
            return None;
        }
        let base = self.allocation.as_ref()?.mapped_ptr()?.as_ptr() as *const u8;
        // SAFETY: checklist for the slice:
        // - `base` is the start of this allocation's persistent host mapping (gpu-allocator maps
        //   `CpuToGpu`/`GpuToCpu` memory for the allocation's life, which `&self` spans);
        // - `[offset, end)` lies inside the buffer's `size` bytes (checked above), which lie
        //   inside the mapping;
        // - the bytes are plain `u8` (any bit pattern is valid);
        // - the slice covers only this range: other ranges the device may be writing are not
        //   aliased, and the caller guarantees (documented above) this one is not written while
        //   the slice lives.
        Some(unsafe { std::slice::from_raw_parts(base.add(offset), len) })
    }

    /// The mapped bytes, writable.
    pub fn mapped_mut(&mut self) -> Option<&mut [u8]> {
        let size = self.size as usize;
        self.allocation
            .as_mut()
            .and_then(|a| a.mapped_slice_mut())
            .map(|s| {
                let n = size.min(s.len());
                &mut s[..n]
            })
    }
}

impl Drop for GpuBuffer {
    fn drop(&mut self) {
        self.shared.idle_before_destroy();
        // SAFETY: the device is idle, so no GPU work uses this buffer; it is destroyed before
        // its memory is freed.
        unsafe { self.shared.device.destroy_buffer(self.buffer, None) };
        if let Some(a) = self.allocation.take() {
            self.shared.ledger.freed(self.name, a.size());
            if let Err(e) = self.shared.allocator().free(a) {
                tracing::warn!(error = %e, "freeing a buffer allocation failed (leaked until teardown)");
            }
        }
    }
}

/// A 2D, single-mip, single-sample, optimally tiled image of `extent` and `format`, for
/// `usage`, starting `UNDEFINED`.
fn image_info(
    extent: vk::Extent2D,
    format: vk::Format,
    usage: vk::ImageUsageFlags,
) -> vk::ImageCreateInfo<'static> {
    vk::ImageCreateInfo::default()
        .image_type(vk::ImageType::TYPE_2D)
        .format(format)
        .extent(vk::Extent3D {
            width: extent.width,
            height: extent.height,
            depth: 1,
        })
        .mip_levels(1)
        .array_layers(1)
        .samples(vk::SampleCountFlags::TYPE_1)
        .tiling(vk::ImageTiling::OPTIMAL)
        .usage(usage)
        .sharing_mode(vk::SharingMode::EXCLUSIVE)
        .initial_layout(vk::ImageLayout::UNDEFINED)
}

/// A 2D colour image with its memory and one view.
pub struct GpuImage {
    shared: Arc<Shared>,
    image: vk::Image,
    view: vk::ImageView,
    allocation: Option<Allocation>,
    extent: vk::Extent2D,
    format: vk::Format,
    /// The allocation's name (the memory monitor counts churn by it).
    name: &'static str,
}

impl GpuImage {
    /// Creates a device-local 2D image (`usage` e.g. colour attachment + transfer source) and
    /// a colour view of it.
    pub fn new_color(
        gpu: &Gpu,
        name: &'static str,
        extent: vk::Extent2D,
        format: vk::Format,
        usage: vk::ImageUsageFlags,
    ) -> Result<GpuImage, GpuError> {
        if extent.width == 0 || extent.height == 0 {
            return Err(GpuError::BadInput {
                what: name,
                why: format!(
                    "{}x{} image: both sides must be at least 1",
                    extent.width, extent.height
                ),
            });
        }
        let shared = gpu.shared.clone();
        let device = &shared.device;
        let info = image_info(extent, format, usage);
        // SAFETY: valid device and create info.
        let image = unsafe { device.create_image(&info, None) }.map_err(vk_err("vkCreateImage"))?;
        // SAFETY: `image` was just created from `device`.
        let requirements = unsafe { device.get_image_memory_requirements(image) };
        let allocation = shared.allocator().allocate(&AllocationCreateDesc {
            name,
            requirements,
            location: MemoryLocation::GpuOnly,
            linear: false,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        });
        let allocation = match allocation {
            Ok(a) => {
                shared.ledger.allocated(name, a.size());
                a
            }
            Err(e) => {
                // SAFETY: unused, unbound image of this device.
                unsafe { device.destroy_image(image, None) };
                return Err(alloc_err(name)(e));
            }
        };
        let mut out = GpuImage {
            name,
            shared: shared.clone(),
            image,
            view: vk::ImageView::null(),
            allocation: Some(allocation),
            extent,
            format,
        };
        // SAFETY: reading the allocation's memory handle; it stays valid while `out` lives.
        let a = out
            .allocation
            .as_ref()
            .map(|a| (unsafe { a.memory() }, a.offset()));
        if let Some((memory, offset)) = a {
            // SAFETY: allocation made for this image's requirements; nothing bound yet.
            unsafe { device.bind_image_memory(image, memory, offset) }
                .map_err(vk_err("vkBindImageMemory"))?;
        }
        let view_info = vk::ImageViewCreateInfo::default()
            .image(image)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(format)
            .subresource_range(color_range());
        // SAFETY: the image is bound to memory and the view matches its format and range.
        out.view = unsafe { device.create_image_view(&view_info, None) }
            .map_err(vk_err("vkCreateImageView"))?;
        Ok(out)
    }

    /// The image handle.
    pub fn raw(&self) -> vk::Image {
        self.image
    }
    /// The colour view.
    pub fn view(&self) -> vk::ImageView {
        self.view
    }
    /// Width and height.
    pub fn extent(&self) -> vk::Extent2D {
        self.extent
    }
    /// The pixel format.
    pub fn format(&self) -> vk::Format {
        self.format
    }
}

impl Drop for GpuImage {
    fn drop(&mut self) {
        self.shared.idle_before_destroy();
        // SAFETY: the device is idle, so no GPU work uses the image; the view goes before the
        // image, the image before its memory; a null view is skipped.
        unsafe {
            if self.view != vk::ImageView::null() {
                self.shared.device.destroy_image_view(self.view, None);
            }
            self.shared.device.destroy_image(self.image, None);
        }
        if let Some(a) = self.allocation.take() {
            self.shared.ledger.freed(self.name, a.size());
            if let Err(e) = self.shared.allocator().free(a) {
                tracing::warn!(error = %e, "freeing an image allocation failed (leaked until teardown)");
            }
        }
    }
}

/// The whole colour subresource of a single-mip, single-layer image.
pub fn color_range() -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
    }
}
