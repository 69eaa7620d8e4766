//! Textures: decoded RGBA8 images uploaded to device-local GPU images through the frame's own
//! command buffer.
//!
//! Owns: the texture images, the queue of uploads not yet recorded, and one reusable staging
//! buffer per frame slot. Must never: wait on the GPU to upload (an upload rides the next frame's
//! command buffer), drop a staging buffer per upload (a destroy waits for the device to go
//! idle), or let a shader see an image before its copy and layout change are recorded.
//!
//! # Protocol
//! 1. [`TextureStore::queue`] (render lane, any time) checks the input, creates the image
//!    (layout `UNDEFINED`) and queues the pixels; the texture is not resident yet.
//! 2. [`TextureStore::record_uploads`] (inside a frame, after the ring waited the slot's fence):
//!    packs queued pixels into the slot's staging buffer (grown, rarely, to fit the largest
//!    image), and for each records `UNDEFINED -> TRANSFER_DST_OPTIMAL`, the buffer-to-image copy,
//!    then `TRANSFER_DST_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL` for fragment shaders. What does
//!    not fit waits for the next frame. The staging bytes are reused only after that slot's
//!    fence is waited again, so the GPU has finished reading them.
//! 3. A resident texture stays in `SHADER_READ_ONLY_OPTIMAL`. [`TextureStore::record_read`]
//!    (tests, tools) moves it to `TRANSFER_SRC_OPTIMAL`, copies it out and moves it back.

use std::collections::VecDeque;

use ash::vk;
use gpu_allocator::MemoryLocation;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::frames::Recording;
use crate::memory::{color_range, GpuBuffer, GpuImage};

/// Texture pixel format: 8-bit RGBA, stored as given (no sRGB decode).
pub const TEXTURE_FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;

/// Largest side accepted: 4096, the `maxImageDimension2D` every Vulkan device must support.
pub const MAX_TEXTURE_SIDE: u32 = 4096;

/// Staging bytes per frame slot at first use (a 512x512 RGBA8 image); grown to fit a larger one.
const INITIAL_STAGING: u64 = 1 << 20;

/// Offset alignment of each image inside the staging buffer (a multiple of the texel size 4 and
/// of every device's `optimalBufferCopyOffsetAlignment` in practice).
const STAGING_ALIGN: u64 = 256;

/// A texture's index in its renderer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TextureId(pub u32);

struct Texture {
    image: GpuImage,
    resident: bool,
}

/// Records a copy of `image` into `dst`, between barriers: shader reads before the copy, then
/// the image back to `SHADER_READ_ONLY` and the buffer to the host.
///
/// # Safety
/// `rec` is recording, outside a render pass; `image` is resident (its upload was recorded
/// earlier in this or a previous submission on the same queue and left it in
/// `SHADER_READ_ONLY_OPTIMAL` through a barrier whose second scope is the fragment stage);
/// `dst` holds the whole image.
unsafe fn record_readback(gpu: &Gpu, rec: &Recording, image: &GpuImage, dst: &GpuBuffer) {
    let extent = image.extent();
    let d = &gpu.shared.device;
    let cmd = rec.cmd();
    let img = image.raw();
    let to_src = image_barrier(
        img,
        vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
        vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
        // The upload's own barrier made its copy's writes available (and chains into this
        // one through the fragment stage): only shader reads are left to order here, and
        // an access the old layout cannot have is what best practices reports.
        vk::AccessFlags::SHADER_READ,
        vk::AccessFlags::TRANSFER_READ,
    );
    let back = image_barrier(
        img,
        vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
        vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
        vk::AccessFlags::TRANSFER_READ,
        vk::AccessFlags::SHADER_READ,
    );
    let to_host = vk::BufferMemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::HOST_READ)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .buffer(dst.raw())
        .offset(0)
        .size(vk::WHOLE_SIZE);
    // SAFETY: the caller's contract. `rec` is recording, outside a render pass. The texture is resident, so its
    // upload was recorded earlier in this or a previous submission on the same queue and
    // left it in SHADER_READ_ONLY_OPTIMAL through a barrier whose second scope is the
    // fragment stage; the first barrier here chains after it (fragment stage in its first
    // scope) and orders any shader read before this read. `dst` holds the whole image.
    unsafe {
        d.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::FRAGMENT_SHADER,
            vk::PipelineStageFlags::TRANSFER,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &[to_src],
        );
        d.cmd_copy_image_to_buffer(
            cmd,
            img,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            dst.raw(),
            &[copy_region(0, extent)],
        );
        d.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::FRAGMENT_SHADER | vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &[],
            &[to_host],
            &[back],
        );
    }
}

/// Records one image's upload into `rec`: `UNDEFINED -> TRANSFER_DST`, the copy from
/// `staging` at `offset`, then `-> SHADER_READ_ONLY` for the fragment shader.
///
/// # Safety
/// `rec` is recording, outside a render pass; `image` was never used (layout `UNDEFINED`,
/// contents discarded by design); `staging[offset..]` holds the image's width * height * 4
/// bytes and no pending GPU work reads it.
unsafe fn record_upload(
    gpu: &Gpu,
    rec: &Recording,
    staging: vk::Buffer,
    image: &GpuImage,
    offset: u64,
) {
    let d = &gpu.shared.device;
    let cmd = rec.cmd();
    let to_dst = image_barrier(
        image.raw(),
        vk::ImageLayout::UNDEFINED,
        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
        vk::AccessFlags::empty(),
        vk::AccessFlags::TRANSFER_WRITE,
    );
    let to_read = image_barrier(
        image.raw(),
        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
        vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
        vk::AccessFlags::TRANSFER_WRITE,
        vk::AccessFlags::SHADER_READ,
    );
    // SAFETY: the caller's contract: `rec` records outside a render pass, the image is unused
    // and the staging range is the image's bytes, read by no pending GPU work.
    unsafe {
        d.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::TOP_OF_PIPE,
            vk::PipelineStageFlags::TRANSFER,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &[to_dst],
        );
        d.cmd_copy_buffer_to_image(
            cmd,
            staging,
            image.raw(),
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            &[copy_region(offset, image.extent())],
        );
        d.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::FRAGMENT_SHADER,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &[to_read],
        );
    }
}

/// Every texture of a renderer (see the module protocol).
pub struct TextureStore {
    textures: Vec<Texture>,
    pending: VecDeque<(usize, Vec<u8>)>,
    staging: Vec<Option<GpuBuffer>>,
    uploaded_bytes: u64,
}

impl TextureStore {
    /// A store for `slots` frames in flight.
    pub fn new(slots: usize) -> Self {
        TextureStore {
            textures: Vec::new(),
            pending: VecDeque::new(),
            staging: (0..slots).map(|_| None).collect(),
            uploaded_bytes: 0,
        }
    }

    /// Step 1. Errors: [`GpuError::BadInput`] for an empty or oversized image or a pixel buffer
    /// of the wrong length; a driver or allocator error creating the image.
    pub fn queue(
        &mut self,
        gpu: &Gpu,
        width: u32,
        height: u32,
        rgba: &[u8],
    ) -> Result<TextureId, GpuError> {
        let bad = |why: String| {
            Err(GpuError::BadInput {
                what: "texture",
                why,
            })
        };
        if width == 0 || height == 0 || width > MAX_TEXTURE_SIDE || height > MAX_TEXTURE_SIDE {
            return bad(format!(
                "a {width}x{height} image: each side must be 1..={MAX_TEXTURE_SIDE} pixels; \
                 split or downscale larger images"
            ));
        }
        let expected = u64::from(width) * u64::from(height) * 4;
        if rgba.len() as u64 != expected {
            return bad(format!(
                "{} bytes of pixels for {width}x{height} RGBA8 (expected {expected}): pass \
                 row-major RGBA8, 4 bytes a pixel",
                rgba.len()
            ));
        }
        let image = GpuImage::new_color(
            gpu,
            "texture",
            vk::Extent2D { width, height },
            TEXTURE_FORMAT,
            vk::ImageUsageFlags::TRANSFER_DST
                | vk::ImageUsageFlags::TRANSFER_SRC
                | vk::ImageUsageFlags::SAMPLED,
        )?;
        let index = self.textures.len();
        self.textures.push(Texture {
            image,
            resident: false,
        });
        self.pending.push_back((index, rgba.to_vec()));
        Ok(TextureId(index as u32))
    }

    /// Textures created.
    pub fn len(&self) -> usize {
        self.textures.len()
    }

    /// Whether no texture was created.
    pub fn is_empty(&self) -> bool {
        self.textures.is_empty()
    }

    /// Textures whose upload has been recorded (resident once that frame completes).
    pub fn resident(&self) -> usize {
        self.textures.iter().filter(|t| t.resident).count()
    }

    /// Uploads queued and not yet recorded.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Pixel bytes whose upload has been recorded.
    pub fn uploaded_bytes(&self) -> u64 {
        self.uploaded_bytes
    }

    /// The size of texture `id`, if it exists.
    pub fn extent(&self, id: TextureId) -> Option<vk::Extent2D> {
        self.textures.get(id.0 as usize).map(|t| t.image.extent())
    }

    /// Whether `id` names a texture of this store whose upload has been recorded.
    pub fn is_resident(&self, id: TextureId) -> bool {
        self.textures.get(id.0 as usize).is_some_and(|t| t.resident)
    }

    /// Step 2, into frame `rec` of `slot` (whose fence the ring has waited).
    pub fn record_uploads(
        &mut self,
        gpu: &Gpu,
        rec: &Recording,
        slot: usize,
    ) -> Result<(), GpuError> {
        let Some((_, first)) = self.pending.front() else {
            return Ok(());
        };
        let need = (first.len() as u64).max(INITIAL_STAGING);
        self.ensure_staging(gpu, slot, need)?;
        let Some(staging) = self.staging[slot].as_mut() else {
            return Ok(());
        };
        let capacity = staging.size();
        let raw = staging.raw();
        let Some(bytes) = staging.mapped_mut() else {
            return Err(crate::error::unmapped());
        };
        let mut offset = 0u64;
        while let Some((index, pixels)) = self.pending.front() {
            let len = pixels.len() as u64;
            if offset + len > capacity {
                break; // the rest goes with the next frame
            }
            bytes[offset as usize..(offset + len) as usize].copy_from_slice(pixels);
            // SAFETY: the staging range [offset, offset + len) lies inside the buffer, holds
            // exactly the image's width * height * 4 bytes, and is not read by any pending GPU
            // work: the ring waited this slot's fence before this frame, and this frame writes
            // each byte range once. The image was created by this store and never used.
            unsafe { record_upload(gpu, rec, raw, &self.textures[*index].image, offset) };
            self.textures[*index].resident = true;
            self.uploaded_bytes += len;
            offset = (offset + len).div_ceil(STAGING_ALIGN) * STAGING_ALIGN;
            self.pending.pop_front();
        }
        Ok(())
    }

    /// Slot `slot`'s staging buffer holds at least `need` bytes (rare: the first upload of the
    /// slot, or an image larger than any before, makes a new one of the next power of two).
    fn ensure_staging(&mut self, gpu: &Gpu, slot: usize, need: u64) -> Result<(), GpuError> {
        let have = self.staging[slot].as_ref().map_or(0, GpuBuffer::size);
        if have < need {
            self.staging[slot] = None;
            self.staging[slot] = Some(GpuBuffer::new(
                gpu,
                "texture staging",
                need.next_power_of_two(),
                vk::BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::CpuToGpu,
            )?);
        }
        Ok(())
    }

    /// Step 3: records a copy of resident texture `id` into `dst` (at least width * height * 4
    /// bytes, host-visible), followed by a barrier for the host read. Errors: an unknown or
    /// not-yet-resident texture.
    pub fn record_read(
        &self,
        gpu: &Gpu,
        rec: &Recording,
        id: TextureId,
        dst: &GpuBuffer,
    ) -> Result<(), GpuError> {
        let Some(t) = self.textures.get(id.0 as usize).filter(|t| t.resident) else {
            return Err(GpuError::BadInput {
                what: "texture",
                why: format!(
                    "texture {} is unknown or not uploaded yet: use an id from \
                     upload_texture and render (or read) a frame first",
                    id.0
                ),
            });
        };
        let extent = t.image.extent();
        if dst.size() < u64::from(extent.width) * u64::from(extent.height) * 4 {
            return Err(GpuError::BadInput {
                what: "texture readback",
                why: "the destination buffer is smaller than the image".into(),
            });
        }
        // SAFETY: `rec` is recording, outside a render pass; the texture is resident (checked
        // above) and `dst` holds the whole image (checked above).
        unsafe { record_readback(gpu, rec, &t.image, dst) };
        Ok(())
    }
}

fn image_barrier(
    image: vk::Image,
    from: vk::ImageLayout,
    to: vk::ImageLayout,
    src: vk::AccessFlags,
    dst: vk::AccessFlags,
) -> vk::ImageMemoryBarrier<'static> {
    vk::ImageMemoryBarrier::default()
        .old_layout(from)
        .new_layout(to)
        .src_access_mask(src)
        .dst_access_mask(dst)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(color_range())
}

/// The whole of a single-mip, single-layer colour image at `buffer_offset`, tightly packed.
pub fn copy_region(buffer_offset: u64, extent: vk::Extent2D) -> vk::BufferImageCopy {
    vk::BufferImageCopy {
        buffer_offset,
        buffer_row_length: 0,
        buffer_image_height: 0,
        image_subresource: vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        },
        image_offset: vk::Offset3D { x: 0, y: 0, z: 0 },
        image_extent: vk::Extent3D {
            width: extent.width,
            height: extent.height,
            depth: 1,
        },
    }
}
