//! The run's verdict: one sentence on whether it held its frame target, and why not.
//!
//! Owns: [`target_verdict`] and the figures it reads. Must never: call a run held when a
//! percentile it names missed, or hide which side (CPU or GPU) missed.

/// The figures a verdict is made of: the owner's frame percentiles, the GPU frame when there
/// is one, the controller's target and the frame budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct VerdictFigures {
    /// Owner frame p50, ms.
    pub cpu_p50: f64,
    /// Owner frame p99, ms.
    pub cpu_p99: f64,
    /// The GPU frame (smoothed), ms.
    pub gpu_ms: Option<f64>,
    /// The controller's frame-time target, ms.
    pub target: f64,
    /// The frame budget (`1000 / target_fps`), ms.
    pub budget: f64,
    /// Frames over the target (each against its own tick's target).
    pub over_target: u64,
    /// Frames run.
    pub frames: u64,
}

/// One sentence on whether the run held its frame: `held` only when the frame p50 (and the GPU
/// frame) is within the target *and* the p99 within the budget; otherwise `missed`, naming the
/// percentile, its figure, the threshold and how many frames were over the target, and whether
/// cheaper strategies were left or none can hold the target on this machine (every agent of
/// the missing side at its cheapest).
pub(crate) fn target_verdict(f: VerdictFigures, cpu_cheapest: bool, gpu_cheapest: bool) -> String {
    let p50_over = f.cpu_p50 > f.target;
    let p99_over = f.cpu_p99 > f.budget;
    let gpu_over = f.gpu_ms.filter(|&g| g > f.target);
    let gpu_text = f
        .gpu_ms
        .map_or(String::new(), |g| format!(", GPU frame {g:.2} ms"));
    let over = format!("{} of {} frames over the target", f.over_target, f.frames);
    if !p50_over && !p99_over && gpu_over.is_none() {
        return format!(
            "held: frame p50 {:.2} ms <= target {:.2} ms and p99 {:.2} ms <= budget {:.2} ms{gpu_text}; {over}",
            f.cpu_p50, f.target, f.cpu_p99, f.budget
        );
    }
    let mut missed = Vec::new();
    if p50_over {
        missed.push(format!(
            "frame p50 {:.2} ms > target {:.2} ms",
            f.cpu_p50, f.target
        ));
    }
    if p99_over {
        missed.push(format!(
            "frame p99 {:.2} ms > budget {:.2} ms",
            f.cpu_p99, f.budget
        ));
    }
    if let Some(g) = gpu_over {
        missed.push(format!("GPU frame {g:.2} ms > target {:.2} ms", f.target));
    }
    let cpu_over = p50_over || p99_over;
    let side = match (cpu_over, gpu_over.is_some()) {
        (true, true) => "CPU and GPU",
        (true, false) => "CPU",
        _ => "GPU",
    };
    let exhausted = (!cpu_over || cpu_cheapest) && (gpu_over.is_none() || gpu_cheapest);
    let tail = if exhausted {
        format!("no strategy can hold the target on this machine: the {side} side runs its cheapest strategies")
    } else {
        format!("on the {side}, with cheaper strategies still available (see decisions)")
    };
    format!("missed: {}; {over}; {tail}", missed.join(", "))
}

#[cfg(test)]
mod tests {
    use super::{target_verdict, VerdictFigures};

    fn f(p50: f64, p99: f64, gpu: Option<f64>, over: u64) -> VerdictFigures {
        VerdictFigures {
            cpu_p50: p50,
            cpu_p99: p99,
            gpu_ms: gpu,
            target: 15.0,
            budget: 16.67,
            over_target: over,
            frames: 600,
        }
    }

    #[test]
    fn the_verdict_names_the_side_that_missed_and_whether_anything_is_left() {
        assert!(target_verdict(f(10.0, 12.0, None, 0), false, false).starts_with("held: "));
        let v = target_verdict(f(10.0, 12.0, Some(12.0), 3), false, false);
        assert!(v.starts_with("held: "), "{v}");
        assert!(v.contains("3 of 600 frames over the target"), "{v}");
        // The owner holds but the GPU does not: a GPU miss, with render's cheaper rungs left.
        let v = target_verdict(f(1.0, 2.0, Some(60.0), 0), false, false);
        assert!(
            v.starts_with("missed: GPU frame 60.00 ms > target 15.00 ms"),
            "{v}"
        );
        assert!(v.contains("on the GPU, with cheaper"), "{v}");
        // ... or none left: the CPU side's state does not matter for a GPU-only miss.
        let v = target_verdict(f(1.0, 2.0, Some(60.0), 0), false, true);
        assert!(v.contains("no strategy can hold"), "{v}");
        assert!(v.contains("the GPU side"), "{v}");
        let v = target_verdict(f(20.0, 25.0, None, 500), false, true);
        assert!(
            v.starts_with("missed: frame p50 20.00 ms > target 15.00 ms"),
            "{v}"
        );
        let v = target_verdict(f(20.0, 25.0, Some(20.0), 500), true, false);
        assert!(v.contains("on the CPU and GPU"), "{v}");
        let v = target_verdict(f(20.0, 25.0, Some(20.0), 500), true, true);
        assert!(v.contains("the CPU and GPU side"), "{v}");
    }

    #[test]
    fn a_good_median_with_a_bad_tail_is_a_miss() {
        // The run: p50 0.83 ms, p99 21.4 ms against a 16.67 ms budget was called held.
        let v = target_verdict(f(0.83, 21.4, None, 40), false, false);
        assert!(
            v.starts_with(
                "missed: frame p99 21.40 ms > budget 16.67 ms; 40 of 600 frames over the target"
            ),
            "{v}"
        );
    }
}
