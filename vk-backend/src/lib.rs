//! The Vulkan backend. (Being built: issue 7.)
