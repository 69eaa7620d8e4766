//! Parallel queries: where a world's parallel work runs, and field-SoA chunks split across it.
//!
//! Owns: the lane a world's parallel queries run on ([`World::set_parallel_lane`]; the engine
//! sets its physics lane; `Query::par_for_each` runs there), the chunking rule, and
//! [`World::par_soa_chunks2`]. Must never: hand one row to two threads, return
//! before every chunk is done, allocate per call, or keep the lanes alive (the world holds a
//! weak handle: once the engine's lanes are gone, queries run on the calling thread).
//!
//! The chunk size is chosen here, not by the caller: about four chunks per thread serving the
//! lane (so a slow chunk can be balanced), never under [`MIN_CHUNK_ROWS`] rows (a chunk costs
//! a claim and a wake-up), at most [`MAX_CHUNKS`] (a stack array: no allocation).

use std::sync::{Arc, Weak};

use lanegraph_jobs::{JobPanicked, LaneId, Lanes, ParallelError};
use lanegraph_simd::{SoaChunkMut, SoaComponent};

use crate::world::component::Component;
use crate::world::error::WorldError;
use crate::world::World;

/// Fewest rows a chunk holds (below it the hand-off costs more than the rows).
pub const MIN_CHUNK_ROWS: usize = 4096;
/// Most chunks one query splits into.
pub const MAX_CHUNKS: usize = 64;

/// The lane a world's parallel queries run on.
#[derive(Debug, Clone)]
pub(crate) struct ParallelLane {
    pub(crate) lanes: Weak<Lanes>,
    pub(crate) lane: LaneId,
}

impl World {
    /// The body of [`WorldHooks::set_parallel_lane`](crate::hooks::WorldHooks::set_parallel_lane), which documents it.
    pub(crate) fn set_parallel_lane(&mut self, lanes: &Arc<Lanes>, lane: LaneId) {
        self.parallel = Some(ParallelLane {
            lanes: Arc::downgrade(lanes),
            lane,
        });
    }

    /// The body of [`WorldHooks::parallel_lane`](crate::hooks::WorldHooks::parallel_lane), which documents it.
    pub(crate) fn parallel_lane(&self) -> Option<LaneId> {
        self.parallel
            .as_ref()
            .filter(|t| t.lanes.strong_count() > 0)
            .map(|t| t.lane)
    }
}

impl World {
    /// Runs `f` on disjoint chunks of two field-SoA components' columns (position and
    /// velocity for an integrator), in parallel on the world's parallel lane (the physics lane
    /// inside an engine), the chunk size chosen by the World as for
    /// [`Query::par_for_each`](crate::world::Query::par_for_each); returns the rows swept. Each chunk holds the same rows of
    /// both (`first_row`, `rows`), as `f32x8` vectors per field, for the kernels. Bumps both
    /// components' domains; allocation-free once the rows are aligned.
    ///
    /// `NA` and `NB` are the components' field counts, inferred from how `f` destructures its
    /// chunks and checked **at compile time** against `A::FIELDS` and `B::FIELDS`. Rows that
    /// are not aligned (the components were inserted in different orders) are aligned first
    /// ([`WorldHooks::align_soa_rows`](crate::hooks::WorldHooks::align_soa_rows), a one-off reorder); components holding different entities
    /// are [`WorldError::NotAligned`]. Without a parallel lane the chunks run on the caller.
    ///
    /// ```
    /// use lanegraph::simd::kernels::integrate;
    /// use lanegraph::simd::SoaComponent;
    /// use lanegraph::world::{Component, StateHash, World};
    ///
    /// #[derive(Clone, Copy, Component, StateHash, SoaComponent)]
    /// struct Pos { x: f32, y: f32 }
    /// #[derive(Clone, Copy, Component, StateHash, SoaComponent)]
    /// struct Vel { x: f32, y: f32 }
    ///
    /// let mut world = World::new();
    /// world.use_field_soa::<Pos>().unwrap();
    /// world.use_field_soa::<Vel>().unwrap();
    /// for i in 0..1000 {
    ///     let e = world.spawn();
    ///     world.insert(e, Pos { x: i as f32, y: 0.0 }).unwrap();
    ///     world.insert(e, Vel { x: 1.0, y: -1.0 }).unwrap();
    /// }
    /// let rows = world
    ///     .par_soa_chunks2::<Pos, Vel, _, _>(|p, v| {
    ///         let ([px, py], [vx, vy]) = (p.fields, v.fields);
    ///         integrate::integrate(px, vx, 0.5).unwrap();
    ///         integrate::integrate(py, vy, 0.5).unwrap();
    ///     })
    ///     .unwrap();
    /// assert_eq!(rows, 1000);
    /// ```
    ///
    /// A closure that takes the wrong number of fields does not compile:
    ///
    /// ```compile_fail
    /// # use lanegraph::simd::SoaComponent;
    /// # use lanegraph::world::{Component, StateHash, World};
    /// # #[derive(Clone, Copy, Component, StateHash, SoaComponent)]
    /// # struct Pos { x: f32, y: f32 }
    /// # #[derive(Clone, Copy, Component, StateHash, SoaComponent)]
    /// # struct Vel { x: f32, y: f32 }
    /// let mut world = World::new();
    /// world.par_soa_chunks2::<Pos, Vel, _, _>(|p, v| {
    ///     let ([px, py, pz], [vx, vy]) = (p.fields, v.fields); // Pos has 2 fields, not 3
    /// });
    /// ```
    pub fn par_soa_chunks2<A, B, const NA: usize, const NB: usize>(
        &mut self,
        f: impl Fn(SoaChunkMut<'_, NA>, SoaChunkMut<'_, NB>) + Sync,
    ) -> Result<usize, WorldError>
    where
        A: Component + SoaComponent,
        B: Component + SoaComponent,
    {
        const {
            assert!(
                NA == A::FIELDS.len() && NB == B::FIELDS.len(),
                "par_soa_chunks2: the closure's chunks must have as many fields as the components"
            )
        };
        let target = self.parallel.clone();
        if let Err(WorldError::NotAligned { .. }) = self.lend_soa_pair::<A, B>().map(drop) {
            self.align_soa_rows::<A, B>()?;
        }
        let Some((mut a, mut b)) = self.lend_soa_pair::<A, B>()? else {
            return Ok(0);
        };
        let rows = a.len();
        let lanes = target.as_ref().and_then(|t| t.lanes.upgrade());
        let threads = match (&lanes, &target) {
            (Some(l), Some(t)) => lane_threads(l, t.lane),
            _ => 0,
        };
        let lanes_per_chunk = chunk_rows(rows, threads).div_ceil(lanegraph_simd::LANES);
        let (mut la, mut lb) = (a.lanes_mut(), b.lanes_mut());
        let chunks_a = la
            .chunks::<NA>(lanes_per_chunk)
            .expect("field counts checked at compile time, chunk size >= 1");
        let chunks_b = lb
            .chunks::<NB>(lanes_per_chunk)
            .expect("field counts checked at compile time, chunk size >= 1");
        match (lanes, target) {
            (Some(lanes), Some(t))
                if threads >= 2 && lanes_per_chunk * lanegraph_simd::LANES < rows =>
            {
                let mut slots: [SoaChunkPair<'_, NA, NB>; MAX_CHUNKS] =
                    std::array::from_fn(|_| None);
                let mut k = 0;
                for pair in chunks_a.zip(chunks_b) {
                    if k < MAX_CHUNKS {
                        slots[k] = Some(pair);
                        k += 1;
                    } else {
                        // `chunk_rows` keeps the count within MAX_CHUNKS; were it not, the
                        // rest would still run, here.
                        f(pair.0, pair.1);
                    }
                }
                lanes
                    .parallel_chunks_mut(t.lane, &mut slots[..k], 1, |_, c| {
                        for (ca, cb) in c.iter_mut().filter_map(Option::take) {
                            f(ca, cb);
                        }
                    })
                    .map_err(|e| WorldError::Panicked(into_panicked(e, "par_soa_chunks2")))?;
            }
            _ => on_caller("par_soa_chunks2", || {
                for (ca, cb) in chunks_a.zip(chunks_b) {
                    f(ca, cb);
                }
            })
            .map_err(WorldError::Panicked)?,
        }
        Ok(rows)
    }
}

/// One chunk of both components' columns (taken by the thread that claims it).
type SoaChunkPair<'a, const NA: usize, const NB: usize> =
    Option<(SoaChunkMut<'a, NA>, SoaChunkMut<'a, NB>)>;

/// Runs `f` on the calling thread, a panic in it reported as the parallel path reports one
/// (so a query's panic is the same typed error whatever the lane plan or row count): the
/// same payload reader as the lanes', which also keeps a payload whose `Drop` panics from
/// unwinding into the caller.
pub(crate) fn on_caller(job: &str, f: impl FnOnce()) -> Result<(), JobPanicked> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| JobPanicked {
        job: job.into(),
        message: lanegraph_jobs::error::take_panic_message(p),
        skipped: 0,
    })
}

/// Threads serving `lane` for the calling thread: its workers, plus the caller when it is the
/// registered owner and the plan lets the owner help that lane.
pub(crate) fn lane_threads(lanes: &Lanes, lane: LaneId) -> usize {
    lanes.plan().lane(lane).map_or(0, |spec| {
        let helps = lanes.plan().owner_lane() == Some(lane) && lanes.is_owner_thread();
        spec.worker_cores.len() + usize::from(helps)
    })
}

/// A parallel helper's error as a panic report (the only failure left once the lane and
/// chunk size are valid), named `job` as on the caller: which chunk panicked depends on the
/// lane plan, so the report leaves it out.
pub(crate) fn into_panicked(e: ParallelError, job: &str) -> JobPanicked {
    match e {
        ParallelError::Panicked(p) => JobPanicked {
            job: job.into(),
            ..p
        },
        other => JobPanicked {
            job: job.into(),
            message: other.to_string(),
            skipped: 0,
        },
    }
}

/// Rows per chunk for `rows` rows on `threads` threads (0: no lane, one chunk).
fn chunk_rows(rows: usize, threads: usize) -> usize {
    if threads == 0 {
        return rows.max(1);
    }
    rows.div_ceil(threads * 4)
        .max(MIN_CHUNK_ROWS)
        .max(rows.div_ceil(MAX_CHUNKS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_never_too_small_nor_too_many() {
        assert_eq!(chunk_rows(1000, 0), 1000);
        assert_eq!(chunk_rows(0, 0), 1);
        assert_eq!(chunk_rows(1000, 2), MIN_CHUNK_ROWS);
        assert_eq!(chunk_rows(1 << 20, 2), (1 << 20) / 8);
        let many = chunk_rows(1 << 30, 64);
        assert!((1usize << 30).div_ceil(many) <= MAX_CHUNKS);
    }
}
