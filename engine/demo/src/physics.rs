//! The demo's physics step: boids steering from a uniform-grid neighbour pass, gravity and
//! drag, integration and reflection at the arena's walls, all on the physics lane.
//!
//! Owns: the per-step physics of the demo. Must never: depend on how the work is split (every
//! kernel is per row, and each particle's neighbour sum is computed whole by one job), so the
//! world hash is the same for any lane plan.
//!
//! # One step
//! 1. Neighbour pass (when the physics strategy asks for it this step), three fork-joins on the
//!    physics lane: one job rebuilds the grid from the positions; then chunks of at least
//!    [`NEIGHBOUR_CHUNK`] grid slots sum those particles' neighbours into slot order; then
//!    chunks of as many rows gather the sums into row order.
//! 2. `World::par_soa_chunks2` splits the position and velocity columns into chunks (the World
//!    picks their size) that run on the physics lane: steering from the sums, `gravity_drag`,
//!    `integrate`, `reflect`, all `f32x8` kernels on resident columns.
//!
//! Every fork-join goes through `Lanes::parallel_chunks_mut` over stack arrays: no step
//! allocates once the grid and sums are warm.

use lanegraph::simd::kernels::{bounds, forces, grid, integrate};
use lanegraph::simd::{f32x8, SoaChunkMut};

use super::world::{Position, Velocity, ARENA, NEIGHBOUR_RADIUS};
use lanegraph::runtime::PhysicsStep;
use lanegraph::world::World;

/// Particles per neighbour-sum job (~1 ms of work at the demo's density: enough jobs for every
/// physics thread at 100,000 particles, few enough that dispatch is noise).
pub const NEIGHBOUR_CHUNK: usize = 4096;
/// Downward acceleration, units/s^2 (a light pull so the flock drifts and bounces; the crowd
/// rule below keeps it from piling up on the floor).
const GRAVITY: f32 = -0.5;
/// Linear drag, 1/s.
const DRAG: f32 = 0.05;
/// Restitution at the walls.
const RESTITUTION: f32 = 0.9;
/// Cohesion gain towards the neighbours' centre, 1/s^2; it turns into separation above
/// [`CROWD`] neighbours.
const COHESION: f32 = 0.5;
/// Neighbour count at which cohesion turns into separation. The sums give only the offset to
/// the neighbours' centre, not per-pair distances, so classic separation is approximated by
/// this sign change; it bounds the local density, and with it the neighbour pass's cost (which
/// grows with neighbours per particle).
const CROWD: f32 = 6.0;
/// Alignment gain towards the neighbours' mean velocity, 1/s.
const ALIGNMENT: f32 = 0.8;
/// Speed limit, units/s.
const MAX_SPEED: f32 = 40.0;

/// The physics state the demo keeps between steps (grid and sums are reused: no allocation
/// once warm).
#[derive(Debug, Default)]
pub struct DemoPhysics {
    grid: grid::UniformGrid,
    sums: grid::NeighbourSums,
    /// The sums in grid-slot order (step 1's middle fork-join writes them, the last reads).
    slot_sums: grid::NeighbourSums,
    zeros: Vec<f32>,
    have_sums: bool,
    /// Mean neighbours per particle in the last neighbour pass (its cost grows with it).
    pub mean_neighbours: f64,
}

impl DemoPhysics {
    /// One fixed step (see the module docs).
    pub fn step(&mut self, world: &mut World, step: &PhysicsStep<'_>) {
        let Some(lane) = step.lane else {
            return;
        };
        let every = step.settings.detail_every;
        let neighbours = every > 0 && step.tick % u64::from(every) == 0;
        self.have_sums = false;
        if neighbours {
            self.neighbour_pass(world, step, lane);
        }
        // The world's parallel lane is the engine's physics lane; the World picks the chunks.
        let sums = self.have_sums.then_some(&self.sums);
        let dt = step.dt;
        let moved =
            world.par_soa_chunks2::<Position, Velocity, _, _>(|p, v| move_chunk(p, v, sums, dt));
        if let Err(e) = moved {
            tracing::error!(target: "lanegraph", error = %e, "demo physics step failed; the chunks already claimed ran");
        }
    }

    fn neighbour_pass(
        &mut self,
        world: &World,
        step: &PhysicsStep<'_>,
        lane: lanegraph::jobs::LaneId,
    ) {
        let (Ok(Some(p)), Ok(Some(v))) = (
            world.soa_columns::<Position>(),
            world.soa_columns::<Velocity>(),
        ) else {
            return;
        };
        let (Ok(px), Ok(py), Ok(vx), Ok(vy)) = (
            p.table().field("x"),
            p.table().field("y"),
            v.table().field("x"),
            v.table().field("y"),
        ) else {
            return;
        };
        let n = px.len();
        self.zeros.resize(n, 0.0);
        let zeros = &self.zeros;
        let _span = lanegraph::span!("physics.neighbours", n as u64);
        // One job on the lane (the grid lives in a one-element slice, so the job borrows it
        // without a boxed closure: allocation-free).
        let built = std::sync::atomic::AtomicBool::new(false);
        let rebuilt = step.lanes.parallel_chunks_mut(
            lane,
            std::slice::from_mut(&mut self.grid),
            1,
            |_, g| {
                let _s = lanegraph::span!("physics.grid_rebuild");
                let ok = g[0]
                    .rebuild([px, py, zeros], [vx, vy, zeros], NEIGHBOUR_RADIUS)
                    .is_ok();
                built.store(ok, std::sync::atomic::Ordering::Relaxed);
            },
        );
        let built = built.into_inner();
        if rebuilt.is_err() || !built {
            self.sums.count.clear();
            return;
        }
        let grid = &self.grid;
        self.slot_sums.reset(n);
        // The share of the grid's slots summed this step: `k` of every 8 blocks of
        // `DETAIL_BLOCK` slots, the selection rotating with the tick, so every particle gets its
        // neighbours `k` steps in 8 and every step covers the same spread of the arena (blocks
        // from everywhere, not one dense region: each step costs about the same). It depends on
        // the tick and `n` only (never on the lane plan): the hash stays plan-independent.
        let eighths = detail_eighths(step.settings.detail_fraction);
        let tick = step.tick;
        let summed = per_chunk(step, lane, &mut self.slot_sums, |first, out| {
            let end = first + out[0].len();
            let _s = lanegraph::span!("physics.neighbour_sums", out[0].len() as u64);
            let mut out = out;
            let mut ok = true;
            let mut a = first;
            while a < end {
                let block = a / DETAIL_BLOCK;
                let b = ((block + 1) * DETAIL_BLOCK).min(end);
                if detail_block_selected(block, eighths, tick) {
                    let part = out.each_mut().map(|c| &mut c[a - first..b - first]);
                    ok &= grid.neighbour_sums_slots(a, part).is_ok();
                }
                a = b;
            }
            ok
        });
        self.sums.reset(n);
        let slot_sums = self.slot_sums.columns();
        let gathered = per_chunk(step, lane, &mut self.sums, |first, out| {
            let _s = lanegraph::span!("physics.neighbour_gather");
            grid.rows_from_slots(first, slot_sums, out).is_ok()
        });
        let ok = summed && gathered;
        self.have_sums = ok && self.sums.count.len() == px.len();
        if self.have_sums && !self.sums.count.is_empty() {
            let total: f64 = self.sums.count.iter().map(|&c| f64::from(c)).sum();
            self.mean_neighbours = total / self.sums.count.len() as f64;
        }
    }
}

/// Slots per block of the partial detail pass (a block is summed whole or not at all).
pub const DETAIL_BLOCK: usize = 256;

/// A detail share in eighths, 1..=8 (the physics ladder's shares are k/8).
pub fn detail_eighths(share: f32) -> u64 {
    ((f64::from(share) * 8.0).round() as u64).clamp(1, 8)
}

/// Whether block `block` gets the detail pass at `tick` when the pass covers `eighths`/8 of
/// the blocks: `k` of every 8 consecutive blocks, shifted by one each tick (over 8 ticks every
/// block is summed exactly `k` times).
pub fn detail_block_selected(block: usize, eighths: u64, tick: u64) -> bool {
    eighths >= 8 || (block as u64 + tick) % 8 < eighths
}

/// Most neighbour-sum chunks per pass (a stack array: no allocation).
const MAX_NEIGHBOUR_CHUNKS: usize = 64;

/// One chunk of the seven sum columns and its first row.
type SumChunk<'a> = Option<(usize, [&'a mut [f32]; 7])>;

/// `job` on chunks of at least [`NEIGHBOUR_CHUNK`] rows of `out`'s seven columns, in parallel
/// on `lane` (allocation-free: the chunks sit in a stack array handed to
/// `Lanes::parallel_chunks_mut`); `job` gets the first row and the chunk of every column. True
/// when every chunk ran and returned true.
fn per_chunk(
    step: &PhysicsStep<'_>,
    lane: lanegraph::jobs::LaneId,
    out: &mut grid::NeighbourSums,
    job: impl Fn(usize, [&mut [f32]; 7]) -> bool + Sync,
) -> bool {
    let n = out.count.len();
    let rows = NEIGHBOUR_CHUNK.max(n.div_ceil(MAX_NEIGHBOUR_CHUNKS));
    let mut slots: [SumChunk<'_>; MAX_NEIGHBOUR_CHUNKS] = std::array::from_fn(|_| None);
    let mut cols = out.columns_mut().map(|c| c.chunks_mut(rows));
    for (k, slot) in slots.iter_mut().enumerate() {
        let chunk = cols.each_mut().map(|c| c.next());
        if chunk.iter().any(Option::is_none) {
            break;
        }
        *slot = Some((k * rows, chunk.map(Option::unwrap_or_default)));
    }
    let failed = std::sync::atomic::AtomicBool::new(false);
    let ran = step.lanes.parallel_chunks_mut(lane, &mut slots, 1, |_, c| {
        for (first, chunk) in c.iter_mut().filter_map(Option::take) {
            if !job(first, chunk) {
                failed.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
    });
    ran.is_ok() && !failed.into_inner()
}

/// Step 2 for one chunk: steering, forces, integration, walls.
fn move_chunk(
    p: SoaChunkMut<'_, 2>,
    v: SoaChunkMut<'_, 2>,
    sums: Option<&grid::NeighbourSums>,
    dt: f32,
) {
    let _span = lanegraph::span!("physics.chunk", p.rows as u64);
    let [px, py] = p.fields;
    let [vx, vy] = v.fields;
    if let Some(s) = sums {
        steer(vx, vy, p.first_row, p.rows, s, dt);
    }
    forces::gravity_drag(vx, 0.0, DRAG, dt);
    forces::gravity_drag(vy, GRAVITY, DRAG, dt);
    // Lengths match (same table rows): the kernels' length errors cannot happen here.
    let _ = integrate::integrate(px, vx, dt);
    let _ = integrate::integrate(py, vy, dt);
    let _ = bounds::reflect(px, vx, -ARENA, ARENA, RESTITUTION);
    let _ = bounds::reflect(py, vy, -ARENA, ARENA, RESTITUTION);
}

/// Cohesion and alignment from the neighbour sums, then the speed limit (scalar per row: the
/// sums are per row, in row order).
fn steer(
    vx: &mut [f32x8],
    vy: &mut [f32x8],
    first_row: usize,
    rows: usize,
    s: &grid::NeighbourSums,
    dt: f32,
) {
    for (li, (xv, yv)) in vx.iter_mut().zip(vy.iter_mut()).enumerate() {
        let (xa, ya) = (xv.as_array_mut(), yv.as_array_mut());
        for k in 0..8 {
            let local = li * 8 + k;
            if local >= rows {
                return;
            }
            let row = first_row + local;
            let c = s.count[row];
            let (mut x, mut y) = (xa[k], ya[k]);
            if c > 0.0 {
                let inv = 1.0 / c;
                let pull = COHESION * (1.0 - c / CROWD);
                x += (s.offset[0][row] * inv * pull + (s.velocity[0][row] * inv - x) * ALIGNMENT)
                    * dt;
                y += (s.offset[1][row] * inv * pull + (s.velocity[1][row] * inv - y) * ALIGNMENT)
                    * dt;
            }
            let speed2 = x * x + y * y;
            if speed2 > MAX_SPEED * MAX_SPEED {
                let f = MAX_SPEED / speed2.sqrt();
                x *= f;
                y *= f;
            }
            xa[k] = x;
            ya[k] = y;
        }
    }
}
