//! The integration suite of lanegraph-vk in one binary: the device, the frame ring and the GPU
//! profiler on a real Vulkan device.

#[path = "../common.rs"]
mod common;

mod lavapipe;
