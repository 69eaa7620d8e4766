//! `lanegraph-simd`: persistent field-SoA columns and `wide::f32x8` kernels with scalar twins.
//!
//! Owns: aligned, padded `f32` columns ([`Column`]), tables of them for one component type
//! ([`SoaTable`], [`SoaComponent`]), mutable and chunked access for jobs ([`LanesMut`],
//! [`SoaChunkMut`]), the build-level check ([`check_cpu`]), the run-time AVX2 path of the
//! elementwise kernels ([`dispatch`]), the kernels ([`kernels`]) and the
//! layout advisor ([`advise`]). Must never: know about the World,
//! lanes or jobs (this crate is a leaf), or transpose data per frame: SIMD wins only while the
//! data stays field-SoA resident (docs/simd.md).
//!
//! # Semantic contract
//! - Columns are 64-byte aligned, padded to a multiple of 8 lanes with [`PAD`] (0.0) at rest;
//!   kernels may compute on padding lanes, and every guard puts [`PAD`] back when it drops.
//! - Every SIMD kernel has a scalar twin with the same order of operations; they agree bit for
//!   bit on every input (infinity, signed zero, subnormals included; a NaN result is NaN in both,
//!   its payload unspecified) at every build level, because no kernel uses fused multiply-add
//!   (see docs/simd.md for why).
//! - Bad input is a typed error (what, why, fix), never a panic.
//!
//! | file | idea |
//! |------|------|
//! | `advisor` | The layout advisor: from a component's access telemetry, a recommendation (keep the column as it is, go field-SoA + SIMD, or split hot ... |
//! | `cache` | The machine's data-cache sizes, and the working-set sizes the benches place in each level |
//! | `column` | One field column: a contiguous, 64-byte aligned, padded `f32` array |
//! | `component` | How a component declares itself field-SoA: the `SoaComponent` trait and the `soa_component!` macro that implements it |
//! | `dispatch` | Run-time kernel paths: one portable binary that runs the elementwise kernels at AVX2 width on CPUs that have it |
//! | `error` | The errors of this crate: one small type per failure, each saying what, why and how to fix |
//! | `kernels` | The `f32x8` kernels and their scalar twins |
//! | `lanes` | Mutable whole-vector access to a table's columns, and disjoint chunks of it for jobs |
//! | `level` | Build levels: which x86-64 level this binary's kernels were compiled for, and the start-up check that the CPU can run them |
//! | `table` | A field-SoA table: N `Column`s of equal length, one per field of one component type |
// Every `pub` item is reachable from the crate root, one of the surface limits
// `scripts/surface` checks: what a user cannot name is `pub(crate)`.
#![deny(unreachable_pub, missing_docs)]

// `unsafe` stays denied (workspace lint) except for two marker impls in column.rs and the AVX2
// trampoline call in dispatch.rs, each with its own `#[allow(unsafe_code)]` and SAFETY checklist.

pub mod advisor;
pub mod cache;
pub mod column;
pub mod component;
pub mod dispatch;
pub mod error;
pub mod kernels;
pub mod lanes;
pub mod level;
pub mod table;

pub use advisor::{advise, ComponentAccess, LayoutAdvice, LayoutRecommendation};
pub use cache::{working_sets, CacheSizes, WorkingSet};
pub use column::{padded_len, Column, ColumnLanesMut, LANES, PAD};
pub use component::{SoaComponent, SoaFields};
pub use dispatch::{force_kernel_path, kernel_path, KernelPath};
pub use error::{
    ComponentMismatch, CpuMismatch, FieldCountMismatch, InvalidBounds, InvalidFields,
    LengthMismatch, RowCountTooLarge, RowOutOfBounds, RowWidthMismatch, UnknownField,
    ZeroChunkSize,
};
pub use kernels::flip_sign;
pub use lanes::{ChunksError, LanesMut, SoaChunkMut, SoaChunksMut, PAD_LANES};
pub use level::{check_cpu, BuildLevel};
pub use table::{GetError, SoaTable, MAX_FIELDS};
/// The SIMD crate itself, so a custom kernel needs no direct dependency on it (and cannot pick
/// a second, different version).
pub use wide;
/// The comparison traits a custom kernel's masks need (`p.cmp_lt(lo)`); `blend` and the bit
/// operators are inherent on [`f32x8`].
pub use wide::{f32x8, CmpEq, CmpGe, CmpGt, CmpLe, CmpLt, CmpNe};
