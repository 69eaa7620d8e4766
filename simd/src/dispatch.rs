//! Run-time kernel paths: one portable binary that runs the elementwise kernels at AVX2 width on
//! CPUs that have it.
//!
//! Owns: [`KernelPath`], the detection ([`kernel_path`]), the override for tests and benches
//! ([`force_kernel_path`]) and `run`, which calls a kernel's AVX2 form inside a function
//! compiled with AVX2 enabled. Must never: give a different result on one path than on the
//! other (the world hash and replays depend on it), or run an AVX2 instruction on a CPU that
//! did not report AVX2.
//!
//! # How the AVX2 form is made
//! `wide` picks its instructions when it is compiled, so in a baseline x86-64 build an `f32x8`
//! is two SSE halves, and inlining it into an AVX2 function does not widen it (measured: the
//! compiler keeps two 128-bit operations). A kernel's *scalar twin*, compiled inside an AVX2
//! function, is vectorised by the compiler at 256 bits instead. So the AVX2 form of each
//! elementwise kernel is its scalar twin's body over the same padded floats: the twin already
//! does the same IEEE operations in the same order as the `f32x8` form (the kernel contract,
//! tested bit for bit), and neither uses fused multiply-add (`AVX2` here does not enable
//! `FMA`, and Rust never contracts `a * b + c` by itself), so the two paths agree bit for bit,
//! with the kernel contract's one exception: when a result is NaN, its payload may differ
//! (Rust leaves it unspecified among the inputs' NaNs). The world's state hash hashes every NaN
//! as one canonical NaN, so replays match across paths and machines. In a build that already targets AVX2 (`-C target-cpu=x86-64-v3`) `wide` is
//! 256 bits wide itself and the dispatch takes the `f32x8` form.
//!
//! Reductions, culls and the grid keep their `f32x8` forms on both paths (their lane-order
//! folds do not map onto a scalar loop the compiler widens).

#![allow(unsafe_code)] // Reason: calling the `#[target_feature]` trampoline; see SAFETY in `run`.

use std::sync::atomic::{AtomicU8, Ordering};

/// Which code path the dispatched kernels take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelPath {
    /// `wide`'s `f32x8` as compiled: two SSE halves in a baseline x86-64 build, one AVX
    /// register in a v3 build, the portable form elsewhere.
    Portable,
    /// The scalar twins compiled with AVX2 enabled (256-bit vectors), chosen at run time.
    Avx2,
}

impl KernelPath {
    /// A short stable name for figures and logs: `portable` or `avx2`.
    pub const fn name(self) -> &'static str {
        match self {
            KernelPath::Portable => "portable",
            KernelPath::Avx2 => "avx2",
        }
    }
}

/// No override: detect.
const AUTO: u8 = 0;
/// Forced portable.
const FORCE_PORTABLE: u8 = 1;

/// The override set by [`force_kernel_path`].
static OVERRIDE: AtomicU8 = AtomicU8::new(AUTO);

/// Whether this CPU reports AVX and AVX2 (the standard library caches the answer).
fn cpu_has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx") && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The environment variable that forces the portable path for the whole process
/// (`LANEGRAPH_SIMD_PATH=portable`): for a user who suspects the AVX2 path, and for the test
/// run that checks the `f32x8` forms on a machine that has AVX2. Any other value is ignored.
pub const PATH_ENV: &str = "LANEGRAPH_SIMD_PATH";

/// Whether [`PATH_ENV`] says `portable` (read once).
fn env_forces_portable() -> bool {
    static FORCED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FORCED.get_or_init(|| std::env::var(PATH_ENV).is_ok_and(|v| v == "portable"))
}

/// The path the dispatched kernels take now: [`KernelPath::Avx2`] when the CPU has AVX2, this
/// build does not already target it, and neither [`PATH_ENV`] nor [`force_kernel_path`] says
/// otherwise.
pub fn kernel_path() -> KernelPath {
    let built_wide = cfg!(all(target_arch = "x86_64", target_feature = "avx2"));
    if !built_wide
        && OVERRIDE.load(Ordering::Relaxed) == AUTO
        && !env_forces_portable()
        && cpu_has_avx2()
    {
        KernelPath::Avx2
    } else {
        KernelPath::Portable
    }
}

/// Forces the portable path (`Some(KernelPath::Portable)`) or returns to detection (`None`
/// or `Some(KernelPath::Avx2)`: AVX2 is taken only where the CPU has it and
/// `LANEGRAPH_SIMD_PATH=portable` is not set, so the returned path is the one in effect). Process-wide; for
/// tests and benchmarks that compare the two paths. Results are the same bits on either path,
/// so a kernel running on another thread meanwhile is unaffected but for speed. Returns the
/// path now in effect.
pub fn force_kernel_path(path: Option<KernelPath>) -> KernelPath {
    let v = match path {
        Some(KernelPath::Portable) => FORCE_PORTABLE,
        None | Some(KernelPath::Avx2) => AUTO,
    };
    OVERRIDE.store(v, Ordering::Relaxed);
    kernel_path()
}

/// Runs `avx2(args)` inside an AVX2-enabled function when [`kernel_path`] says so, else
/// `portable(args)`. Both must compute the same bits (the caller's contract: `avx2` is the
/// kernel's scalar twin over the same floats). The data comes in `args`, so both forms can
/// take it mutably.
#[inline(always)]
pub(crate) fn run<A, R>(args: A, portable: impl FnOnce(A) -> R, avx2: impl FnOnce(A) -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if kernel_path() == KernelPath::Avx2 {
        // SAFETY:
        // - `on_avx2` is `#[target_feature(enable = "avx,avx2")]`; calling it is sound only where
        //   the CPU supports both features.
        // - `kernel_path()` returns `Avx2` only when `is_x86_feature_detected!` reported both
        //   "avx" and "avx2" on this CPU (`cpu_has_avx2`), so the precondition holds.
        // - The closure itself is safe code; the trampoline adds no other obligation.
        return unsafe { on_avx2(args, avx2) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    drop(avx2);
    portable(args)
}

/// The trampoline: `f` inlined here is compiled with AVX2, and the compiler vectorises its
/// loops 256 bits wide.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2")]
unsafe fn on_avx2<A, R>(args: A, f: impl FnOnce(A) -> R) -> R {
    f(args)
}

/// The floats of whole `f32x8` vectors, in lane order.
#[inline(always)]
pub(crate) fn floats(v: &[wide::f32x8]) -> &[f32] {
    bytemuck::cast_slice(v)
}

/// The floats of whole `f32x8` vectors, mutably, in lane order.
#[inline(always)]
pub(crate) fn floats_mut(v: &mut [wide::f32x8]) -> &mut [f32] {
    bytemuck::cast_slice_mut(v)
}
