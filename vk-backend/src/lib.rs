//! # lanegraph-vk
//!
//! The Vulkan backend of the lanegraph engine runtime: a device through `ash` (the loader is
//! opened at run time, so builds need no SDK), memory through `gpu-allocator`, frames in flight,
//! textures, readback to PNG, shader modules, presentation to a window (surface and swapchain), and the two-pass GPU timestamp profiler: what a
//! game's own passes are built from. (The demo's particle renderer, `engine/demo/src/gpu`, is one
//! such game: its cull and draw passes live there.)
//!
//! A leaf crate: it knows nothing of the engine or the other leaves. Input is plain slices
//! (field-SoA positions); CPU times it reports are `CLOCK_MONOTONIC` nanoseconds. The guide is
//! `docs/gpu.md`.
#![allow(unsafe_code)]
// Reason: every Vulkan call is FFI through `ash`; each block has a SAFETY checklist.
// Every `pub` item is reachable from the crate root, one of the surface limits
// `scripts/surface` checks: what a user cannot name is `pub(crate)`.
#![deny(unreachable_pub, missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod clock;
pub mod context;
pub mod error;
pub mod frames;
pub(crate) mod ledger;
pub mod memory;
pub mod memory_monitor;
pub mod present;
pub mod profiler;
pub mod readback;
pub mod shaders;
pub mod textures;

/// The `ash` version the device is made with, for a game recording its own passes.
pub use ash;
pub use context::messenger::ValidationCounts;
pub use context::select::{DeviceKind, DevicePick};
pub use context::{DeviceInfo, Gpu, GpuConfig};
pub use error::GpuError;
pub use frames::{FrameRing, Recording};
/// Where a [`memory::GpuBuffer`] lives (`gpu-allocator`'s type): re-exported so a game creates
/// buffers without naming `gpu-allocator` itself.
pub use gpu_allocator::MemoryLocation;
pub use memory_monitor::{GpuMemoryReport, HeapUsage, MemorySource};
pub use present::{AcquiredImage, PresentMode, PresentStats, Surface, Swapchain, SwapchainConfig};
pub use profiler::{FrameTimings, GpuProfiler, PassId, PassTiming, ProfilerStats, ReadPath};
pub use readback::Readback;
pub use textures::{TextureId, TextureStore, MAX_TEXTURE_SIDE};
