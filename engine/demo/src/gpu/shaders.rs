//! The demo's shaders: WGSL sources in `engine/demo/shaders/`, SPIR-V checked in beside them
//! (the route: `lanegraph::vk::shaders`; the currency test: `tests/it/shaders_current.rs`).
//!
//! Owns: the SPIR-V of the cull and particle passes. Must never: compile shaders at build or
//! run time.

use lanegraph::vk::shaders::ShaderBlob;

/// The culling compute shader (entry point `cull`).
pub const CULL: ShaderBlob = ShaderBlob {
    source: "cull.wgsl",
    spirv: include_bytes!("../../shaders/cull.spv"),
};

/// The particle vertex + fragment shaders (entry points `vs_main`, `fs_main`).
pub const PARTICLES: ShaderBlob = ShaderBlob {
    source: "particles.wgsl",
    spirv: include_bytes!("../../shaders/particles.spv"),
};

/// Every shader, for the currency test.
pub const ALL: &[ShaderBlob] = &[CULL, PARTICLES];
