//! Uniform-grid neighbour pass: for every particle, sums over the others within a radius.
//!
//! Owns: a reusable uniform grid (counting sort of particles by cell) and the neighbour sums a
//! boids or particle demo steers from: neighbour count, sum of offsets `p_j - p_i`, sum of
//! neighbour velocities. Must never: allocate per pass once warm (buffers are kept and reused),
//! or miss a neighbour (the cell edge is at least the radius, so every neighbour lies in the
//! 3x3x3 block of cells around a particle).
//!
//! # Algorithm
//! 1. `rebuild`: bounds of the finite positions; cell edge = radius, doubled until the grid has
//!    at most [`MAX_CELLS`] cells; a counting sort (Knuth, TAOCP vol. 3, 5.2 "distribution
//!    counting") gives each cell a contiguous run of slots, with positions and velocities copied
//!    into slot order (padded by 8 so a vector load past a run's end stays in bounds).
//!    Non-finite positions clamp into an edge cell; their distances are NaN or infinite, so
//!    they neither find nor are found as neighbours.
//! 2. `neighbour_sums`: for each particle, the three x-adjacent cells of each of the nine
//!    (y, z) rows are one contiguous run of slots. Each run is read eight slots at a time; lanes
//!    past the run's end and the particle's own slot are masked off; `d2 < r^2` selects
//!    neighbours. Eight lane accumulators per sum, folded in lane order 0..8; the scalar twin
//!    emulates the lanes, so both agree bit for bit.
//! 3. In parallel: `neighbour_sums_slots` computes the same sums for a range of slots into
//!    slot-ordered buffers (disjoint ranges on different threads), then `rows_from_slots`
//!    gathers them into row order for a range of rows. Each particle's sum is computed by the
//!    same code in the same order, so the result equals `neighbour_sums` bit for bit however the
//!    ranges are cut.

use super::{check_len, FIRST_N};
use crate::error::LengthMismatch;
use crate::{LANES, PAD};
use wide::{f32x8, CmpLt};

/// Most cells a grid may have (8 MiB of run starts): bounds the memory a sparse, far-flung
/// particle set can make the grid take; past it the cell edge doubles.
pub const MAX_CELLS: usize = 1 << 21;

/// Most particles a grid takes: slots are `u32`, and counts are summed in `f32` (exact to 2^24).
pub const MAX_PARTICLES: usize = 1 << 24;

/// The grid could not be built.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum GridError {
    /// Input slices disagree in length.
    #[error(transparent)]
    Length(#[from] LengthMismatch),
    /// The radius is not a positive finite number.
    #[error("uniform grid: radius {radius} is not a positive finite number (fix: pass the interaction radius, > 0)")]
    Radius {
        /// The radius given.
        radius: f32,
    },
    /// Too many particles.
    #[error("uniform grid: {rows} particles exceed the limit {max}: counts are f32 sums, exact to 2^24 (fix: split the set)")]
    TooMany {
        /// Particles given.
        rows: usize,
        /// The limit.
        max: usize,
    },
}

/// Per-particle neighbour sums, in the particles' own row order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NeighbourSums {
    /// Neighbours within the radius (an integer, stored as `f32` to stay field-SoA).
    pub count: Vec<f32>,
    /// Sum of `p_j - p_i` over neighbours (x, y, z): cohesion and separation steer from it.
    pub offset: [Vec<f32>; 3],
    /// Sum of neighbour velocities (x, y, z): alignment steers from it.
    pub velocity: [Vec<f32>; 3],
}

impl NeighbourSums {
    /// The seven columns in the order the ranged API uses: count, offset x/y/z, velocity x/y/z.
    pub fn columns(&self) -> [&[f32]; 7] {
        let [o0, o1, o2] = &self.offset;
        let [v0, v1, v2] = &self.velocity;
        [&self.count, o0, o1, o2, v0, v1, v2]
    }

    /// The seven columns, mutable (same order as [`NeighbourSums::columns`]).
    pub fn columns_mut(&mut self) -> [&mut Vec<f32>; 7] {
        let [o0, o1, o2] = &mut self.offset;
        let [v0, v1, v2] = &mut self.velocity;
        [&mut self.count, o0, o1, o2, v0, v1, v2]
    }

    /// Sets every column to `rows` zeros (buffers reused).
    pub fn reset(&mut self, rows: usize) {
        for v in std::iter::once(&mut self.count)
            .chain(&mut self.offset)
            .chain(&mut self.velocity)
        {
            v.clear();
            v.resize(rows, 0.0);
        }
    }
}

/// A uniform grid over particles, rebuilt each step and reused across steps.
#[derive(Debug, Clone, Default)]
pub struct UniformGrid {
    radius: f32,
    cell: f32,
    origin: [f32; 3],
    dims: [usize; 3],
    cell_start: Vec<u32>,
    /// Next free slot per cell during the counting sort's scatter.
    cursor: Vec<u32>,
    slot_cell: Vec<u32>,
    order: Vec<u32>,
    /// Inverse of `order`: the slot of each row.
    slot_of_row: Vec<u32>,
    cell_of_row: Vec<u32>,
    /// Slot-ordered x, y, z, vx, vy, vz, each padded by [`LANES`] floats of [`PAD`].
    sorted: [Vec<f32>; 6],
    rows: usize,
}

impl UniformGrid {
    /// An empty grid (allocates nothing until the first rebuild).
    pub fn new() -> Self {
        UniformGrid::default()
    }

    /// Particles in the grid.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// `true` when the grid holds no particles.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The cell edge in use (>= the radius).
    pub fn cell_size(&self) -> f32 {
        self.cell
    }

    /// Cells per axis.
    pub fn dims(&self) -> [usize; 3] {
        self.dims
    }

    /// Sorts the particles (positions `pos`, velocities `vel`, `rows` each) into cells for
    /// neighbour queries within `radius`.
    pub fn rebuild(
        &mut self,
        pos: [&[f32]; 3],
        vel: [&[f32]; 3],
        radius: f32,
    ) -> Result<(), GridError> {
        let rows = pos[0].len();
        for s in pos.iter().chain(vel.iter()) {
            check_len("UniformGrid::rebuild", rows, s.len())?;
        }
        if !(radius.is_finite() && radius > 0.0) {
            return Err(GridError::Radius { radius });
        }
        if rows > MAX_PARTICLES {
            return Err(GridError::TooMany {
                rows,
                max: MAX_PARTICLES,
            });
        }
        self.rows = rows;
        self.radius = radius;
        self.place_cells(pos, radius);
        self.counting_sort(pos);
        for (dst, src) in self.sorted.iter_mut().zip(pos.iter().chain(vel.iter())) {
            dst.clear();
            dst.extend(self.order.iter().map(|&r| src[r as usize]));
            dst.extend([PAD; LANES]);
        }
        Ok(())
    }

    fn place_cells(&mut self, pos: [&[f32]; 3], radius: f32) {
        let mut lo = [f32::INFINITY; 3];
        let mut hi = [f32::NEG_INFINITY; 3];
        for a in 0..3 {
            for &p in pos[a].iter().filter(|p| p.is_finite()) {
                lo[a] = lo[a].min(p);
                hi[a] = hi[a].max(p);
            }
            if lo[a] > hi[a] {
                (lo[a], hi[a]) = (0.0, 0.0);
            }
        }
        let mut cell = radius;
        let dims = loop {
            let d = [0, 1, 2].map(|a| ((hi[a] as f64 - lo[a] as f64) / cell as f64).floor() + 1.0);
            if d[0] * d[1] * d[2] <= MAX_CELLS as f64 || !cell.is_finite() {
                break d.map(|v| (v as usize).max(1));
            }
            cell *= 2.0;
        };
        self.cell = cell;
        self.origin = lo;
        self.dims = dims;
    }

    fn cell_coord(&self, axis: usize, p: f32) -> usize {
        // NaN and -inf cast to 0, +inf saturates: both clamp into an edge cell.
        (((p - self.origin[axis]) / self.cell) as usize).min(self.dims[axis] - 1)
    }

    fn counting_sort(&mut self, pos: [&[f32]; 3]) {
        let [dx, dy, dz] = self.dims;
        let cells = dx * dy * dz;
        self.cell_start.clear();
        self.cell_start.resize(cells + 1, 0);
        self.cell_of_row.clear();
        for r in 0..self.rows {
            let (cx, cy, cz) = (
                self.cell_coord(0, pos[0][r]),
                self.cell_coord(1, pos[1][r]),
                self.cell_coord(2, pos[2][r]),
            );
            let c = (cz * dy + cy) * dx + cx;
            self.cell_of_row.push(c as u32);
            self.cell_start[c + 1] += 1;
        }
        for c in 0..cells {
            self.cell_start[c + 1] += self.cell_start[c];
        }
        self.order.clear();
        self.order.resize(self.rows, 0);
        self.cursor.clear();
        self.cursor.extend_from_slice(&self.cell_start[..cells]);
        for r in 0..self.rows {
            let c = self.cell_of_row[r] as usize;
            let slot = self.cursor[c] as usize;
            self.cursor[c] += 1;
            self.order[slot] = r as u32;
        }
        self.slot_cell.clear();
        self.slot_cell
            .extend(self.order.iter().map(|&r| self.cell_of_row[r as usize]));
        self.slot_of_row.clear();
        self.slot_of_row.resize(self.rows, 0);
        for (slot, &r) in self.order.iter().enumerate() {
            self.slot_of_row[r as usize] = slot as u32;
        }
    }

    /// The nine contiguous slot runs `[start, end)` that hold the 3x3x3 cells around cell `c`.
    fn runs(&self, c: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let [dx, dy, dz] = self.dims;
        let (cx, cy, cz) = (c % dx, (c / dx) % dy, c / (dx * dy));
        let (x0, x1) = (cx.saturating_sub(1), (cx + 1).min(dx - 1));
        let (y0, y1) = (cy.saturating_sub(1), (cy + 1).min(dy - 1));
        let (z0, z1) = (cz.saturating_sub(1), (cz + 1).min(dz - 1));
        (z0..=z1).flat_map(move |z| {
            (y0..=y1).map(move |y| {
                let row = (z * dy + y) * dx;
                (
                    self.cell_start[row + x0] as usize,
                    self.cell_start[row + x1 + 1] as usize,
                )
            })
        })
    }

    /// The neighbour sums of every particle with the `f32x8` kernel, written into `out` (resized
    /// to the particle count; its buffers are reused).
    pub fn neighbour_sums(&self, out: &mut NeighbourSums) {
        out.reset(self.rows);
        for slot in 0..self.rows {
            self.store(out, slot, self.slot_lanes(slot));
        }
    }

    /// The eight-lane accumulators of the particle in `slot` (count, offset x/y/z, velocity
    /// x/y/z), before the lane fold.
    #[inline]
    fn slot_lanes(&self, slot: usize) -> [[f32; LANES]; 7] {
        let r2 = f32x8::splat(self.radius * self.radius);
        let (zero, one) = (f32x8::splat(0.0), f32x8::splat(1.0));
        let s = &self.sorted;
        let pi = [0, 1, 2].map(|a| f32x8::splat(s[a][slot]));
        let mut acc = [zero; 7];
        for (start, end) in self.runs(self.slot_cell[slot] as usize) {
            let mut k = start;
            while k < end {
                let mut mask = FIRST_N[(end - k).min(LANES)];
                if (k..k + LANES).contains(&slot) {
                    mask = mask & !lane_bit(slot - k);
                }
                let d = [0, 1, 2].map(|a| load8(&s[a], k) - pi[a]);
                let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                let near = d2.cmp_lt(r2) & mask;
                acc[0] = acc[0] + near.blend(one, zero);
                for a in 0..3 {
                    acc[1 + a] = acc[1 + a] + near.blend(d[a], zero);
                    acc[4 + a] = acc[4 + a] + near.blend(load8(&s[3 + a], k), zero);
                }
                k += LANES;
            }
        }
        acc.map(|v| v.to_array())
    }

    /// Step 3a: the sums of slots `first..first + out[0].len()` into slot-ordered buffers
    /// (count, offset x/y/z, velocity x/y/z; all seven the same length). Disjoint ranges may run
    /// on different threads. Errors: buffers of different lengths, or a range past the
    /// particles.
    pub fn neighbour_sums_slots(
        &self,
        first: usize,
        out: [&mut [f32]; 7],
    ) -> Result<(), LengthMismatch> {
        let n = self.check_range(
            [
                "UniformGrid::neighbour_sums_slots",
                "UniformGrid::neighbour_sums_slots (range end vs particles)",
            ],
            first,
            &out,
        )?;
        let mut out = out;
        for i in 0..n {
            let acc = self.slot_lanes(first + i);
            for (col, lanes) in out.iter_mut().zip(acc) {
                col[i] = fold_lanes(lanes);
            }
        }
        Ok(())
    }

    /// Step 3b: rows `first..first + out[0].len()` of the sums, gathered from the complete
    /// slot-ordered buffers `slots` (each as long as the particle count). Disjoint row ranges
    /// may run on different threads. Errors: lengths that do not match.
    pub fn rows_from_slots(
        &self,
        first: usize,
        slots: [&[f32]; 7],
        out: [&mut [f32]; 7],
    ) -> Result<(), LengthMismatch> {
        let n = self.check_range(
            [
                "UniformGrid::rows_from_slots",
                "UniformGrid::rows_from_slots (range end vs particles)",
            ],
            first,
            &out,
        )?;
        for s in &slots {
            check_len(
                "UniformGrid::rows_from_slots (slot buffers)",
                self.rows,
                s.len(),
            )?;
        }
        let mut out = out;
        for i in 0..n {
            let slot = self.slot_of_row[first + i] as usize;
            for (col, src) in out.iter_mut().zip(&slots) {
                col[i] = src[slot];
            }
        }
        Ok(())
    }

    /// The ranged API's argument check: all seven `out` columns as long as the first, and the
    /// range `first..first + len` inside the particles. Returns the length. `kernel` names the
    /// two checks in the error.
    fn check_range(
        &self,
        kernel: [&'static str; 2],
        first: usize,
        out: &[&mut [f32]; 7],
    ) -> Result<usize, LengthMismatch> {
        let n = out[0].len();
        for o in out {
            check_len(kernel[0], n, o.len())?;
        }
        check_len(kernel[1], self.rows.max(first + n), self.rows)?;
        Ok(n)
    }

    /// Scalar twin of [`UniformGrid::neighbour_sums`] (emulates the eight lanes).
    pub fn neighbour_sums_scalar(&self, out: &mut NeighbourSums) {
        out.reset(self.rows);
        let r2 = self.radius * self.radius;
        let s = &self.sorted;
        for slot in 0..self.rows {
            let pi = [0, 1, 2].map(|a| s[a][slot]);
            let mut acc = [[0.0f32; LANES]; 7];
            for (start, end) in self.runs(self.slot_cell[slot] as usize) {
                let mut k = start;
                while k < end {
                    for l in 0..LANES {
                        let j = k + l;
                        let valid = j < end && j != slot;
                        let d = [0, 1, 2].map(|a| s[a][j] - pi[a]);
                        let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                        let near = valid && d2 < r2;
                        let pick = |v: f32| if near { v } else { 0.0 };
                        acc[0][l] = acc[0][l] + pick(1.0);
                        for a in 0..3 {
                            acc[1 + a][l] = acc[1 + a][l] + pick(d[a]);
                            acc[4 + a][l] = acc[4 + a][l] + pick(s[3 + a][j]);
                        }
                    }
                    k += LANES;
                }
            }
            self.store(out, slot, acc);
        }
    }

    fn store(&self, out: &mut NeighbourSums, slot: usize, acc: [[f32; LANES]; 7]) {
        let row = self.order[slot] as usize;
        out.count[row] = fold_lanes(acc[0]);
        for a in 0..3 {
            out.offset[a][row] = fold_lanes(acc[1 + a]);
            out.velocity[a][row] = fold_lanes(acc[4 + a]);
        }
    }
}

/// The lane fold of every sum: lanes 0..8 in order.
#[inline]
fn fold_lanes(lanes: [f32; LANES]) -> f32 {
    lanes[1..].iter().fold(lanes[0], |t, v| t + v)
}

/// Eight floats from `s[k..k + 8]` (the sorted arrays are padded, so this stays in bounds).
#[inline(always)]
fn load8(s: &[f32], k: usize) -> f32x8 {
    let lanes: [f32; LANES] = s[k..k + LANES]
        .try_into()
        .expect("UniformGrid: sorted arrays are padded by 8 floats");
    f32x8::new(lanes)
}

/// A mask with only lane `l` set.
#[inline(always)]
fn lane_bit(l: usize) -> f32x8 {
    FIRST_N[l + 1] & !FIRST_N[l]
}
