//! The seam between telemetry's lock-free hot paths and their atomics.
//!
//! Owns: which atomics, fences and locks the span ring ([`super::spans`]) and the metric shards
//! ([`super::shard`], the counter and histogram cells) use. Under `cfg(loom)` they are loom's, so
//! the models in `loom_models.rs` explore every interleaving of the real code. Must never: be
//! bypassed by those files (a `std::sync::atomic` type in a cell would hide its accesses from
//! loom). Statics and cold bookkeeping (a ring's `in_use` flag, the span switch) stay on std:
//! loom atomics cannot live in a `static`, and those are not part of a modelled protocol.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU64, AtomicUsize};
#[cfg(loom)]
pub(crate) use loom::sync::Mutex;

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicU64, AtomicUsize};
#[cfg(not(loom))]
pub(crate) use std::sync::Mutex;
