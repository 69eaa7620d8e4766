//! Shared helpers for the criterion benches in `benches/`.
