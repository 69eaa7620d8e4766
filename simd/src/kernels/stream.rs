//! The matched bandwidth reference: a streaming read-modify-write over flat arrays.
//!
//! Owns: the yardstick the memory-bound integrate is measured against. Must never: do less
//! memory traffic than the kernel it is matched to.
//!
//! # Traffic, counted honestly
//! `a[i] = a[i] + b[i] * s` reads `a` and `b` and writes `a` back. Because every written cache
//! line was just read, there is no write-allocate (read-for-ownership) traffic on top: per float
//! of `a` it moves 4 B read of `a`, 4 B read of `b`, 4 B written back = 12 B. The field-SoA
//! integrate over three axes moves exactly the same per entity (24 B read, 12 B written back:
//! 36 B), so "bytes" for both is `36 * entities`. A STREAM-style triad `c = a + s * b` into a
//! separate `c` would move a hidden fourth stream (the RFO read of `c`) that STREAM does not
//! count; that is why the reference here is read-modify-write and not the triad.

use super::check_len;
use crate::error::LengthMismatch;
use wide::f32x8;

/// Bytes the integrate kernels and [`stream_rmw`] move per entity (24 read + 12 written).
pub const INTEGRATE_BYTES_PER_ENTITY: usize = 36;

/// `a[i] = a[i] + b[i] * s` over two flat arrays: the same operation as integrate, on two
/// streams instead of six.
pub fn stream_rmw(a: &mut [f32x8], b: &[f32x8], s: f32) -> Result<(), LengthMismatch> {
    check_len("stream_rmw", a.len(), b.len())?;
    // Integrate's own operation and dispatch (so the reference runs at the same width);
    // lengths are checked equal, so it cannot fail.
    super::integrate::integrate(a, b, s)?;
    Ok(())
}
