//! The integration suite of lanegraph-vk in one binary (one link instead of one per file).
//! `frame_allocs` stays its own binary: it installs a process-wide counting allocator, and
//! nothing may run beside it.

#[path = "../common.rs"]
mod common;

mod lavapipe;
mod shaders_current;
