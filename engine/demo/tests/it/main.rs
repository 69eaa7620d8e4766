//! The demo's integration suite in one binary: its particle renderer on a real Vulkan device,
//! and the checked-in SPIR-V against its WGSL sources. `frame_allocs` stays its own binary: it
//! installs a process-wide counting allocator, and nothing may run beside it.

#[path = "../../../../vk-backend/tests/common.rs"]
mod common;

mod lavapipe;
mod shaders_current;
