//! A window's Vulkan surface.
//!
//! Owns: the `VkSurfaceKHR`, destroying it before its instance, and a handle on the window it
//! was made from. Must never: outlive that window (it holds the window's `Arc` and drops it
//! only after destroying the surface), or be destroyed while a swapchain made from it lives
//! (a [`Swapchain`](super::Swapchain) owns its surface and drops it last).

use ash::vk;

use crate::context::{Gpu, GpuConfig};
use crate::error::{vk_err, GpuError};

/// A presentable surface on the device's instance. Made by [`Gpu::with_window`].
pub struct Surface {
    loader: ash::khr::surface::Instance,
    handle: vk::SurfaceKHR,
    /// Keeps the instance alive until the surface is destroyed.
    gpu: Gpu,
    /// Keeps the window alive until the surface is destroyed (fields drop after `drop`).
    _window: std::sync::Arc<dyn std::any::Any + Send + Sync>,
}

impl Gpu {
    /// As [`Gpu::new`], for a device that presents to `window`: the instance gets the window
    /// system's surface extensions, the surface is made from the window's raw handles
    /// (`ash-window`), the device gets `VK_KHR_swapchain`, and its queue family must be able to
    /// present to the surface. Hand the [`Surface`] to
    /// [`Swapchain::new`](crate::present::Swapchain::new).
    ///
    /// Errors: as [`Gpu::new`]; [`GpuError::NoPresent`] when the window's handles are not
    /// available or the device cannot present to them.
    ///
    /// The surface keeps `window` alive (an `Arc`) until the surface is destroyed, so the
    /// window system never sees a surface on a window that is gone.
    pub fn with_window<W>(
        config: &GpuConfig,
        window: std::sync::Arc<W>,
    ) -> Result<(Gpu, Surface), GpuError>
    where
        W: raw_window_handle::HasDisplayHandle
            + raw_window_handle::HasWindowHandle
            + Send
            + Sync
            + 'static,
    {
        let no_handle = |e: raw_window_handle::HandleError| GpuError::NoPresent {
            why: format!("the window gave no raw handle: {e}"),
        };
        let display = window.display_handle().map_err(no_handle)?.as_raw();
        let handle = window.window_handle().map_err(no_handle)?.as_raw();
        let (gpu, surface) = Gpu::bring_up(config, Some((display, handle)))?;
        let surface = surface.ok_or(GpuError::NoPresent {
            why: "internal: the surface vanished".into(),
        })?;
        Ok((gpu.clone(), Surface::adopt(gpu, surface, window)))
    }
}

impl std::fmt::Debug for Surface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Surface")
            .field("handle", &self.handle)
            .finish_non_exhaustive()
    }
}

impl Surface {
    /// Takes ownership of `handle`, made on `gpu`'s instance.
    pub(crate) fn adopt(
        gpu: Gpu,
        handle: vk::SurfaceKHR,
        window: std::sync::Arc<dyn std::any::Any + Send + Sync>,
    ) -> Surface {
        let loader = ash::khr::surface::Instance::new(&gpu.shared.entry, &gpu.shared.instance);
        Surface {
            loader,
            handle,
            gpu,
            _window: window,
        }
    }

    /// The raw handle.
    pub fn raw(&self) -> vk::SurfaceKHR {
        self.handle
    }

    /// The device it was made with.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// What the surface offers now: its capabilities (the current extent changes with the
    /// window), its formats and its present modes.
    pub(crate) fn query(&self) -> Result<SurfaceOffer, GpuError> {
        let pd = self.gpu.shared.physical;
        // SAFETY: the physical device and the surface belong to this instance; the surface is
        // alive (owned here).
        unsafe {
            Ok(SurfaceOffer {
                caps: self
                    .loader
                    .get_physical_device_surface_capabilities(pd, self.handle)
                    .map_err(vk_err("vkGetPhysicalDeviceSurfaceCapabilitiesKHR"))?,
                formats: self
                    .loader
                    .get_physical_device_surface_formats(pd, self.handle)
                    .map_err(vk_err("vkGetPhysicalDeviceSurfaceFormatsKHR"))?,
                modes: self
                    .loader
                    .get_physical_device_surface_present_modes(pd, self.handle)
                    .map_err(vk_err("vkGetPhysicalDeviceSurfacePresentModesKHR"))?,
            })
        }
    }
}

/// A surface's capabilities, formats and present modes at one moment.
pub(crate) struct SurfaceOffer {
    pub(crate) caps: vk::SurfaceCapabilitiesKHR,
    pub(crate) formats: Vec<vk::SurfaceFormatKHR>,
    pub(crate) modes: Vec<vk::PresentModeKHR>,
}

impl Drop for Surface {
    fn drop(&mut self) {
        // SAFETY: every swapchain made from this surface owned it and was destroyed first
        // (`Drop for Swapchain` runs before its fields drop); the instance is alive (`gpu`);
        // the window is alive (`_window`, dropped after this).
        unsafe { self.loader.destroy_surface(self.handle, None) };
    }
}
