//! The headless passes: culling (compute) and particles (render), and what they share.
//!
//! Owns: [`ViewParams`] (the push-constant block both shaders read), the descriptor-set and
//! pipeline layouts, and the descriptor pool. Must never: record commands outside a
//! [`Recording`](crate::frames::Recording) or create pipelines per frame.
//!
//! # Bindings (set 0, one set per frame slot, written once at creation)
//! | binding | buffer | cull | particles |
//! |---|---|---|---|
//! | 0 | `xs` (f32, SoA column) | read | read (vertex) |
//! | 1 | `ys` | read | read (vertex) |
//! | 2 | `visible` (u32 indices) | write | read (vertex) |
//! | 3 | `draw` (`VkDrawIndirectCommand`) | atomic add | — (read as indirect args) |

pub mod cull;
pub mod particles;

use ash::vk;

use lanegraph::vk::error::{vk_err, GpuError};
use lanegraph::vk::Gpu;

/// The push-constant block of `shaders/*.wgsl` (`struct View`), byte for byte: 48 bytes, the
/// WGSL struct's size (its `vec4` member makes it 16-byte aligned).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ViewParams {
    /// Particle colour, linear RGBA in 0..=1.
    pub color: [f32; 4],
    /// World-space point at the target's centre.
    pub center: [f32; 2],
    /// World-space half width and half height the target shows.
    pub half_extent: [f32; 2],
    /// Particle radius, world units.
    pub radius: f32,
    /// Particles in the SoA columns this frame.
    pub count: u32,
    /// Padding to the WGSL struct's 48 bytes.
    pub _pad: [u32; 2],
}

impl ViewParams {
    /// The bytes pushed.
    pub fn as_bytes(&self) -> [u8; 48] {
        let mut out = [0u8; 48];
        let words = [
            self.color[0].to_bits(),
            self.color[1].to_bits(),
            self.color[2].to_bits(),
            self.color[3].to_bits(),
            self.center[0].to_bits(),
            self.center[1].to_bits(),
            self.half_extent[0].to_bits(),
            self.half_extent[1].to_bits(),
            self.radius.to_bits(),
            self.count,
            0,
            0,
        ];
        for (chunk, w) in out.chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&w.to_ne_bytes());
        }
        out
    }
}

/// Stages that read the push constants.
pub const PUSH_STAGES: vk::ShaderStageFlags = vk::ShaderStageFlags::from_raw(
    vk::ShaderStageFlags::COMPUTE.as_raw()
        | vk::ShaderStageFlags::VERTEX.as_raw()
        | vk::ShaderStageFlags::FRAGMENT.as_raw(),
);

/// The 16 bytes of a `VkDrawIndirectCommand` drawing `instances` quads (a 4-vertex triangle
/// strip each, first vertex and instance 0): the cull pass resets it to 0 instances and counts
/// up; with culling off the renderer writes the whole count.
pub(crate) fn indirect_args(instances: u32) -> [u8; 16] {
    let mut args = [0u8; 16];
    args[..4].copy_from_slice(&4u32.to_ne_bytes());
    args[4..8].copy_from_slice(&instances.to_ne_bytes());
    args
}

/// Descriptor-set layout, pipeline layout and a pool of one set per frame slot.
pub struct PassLayout {
    device: ash::Device,
    /// Keeps the device alive until this pass's `Drop` has destroyed its objects (a pass may
    /// outlive the `Gpu` it was made from: dropping the `Gpu` first used to destroy the device
    /// under it and segfault in `vkDestroyPipeline`).
    _gpu: Gpu,
    /// Set 0's layout.
    pub set_layout: vk::DescriptorSetLayout,
    /// The pipeline layout both pipelines use (set 0 + the push constants).
    pub pipeline_layout: vk::PipelineLayout,
    /// The pool the per-slot sets come from.
    pub pool: vk::DescriptorPool,
    /// One set per frame slot.
    pub sets: Vec<vk::DescriptorSet>,
}

impl PassLayout {
    /// Layouts plus `slots` descriptor sets.
    pub(crate) fn new(gpu: &Gpu, slots: u32) -> Result<PassLayout, GpuError> {
        let device = gpu.device().clone();
        let cv = vk::ShaderStageFlags::COMPUTE | vk::ShaderStageFlags::VERTEX;
        let binding = |b: u32, stages| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(b)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(stages)
        };
        let bindings = [
            binding(0, cv),
            binding(1, cv),
            binding(2, cv),
            binding(3, vk::ShaderStageFlags::COMPUTE),
        ];
        let mut me = PassLayout {
            device,
            _gpu: gpu.clone(),
            set_layout: vk::DescriptorSetLayout::null(),
            pipeline_layout: vk::PipelineLayout::null(),
            pool: vk::DescriptorPool::null(),
            sets: Vec::new(),
        };
        let d = &me.device;
        // SAFETY: creation on a valid device; each handle lands in `me` right away so Drop
        // frees what exists if a later step fails.
        unsafe {
            me.set_layout = d
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                    None,
                )
                .map_err(vk_err("vkCreateDescriptorSetLayout"))?;
            let set_layouts = [me.set_layout];
            let ranges = [vk::PushConstantRange {
                stage_flags: PUSH_STAGES,
                offset: 0,
                size: std::mem::size_of::<ViewParams>() as u32,
            }];
            me.pipeline_layout = d
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default()
                        .set_layouts(&set_layouts)
                        .push_constant_ranges(&ranges),
                    None,
                )
                .map_err(vk_err("vkCreatePipelineLayout"))?;
            let sizes = [vk::DescriptorPoolSize {
                ty: vk::DescriptorType::STORAGE_BUFFER,
                descriptor_count: 4 * slots,
            }];
            me.pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(slots)
                        .pool_sizes(&sizes),
                    None,
                )
                .map_err(vk_err("vkCreateDescriptorPool"))?;
            let layouts = vec![me.set_layout; slots as usize];
            me.sets = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(me.pool)
                        .set_layouts(&layouts),
                )
                .map_err(vk_err("vkAllocateDescriptorSets"))?;
        }
        Ok(me)
    }

    /// Records binding `pipeline` at `point` with `set` and pushing `params`: what every pass
    /// records before its dispatch or draw.
    ///
    /// # Safety
    /// `cmd` is in the recording state (inside a render pass for a graphics pipeline, outside
    /// one for a compute pipeline), `pipeline` was made with this layout's pipeline layout, and
    /// `set` is one of [`PassLayout::sets`], not being updated while `cmd` is pending.
    pub(crate) unsafe fn bind(
        &self,
        cmd: vk::CommandBuffer,
        point: vk::PipelineBindPoint,
        pipeline: vk::Pipeline,
        set: vk::DescriptorSet,
        params: &ViewParams,
    ) {
        let d = &self.device;
        // SAFETY: the caller's contract above; the push range is PUSH_STAGES 0..48, the
        // pipeline layout's single range, and `params.as_bytes()` is 48 bytes.
        unsafe {
            d.cmd_bind_pipeline(cmd, point, pipeline);
            d.cmd_bind_descriptor_sets(cmd, point, self.pipeline_layout, 0, &[set], &[]);
            d.cmd_push_constants(
                cmd,
                self.pipeline_layout,
                PUSH_STAGES,
                0,
                &params.as_bytes(),
            );
        }
    }

    /// Points slot `slot`'s set at its buffers: `(buffer, offset, range)` for bindings 0..=3.
    pub fn write_set(&self, slot: usize, buffers: [(vk::Buffer, u64, u64); 4]) {
        let infos: [[vk::DescriptorBufferInfo; 1]; 4] = buffers.map(|(buffer, offset, range)| {
            [vk::DescriptorBufferInfo {
                buffer,
                offset,
                range,
            }]
        });
        let writes: Vec<vk::WriteDescriptorSet> = infos
            .iter()
            .enumerate()
            .map(|(b, info)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(self.sets[slot])
                    .dst_binding(b as u32)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(info)
            })
            .collect();
        // SAFETY: the set is not bound in any pending command buffer (called at creation).
        unsafe { self.device.update_descriptor_sets(&writes, &[]) };
    }
}

impl Drop for PassLayout {
    fn drop(&mut self) {
        // SAFETY: the owner drops this after every frame using it finished; the pool frees its
        // sets; null handles are no-ops.
        unsafe {
            self.device.destroy_descriptor_pool(self.pool, None);
            self.device
                .destroy_pipeline_layout(self.pipeline_layout, None);
            self.device
                .destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_params_match_the_wgsl_layout() {
        assert_eq!(std::mem::size_of::<ViewParams>(), 48);
        let v = ViewParams {
            color: [1.0, 0.5, 0.25, 1.0],
            center: [3.0, 4.0],
            half_extent: [5.0, 6.0],
            radius: 7.0,
            count: 9,
            _pad: [0; 2],
        };
        let b = v.as_bytes();
        let word =
            |i: usize| u32::from_ne_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
        assert_eq!(f32::from_bits(word(1)), 0.5);
        assert_eq!(f32::from_bits(word(4)), 3.0); // center at offset 16
        assert_eq!(f32::from_bits(word(6)), 5.0); // half_extent at 24
        assert_eq!(f32::from_bits(word(8)), 7.0); // radius at 32
        assert_eq!(word(9), 9); // count at 36
    }
}
