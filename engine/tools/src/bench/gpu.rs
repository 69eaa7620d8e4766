//! The `gpu` bench suite: what the GPU timestamp profiler costs the CPU (see
//! `docs/bench-notes/gpu.md`).
//!
//! Owns: the quick form of the GPU benchmarks. Must never: assert on timing, run with
//! validation layers (they slow timestamp recording about 12x), or compare against a baseline
//! measured in another run.
//!
//! # Cases
//! - `profiler_cpu`: CPU ns per frame spent in profiler calls for 8 passes (read of frame
//!   n - 2, query reset, 18 timestamps, the results copy), median over frames; baseline: the
//!   same profiler reading with `vkGetQueryPoolResults` (no `WAIT` flag) instead of the copy
//!   into a mapped buffer, measured in the same run. Second baseline: the driver's floor, the
//!   same Vulkan commands issued directly with none of the profiler's bookkeeping
//!   (`RawTimestampRig`); ours minus it is the profiler's own cost. Also the p99 of ours and
//!   the share of frames read at n + 2.
//! - `profiler_allocs`: heap allocations per profiled frame, read from the tracking allocator
//!   the `lanegraph` binary installs (reported only when it is installed).

use super::{BenchError, BenchOptions, Figure};

const SUITE: &str = "gpu";

/// Passes per frame in the cases (the goal is stated for 8).
const PASSES: usize = 8;

/// Runs the suite.
pub fn run(opts: BenchOptions) -> Result<Vec<Figure>, BenchError> {
    use super::gpu_rig::{ProfilerRig, RawTimestampRig};
    use lanegraph_jobs::clock;
    use lanegraph_vk::{Gpu, GpuConfig, ReadPath};

    use super::stats::{median, percentile};

    clock::init();
    let failed = |e: lanegraph_vk::GpuError| BenchError::Failed {
        suite: SUITE,
        why: e.to_string(),
    };
    let gpu = Gpu::new(&GpuConfig::default()).map_err(|e| {
        if e.is_unavailable() {
            BenchError::Unavailable {
                suite: SUITE,
                why: e.to_string(),
                fix: "see docs/gpu.md, Requirements".into(),
            }
        } else {
            failed(e)
        }
    })?;
    let info = gpu.info();
    eprintln!(
        "# gpu: device {} ({:?}), {} timestamp bits, {} ns/tick, validation off",
        info.name, info.kind, info.timestamp_valid_bits, info.timestamp_period_ns
    );
    let (warm, frames, baseline_frames) = if opts.quick {
        (100, 2_000, 200)
    } else {
        (500, 20_000, 1_000)
    };
    let now = || clock::now().0;
    let to_ns = |ticks: u64| clock::ticks_to_ns(ticks) as f64;

    let mut ours = ProfilerRig::new(&gpu, PASSES, ReadPath::CopyToMappedBuffer).map_err(failed)?;
    let mut base = ProfilerRig::new(&gpu, PASSES, ReadPath::GetQueryPoolResults).map_err(failed)?;
    let mut raw = RawTimestampRig::new(&gpu, PASSES).map_err(failed)?;
    for _ in 0..warm {
        ours.frame(now).map_err(failed)?;
        base.frame(now).map_err(failed)?;
        raw.frame(now).map_err(failed)?;
    }
    // Interleave the two read paths in blocks so drift hits both alike.
    // Sized up front: a growing Vec would be counted as the profiler's allocation.
    let (mut ours_ns, mut base_ns) = (
        Vec::with_capacity(frames),
        Vec::with_capacity(baseline_frames),
    );
    let mut raw_ns = Vec::with_capacity(frames);
    let blocks = 10;
    let allocs_known = lanegraph::hooks::telemetry::alloc::is_installed();
    let mut allocs = 0u64;
    for _ in 0..blocks {
        let a0 = lanegraph::hooks::telemetry::memory_stats().allocations;
        for _ in 0..frames / blocks {
            ours_ns.push(to_ns(ours.frame(now).map_err(failed)?));
        }
        allocs += lanegraph::hooks::telemetry::memory_stats().allocations - a0;
        for _ in 0..frames / blocks {
            raw_ns.push(to_ns(raw.frame(now).map_err(failed)?));
        }
        for _ in 0..baseline_frames / blocks {
            base_ns.push(to_ns(base.frame(now).map_err(failed)?));
        }
    }
    let stats = ours.profiler().stats();
    eprintln!("# gpu: ours {stats:?}");
    eprintln!("# gpu: baseline {:?}", base.profiler().stats());
    ours.finish().map_err(failed)?;
    base.finish().map_err(failed)?;
    raw.finish().map_err(failed)?;
    let p99 = percentile(&mut ours_ns, 99.0);
    let ours_median = median(&mut ours_ns);
    let mut figures = vec![
        Figure::new(
            SUITE,
            "profiler_cpu",
            1,
            "ns_per_frame_8_passes",
            "ns",
            ours_median,
        )
        .with_baseline("vkGetQueryPoolResults read", median(&mut base_ns)),
        Figure::new(
            SUITE,
            "profiler_cpu",
            1,
            "ns_per_frame_vs_driver_floor",
            "ns",
            ours_median,
        )
        .with_baseline("same vkCmd calls, no profiler logic", median(&mut raw_ns)),
        Figure::new(
            SUITE,
            "profiler_cpu",
            1,
            "p99_ns_per_frame_8_passes",
            "ns",
            p99,
        ),
        Figure::new(
            SUITE,
            "profiler_cpu",
            1,
            "frames_read_pct",
            "%",
            100.0 * stats.frames_read as f64
                / (stats.frames_read + stats.frames_skipped).max(1) as f64,
        ),
    ];
    if allocs_known {
        figures.push(Figure::new(
            SUITE,
            "profiler_allocs",
            1,
            "allocs_per_frame",
            "count",
            allocs as f64 / frames as f64,
        ));
    } else {
        eprintln!("# gpu: profiler_allocs skipped: no tracking allocator installed in this binary");
    }
    Ok(figures)
}
