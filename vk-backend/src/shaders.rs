//! Shader modules from checked-in SPIR-V, and the route every lanegraph shader takes.
//!
//! Owns: [`ShaderBlob`] (a source name and its SPIR-V bytes), creating shader modules from
//! them, and the compiler settings the checked-in SPIR-V is made with ([`SPIRV_OPTIONS`]).
//! Must never: compile shaders at build or run time (no shader compiler in the engine's build
//! graph).
//!
//! # The route, and why
//! Sources are WGSL; the SPIR-V is checked in beside them, and a test compiles every source
//! with `naga` (a dev-dependency, pure Rust, no SDK) using [`SPIRV_OPTIONS`]'s settings and
//! fails if the result differs from the checked-in file by one byte. The demo's shaders live in
//! `engine/demo/shaders/` and its test is `engine/demo/tests/it/shaders_current.rs`; to change
//! one, edit the `.wgsl`, run `LANEGRAPH_BLESS_SHADERS=1 cargo test -p lanegraph-demo --test it
//! shaders_current`, commit both.
//! Why not a build script: every crate that builds the engine would compile naga (tens of
//! seconds on two cores, in every profile) to reproduce bytes that never change between
//! shader edits; the test keeps the same guarantee at the cost of one dev-only compile.

use ash::vk;

use crate::context::Gpu;
use crate::error::{vk_err, GpuError};

/// The naga settings the checked-in SPIR-V was made with, as text for the test and the docs:
/// SPIR-V 1.3 (Vulkan 1.1+), writer flags `ADJUST_COORDINATE_SPACE | LABEL_VARYINGS` (WGSL's
/// y-up clip space flipped to Vulkan's y-down), no debug info, bounds checks off.
pub const SPIRV_OPTIONS: &str = "spirv 1.3; ADJUST_COORDINATE_SPACE|LABEL_VARYINGS; no debug";

/// One compiled shader: its source file name and SPIR-V bytes.
#[derive(Debug, Clone, Copy)]
pub struct ShaderBlob {
    /// The source file under `shaders/`.
    pub source: &'static str,
    /// The checked-in SPIR-V (little-endian words).
    pub spirv: &'static [u8],
}

/// A shader module, destroyed on drop.
pub struct ShaderModule {
    device: ash::Device,
    /// The handle.
    pub raw: vk::ShaderModule,
}

impl ShaderModule {
    /// Creates the module for `blob`.
    pub fn new(gpu: &Gpu, blob: &ShaderBlob) -> Result<ShaderModule, GpuError> {
        if blob.spirv.len() % 4 != 0 || blob.spirv.len() < 20 {
            return Err(GpuError::BadInput {
                what: "SPIR-V",
                why: format!(
                    "{} is {} bytes: not a SPIR-V module (regenerate it, see src/shaders.rs)",
                    blob.source,
                    blob.spirv.len()
                ),
            });
        }
        // include_bytes! data is only byte-aligned: copy into u32 words.
        let words: Vec<u32> = blob
            .spirv
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let device = gpu.shared.device.clone();
        let info = vk::ShaderModuleCreateInfo::default().code(&words);
        // SAFETY: `words` is a whole SPIR-V module (checked by tests/shaders_current.rs) and
        // lives until the call returns.
        let raw = unsafe { device.create_shader_module(&info, None) }
            .map_err(vk_err("vkCreateShaderModule"))?;
        Ok(ShaderModule { device, raw })
    }
}

impl Drop for ShaderModule {
    fn drop(&mut self) {
        // SAFETY: modules may be destroyed once pipelines are created from them; created here.
        unsafe { self.device.destroy_shader_module(self.raw, None) };
    }
}
