//! Distance culling: points against a sphere, bounding spheres against frustum planes.
//!
//! Owns: visibility bitmasks, one byte per vector (bit `l` = row `8 * i + l`). Must never: set
//! a bit for a padding lane or a NaN input (comparisons with NaN are false: NaN is culled).

use super::{check_len, check_rows, tail_mask};
use crate::error::{LengthMismatch, RowCountTooLarge};
use crate::LANES;
use wide::{f32x8, CmpGe, CmpLe};

/// A cull could not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CullError {
    /// Input or output slices disagree in length.
    #[error(transparent)]
    Length(#[from] LengthMismatch),
    /// More rows than lanes.
    #[error(transparent)]
    Rows(#[from] RowCountTooLarge),
}

/// Six planes `(nx, ny, nz, d)`; a point `p` is inside a plane when `n . p + d >= 0`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frustum {
    /// Left, right, bottom, top, near, far.
    pub planes: [[f32; 4]; 6],
}

impl Frustum {
    /// The planes of a row-major view-projection matrix `m` (clip = `m * [x, y, z, 1]`) with
    /// Vulkan's clip volume (`-w <= x, y <= w`, `0 <= z <= w`), by Gribb and Hartmann, "Fast
    /// extraction of viewing frustum planes from the world-view-projection matrix" (2001);
    /// each plane normalised so `n . p + d` is a signed distance.
    pub fn from_view_proj(m: [[f32; 4]; 4]) -> Frustum {
        let row = |r: usize| m[r];
        let add = |a: [f32; 4], b: [f32; 4]| [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]];
        let sub = |a: [f32; 4], b: [f32; 4]| [a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3]];
        let w = row(3);
        let raw = [
            add(w, row(0)),
            sub(w, row(0)),
            add(w, row(1)),
            sub(w, row(1)),
            row(2),
            sub(w, row(2)),
        ];
        let planes = raw.map(|p| {
            let len = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
            if len > 0.0 {
                [p[0] / len, p[1] / len, p[2] / len, p[3] / len]
            } else {
                p
            }
        });
        Frustum { planes }
    }
}

fn check_out(kernel: &'static str, lanes: usize, out: usize) -> Result<(), LengthMismatch> {
    check_len(kernel, lanes, out)
}

/// Marks rows whose point lies within `radius` of `center` (`|p - c|^2 <= radius^2`, summed
/// as `(dx*dx + dy*dy) + dz*dz`); returns how many. `out` has one byte per vector.
pub fn cull_sphere(
    pos: [&[f32x8]; 3],
    rows: usize,
    center: [f32; 3],
    radius: f32,
    out: &mut [u8],
) -> Result<usize, CullError> {
    let [x, y, z] = pos;
    check_len("cull_sphere", x.len(), y.len())?;
    check_len("cull_sphere", x.len(), z.len())?;
    check_out("cull_sphere", x.len(), out.len())?;
    check_rows("cull_sphere", rows, x.len())?;
    let c = center.map(f32x8::splat);
    let r2 = f32x8::splat(radius * radius);
    let mut visible = 0;
    for i in 0..x.len() {
        let (dx, dy, dz) = (x[i] - c[0], y[i] - c[1], z[i] - c[2]);
        let d2 = dx * dx + dy * dy + dz * dz;
        let bits = (d2.cmp_le(r2) & tail_mask(i, rows)).move_mask() as u8;
        out[i] = bits;
        visible += bits.count_ones() as usize;
    }
    Ok(visible)
}

/// Scalar twin of [`cull_sphere`] over padded floats.
pub fn cull_sphere_scalar(
    pos: [&[f32]; 3],
    rows: usize,
    center: [f32; 3],
    radius: f32,
    out: &mut [u8],
) -> Result<usize, CullError> {
    let [x, y, z] = pos;
    check_len("cull_sphere_scalar", x.len(), y.len())?;
    check_len("cull_sphere_scalar", x.len(), z.len())?;
    check_out("cull_sphere_scalar", x.len().div_ceil(LANES), out.len())?;
    check_rows("cull_sphere_scalar", rows, x.len() / LANES)?;
    let r2 = radius * radius;
    out.fill(0);
    let mut visible = 0;
    for i in 0..rows {
        let (dx, dy, dz) = (x[i] - center[0], y[i] - center[1], z[i] - center[2]);
        let d2 = dx * dx + dy * dy + dz * dz;
        if d2 <= r2 {
            out[i / LANES] |= 1 << (i % LANES);
            visible += 1;
        }
    }
    Ok(visible)
}

/// Marks rows whose bounding sphere (centre `pos`, radius `radius`) is not wholly outside any
/// plane: for every plane, `((nx*x + ny*y) + nz*z) + d + r >= 0`. Returns how many.
pub fn cull_frustum(
    pos: [&[f32x8]; 3],
    radius: &[f32x8],
    rows: usize,
    frustum: &Frustum,
    out: &mut [u8],
) -> Result<usize, CullError> {
    let [x, y, z] = pos;
    for s in [y, z, radius] {
        check_len("cull_frustum", x.len(), s.len())?;
    }
    check_out("cull_frustum", x.len(), out.len())?;
    check_rows("cull_frustum", rows, x.len())?;
    let planes = frustum.planes.map(|p| p.map(f32x8::splat));
    let zero = f32x8::splat(0.0);
    let mut visible = 0;
    for i in 0..x.len() {
        let mut inside = tail_mask(i, rows);
        for p in &planes {
            let dist = p[0] * x[i] + p[1] * y[i] + p[2] * z[i] + p[3] + radius[i];
            inside = inside & dist.cmp_ge(zero);
        }
        let bits = inside.move_mask() as u8;
        out[i] = bits;
        visible += bits.count_ones() as usize;
    }
    Ok(visible)
}

/// Scalar twin of [`cull_frustum`] over padded floats.
pub fn cull_frustum_scalar(
    pos: [&[f32]; 3],
    radius: &[f32],
    rows: usize,
    frustum: &Frustum,
    out: &mut [u8],
) -> Result<usize, CullError> {
    let [x, y, z] = pos;
    for s in [y, z, radius] {
        check_len("cull_frustum_scalar", x.len(), s.len())?;
    }
    check_out("cull_frustum_scalar", x.len().div_ceil(LANES), out.len())?;
    check_rows("cull_frustum_scalar", rows, x.len() / LANES)?;
    out.fill(0);
    let mut visible = 0;
    for i in 0..rows {
        let inside = frustum.planes.iter().all(|p| {
            let dist = p[0] * x[i] + p[1] * y[i] + p[2] * z[i] + p[3] + radius[i];
            dist >= 0.0
        });
        if inside {
            out[i / LANES] |= 1 << (i % LANES);
            visible += 1;
        }
    }
    Ok(visible)
}
