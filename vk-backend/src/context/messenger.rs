//! The validation-layer debug messenger: every message routed into `tracing` and counted.
//!
//! Owns: [`ValidationCounts`] and the `extern "system"` callback. Must never: unwind across the
//! FFI boundary (the callback does nothing that can panic: atomics, a lossy string conversion
//! and a `tracing` event), or outlive the counts it points at (`Shared` destroys the messenger
//! before dropping the `Arc`).

use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};

use ash::vk;

/// Messages the layers sent, by severity. Tests hold the bar at zero warnings and errors.
///
/// Writers: the driver's callback thread(s) (whichever thread made the offending call); readers:
/// anyone. `Relaxed` suffices: each counter is independent and only read as a total.
#[derive(Debug, Default)]
pub struct ValidationCounts {
    errors: AtomicU64,
    warnings: AtomicU64,
    other: AtomicU64,
}

impl ValidationCounts {
    /// Error-severity messages so far.
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }
    /// Warning-severity messages so far.
    pub fn warnings(&self) -> u64 {
        self.warnings.load(Ordering::Relaxed)
    }
    /// Info / verbose messages so far (not requested by default, so normally 0).
    pub fn other(&self) -> u64 {
        self.other.load(Ordering::Relaxed)
    }
    /// Errors + warnings: the number the tests require to be zero.
    pub fn total(&self) -> u64 {
        self.errors() + self.warnings()
    }
}

/// The severities and types the messenger asks for.
pub(crate) fn create_info(counts: &ValidationCounts) -> vk::DebugUtilsMessengerCreateInfoEXT<'_> {
    vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(
            vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
        )
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(on_message))
        .user_data(counts as *const ValidationCounts as *mut c_void)
}

/// The one best-practices message validation mode causes itself: enabling the debugging
/// extension the messenger needs. Not a defect of the application; counted as info.
const EXPECTED_IN_VALIDATION: &CStr =
    c"UNASSIGNED-BestPractices-vkCreateInstance-specialuse-extension-debugging";

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    kind: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    // SAFETY:
    // - `user` is the `ValidationCounts` registered in `create_info`; `Shared` keeps it alive
    //   (inside an `Arc`) until after the messenger and the instance are destroyed.
    // - `data` and its `p_message` are valid for the duration of the callback (spec of
    //   PFN_vkDebugUtilsMessengerCallbackEXT); a null message is handled.
    // - `p_message_id_name`, when not null, is valid for the callback's duration too.
    let (counts, message, id) = unsafe {
        let counts = &*(user as *const ValidationCounts);
        let msg = if data.is_null() || (*data).p_message.is_null() {
            std::borrow::Cow::Borrowed("<no message>")
        } else {
            CStr::from_ptr((*data).p_message).to_string_lossy()
        };
        let id = if data.is_null() || (*data).p_message_id_name.is_null() {
            None
        } else {
            Some(CStr::from_ptr((*data).p_message_id_name))
        };
        (counts, msg, id)
    };
    if id == Some(EXPECTED_IN_VALIDATION) {
        // Best practices flags VK_EXT_debug_utils as a debugging extension; validation mode
        // enables it on purpose (it is how this messenger hears the layers). Counted as info.
        counts.other.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(target: "lanegraph_vk::validation", kind = ?kind, "{message}");
    } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
        counts.errors.fetch_add(1, Ordering::Relaxed);
        tracing::error!(target: "lanegraph_vk::validation", kind = ?kind, "{message}");
    } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING) {
        counts.warnings.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(target: "lanegraph_vk::validation", kind = ?kind, "{message}");
    } else {
        counts.other.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(target: "lanegraph_vk::validation", kind = ?kind, "{message}");
    }
    // VK_FALSE: the call that triggered the message proceeds (the spec reserves TRUE for layers).
    vk::FALSE
}
