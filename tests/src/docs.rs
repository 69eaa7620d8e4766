//! Every Rust code block in `README.md` and `docs/*.md`, compiled (and run, unless marked
//! `no_run`) as a doctest of this crate: a block in the docs is a claim like any other.
//!
//! Owns: one empty module per document with Rust blocks, its text as the module's docs. Must
//! never: leave a document out (`docs_blocks::every_rust_block_in_the_docs_is_compiled` lists
//! the documents with Rust blocks and fails on one missing here, or on an `ignore`d block).

#[cfg(doctest)]
#[doc = include_str!("../../docs/budgets.md")]
mod budgets {}

#[cfg(doctest)]
#[doc = include_str!("../../docs/coming-from-bevy.md")]
mod coming_from_bevy {}

#[cfg(doctest)]
#[doc = include_str!("../../docs/gpu.md")]
mod gpu {}

#[cfg(doctest)]
#[doc = include_str!("../../docs/jobs.md")]
mod jobs {}

#[cfg(doctest)]
#[doc = include_str!("../../docs/quickstart.md")]
mod quickstart {}

#[cfg(doctest)]
#[doc = include_str!("../../docs/simd.md")]
mod simd {}

#[cfg(doctest)]
#[doc = include_str!("../../docs/systems.md")]
mod systems {}

#[cfg(doctest)]
#[doc = include_str!("../../docs/telemetry.md")]
mod telemetry {}

#[cfg(doctest)]
#[doc = include_str!("../../docs/window.md")]
mod window {}
