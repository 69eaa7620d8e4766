//! Errors of the job runtime, one small type per failure.
//!
//! Owns: the error types and panic-message extraction. Must never: allocate on a success path.

use std::any::Any;

/// A lane id that is not in this runtime's plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("lane #{0} is not in this runtime's plan; fix: take lane ids from Lanes::lane(name) of the same runtime")]
pub struct UnknownLane(pub usize);

/// A job or graph node panicked. The run finished (nothing hangs): jobs that depend on the
/// panicking one were skipped, the others ran; the lane keeps working.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("job `{job}` panicked: {message}; {skipped} dependent job(s) skipped; fix: the panic is a bug in that job's code")]
pub struct JobPanicked {
    /// The job's or node's name (scoped jobs without a name: `#index`).
    pub job: String,
    /// The panic payload, when it was a string.
    pub message: String,
    /// Jobs that did not run because they depend on a job that panicked.
    pub skipped: usize,
}

/// The text of a panic payload, consuming it. The payload is dropped inside `catch_unwind`
/// (and leaked if its destructor panics too), so a hostile payload cannot unwind out of a job's
/// entry function and take a worker, or a waiter's stack state, with it.
pub fn take_panic_message(p: Box<dyn Any + Send>) -> String {
    let msg = panic_message(&*p);
    if let Err(again) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(p))) {
        std::mem::forget(again);
    }
    msg
}

/// Aborts the process if dropped during unwinding: placed around code that must never unwind
/// (a job entry function whose caller's stack state other threads still use). Entry functions
/// catch every panic of the job itself; reaching this is a broken internal invariant.
pub(crate) struct AbortOnUnwind;

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("lanegraph-jobs: a job entry function unwound; aborting (internal invariant broken)");
            std::process::abort();
        }
    }
}

/// The text of a panic payload (`&str` and `String` payloads; others say so).
pub fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".to_string()
    }
}
