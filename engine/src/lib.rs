//! # lanegraph
//!
//! An engine runtime for native games. One owner thread keeps the simulation [`world`] on a fixed
//! timestep ([`game_loop`]); pinned lanes run job graphs on their own cores ([`jobs`], re-exported
//! from `lanegraph-jobs`); every system, lane, job and GPU pass is timed ([`systems`],
//! [`telemetry`]) and fed to the [`budget`] controller, which picks strategies so the frame holds
//! its target.
//!
//! Start with `docs/concepts.md`; the modules below are the table of contents.

pub mod bench;
pub mod budget;
pub mod cli;
pub mod demo;
pub mod engine;
pub mod game_loop;
pub mod report;
pub mod stress;
pub mod systems;
pub mod telemetry;
pub mod world;

pub use lanegraph_jobs as jobs;
pub use lanegraph_simd as simd;
#[cfg(feature = "vulkan")]
pub use lanegraph_vk as vk;
