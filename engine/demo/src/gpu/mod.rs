//! The demo's GPU work: its particle renderer (a culling compute pass and an instanced particle
//! render pass into an offscreen target, read back to PNG on request), built on the device,
//! frames in flight, textures and profiler `lanegraph::vk` provides, the way any game builds its
//! own passes.
//!
//! Owns: the renderer, its two passes and their shaders (`engine/demo/shaders/`). Must never:
//! wait on the GPU inside [`Renderer::render`] except in the frame ring's wait for a free slot.
//!
//! Every Vulkan call is FFI through `ash`; each `unsafe` block has a SAFETY checklist.
#![allow(unsafe_code)]

pub mod passes;
pub mod renderer;
pub mod shaders;

pub use renderer::{FrameReport, ParticleView, Renderer, RendererConfig};
