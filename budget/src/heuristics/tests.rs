//! The heuristics' unit tests.

use super::*;
use crate::providers::ThermalState;

#[test]
fn the_median_is_the_middle_of_the_sorted_order_the_upper_one_for_an_even_count() {
    assert_eq!(median_in_place(&mut [3.0, 1.0, 2.0]), 2.0);
    assert_eq!(median_in_place(&mut [4.0, 1.0, 3.0, 2.0]), 3.0);
    assert_eq!(
        median_in_place(&mut [f64::NAN, 1.0, 5.0]),
        5.0,
        "NaN sorts last"
    );
    assert_eq!(median_in_place(&mut []), 0.0);
}
use crate::providers::{BatteryState, MemoryState};

fn sig(cpu: f64) -> Signals {
    Signals {
        cpu_ms: cpu,
        gpu_ms: None,
        step_clamped: false,
        readings: Readings::default(),
    }
}

/// The sliding stutter medians equal a selection over every change in the window, frame
/// after frame (repeats and a GPU time included), so sliding them changed no decision.
#[test]
fn the_sliding_stutter_medians_equal_the_whole_window_selection_every_frame() {
    let mut h = Heuristics::new(16.0, 0.1, 0.25);
    let mut x = 12345u64;
    for frame in 0..600 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut s = sig(8.0 + (x >> 40) as f64 / (1u64 << 24) as f64 * 3.0);
        if frame % 7 == 0 {
            s.cpu_ms = 9.5; // repeats
        }
        if frame % 5 == 0 {
            s.gpu_ms = Some(10.0 + (frame % 3) as f64);
        }
        h.assess(&s);
        if h.len < STUTTER_WINDOW {
            continue;
        }
        for lag in 1..=STUTTER_MAX_PERIOD {
            let mut diffs: Vec<f64> = (0..STUTTER_WINDOW - lag)
                .map(|age| (h.recent(age) - h.recent(age + lag)).abs())
                .collect();
            let want = median_in_place(&mut diffs);
            let got = h.stutter_changes[lag - 1].median();
            assert_eq!(got.to_bits(), want.to_bits(), "frame {frame}, lag {lag}");
        }
        // Each lag was built once, when the window filled, and slid ever since.
        assert_eq!(
            h.stutter_rebuilds, STUTTER_MAX_PERIOD as u64,
            "frame {frame}"
        );
    }
}

#[test]
fn base_target_is_budget_less_headroom() {
    let mut h = Heuristics::new(16.0, 0.1, 0.25);
    let a = h.assess(&sig(10.0));
    assert!((a.target_ms - 14.4).abs() < 1e-12);
    assert_eq!(a.target_by.kind(), HeuristicKind::FrameTime);
    assert_eq!(a.cap, 1.0);
    assert!(a.pressure[0].is_none());
}

#[test]
fn gpu_pressure_is_named_with_figures() {
    let mut h = Heuristics::new(13.9, 0.1, 0.25);
    let mut s = sig(5.0);
    s.gpu_ms = Some(14.2);
    let a = h.assess(&s);
    let p = a.pressure[1].expect("gpu over target");
    assert_eq!(p.to_string(), "GPU pressure: gpu 14.2 ms > target 12.5 ms");
}

#[test]
fn random_stutter_lowers_the_target() {
    let mut h = Heuristics::new(16.0, 0.1, 0.25);
    let mut a = h.assess(&sig(8.0));
    // Seeded uniform noise in 8..11 ms: no period, so every lag sees the same change
    // (median |change| ~0.88 ms, jitter ~2.6 ms, above the 1.6 ms headroom).
    let mut seed = 0x2545f4914f6cdd1du64;
    for _ in 0..400 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        a = h.assess(&sig(8.0 + 3.0 * (seed >> 11) as f64 / (1u64 << 53) as f64));
    }
    assert_eq!(a.target_by.kind(), HeuristicKind::Stutter, "{a:?}");
    assert!(a.target_ms < 16.0 * 0.9 - 0.2, "{a:?}");
}

#[test]
fn periodic_work_is_not_stutter() {
    // A game whose collisions run every other step (or every third, or fourth): its frames
    // alternate by its own rhythm. Without the periodic test this read as 4.4 ms (period 2)
    // to 36 ms of jitter and cascaded the target to its floor.
    for period in 2..=STUTTER_MAX_PERIOD {
        let mut h = Heuristics::new(16.0, 0.1, 0.25);
        let mut a = h.assess(&sig(8.0));
        for i in 0..300 {
            a = h.assess(&sig(if i % period == 0 { 14.0 } else { 4.0 }));
        }
        assert_eq!(
            a.target_by.kind(),
            HeuristicKind::FrameTime,
            "period {period}: {a:?}"
        );
    }
}

#[test]
fn a_load_step_is_neither_stutter_nor_trend() {
    let mut h = Heuristics::new(16.0, 0.1, 0.25);
    for i in 0..200 {
        let ms = match i {
            0..=99 => 8.0,
            100 => 30.0,
            101 => 40.0,
            102 => 25.0,
            _ => 12.0,
        };
        let a = h.assess(&sig(ms));
        assert_eq!(
            a.target_by.kind(),
            HeuristicKind::FrameTime,
            "frame {i}: {a:?}"
        );
    }
}

#[test]
fn rising_trend_lowers_the_target() {
    let mut h = Heuristics::new(16.0, 0.1, 0.25);
    let mut a = h.assess(&sig(8.0));
    for i in 0..40 {
        a = h.assess(&sig(8.0 + 0.2 * i as f64));
    }
    assert_eq!(a.target_by.kind(), HeuristicKind::Trend, "{a:?}");
}

#[test]
fn critical_signals_cap_and_say_so() {
    let mut h = Heuristics::new(16.0, 0.1, 0.25);
    let mut s = sig(8.0);
    s.readings.thermal = ThermalState::Critical;
    let a = h.assess(&s);
    assert!(a.critical);
    assert_eq!(a.cap, 0.5);
    s.readings.thermal = ThermalState::Nominal;
    s.readings.battery = Some(BatteryState {
        level: 0.15,
        charging: false,
    });
    s.readings.memory = Some(MemoryState {
        used_bytes: 96,
        budget_bytes: 100,
    });
    let a = h.assess(&s);
    assert!(a.critical);
    assert_eq!(a.cap, 0.5);
    assert_eq!(a.cap_by.unwrap().kind(), HeuristicKind::Memory);
    s.readings.battery = Some(BatteryState {
        level: 0.15,
        charging: true,
    });
    s.readings.memory = None;
    assert_eq!(h.assess(&s).cap, 1.0);
    // GPU memory near its budget caps the same way, and says it is the GPU's.
    s.readings.gpu_memory = Some(MemoryState {
        used_bytes: 88,
        budget_bytes: 100,
    });
    let a = h.assess(&s);
    assert!(!a.critical);
    assert_eq!(a.cap, 0.8);
    assert_eq!(a.cap_by.unwrap().kind(), HeuristicKind::GpuMemory);
    assert!(a
        .cap_by
        .unwrap()
        .to_string()
        .starts_with("GPU memory: 88 %"));
    s.readings.gpu_memory = Some(MemoryState {
        used_bytes: 97,
        budget_bytes: 100,
    });
    assert!(h.assess(&s).critical);
}

#[test]
fn death_spiral_enters_after_sustained_clamping_and_leaves_with_hysteresis() {
    let mut h = Heuristics::new(16.0, 0.1, 0.25);
    let mut s = sig(40.0);
    s.step_clamped = true;
    for i in 0..SPIRAL_ENTER {
        let a = h.assess(&s);
        assert_eq!(a.critical, i + 1 >= SPIRAL_ENTER);
    }
    let a = h.assess(&s);
    assert_eq!(a.cap, 0.25);
    assert!(a.cap_by.unwrap().to_string().contains("death spiral"));
    s.step_clamped = false;
    for _ in 0..SPIRAL_EXIT - 1 {
        assert!(h.assess(&s).critical);
    }
    assert!(!h.assess(&s).critical);
}
