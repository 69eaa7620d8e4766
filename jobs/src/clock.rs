//! The runtime's timestamp source: the cheapest monotonic clock that is correct here.
//!
//! Owns: reading a raw timestamp ([`Stamp`]) and converting stamp differences to nanoseconds.
//! Must never: go backwards, allocate after calibration, or be used for anything that enters
//! world state (timing never does).
//!
//! # Choice
//! On x86_64 with an *invariant* TSC (CPUID leaf `0x8000_0007`, EDX bit 8: the counter ticks at
//! a constant rate across P-/C-states and is synchronised across cores by the OS) a stamp is one
//! `RDTSC` (~12 ns here, against ~29 ns for `Instant::now`, which goes through the vDSO and
//! `clock_gettime`). The tick rate is calibrated once, at first use, against the monotonic clock
//! over [`CALIBRATION_WINDOW`], each end a TSC read bracketed tightly by two monotonic reads (retried
//! when a preemption widens the bracket). The conversion error is that of the calibration: the
//! two brackets' half-widths over the window, under 2 x 1 us / 10 ms = 200 ppm in the worst
//! accepted case and a few ppm typically; `tests::tsc_agrees_with_instant` checks it against
//! `Instant` over 30 ms.
//! Everywhere else (other architectures, a TSC that is not invariant, or
//! `LANEGRAPH_CLOCK=instant` in the environment) a stamp is nanoseconds since a process-wide
//! epoch read from [`std::time::Instant`], and the conversion is the identity.
//!
//! Resolution: one TSC tick (< 1 ns) or the OS monotonic clock's (1 ns nominal). A run shorter
//! than the resolution measures as exactly 0, which is a legitimate reading.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long the TSC is calibrated against the monotonic clock (a one-time start-up cost).
/// 10 ms gives a relative error of a few ppm: the two clock reads that bracket the window
/// each carry ~25 ns of uncertainty, 50 ns / 10 ms = 5 ppm.
pub const CALIBRATION_WINDOW: Duration = Duration::from_millis(10);

/// A raw timestamp from [`now`]. Only differences of stamps from the same process mean anything;
/// convert them with [`ticks_to_ns`] or [`Stamp::ns_since`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Stamp(pub u64);

impl Stamp {
    /// Nanoseconds from `earlier` to `self` (0 when `earlier` is later: never negative).
    #[inline]
    pub fn ns_since(self, earlier: Stamp) -> u64 {
        ticks_to_ns(self.0.saturating_sub(earlier.0))
    }

    /// Milliseconds from `earlier` to `self` as `f64`.
    #[inline]
    pub fn ms_since(self, earlier: Stamp) -> f64 {
        self.ns_since(earlier) as f64 * 1e-6
    }

    /// Nanoseconds since the clock's epoch (the first calibration), for exporting on one timeline.
    #[inline]
    pub fn as_ns(self) -> u64 {
        let c = calibration();
        ticks_to_ns(self.0.saturating_sub(c.epoch_ticks))
    }
}

/// Which source [`now`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockSource {
    /// `RDTSC`, invariant, calibrated against the monotonic clock.
    Tsc,
    /// `std::time::Instant` nanoseconds since a process epoch.
    Instant,
}

#[derive(Debug)]
struct Calibration {
    source: ClockSource,
    /// Nanoseconds per tick in 32.32 fixed point (exact integer maths on the conversion path).
    ns_per_tick_q32: u64,
    /// Nanoseconds per tick as a float, for reporting.
    ns_per_tick: f64,
    /// The stamp taken at calibration: the zero of [`Stamp::as_ns`].
    epoch_ticks: u64,
    /// The monotonic instant that corresponds to `epoch_ticks`.
    epoch_instant: Instant,
}

static CALIBRATION: OnceLock<Calibration> = OnceLock::new();

#[inline]
fn calibration() -> &'static Calibration {
    CALIBRATION.get_or_init(calibrate)
}

/// Forces calibration now (it otherwise happens on the first stamp). Call at start-up so the
/// 10 ms does not land inside the first frame.
pub fn init() -> ClockSource {
    calibration().source
}

/// Which source is in use.
pub fn source() -> ClockSource {
    calibration().source
}

/// Nanoseconds per tick, as calibrated (1.0 for the `Instant` source).
pub fn ns_per_tick() -> f64 {
    calibration().ns_per_tick
}

/// The monotonic [`Instant`] at the clock's epoch (stamp `as_ns() == 0`).
pub fn epoch_instant() -> Instant {
    calibration().epoch_instant
}

/// Reads the clock. Cheap (one `RDTSC` on the TSC source), never allocates.
#[inline]
pub fn now() -> Stamp {
    let c = calibration();
    match c.source {
        ClockSource::Tsc => Stamp(read_tsc()),
        ClockSource::Instant => Stamp(instant_ns(c.epoch_instant)),
    }
}

/// Converts a tick difference to nanoseconds (exact integer maths, no float on the hot path).
#[inline]
pub fn ticks_to_ns(ticks: u64) -> u64 {
    let q = calibration().ns_per_tick_q32;
    ((ticks as u128 * q as u128) >> 32) as u64
}

#[inline]
fn instant_ns(epoch: Instant) -> u64 {
    Instant::now().saturating_duration_since(epoch).as_nanos() as u64
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn read_tsc() -> u64 {
    // RDTSC has no preconditions: it reads a counter, touches no memory.
    #[allow(unused_unsafe)]
    // SAFETY: `_rdtsc` reads the time-stamp counter; it has no memory effects and no
    // target-feature requirement beyond the x86_64 baseline.
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn read_tsc() -> u64 {
    unreachable!("the TSC source is only selected on x86_64")
}

#[cfg(target_arch = "x86_64")]
fn tsc_is_invariant() -> bool {
    use core::arch::x86_64::__cpuid;
    #[allow(unused_unsafe)]
    // SAFETY: CPUID is available on every x86_64 CPU; leaf 0x8000_0000 reports the highest
    // extended leaf, and we only query 0x8000_0007 when it is supported.
    let max_ext = unsafe { __cpuid(0x8000_0000) }.eax;
    if max_ext < 0x8000_0007 {
        return false;
    }
    #[allow(unused_unsafe)]
    // SAFETY: leaf 0x8000_0007 is supported (checked above).
    let edx = unsafe { __cpuid(0x8000_0007) }.edx;
    edx & (1 << 8) != 0
}

#[cfg(not(target_arch = "x86_64"))]
fn tsc_is_invariant() -> bool {
    false
}

/// Longest bracket accepted for a paired read: a preemption between the two reads (which on a
/// loaded machine can last milliseconds) would otherwise land in the calibration as error.
const PAIR_BRACKET_NS: u128 = 2_000;

/// A TSC reading and the monotonic instant it corresponds to: the TSC is read between two
/// `Instant` reads and paired with their midpoint; retried while the bracket is wider than
/// [`PAIR_BRACKET_NS`] (at most 100 times; then the tightest seen is used).
fn paired_read() -> (Instant, u64) {
    let mut best: Option<(u128, Instant, u64)> = None;
    for _ in 0..100 {
        let a = Instant::now();
        let t = read_tsc();
        let b = Instant::now();
        let width = b.duration_since(a).as_nanos();
        let mid = a + b.duration_since(a) / 2;
        if best.is_none_or(|(w, _, _)| width < w) {
            best = Some((width, mid, t));
        }
        if width <= PAIR_BRACKET_NS {
            break;
        }
    }
    let (_, i, t) = best.expect("the loop runs at least once");
    (i, t)
}

fn calibrate() -> Calibration {
    let forced_instant = std::env::var("LANEGRAPH_CLOCK").is_ok_and(|v| v == "instant");
    if forced_instant || !tsc_is_invariant() {
        let epoch_instant = Instant::now();
        return Calibration {
            source: ClockSource::Instant,
            ns_per_tick_q32: 1 << 32,
            ns_per_tick: 1.0,
            epoch_ticks: 0,
            epoch_instant,
        };
    }
    let (i0, t0) = paired_read();
    while i0.elapsed() < CALIBRATION_WINDOW {
        std::hint::spin_loop();
    }
    let (i1, t1) = paired_read();
    let ns = i1.duration_since(i0).as_nanos() as f64;
    let ticks = t1.wrapping_sub(t0).max(1) as f64;
    let ns_per_tick = ns / ticks;
    Calibration {
        source: ClockSource::Tsc,
        ns_per_tick_q32: (ns_per_tick * (1u64 << 32) as f64).round() as u64,
        ns_per_tick,
        epoch_ticks: t0,
        epoch_instant: i0,
    }
}

/// CPU time (user + system) of the whole process so far, in ns, from
/// `clock_gettime(CLOCK_PROCESS_CPUTIME_ID)` (nanosecond resolution; `getrusage` rounds to
/// microseconds, too coarse for the idle-cost benches' short blocks). `None` where the OS
/// refuses. For idle-cost benches.
#[cfg(unix)]
pub fn process_cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: (1) `ts` is a valid, writable `timespec`; (2) clock_gettime writes only it, and
    // only on success; (3) we read it only on success.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } == 0;
    if !ok {
        return None;
    }
    Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// CPU time of the process (unsupported on this OS).
#[cfg(not(unix))]
pub fn process_cpu_ns() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_monotonic_on_one_thread() {
        let mut last = now();
        for _ in 0..100_000 {
            let s = now();
            assert!(s >= last, "clock went backwards: {s:?} < {last:?}");
            last = s;
        }
    }

    /// One bracketed measurement: (ours, instant) nanoseconds across a 30 ms sleep.
    fn bracketed_30ms() -> (f64, f64) {
        let i0 = Instant::now();
        let s0 = now();
        std::thread::sleep(Duration::from_millis(30));
        let s1 = now();
        let i1 = Instant::now();
        (
            s1.ns_since(s0) as f64,
            i1.duration_since(i0).as_nanos() as f64,
        )
    }

    #[test]
    fn tsc_agrees_with_instant() {
        init();
        // Ours is bracketed inside theirs; allow 2% for calibration error on a noisy machine.
        // A preemption between an `Instant` read and its paired stamp widens theirs alone, so
        // the lower bound gets up to five tries: a clock that is really wrong fails all five.
        let mut tries = Vec::new();
        for _ in 0..5 {
            let (ours, theirs) = bracketed_30ms();
            assert!(
                ours <= theirs * 1.02,
                "ours {ours} ns > instant {theirs} ns"
            );
            if ours >= theirs * 0.90 {
                return;
            }
            tries.push((ours, theirs));
        }
        panic!("ours << instant in every try (ours, instant ns): {tries:?}");
    }

    #[test]
    fn cpu_time_grows_while_busy() {
        // Spin until the process has gained 10 ms of CPU time; on a loaded machine that takes
        // longer in wall time, so only a clock that never moves runs into the 20 s deadline.
        let before = process_cpu_ns().unwrap();
        let start = Instant::now();
        let mut x = 0u64;
        let mut after = before;
        while after - before < 10_000_000 {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "20 s busy and process CPU time went {before} -> {after}"
            );
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            after = process_cpu_ns().unwrap();
        }
    }

    #[test]
    fn ns_since_saturates_instead_of_going_negative() {
        let a = now();
        let b = Stamp(a.0.saturating_sub(1000));
        assert_eq!(b.ns_since(a), 0);
    }
}
