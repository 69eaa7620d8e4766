//! The CPU clock the backend stamps with: `CLOCK_MONOTONIC`, the clock GPU spans, frame waits
//! and presents are placed on.
//!
//! Owns: [`monotonic_ns`]. Must never: depend on anything of the backend (every module may read
//! the clock).

/// `CLOCK_MONOTONIC` now, in nanoseconds (the CPU clock GPU spans are placed on).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64
}
