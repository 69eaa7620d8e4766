//! Typed queries of any width, one API for every layout: [`World::query`] /
//! [`World::query_filtered`] make a [`Query`] whose [`for_each`](Query::for_each) runs on the
//! caller and whose [`par_for_each`](Query::par_for_each) runs chunks on the world's parallel
//! lane when, and only when, the work pays for the hand-off.
//!
//! Owns: walking a query's rows (the smallest required column drives, the others are looked up
//! by slot), splitting them into disjoint chunks, and the per-call-site cost model that decides
//! whether to split ([`ParCosts`]). Must never: hand a row to two chunks, split work it has not
//! priced (a call site's first runs are serial and timed), allocate per call once warm, or hide
//! that a parallel query ran on the caller (the returned [`ParRun`] says why, and a world with
//! no lane says so once in the log).
//!
//! # Splitting by cost, not by row count
//! Each `par_for_each` call site (its `file:line:column`, via `#[track_caller]`) keeps the cost
//! per row it measured running alone on the caller: the least of its first three runs, then an
//! exponential average over its serial runs that believes a faster run at once (two clock reads
//! per sampled run; a splitting site runs alone on its 8th, 16th and 32nd runs and once in 64
//! after, to refresh it). A run is split only when the predicted
//! work is at least the site's split threshold (twice [`PAR_CHUNK_MIN_NS`] at first), into
//! chunks of at least [`PAR_CHUNK_MIN_NS`] of work: a chunk costs a claim and, on a sleeping
//! lane, a wake-up (tens of microseconds on a loaded 2-core VM), which only that much work
//! hides. Each split run is judged against the serial time it predicted: when splits average more
//! than 95 % of it, the site's threshold doubles (memory-bound loops gain little from a second core on a
//! shared machine), one that paid lowers the threshold to its work, and a site held back
//! probes a split now and then.
//!
//! | file | idea |
//! |------|------|
//! | `data` | What a query asks for (`QueryData`: `&T`, `&mut T`, `Option`, `Entity`, tuples) and the filters it re-exports |
//! | `fetch` | Each requested component resolved once to its column's raw parts; the driving column; the per-row fetch for AoS and field-SoA |
//! | `filter` | Which entities a query keeps: `With`, `Without`, `Changed` and tuples of them |
//! | `par_costs` | What a parallel call site learned of its cost per row and whether its splits paid |
//! | `parallel` | The lane a world's parallel work runs on, the chunking rule, and field-SoA chunks (`World::par_soa_chunks2`) |
//! | `walk` | The row loops a query runs: aligned rows from the parts' bases, rows found by slot, and, under a filter that answers for a chunk at once (`Changed`), chunk by chunk |

// Opted in from the workspace's `unsafe_code = "deny"`: the row walk calls the raw-parts
// accessors of `data`, and a parallel run shares the resolved parts with its chunks.
#![allow(unsafe_code)]

pub(crate) mod data;
pub(crate) mod fetch;
pub(crate) mod filter;
pub(crate) mod par_costs;
pub(crate) mod parallel;
mod walk;

use std::ops::Range;
use std::panic::Location;
use std::sync::atomic::{AtomicUsize, Ordering};

use lanegraph_jobs::{clock, JobPanicked};

use self::data::{AlignCache, ColumnsView, Driver, QueryData, QueryFilter};
use self::parallel::{into_panicked, lane_threads, on_caller, ParallelLane, MAX_CHUNKS};
use self::walk::run_rows;
use crate::world::change_ticks::ChangeClock;
use crate::world::column::ErasedColumn;
use crate::world::component_ids::ColumnIds;
use crate::world::entity::EntityTable;
use crate::world::epoch::Epochs;
use crate::world::World;

pub(crate) use self::par_costs::{ParCosts, ParSite, LEARN_RUNS};
pub use self::par_costs::{ParRun, SerialReason, PAR_CHUNK_MIN_NS};
use crate::world::error::WorldError;

/// A typed query over a world's components: made by [`World::query`] or
/// [`World::query_filtered`] (or a [`Components`] view), it holds the world's columns until
/// dropped. Structural changes wait for it: queue them with `ctx.commands()`.
pub struct Query<'q, Q: QueryData, F: QueryFilter = ()> {
    /// The resolved parts, the driving column, and how many leading rows are aligned.
    state: Option<(Q::Fetch, F::Fetch, Driver, usize)>,
    parallel: Option<&'q ParallelLane>,
    costs: &'q mut ParCosts,
    chunk_rows: Option<usize>,
}

impl<Q: QueryData, F: QueryFilter> std::fmt::Debug for Query<'_, Q, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Query")
            .field("rows", &self.state.as_ref().map_or(0, |s| s.2.rows))
            .field("chunk_rows", &self.chunk_rows)
            .finish_non_exhaustive()
    }
}

/// A query's resolved state shared by the chunks of a parallel run.
struct Shared<T>(T);
// SAFETY: the state is raw pointers into columns the query's `&mut World` borrow holds; the
// chunks only read them (`fork`, `matches`) and write disjoint rows through their own forks.
unsafe impl<T> Sync for Shared<T> {}

impl<'q, Q: QueryData, F: QueryFilter> Query<'q, Q, F> {
    /// The body of [`QueryHooks::chunk_rows`](crate::hooks::QueryHooks::chunk_rows), which documents it.
    pub(crate) fn chunk_rows(mut self, rows: usize) -> Self {
        self.chunk_rows = Some(rows.max(1));
        self
    }

    /// Runs `f` once per matching entity, on the calling thread, in the driving column's row
    /// order (deterministic); returns how many it visited. Allocation-free.
    pub fn for_each(&mut self, mut f: impl for<'a> FnMut(Q::Item<'a>)) -> usize {
        let Some((q, flt, d, aligned)) = self.state.as_mut() else {
            return 0;
        };
        let (d, aligned) = (*d, *aligned);
        // SAFETY: the state was resolved from columns this query's borrow holds; `0..d.rows`
        // are the driving column's rows, each visited once.
        let visited = unsafe { run_rows::<Q, F>(q, flt, d, aligned, 0..d.rows, &mut f) };
        // SAFETY: the run over these parts has ended.
        unsafe { Q::all_stamped(q, visited) };
        visited
    }

    /// Counts the matching entities.
    pub fn count(&mut self) -> usize {
        self.for_each(|_| {})
    }

    /// [`for_each`](Self::for_each) with the rows split into chunks that run in parallel on the
    /// world's parallel lane (the physics lane inside an engine) when the call site's measured
    /// cost says the work pays for it; otherwise on the caller. `f` must write only through
    /// its arguments for the result to be the same whatever the split (it then is, bit for
    /// bit: each row is computed alone). A panic in `f` is the error, wherever it ran.
    #[track_caller]
    pub fn par_for_each(
        &mut self,
        f: impl for<'a> Fn(Q::Item<'a>) + Send + Sync,
    ) -> Result<ParRun, JobPanicked> {
        // Kept whole (`scripts/surface` lists it with this contract): the split decision, the
        // chunking and the timing that teaches the call site's cost model share the resolved
        // column parts, which may not outlive this call (raw pointers into the borrowed world).
        let at = Location::caller();
        let Some(state) = self.state.as_mut() else {
            return Ok(ParRun {
                visited: 0,
                chunks: 1,
                serial: None,
            });
        };
        let rows = state.2.rows;
        // Whether a lane is there at all: one load, no reference count taken.
        let has_lane = self.parallel.is_some_and(|p| p.lanes.strong_count() > 0);
        let costs = &mut *self.costs;
        if !has_lane && !costs.noted_no_lane {
            costs.noted_no_lane = true;
            tracing::info!(target: "lanegraph", code = "LG-WORLD-PAR-SERIAL", %at, "a parallel query ran on the calling thread: the world has no parallel lane (World::set_parallel_lane; inside an engine it is the physics lane)");
        }
        let site = costs.site(at);
        let predicted = site.ns_per_row * rows as f64;
        // The call site's own figures decide first; only a run that would split takes a strong
        // handle to the lanes and counts the lane's threads (a cheap query pays neither).
        let wants: Result<Option<usize>, SerialReason> = if !has_lane {
            Err(SerialReason::NoLane)
        } else if let Some(n) = self.chunk_rows {
            Ok(Some(n))
        } else if predicted.is_nan() || site.samples < LEARN_RUNS {
            Err(SerialReason::Learning)
        } else if let Some(reason) = site.serial_reason(predicted) {
            Err(reason)
        } else {
            Ok(None)
        };
        let lanes = match wants {
            Ok(_) => self
                .parallel
                .and_then(|p| p.lanes.upgrade().map(|l| (l, p.lane))),
            Err(_) => None,
        };
        let threads = lanes.as_ref().map_or(0, |(l, lane)| lane_threads(l, *lane));
        let chunk = match wants {
            Err(reason) => Err(reason),
            // The engine went away since the check above.
            Ok(_) if lanes.is_none() => Err(SerialReason::NoLane),
            Ok(_) if threads < 2 => Err(SerialReason::OneThread),
            Ok(Some(n)) => Ok(n),
            Ok(None) => {
                let by_work = (predicted / PAR_CHUNK_MIN_NS as f64) as usize;
                let chunks = by_work.min(threads * 4).clamp(2, MAX_CHUNKS);
                Ok(rows.div_ceil(chunks))
            }
        };
        site.runs += 1;
        let (q, flt, d, aligned) = state;
        let (d, aligned) = (*d, *aligned);
        let chunk = match chunk {
            Ok(n) if n < rows => n.max(rows.div_ceil(MAX_CHUNKS)),
            Ok(_) => {
                return Ok(ParRun {
                    chunks: 1,
                    ..serial_run::<Q, F>(q, flt, (d, aligned), site, &f, None)?
                })
            }
            Err(reason) => return serial_run::<Q, F>(q, flt, (d, aligned), site, &f, Some(reason)),
        };
        let (lanes, lane) = lanes.expect("a chunk size is chosen only with a lane");
        let mut ranges: [Option<Range<usize>>; MAX_CHUNKS] = std::array::from_fn(|_| None);
        let mut k = 0;
        while k * chunk < rows {
            ranges[k] = Some(k * chunk..((k + 1) * chunk).min(rows));
            k += 1;
        }
        let wall = clock::now();
        let proto = Shared((&*q, &*flt, d, aligned));
        let visited = AtomicUsize::new(0);
        let f = &f;
        lanes
            .parallel_chunks_mut(lane, &mut ranges[..k], 1, |_, c| {
                // Each chunk is a span on the track of the thread that ran it (a lane
                // worker's, or the caller's when it helped).
                for range in c.iter_mut().filter_map(Option::take) {
                    let _span = lanegraph_telemetry::span_n(CHUNK_SPAN, range.len() as u64);
                    let proto = &proto;
                    let mut fork = Q::fork(proto.0 .0);
                    let mut call = |item: Q::Item<'_>| f(item);
                    // SAFETY: the ranges are disjoint rows of the driving column, so no row of
                    // any column is reached from two chunks (each entity has at most one row
                    // per column); the columns stay borrowed until every chunk returned.
                    let n = unsafe {
                        run_rows::<Q, F>(
                            &mut fork, proto.0 .1, proto.0 .2, proto.0 .3, range, &mut call,
                        )
                    };
                    visited.fetch_add(n, Ordering::Relaxed);
                }
            })
            .map_err(|e| into_panicked(e, "par_for_each"))?;
        if !predicted.is_nan() && self.chunk_rows.is_none() {
            site.judge_split(clock::now().ns_since(wall), predicted);
        }
        // The chunks' own times are not the serial cost (two threads share the memory bus),
        // so only serial runs teach the cost per row.
        Ok(ParRun {
            visited: visited.into_inner(),
            chunks: k,
            serial: None,
        })
    }
}

/// The span of one chunk of a split parallel query (`n`: its rows).
pub(crate) const CHUNK_SPAN: &str = "par_query.chunk";

/// The span of a parallel query run on the caller, named for why (`n`: its rows).
pub(crate) fn serial_span(reason: Option<SerialReason>) -> &'static str {
    match reason {
        None => "par_query.serial",
        Some(SerialReason::NoLane) => "par_query.serial.no_lane",
        Some(SerialReason::OneThread) => "par_query.serial.one_thread",
        Some(SerialReason::Learning) => "par_query.serial.learning",
        Some(SerialReason::TooLittleWork { .. }) => "par_query.serial.too_little_work",
        Some(SerialReason::Probing { .. }) => "par_query.serial.probing",
    }
}

/// A parallel query's run on the caller, timed (to learn its cost) unless the site is known to
/// be far below the split threshold, where the clock is read on every 16th run only.
fn serial_run<Q: QueryData, F: QueryFilter>(
    q: &mut Q::Fetch,
    flt: &F::Fetch,
    (d, aligned): (Driver, usize),
    site: &mut ParSite,
    f: &(impl for<'a> Fn(Q::Item<'a>) + Sync),
    reason: Option<SerialReason>,
) -> Result<ParRun, JobPanicked> {
    let predicted = site.ns_per_row * d.rows as f64;
    let far_below = predicted < PAR_CHUNK_MIN_NS as f64 / 8.0;
    let learning = site.samples < LEARN_RUNS;
    let timed = learning || !far_below || site.runs % 16 == 1;
    // The run's span says it ran on the caller, and why (one relaxed load while recording is
    // off).
    let _span = lanegraph_telemetry::span_n(serial_span(reason), d.rows as u64);
    let start = timed.then(clock::now);
    let mut visited = 0;
    on_caller("par_for_each", || {
        let mut call = |item: Q::Item<'_>| f(item);
        // SAFETY: as in `Query::for_each`.
        visited = unsafe { run_rows::<Q, F>(q, flt, d, aligned, 0..d.rows, &mut call) };
    })?;
    if let Some(start) = start {
        site.learn(clock::now().ns_since(start), d.rows);
    }
    Ok(ParRun {
        visited,
        chunks: 1,
        serial: reason,
    })
}

/// A world's components, borrowed apart from its resources and input (see [`World::split`]):
/// make queries on it while holding resources.
pub struct Components<'w> {
    columns: &'w mut [Box<dyn ErasedColumn>],
    ids: &'w ColumnIds,
    entities: &'w EntityTable,
    pub(super) epochs: &'w mut Epochs,
    parallel: Option<&'w ParallelLane>,
    costs: &'w mut ParCosts,
    align: &'w mut AlignCache,
    clock: &'w mut ChangeClock,
}

impl std::fmt::Debug for Components<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Components")
            .field("columns", &self.columns.len())
            .finish_non_exhaustive()
    }
}

impl<'w> Components<'w> {
    pub(crate) fn of(world: &'w mut World) -> Self {
        let (components, _, _) = world.parts();
        components
    }

    /// A query over every entity with what `Q` requires (see [`World::query`]).
    pub fn query<Q: QueryData>(&mut self) -> Result<Query<'_, Q>, WorldError> {
        self.query_filtered::<Q, ()>()
    }

    /// A query over the entities with what `Q` requires that also pass `F` (see
    /// [`World::query_filtered`]).
    pub fn query_filtered<Q: QueryData, F: QueryFilter>(
        &mut self,
    ) -> Result<Query<'_, Q, F>, WorldError> {
        Components {
            columns: &mut *self.columns,
            ids: self.ids,
            entities: self.entities,
            epochs: &mut *self.epochs,
            parallel: self.parallel,
            costs: &mut *self.costs,
            align: &mut *self.align,
            clock: &mut *self.clock,
        }
        .query_into()
    }
}

impl World {
    /// The world split into its components view, its resources and its input (each borrowed
    /// apart, for [`World::split`]).
    pub(crate) fn parts(
        &mut self,
    ) -> (
        Components<'_>,
        &mut crate::world::resource::Resources,
        &crate::input::Input,
    ) {
        (
            Components {
                columns: &mut self.columns,
                ids: &self.ids,
                entities: &self.entities,
                epochs: &mut self.epochs,
                parallel: self.parallel.as_ref(),
                costs: &mut self.par_costs,
                align: &mut self.query_align,
                clock: &mut self.change,
            },
            &mut self.resources,
            &self.input,
        )
    }

    /// A typed query of any width, over AoS and field-SoA components alike: `Q` is `&T`,
    /// `&mut T`, `Option<&T>`, `Option<&mut T>`, [`Entity`](crate::world::Entity) or a tuple of 1-8 of them. Asking
    /// for one component mutably and again is [`WorldError::AliasedQuery`]. Making it bumps the
    /// domains of every `&mut` component. Structural changes (spawn, insert, despawn) wait
    /// until the query is dropped: inside a system, queue them on `ctx.commands()`.
    ///
    /// ```
    /// use lanegraph::prelude::*;
    ///
    /// #[derive(Clone, Copy, Component, StateHash)]
    /// struct Pos(f32);
    /// #[derive(Clone, Copy, Component, StateHash)]
    /// struct Vel(f32);
    /// #[derive(Clone, Copy, Component, StateHash)]
    /// struct Mass(f32);
    /// #[derive(Clone, Copy, Component, StateHash)]
    /// struct Drag(f32);
    ///
    /// let mut world = World::new();
    /// for i in 0..100 {
    ///     let e = world.spawn();
    ///     world.insert(e, Pos(i as f32)).unwrap();
    ///     world.insert(e, Vel(1.0)).unwrap();
    ///     world.insert(e, Mass(2.0)).unwrap();
    ///     if i % 2 == 0 {
    ///         world.insert(e, Drag(0.5)).unwrap();
    ///     }
    /// }
    /// let moved = world
    ///     .query::<(&mut Pos, &mut Vel, &Mass, Option<&Drag>)>()
    ///     .unwrap()
    ///     .for_each(|(p, v, m, drag)| {
    ///         v.0 -= drag.map_or(0.0, |d| d.0) * v.0 / m.0;
    ///         p.0 += v.0;
    ///     });
    /// assert_eq!(moved, 100);
    ///
    /// // `&mut Pos` beside `&Pos` would alias: a typed error, not a panic.
    /// assert!(world.query::<(&mut Pos, &Pos)>().is_err());
    /// ```
    pub fn query<Q: QueryData>(&mut self) -> Result<Query<'_, Q>, WorldError> {
        self.query_filtered::<Q, ()>()
    }

    /// [`World::query`] over the entities that also pass `F`: [`With<T>`](crate::world::With),
    /// [`Without<T>`](crate::world::Without), or a tuple of 1-4 of them.
    ///
    /// ```
    /// use lanegraph::prelude::*;
    ///
    /// #[derive(Clone, Copy, Component, StateHash)]
    /// struct Hp(i32);
    /// #[derive(Clone, Copy, Component, StateHash)]
    /// struct Boss;
    /// #[derive(Clone, Copy, Component, StateHash)]
    /// struct Dead;
    ///
    /// let mut world = World::new();
    /// for i in 0..10 {
    ///     let e = world.spawn();
    ///     world.insert(e, Hp(10)).unwrap();
    ///     if i < 3 {
    ///         world.insert(e, Boss).unwrap();
    ///     }
    ///     if i == 0 {
    ///         world.insert(e, Dead).unwrap();
    ///     }
    /// }
    /// let healed = world
    ///     .query_filtered::<&mut Hp, (With<Boss>, Without<Dead>)>()
    ///     .unwrap()
    ///     .for_each(|hp| hp.0 += 5);
    /// assert_eq!(healed, 2);
    /// ```
    pub fn query_filtered<Q: QueryData, F: QueryFilter>(
        &mut self,
    ) -> Result<Query<'_, Q, F>, WorldError> {
        Components::of(self).query_into()
    }
}

impl<'w> Components<'w> {
    /// `query_filtered`, consuming the view so the query keeps its full borrow.
    fn query_into<Q: QueryData, F: QueryFilter>(self) -> Result<Query<'w, Q, F>, WorldError> {
        let Components {
            columns,
            ids,
            entities,
            epochs,
            parallel,
            costs,
            align,
            clock,
        } = self;
        let mut view = ColumnsView::new(columns, ids, epochs, clock);
        // The filter first: a `Changed<T>` starts the column's ticks before a `&mut T` term
        // takes their address.
        let filter = F::init(&mut view);
        let data = Q::init(&mut view)?;
        let live = entities.live();
        let state = data.map(|data| {
            let mut best = None;
            Q::driver(&data, &mut best);
            F::driver(&filter, &mut best);
            let d = best.unwrap_or(Driver {
                col: usize::MAX,
                rows: live.len(),
                entities: live.as_ptr(),
                order: 0,
            });
            let mut data = data;
            let aligned = Q::aligned(&mut data, &d, align);
            (data, filter, d, aligned)
        });
        Ok(Query {
            state,
            parallel,
            costs,
            chunk_rows: None,
        })
    }
}
