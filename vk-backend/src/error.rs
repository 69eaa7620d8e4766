//! Every way the Vulkan backend can fail, as one typed error.
//!
//! Owns: [`GpuError`] and the mapping from a raw `vk::Result` to it ([`vk_err`]).
//! Must never: panic on a Vulkan result, or lose which call failed.
//!
//! The engine acts on the variant: [`GpuError::is_unavailable`] (no loader, no device: run
//! without the GPU and report the profiler unavailable), [`GpuError::DeviceLost`] (rebuild the
//! backend), [`GpuError::OutOfMemory`] (shed work: fewer particles, smaller targets).

use ash::vk;

/// Debian / Ubuntu packages that provide a Vulkan loader, a CPU driver and the validation layers.
pub const INSTALL_HINT: &str = "install a Vulkan loader and driver, e.g. on Debian/Ubuntu \
`apt-get install libvulkan1 mesa-vulkan-drivers` (lavapipe, a CPU device) plus \
`vulkan-validationlayers` for validation; on other systems your GPU vendor's driver";

/// A failure of the Vulkan backend: what failed, why, and how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// The Vulkan loader library (`libvulkan.so.1`) could not be opened.
    #[error("vulkan: no loader: {detail} (fix: {INSTALL_HINT})")]
    LoaderMissing {
        /// What the dynamic loader said.
        detail: String,
    },
    /// The loader works but no usable physical device exists.
    #[error("vulkan: no usable device: {why} (fix: {INSTALL_HINT})")]
    NoDevice {
        /// Why no device qualified (none enumerated, none with a graphics+compute queue, ...).
        why: String,
    },
    /// A device was requested by name or index and none matched.
    #[error("vulkan: no device matches {wanted:?}; devices present: {present} (fix: pick one of those, or unset the override)")]
    DeviceNotFound {
        /// The override as given.
        wanted: String,
        /// The devices that were enumerated, comma separated.
        present: String,
    },
    /// Validation was requested but `VK_LAYER_KHRONOS_validation` is not installed.
    #[error("vulkan: validation requested but VK_LAYER_KHRONOS_validation is not installed (fix: `apt-get install vulkan-validationlayers`, or run without validation)")]
    ValidationLayerMissing,
    /// The chosen queue family writes no timestamps (`timestampValidBits == 0`): no GPU profiler.
    #[error("vulkan: queue family {family} has timestampValidBits 0: the GPU profiler is unavailable on this device (fix: none needed, frames still render; pick another device to profile)")]
    NoTimestamps {
        /// The queue family index.
        family: u32,
    },
    /// A fence wait ran past its deadline: the GPU is hung or far behind.
    #[error("vulkan: {call} waited {waited_ms} ms for the GPU without an answer (fix: treat the device as lost: drop the backend and create it again, or draw less)")]
    Timeout {
        /// The wait.
        call: &'static str,
        /// How long it waited, ms.
        waited_ms: u64,
    },
    /// The device was lost (driver reset, hang, removal): every object of it is now dead.
    #[error("vulkan: device lost in {call} (fix: drop the backend and create it again)")]
    DeviceLost {
        /// The Vulkan call that reported it.
        call: &'static str,
    },
    /// Host or device memory ran out.
    #[error(
        "vulkan: out of {which} memory in {call} (fix: lower the particle capacity or target size)"
    )]
    OutOfMemory {
        /// The Vulkan call or allocation that failed.
        call: &'static str,
        /// `host` or `device`.
        which: &'static str,
    },
    /// Any other failing `vk::Result`.
    #[error("vulkan: {call} failed with {result:?} (fix: run with validation on to see why)")]
    Call {
        /// The Vulkan call that failed.
        call: &'static str,
        /// What it returned.
        result: vk::Result,
    },
    /// `gpu-allocator` could not place a resource.
    #[error("vulkan: allocating {what} failed: {source} (fix: lower the particle capacity or target size)")]
    Alloc {
        /// The resource being allocated.
        what: &'static str,
        /// The allocator's error.
        #[source]
        source: gpu_allocator::AllocationError,
    },
    /// The device cannot put frames on the window: no surface extension for this window
    /// system, no swapchain extension, or no queue that presents to the surface.
    #[error("vulkan: cannot present to the window: {why} (fix: run headless, without the window, or use a driver that presents to this window system, e.g. Mesa's lavapipe under X11)")]
    NoPresent {
        /// What is missing.
        why: String,
    },
    /// Input the caller passed does not fit the contract.
    #[error("vulkan: bad input: {what}: {why}")]
    BadInput {
        /// Which argument.
        what: &'static str,
        /// What is wrong and how to fix it.
        why: String,
    },
    /// Writing a PNG failed.
    #[error("vulkan: writing the PNG failed: {0} (fix: check the path is writable)")]
    Png(#[from] png::EncodingError),
    /// Writing a file failed.
    #[error("vulkan: writing {path} failed: {source} (fix: check the path is writable)")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl GpuError {
    /// True when the machine has no usable Vulkan (loader, device or layer missing): the engine
    /// then runs without the GPU and reports the GPU profiler unavailable.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            GpuError::LoaderMissing { .. }
                | GpuError::NoDevice { .. }
                | GpuError::ValidationLayerMissing
                | GpuError::DeviceNotFound { .. }
        )
    }
}

/// Maps a failing `vk::Result` of `call` to its [`GpuError`] (device lost and out-of-memory get
/// their own variants so the engine can act on them). Use as `.map_err(vk_err("vkFoo"))`.
pub fn vk_err(call: &'static str) -> impl Fn(vk::Result) -> GpuError {
    move |result| match result {
        vk::Result::ERROR_DEVICE_LOST => GpuError::DeviceLost { call },
        vk::Result::ERROR_OUT_OF_HOST_MEMORY => GpuError::OutOfMemory {
            call,
            which: "host",
        },
        vk::Result::ERROR_OUT_OF_DEVICE_MEMORY => GpuError::OutOfMemory {
            call,
            which: "device",
        },
        result => GpuError::Call { call, result },
    }
}

/// Maps an allocator failure on `what` (out of memory gets [`GpuError::OutOfMemory`]).
pub fn alloc_err(what: &'static str) -> impl Fn(gpu_allocator::AllocationError) -> GpuError {
    move |source| match source {
        gpu_allocator::AllocationError::OutOfMemory => GpuError::OutOfMemory {
            call: what,
            which: "device",
        },
        source => GpuError::Alloc { what, source },
    }
}

/// A host-visible buffer the allocator returned without a mapping (should not happen with
/// `CpuToGpu` / `GpuToCpu` memory; a typed error rather than a panic if a driver does it).
pub fn unmapped() -> GpuError {
    GpuError::BadInput {
        what: "memory",
        why: "the allocator returned unmapped memory for a host-visible buffer".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_map_to_actionable_variants() {
        assert!(matches!(
            vk_err("vkQueueSubmit")(vk::Result::ERROR_DEVICE_LOST),
            GpuError::DeviceLost {
                call: "vkQueueSubmit"
            }
        ));
        assert!(matches!(
            vk_err("vkAllocateMemory")(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY),
            GpuError::OutOfMemory {
                which: "device",
                ..
            }
        ));
        let e = vk_err("vkCreateImage")(vk::Result::ERROR_FORMAT_NOT_SUPPORTED);
        assert!(e.to_string().contains("vkCreateImage"), "{e}");
        assert!(!e.is_unavailable());
        let e = GpuError::LoaderMissing {
            detail: "libvulkan.so.1: cannot open".into(),
        };
        assert!(e.is_unavailable());
        assert!(e.to_string().contains("mesa-vulkan-drivers"), "{e}");
    }
}
