//! Build levels: which x86-64 level this binary's kernels were compiled for, and the start-up
//! check that the CPU can run them.
//!
//! Owns: [`check_cpu`] and [`BuildLevel`]. Must never: dispatch at run time (that is
//! [`crate::dispatch`]'s, for the elementwise kernels). `wide` chooses its instructions at
//! compile time from the enabled target features; a game picks its build level when it builds
//! (see docs/simd.md).

use crate::error::CpuMismatch;

/// The SIMD level the kernels were compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildLevel {
    /// The portable x86-64 baseline (SSE2): `f32x8` runs as two 128-bit halves.
    Baseline,
    /// x86-64-v3 (AVX, AVX2, FMA, BMI1/2, F16C, LZCNT, MOVBE): `f32x8` is one 256-bit register.
    V3,
    /// Not x86-64: `wide`'s portable code for this architecture.
    OtherArch,
}

impl BuildLevel {
    /// The level of this build, from its compile-time target features.
    pub const fn current() -> Self {
        if !cfg!(target_arch = "x86_64") {
            BuildLevel::OtherArch
        } else if cfg!(all(target_feature = "avx2", target_feature = "fma")) {
            BuildLevel::V3
        } else {
            BuildLevel::Baseline
        }
    }

    /// A short stable name for figures and logs: `x86-64`, `x86-64-v3` or `other-arch`.
    pub const fn name(self) -> &'static str {
        match self {
            BuildLevel::Baseline => "x86-64",
            BuildLevel::V3 => "x86-64-v3",
            BuildLevel::OtherArch => "other-arch",
        }
    }
}

/// Checks that this CPU has every x86-64-v3 feature this binary was compiled to use.
///
/// Call it first thing in `main`, before any kernel runs: a v3 build on a CPU without AVX2 or
/// FMA would otherwise die with `SIGILL` at the first 256-bit instruction. Returns the build
/// level on success; a baseline build passes on every x86-64 CPU.
///
/// Limit (stated, not hidden): with `-C target-cpu=x86-64-v3` the compiler may use VEX
/// encodings anywhere, including the Rust runtime's start-up code before `main`; this check
/// turns the common case (the first SIMD kernel) into a clear error, and cannot vouch for code
/// that ran before it.
pub fn check_cpu() -> Result<BuildLevel, CpuMismatch> {
    let level = BuildLevel::current();
    let missing = missing_features();
    if missing.is_empty() {
        Ok(level)
    } else {
        Err(CpuMismatch {
            level: level.name(),
            missing,
        })
    }
}

/// The compiled-in x86-64-v3 features this CPU does not report (empty on a matching CPU).
#[cfg(target_arch = "x86_64")]
fn missing_features() -> Vec<&'static str> {
    let mut missing = Vec::new();
    macro_rules! need {
        ($($f:tt),+) => {$(
            if cfg!(target_feature = $f) && !std::arch::is_x86_feature_detected!($f) {
                missing.push($f);
            }
        )+};
    }
    need!("avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "lzcnt", "movbe");
    missing
}

#[cfg(not(target_arch = "x86_64"))]
fn missing_features() -> Vec<&'static str> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_runs_this_build() {
        // The tests themselves run on the build machine: if the check failed here, the build
        // level and the CPU disagree and every kernel test below would have faulted.
        assert_eq!(check_cpu(), Ok(BuildLevel::current()));
    }

    #[test]
    fn mismatch_message_says_how_to_fix() {
        let e = CpuMismatch {
            level: "x86-64-v3",
            missing: vec!["avx2", "fma"],
        };
        let m = e.to_string();
        assert!(m.contains("x86-64-v3") && m.contains("avx2") && m.contains("fix:"));
    }

    #[test]
    fn level_is_the_one_the_build_script_expects() {
        // scripts/simd-levels sets this for each build it makes; unset in ordinary runs.
        if let Ok(want) = std::env::var("LANEGRAPH_SIMD_EXPECT_LEVEL") {
            assert_eq!(
                BuildLevel::current().name(),
                want,
                "built at the wrong level"
            );
        }
    }

    #[test]
    fn level_matches_compile_flags() {
        let v3 = cfg!(all(
            target_arch = "x86_64",
            target_feature = "avx2",
            target_feature = "fma"
        ));
        assert_eq!(BuildLevel::current() == BuildLevel::V3, v3);
    }
}
