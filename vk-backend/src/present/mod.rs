//! Putting frames on a window: the surface made from a window's raw handles, the swapchain,
//! and the pacing figures of every present.
//!
//! Owns: [`Surface`], [`Swapchain`] (creation, recreation on resize / `OUT_OF_DATE` /
//! `SUBOPTIMAL`, acquire and present with their semaphores, the minimised case) and
//! [`PresentStats`]. Must never: know what is drawn (the caller records its passes and copies
//! its picture in with [`Swapchain::record_copy_in`]), wait on the GPU except where its docs
//! say, or spin while the window is minimised (a zero-sized surface presents nothing and
//! returns at once).
//!
//! The window itself (its event loop, input) is not here: this crate takes raw handles
//! (`raw-window-handle`), so any windowing library can drive it. The engine's
//! `lanegraph::window` uses `winit`.

mod choice;
pub mod surface;
pub mod swapchain;

pub use surface::Surface;
pub use swapchain::{AcquiredImage, PresentMode, PresentStats, Swapchain, SwapchainConfig};
