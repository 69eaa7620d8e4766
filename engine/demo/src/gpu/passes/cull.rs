//! The culling compute pass: SoA positions in, compacted visible indices and the indirect
//! draw's instance count out (`shaders/cull.wgsl`).
//!
//! Owns: the compute pipeline and recording one dispatch with the barriers around it. Must
//! never: read back the count on the CPU (the draw consumes it indirectly).

use ash::vk;

use super::super::shaders::CULL;
use super::{PassLayout, ViewParams};
use lanegraph::vk::error::{vk_err, GpuError};
use lanegraph::vk::shaders::ShaderModule;
use lanegraph::vk::Gpu;
use lanegraph::vk::Recording;

/// Invocations per workgroup (`@workgroup_size(64)` in the shader).
pub const WORKGROUP: u32 = 64;

/// The compute pipeline.
pub struct CullPass {
    device: ash::Device,
    /// Keeps the device alive until this pass's `Drop` has destroyed its objects (a pass may
    /// outlive the `Gpu` it was made from: dropping the `Gpu` first used to destroy the device
    /// under it and segfault in `vkDestroyPipeline`).
    _gpu: Gpu,
    pipeline: vk::Pipeline,
}

impl CullPass {
    /// Builds the pipeline against `layout`.
    pub(crate) fn new(gpu: &Gpu, layout: &PassLayout) -> Result<CullPass, GpuError> {
        let module = ShaderModule::new(gpu, &CULL)?;
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module.raw)
            .name(c"cull");
        let info = vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(layout.pipeline_layout);
        let device = gpu.device().clone();
        // SAFETY: module and layout are valid; the layout matches the shader's interface.
        let pipeline =
            unsafe { device.create_compute_pipelines(vk::PipelineCache::null(), &[info], None) }
                .map_err(|(_, r)| vk_err("vkCreateComputePipelines")(r))?[0];
        Ok(CullPass {
            device,
            pipeline,
            _gpu: gpu.clone(),
        })
    }

    /// Records: zero the indirect args (`vertex_count` 4, `instance_count` 0), barrier, dispatch
    /// over `params.count`, barrier so the draw sees the count and the indices.
    pub fn record(
        &self,
        rec: &Recording,
        layout: &PassLayout,
        set: vk::DescriptorSet,
        indirect: vk::Buffer,
        params: &ViewParams,
    ) {
        let d = &self.device;
        let cmd = rec.cmd();
        let init = super::indirect_args(0);
        let to_compute = vk::BufferMemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .buffer(indirect)
            .offset(0)
            .size(vk::WHOLE_SIZE);
        let to_draw = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_WRITE)
            .dst_access_mask(vk::AccessFlags::INDIRECT_COMMAND_READ | vk::AccessFlags::SHADER_READ);
        // SAFETY: `rec` is recording, outside a render pass; the buffers and set belong to this
        // frame slot, whose previous use finished (the ring waited its fence); 16 bytes at
        // offset 0 fit the 16-byte indirect buffer (update size and offset multiples of 4).
        unsafe {
            d.cmd_update_buffer(cmd, indirect, 0, &init);
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::DependencyFlags::empty(),
                &[],
                &[to_compute],
                &[],
            );
            if params.count > 0 {
                layout.bind(
                    cmd,
                    vk::PipelineBindPoint::COMPUTE,
                    self.pipeline,
                    set,
                    params,
                );
                d.cmd_dispatch(cmd, params.count.div_ceil(WORKGROUP), 1, 1);
            }
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::DRAW_INDIRECT | vk::PipelineStageFlags::VERTEX_SHADER,
                vk::DependencyFlags::empty(),
                &[to_draw],
                &[],
                &[],
            );
        }
    }
}

impl Drop for CullPass {
    fn drop(&mut self) {
        // SAFETY: dropped after every frame using it finished (renderer field order).
        unsafe { self.device.destroy_pipeline(self.pipeline, None) };
    }
}
