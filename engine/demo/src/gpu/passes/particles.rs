//! The particle render pass: one instanced quad per visible particle into an offscreen colour
//! target (`shaders/particles.wgsl`).
//!
//! Owns: the render pass, the graphics pipeline and framebuffers over colour targets. Must
//! never: present (headless), or leave the target in a layout the readback copy cannot use (the
//! pass ends in `TRANSFER_SRC_OPTIMAL`).

use ash::vk;

use super::super::shaders::PARTICLES;
use super::{PassLayout, ViewParams};
use lanegraph::vk::error::{vk_err, GpuError};
use lanegraph::vk::memory::GpuImage;
use lanegraph::vk::shaders::ShaderModule;
use lanegraph::vk::Gpu;
use lanegraph::vk::Recording;

/// The colour target's format: 8-bit RGBA, what the PNG readback writes.
pub const COLOR_FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;

/// Render pass and pipeline for one target size.
pub struct ParticlePass {
    device: ash::Device,
    /// Keeps the device alive until this pass's `Drop` has destroyed its objects (a pass may
    /// outlive the `Gpu` it was made from: dropping the `Gpu` first used to destroy the device
    /// under it and segfault in `vkDestroyPipeline`).
    _gpu: Gpu,
    /// The render pass (clear, draw, store; ends in `TRANSFER_SRC_OPTIMAL`).
    pub render_pass: vk::RenderPass,
    pipeline: vk::Pipeline,
    extent: vk::Extent2D,
}

impl ParticlePass {
    /// Builds the render pass and the pipeline for targets of `extent`.
    pub(crate) fn new(
        gpu: &Gpu,
        layout: &PassLayout,
        extent: vk::Extent2D,
    ) -> Result<Self, GpuError> {
        let device = gpu.device().clone();
        let attachments = [vk::AttachmentDescription::default()
            .format(COLOR_FORMAT)
            .samples(vk::SampleCountFlags::TYPE_1)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
            .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
            .initial_layout(vk::ImageLayout::UNDEFINED)
            .final_layout(vk::ImageLayout::TRANSFER_SRC_OPTIMAL)];
        let color_ref = [vk::AttachmentReference {
            attachment: 0,
            layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
        }];
        let subpasses = [vk::SubpassDescription::default()
            .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
            .color_attachments(&color_ref)];
        // In: the previous use of the target (a readback copy) is done before the clear.
        // Out: the store is visible to the readback copy that may follow.
        let deps = [
            vk::SubpassDependency {
                src_subpass: vk::SUBPASS_EXTERNAL,
                dst_subpass: 0,
                src_stage_mask: vk::PipelineStageFlags::TRANSFER,
                dst_stage_mask: vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT,
                src_access_mask: vk::AccessFlags::TRANSFER_READ,
                dst_access_mask: vk::AccessFlags::COLOR_ATTACHMENT_WRITE,
                dependency_flags: vk::DependencyFlags::empty(),
            },
            vk::SubpassDependency {
                src_subpass: 0,
                dst_subpass: vk::SUBPASS_EXTERNAL,
                src_stage_mask: vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT,
                dst_stage_mask: vk::PipelineStageFlags::TRANSFER,
                src_access_mask: vk::AccessFlags::COLOR_ATTACHMENT_WRITE,
                dst_access_mask: vk::AccessFlags::TRANSFER_READ,
                dependency_flags: vk::DependencyFlags::empty(),
            },
        ];
        let mut me = ParticlePass {
            device,
            _gpu: gpu.clone(),
            render_pass: vk::RenderPass::null(),
            pipeline: vk::Pipeline::null(),
            extent,
        };
        // SAFETY: creation on a valid device with create infos that outlive the call; the
        // handle lands in `me` so Drop frees it if the pipeline fails.
        me.render_pass = unsafe {
            me.device.create_render_pass(
                &vk::RenderPassCreateInfo::default()
                    .attachments(&attachments)
                    .subpasses(&subpasses)
                    .dependencies(&deps),
                None,
            )
        }
        .map_err(vk_err("vkCreateRenderPass"))?;
        me.pipeline = me.create_pipeline(gpu, layout)?;
        Ok(me)
    }

    fn create_pipeline(&self, gpu: &Gpu, layout: &PassLayout) -> Result<vk::Pipeline, GpuError> {
        let module = ShaderModule::new(gpu, &PARTICLES)?;
        let stages = [
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::VERTEX)
                .module(module.raw)
                .name(c"vs_main"),
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::FRAGMENT)
                .module(module.raw)
                .name(c"fs_main"),
        ];
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default();
        let assembly = vk::PipelineInputAssemblyStateCreateInfo::default()
            .topology(vk::PrimitiveTopology::TRIANGLE_STRIP);
        let viewports = [vk::Viewport {
            x: 0.0,
            y: 0.0,
            width: self.extent.width as f32,
            height: self.extent.height as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        }];
        let scissors = [vk::Rect2D {
            offset: vk::Offset2D { x: 0, y: 0 },
            extent: self.extent,
        }];
        let viewport = vk::PipelineViewportStateCreateInfo::default()
            .viewports(&viewports)
            .scissors(&scissors);
        let raster = vk::PipelineRasterizationStateCreateInfo::default()
            .polygon_mode(vk::PolygonMode::FILL)
            .cull_mode(vk::CullModeFlags::NONE)
            .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
            .line_width(1.0);
        let multisample = vk::PipelineMultisampleStateCreateInfo::default()
            .rasterization_samples(vk::SampleCountFlags::TYPE_1);
        let blend_attachments = [vk::PipelineColorBlendAttachmentState::default()
            .blend_enable(false)
            .color_write_mask(vk::ColorComponentFlags::RGBA)];
        let blend =
            vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments);
        let info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stages)
            .vertex_input_state(&vertex_input)
            .input_assembly_state(&assembly)
            .viewport_state(&viewport)
            .rasterization_state(&raster)
            .multisample_state(&multisample)
            .color_blend_state(&blend)
            .layout(layout.pipeline_layout)
            .render_pass(self.render_pass)
            .subpass(0);
        // SAFETY: every referenced state struct lives until the call returns; the module stays
        // alive until after creation.
        let pipelines = unsafe {
            self.device
                .create_graphics_pipelines(vk::PipelineCache::null(), &[info], None)
        }
        .map_err(|(_, r)| vk_err("vkCreateGraphicsPipelines")(r))?;
        Ok(pipelines[0])
    }

    /// A framebuffer over `target` (caller destroys it with [`destroy_framebuffer`](Self::destroy_framebuffer)).
    pub fn framebuffer(&self, target: &GpuImage) -> Result<vk::Framebuffer, GpuError> {
        let views = [target.view()];
        let info = vk::FramebufferCreateInfo::default()
            .render_pass(self.render_pass)
            .attachments(&views)
            .width(self.extent.width)
            .height(self.extent.height)
            .layers(1);
        // SAFETY: the view is a colour view of a target of this extent and format.
        unsafe { self.device.create_framebuffer(&info, None) }
            .map_err(vk_err("vkCreateFramebuffer"))
    }

    /// Destroys a framebuffer made by [`framebuffer`](Self::framebuffer) (no frame may use it).
    pub fn destroy_framebuffer(&self, fb: vk::Framebuffer) {
        // SAFETY: caller's contract: no pending frame uses `fb`.
        unsafe { self.device.destroy_framebuffer(fb, None) };
    }

    /// Records the pass: clear to `clear`, one indirect instanced draw.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &self,
        rec: &Recording,
        layout: &PassLayout,
        set: vk::DescriptorSet,
        framebuffer: vk::Framebuffer,
        indirect: vk::Buffer,
        params: &ViewParams,
        clear: [f32; 4],
    ) {
        let d = &self.device;
        let cmd = rec.cmd();
        let clears = [vk::ClearValue {
            color: vk::ClearColorValue { float32: clear },
        }];
        let begin = vk::RenderPassBeginInfo::default()
            .render_pass(self.render_pass)
            .framebuffer(framebuffer)
            .render_area(vk::Rect2D {
                offset: vk::Offset2D { x: 0, y: 0 },
                extent: self.extent,
            })
            .clear_values(&clears);
        // SAFETY: `rec` is recording, outside a render pass; the framebuffer and set belong to
        // this slot; the indirect buffer holds one VkDrawIndirectCommand written by the cull
        // pass behind a barrier to DRAW_INDIRECT.
        unsafe {
            d.cmd_begin_render_pass(cmd, &begin, vk::SubpassContents::INLINE);
            layout.bind(
                cmd,
                vk::PipelineBindPoint::GRAPHICS,
                self.pipeline,
                set,
                params,
            );
            d.cmd_draw_indirect(cmd, indirect, 0, 1, 16);
            d.cmd_end_render_pass(cmd);
        }
    }
}

impl Drop for ParticlePass {
    fn drop(&mut self) {
        // SAFETY: dropped after every frame using it finished; null handles are no-ops.
        unsafe {
            self.device.destroy_pipeline(self.pipeline, None);
            self.device.destroy_render_pass(self.render_pass, None);
        }
    }
}
