//! Why a snapshot could not be taken or restored ([`SnapshotError`]): its own module because
//! every store a snapshot copies (columns, field-SoA columns, resources) reports it, and the
//! snapshot itself reads those stores.
//!
//! Owns: the error. Must never: depend on the stores (they depend on it).

/// Why a snapshot could not be taken or restored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// A component or resource has no way to be copied.
    #[error(
        "{kind} `{name}` cannot be snapshotted: it is not `Clone`; fix: derive `Clone` for it \
         (the `Component`/`Resource` derive then copies it), or return `Some(Self::clone)` from \
         `snapshot_clone` in a hand-written impl"
    )]
    NotCloneable {
        /// `"component"` or `"resource"`.
        kind: &'static str,
        /// Its `NAME`.
        name: &'static str,
    },
    /// The snapshot was taken of another world (column indices differ between worlds).
    #[error(
        "the snapshot was taken of another world; fix: restore a world from its own snapshots \
         (use save/load to move state between worlds)"
    )]
    OtherWorld,
    /// The snapshot holds nothing.
    #[error("the snapshot is empty: nothing was captured into it yet; fix: `snapshot_into` first")]
    Empty,
    /// A component changed layout (AoS <-> field-SoA) since the snapshot.
    #[error(
        "component `{component}` changed layout since the snapshot; fix: choose layouts before \
         the first snapshot"
    )]
    LayoutChanged {
        /// The component's `NAME`.
        component: &'static str,
    },
}
