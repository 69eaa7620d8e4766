//! Shared by the lavapipe tests of lanegraph-vk and of the demo (which includes this file by
//! path): bring up a validated device or say why not.

use lanegraph_vk::{Gpu, GpuConfig, GpuError};

/// A device with validation layers on; `None` (test skipped, and why printed) when this machine
/// has no Vulkan. Under `CI=true` a missing Vulkan fails the test instead: CI installs lavapipe.
pub fn validated_gpu(test: &str, calibrated: bool) -> Option<Gpu> {
    validated_gpu_with(test, calibrated, true)
}

/// As [`validated_gpu`], choosing whether `VK_EXT_memory_budget` may be used.
pub fn validated_gpu_with(test: &str, calibrated: bool, memory_budget: bool) -> Option<Gpu> {
    // Validation messages arrive as `tracing` events: show them in the test's output.
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_env_filter("lanegraph_vk=info")
        .try_init();
    let config = GpuConfig {
        validation: true,
        calibrated_timestamps: calibrated,
        memory_budget,
        ..GpuConfig::default()
    };
    match Gpu::new(&config) {
        Ok(gpu) => Some(gpu),
        Err(e) if e.is_unavailable() => {
            let ci = std::env::var("CI").map(|v| v == "true").unwrap_or(false);
            assert!(
                !ci,
                "{test}: Vulkan is required under CI=true but unavailable: {e}"
            );
            eprintln!("SKIPPED {test}: Vulkan unavailable: {e}");
            None
        }
        Err(e) => panic!("{test}: device bring-up failed: {e}"),
    }
}

/// Fails on any validation message so far.
pub fn assert_no_messages(gpu: &Gpu) {
    let c = gpu.validation_counts();
    assert_eq!(
        (c.errors(), c.warnings()),
        (0, 0),
        "validation layers reported messages (see the log above)"
    );
}

/// Leaves the error in place for matching.
#[allow(dead_code)]
pub fn is_bad_input(e: &GpuError) -> bool {
    matches!(e, GpuError::BadInput { .. })
}
