//! Shared helpers for the cross-crate integration tests (see `tests/`).
