//! Placing `CLOCK_MONOTONIC` instants on the engine's clock: what the GPU profiler and the
//! swapchain report (the Vulkan crate's times are `CLOCK_MONOTONIC` nanoseconds) becomes a
//! [`Stamp`] a span can carry.
//!
//! Owns: one process-wide pairing of the two clocks, read once (the midpoint of two monotonic
//! reads around one engine read), and the conversion. Must never: read either clock per
//! conversion (the pairing is fixed at first use), or go backwards (an instant before the
//! pairing maps to an earlier stamp, clamped at 0).

use std::sync::OnceLock;

use lanegraph_jobs::clock::{self, Stamp};

/// `CLOCK_MONOTONIC` now, ns.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC exists on every Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The monotonic ns and the engine stamp read together, once per process.
fn pairing() -> (u64, Stamp) {
    static PAIR: OnceLock<(u64, Stamp)> = OnceLock::new();
    *PAIR.get_or_init(|| {
        let before = monotonic_ns();
        let stamp = clock::now();
        let after = monotonic_ns();
        (before / 2 + after / 2, stamp)
    })
}

/// The engine stamp of the `CLOCK_MONOTONIC` instant `ns`.
pub fn stamp_of_monotonic_ns(ns: u64) -> Stamp {
    let (mono_at, stamp_at) = pairing();
    let per_tick = clock::ns_per_tick();
    let base = stamp_at.0;
    Stamp(if ns >= mono_at {
        base + ((ns - mono_at) as f64 / per_tick) as u64
    } else {
        base.saturating_sub(((mono_at - ns) as f64 / per_tick) as u64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_monotonic_instant_lands_where_the_engine_clock_read_it() {
        let _ = clock::init();
        let m0 = monotonic_ns();
        let s0 = clock::now();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let m1 = monotonic_ns();
        let s1 = clock::now();
        // The mapped interval equals the engine clock's own, within a generous 1 ms (two reads
        // each side, on a loaded machine).
        let mapped = stamp_of_monotonic_ns(m1).ns_since(stamp_of_monotonic_ns(m0)) as i64;
        let direct = s1.ns_since(s0) as i64;
        assert!((mapped - direct).abs() < 1_000_000, "{mapped} vs {direct}");
        assert!(stamp_of_monotonic_ns(m1) >= stamp_of_monotonic_ns(m0));
        assert_eq!(
            stamp_of_monotonic_ns(0).0,
            stamp_of_monotonic_ns(1).0.min(stamp_of_monotonic_ns(0).0)
        );
    }
}
