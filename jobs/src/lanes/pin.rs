//! Pinning a worker to its core and lowering a background worker's OS priority.
//!
//! Owns: the two OS calls and the report of how they went. Must never: fail a lane because the
//! OS refused (containers and cpusets do): the lane runs unpinned or at normal priority, and the
//! refusal is reported once.

/// How pinning and prioritising one worker went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinOutcome {
    /// Lane name.
    pub lane: String,
    /// Worker index in the lane.
    pub worker: usize,
    /// The core asked for (`None`: the plan left it unpinned).
    pub core: Option<usize>,
    /// Whether the OS accepted the affinity.
    pub pinned: bool,
    /// Whether the OS accepted the lower priority (`None`: not asked, a frame-critical lane).
    pub lowered_priority: Option<bool>,
}

/// Nice value for background lanes: low enough that a frame-critical thread sharing the core
/// preempts it at once, not so low that asset work starves on a busy machine (10 is the
/// conventional "background" level of `nice(1)`).
pub const BACKGROUND_NICE: i32 = 10;

/// Pins the calling thread to `core`. Returns whether the OS accepted.
#[cfg(not(loom))]
pub(crate) fn pin_current(core: usize) -> bool {
    core_affinity::set_for_current(core_affinity::CoreId { id: core })
}

#[cfg(loom)]
pub(crate) fn pin_current(_core: usize) -> bool {
    true
}

/// Lowers the calling thread's scheduling priority to [`BACKGROUND_NICE`]. Linux sets nice
/// values per thread (the kernel's task is the thread), so this leaves the rest of the process
/// alone.
#[cfg(all(target_os = "linux", not(loom)))]
pub(crate) fn lower_priority_current() -> bool {
    // SAFETY: `gettid` has no preconditions and returns the caller's thread id;
    // `setpriority(PRIO_PROCESS, tid, n)` only changes that thread's nice value and reports
    // failure through its return value (EACCES/EPERM in restricted containers).
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, BACKGROUND_NICE) == 0
    }
}

#[cfg(any(not(target_os = "linux"), loom))]
pub(crate) fn lower_priority_current() -> bool {
    false
}

/// Makes the calling thread's timed waits wake on time: Linux rounds a normal thread's timer
/// up by up to 50 us (its timer slack), longer than a ticked lane's wake-up lead. Returns
/// whether the OS accepted.
#[cfg(all(target_os = "linux", not(loom)))]
pub(crate) fn tighten_timer_slack_current() -> bool {
    // SAFETY: `prctl(PR_SET_TIMERSLACK, n)` takes plain integers, changes only the calling
    // thread's timer slack and reports failure through its return value.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) == 0 }
}

#[cfg(any(not(target_os = "linux"), loom))]
pub(crate) fn tighten_timer_slack_current() -> bool {
    false
}
