//! The present modes ([`PresentMode`]), and what a swapchain is built with, chosen from what
//! the surface offers: the extent, an 8-bit UNORM format the picture can be blitted into, the
//! present mode (the wanted one, else FIFO), the image count and the composite alpha.
//!
//! Owns: the choice and its refusals (a surface whose images cannot be transfer or blit
//! destinations presents nothing). Must never: create or destroy anything (the swapchain does).

use ash::vk;

use super::surface::SurfaceOffer;
use crate::GpuError;

/// How presented images reach the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PresentMode {
    /// Vsync: one image per refresh, queued in order; never tears. Every device offers it.
    #[default]
    Fifo,
    /// Vsync without queueing: the newest image replaces a waiting one; lowest latency
    /// without tearing. Falls back to FIFO where the surface does not offer it.
    Mailbox,
    /// No vsync: presents at once, may tear. Falls back to FIFO where not offered.
    Immediate,
}

impl PresentMode {
    /// Every mode, in the order the docs list them.
    pub const ALL: [PresentMode; 3] = [
        PresentMode::Fifo,
        PresentMode::Mailbox,
        PresentMode::Immediate,
    ];

    /// The name used in config files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PresentMode::Fifo => "fifo",
            PresentMode::Mailbox => "mailbox",
            PresentMode::Immediate => "immediate",
        }
    }

    pub(crate) fn vk(self) -> vk::PresentModeKHR {
        match self {
            PresentMode::Fifo => vk::PresentModeKHR::FIFO,
            PresentMode::Mailbox => vk::PresentModeKHR::MAILBOX,
            PresentMode::Immediate => vk::PresentModeKHR::IMMEDIATE,
        }
    }
}

impl std::fmt::Display for PresentMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for PresentMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PresentMode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("`{s}` is no present mode; fix: use fifo, mailbox or immediate"))
    }
}

/// Formats the picture can be blitted into without a shader: 8-bit UNORM, either order.
const FORMATS: [vk::Format; 2] = [vk::Format::B8G8R8A8_UNORM, vk::Format::R8G8B8A8_UNORM];

/// What a swapchain is built with.
pub(super) struct Choice {
    pub(super) extent: vk::Extent2D,
    pub(super) format: vk::SurfaceFormatKHR,
    pub(super) mode: PresentMode,
    pub(super) count: u32,
    pub(super) alpha: vk::CompositeAlphaFlagsKHR,
}

/// The swapchain to build for `offer`, the window's size `hint` and the `wanted` mode;
/// `Ok(None)` when the window has no area (minimised). `features` gives a format's optimal
/// tiling features on the device.
pub(super) fn choose(
    offer: &SurfaceOffer,
    hint: (u32, u32),
    wanted: PresentMode,
    features: impl Fn(vk::Format) -> vk::FormatFeatureFlags,
) -> Result<Option<Choice>, GpuError> {
    let caps = offer.caps;
    let Some(extent) = extent_of(&caps, hint) else {
        return Ok(None);
    };
    if !caps
        .supported_usage_flags
        .contains(vk::ImageUsageFlags::TRANSFER_DST)
    {
        return Err(GpuError::NoPresent {
            why: "the surface's images cannot be transfer destinations".into(),
        });
    }
    let Some(format) = FORMATS.into_iter().find_map(|f| {
        offer
            .formats
            .iter()
            .find(|s| s.format == f && s.color_space == vk::ColorSpaceKHR::SRGB_NONLINEAR)
            .copied()
    }) else {
        return Err(GpuError::NoPresent {
            why: format!(
                "the surface offers no 8-bit UNORM format (it offers {:?})",
                offer.formats.iter().map(|f| f.format).collect::<Vec<_>>()
            ),
        });
    };
    let mode = if offer.modes.contains(&wanted.vk()) {
        wanted
    } else {
        tracing::warn!(wanted = %wanted, "present mode not offered; using fifo");
        PresentMode::Fifo
    };
    // One more image than the minimum so the driver never makes acquire wait for an image it
    // holds, within the maximum (0: none).
    let mut count = caps.min_image_count + 1;
    if caps.max_image_count > 0 {
        count = count.min(caps.max_image_count);
    }
    let alpha = [
        vk::CompositeAlphaFlagsKHR::OPAQUE,
        vk::CompositeAlphaFlagsKHR::INHERIT,
        vk::CompositeAlphaFlagsKHR::PRE_MULTIPLIED,
        vk::CompositeAlphaFlagsKHR::POST_MULTIPLIED,
    ]
    .into_iter()
    .find(|a| caps.supported_composite_alpha.contains(*a))
    .unwrap_or(vk::CompositeAlphaFlagsKHR::OPAQUE);
    if !features(format.format).contains(vk::FormatFeatureFlags::BLIT_DST) {
        return Err(GpuError::NoPresent {
            why: format!(
                "the surface's format {:?} cannot be a blit destination",
                format.format
            ),
        });
    }
    Ok(Some(Choice {
        extent,
        format,
        mode,
        count,
        alpha,
    }))
}

/// The extent: the surface's own, or the window's size `hint` within the surface's bounds
/// when the surface leaves it to us; `None` when it has no area.
fn extent_of(caps: &vk::SurfaceCapabilitiesKHR, hint: (u32, u32)) -> Option<vk::Extent2D> {
    let extent = if caps.current_extent.width == u32::MAX {
        if hint.0 == 0 || hint.1 == 0 {
            // The surface leaves the size to us and the window has none: minimised.
            return None;
        }
        vk::Extent2D {
            width: hint
                .0
                .clamp(caps.min_image_extent.width, caps.max_image_extent.width),
            height: hint
                .1
                .clamp(caps.min_image_extent.height, caps.max_image_extent.height),
        }
    } else {
        caps.current_extent
    };
    (extent.width > 0 && extent.height > 0).then_some(extent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn present_modes_parse_by_name_and_name_the_fix_otherwise() {
        for m in PresentMode::ALL {
            assert_eq!(m.name().parse::<PresentMode>(), Ok(m));
        }
        let e = "vsync".parse::<PresentMode>().unwrap_err();
        assert!(e.contains("fifo, mailbox or immediate"), "{e}");
    }
}
