//! [`WorldHooks`]: the World's methods that only the runtime, its tools and its tests call,
//! and the untimed scheduler baseline ([`run_systems_untimed`]); with them the two calls of the
//! World's companions that only tests make ([`SystemIdHooks`], [`SnapshotHooks`]).
//!
//! Owns: the traits and their delegating impls. Must never: hold World logic (each method
//! calls the type's own `pub(crate)` method of the same name).

use std::sync::Arc;

use lanegraph_jobs::{LaneId, Lanes};
use lanegraph_simd::SoaComponent;

use crate::game_loop::FixedStep;
use crate::hooks::{ColumnMut, ColumnRef, EngineEvent, Filter, SoaMut};
use crate::hooks::{EventCounts, RollingWindow, SYSTEM_TIMING_WINDOW_SAMPLES};
use crate::systems::*;
use crate::world::*;

/// The World's calls for the runtime, its tools and its tests, which a game does not make: the
/// frame bookkeeping the game loop does (`begin_frame`, `set_fixed_step`), scheduler and
/// parallel-lane plumbing, the column and pair/triple queries that `World::query` replaced,
/// and the raw field-SoA lending the kernels' chunked queries are built on. Each method is the
/// World's own (`pub(crate)` there); this trait only names it for code outside the crate.
pub trait WorldHooks {
    /// This world's process-unique id (what a [`SystemId`] belongs to, and part of a cache key
    /// kept across worlds, beside `epochs()`).
    fn id(&self) -> WorldId;

    /// The change epoch of every domain now: a view derived from domains `D` stays valid while
    /// `(id(), epochs restricted to D)` is unchanged (`old.changed_in(&new, D)`). The engine's
    /// render view cache keys on it; a game's systems use [`when_changed`] instead.
    fn epochs(&self) -> Epochs;

    /// Frames begun so far (each `begin_frame` call is one).
    fn frame_index(&self) -> u64;

    /// Sets the fixed step systems read (the game loop does this; tests may too).
    fn set_fixed_step(&mut self, step: FixedStep);

    /// Bumps `domains` for a change the world cannot see (a bulk load or deserialization
    /// written through a side channel, a reset). Loaders call this after writing.
    fn mark_changed(&mut self, domains: DomainSet);

    /// Reorders every column's rows by entity slot (so joins walk memory forward) and the live
    /// list likewise, and releases spare capacity. Bumps the domains of every column that moved
    /// (row order is visible to column borrowers) and `STRUCTURE`. Cold path: may allocate.
    fn compact(&mut self);

    /// Runs this world's parallel queries on `lane` of `lanes` (the engine sets its physics
    /// lane). The world keeps a weak handle: it never keeps the lanes running.
    fn set_parallel_lane(&mut self, lanes: &Arc<Lanes>, lane: LaneId);

    /// The lane parallel queries run on: `None` when none was set or its lanes are gone.
    fn parallel_lane(&self) -> Option<LaneId>;

    /// Parallel queries run on the calling thread from now on.
    fn clear_parallel_lane(&mut self);

    /// [`WorldHooks::for_each_mut2`] with the rows split into chunks that run in parallel on the
    /// world's parallel lane (the physics lane inside an engine); returns how many entities it
    /// visited. `f` runs once per entity that has both components, on some thread of that
    /// lane, so it is `Fn + Sync`: it may read shared data, and must write only through its
    /// arguments for the result to be the same whatever the chunking (it then is, bit for
    /// bit: each row is computed alone).
    ///
    /// The rows where `A` and `B` are aligned (inserted together) run in parallel; any others
    /// run after them, on the calling thread, and so does the whole query when either
    /// component is field-SoA (its parallel form is the kernels over `lend_soa_pair` chunks)
    /// or fewer than two threads would serve it. A panic in `f` is
    /// [`WorldError::Panicked`] wherever it ran. Without a parallel lane (a bare `World`, or the
    /// engine gone) everything runs on the calling thread. Allocation-free once warm (the first
    /// query of a column pair caches its aligned-row count).
    ///
    /// ```
    /// use lanegraph::hooks::WorldHooks;
    /// use lanegraph::world::{Component, StateHash, World};
    ///
    /// #[derive(Clone, Copy, Component, StateHash)]
    /// struct Pos(f32);
    /// #[derive(Clone, Copy, Component, StateHash)]
    /// struct Vel(f32);
    ///
    /// let mut world = World::new();
    /// for i in 0..10_000 {
    ///     let e = world.spawn();
    ///     world.insert(e, Pos(i as f32)).unwrap();
    ///     world.insert(e, Vel(1.0)).unwrap();
    /// }
    /// let dt = 0.5;
    /// let n = world
    ///     .par_for_each_mut2::<Pos, Vel>(|_, p, v| {
    ///         v.0 = v.0 * 0.9;
    ///         p.0 = p.0 + v.0 * dt;
    ///     })
    ///     .unwrap();
    /// assert_eq!(n, 10_000);
    /// ```
    fn par_for_each_mut2<A: Component, B: Component>(
        &mut self,
        f: impl Fn(Entity, &mut A, &mut B) + Sync,
    ) -> Result<usize, WorldError>;

    /// [`WorldHooks::par_for_each_mut2`] over the entities that also pass `filter` (see
    /// [`WorldHooks::for_each_mut2_filtered`]).
    fn par_for_each_mut2_filtered<A: Component, B: Component>(
        &mut self,
        filter: &Filter,
        f: impl Fn(Entity, &mut A, &mut B) + Sync,
    ) -> Result<usize, WorldError>;

    /// Borrows `T`'s column for reading (empty when no entity has `T`).
    fn column<T: Component>(&self) -> Result<ColumnRef<'_, T>, WorldError>;

    /// Borrows `T`'s column for writing; bumps `T::DOMAINS` (the caller may write any row).
    fn column_mut<T: Component>(&mut self) -> Result<ColumnMut<'_, T>, WorldError>;

    /// Every `(entity, &A, &B)` for entities that have both; iterates `A`'s column and probes
    /// `B`'s (put the rarer component first).
    fn query_pair<A: Component, B: Component>(
        &self,
    ) -> Result<impl Iterator<Item = (Entity, &A, &B)> + '_, WorldError>;

    /// Every `(entity, &mut A, &B)` for entities that have both; bumps `A::DOMAINS`.
    /// `A` and `B` must differ ([`WorldError::AliasedQuery`](crate::world::WorldError::AliasedQuery) otherwise).
    fn query_pair_mut<A: Component, B: Component>(
        &mut self,
    ) -> Result<impl Iterator<Item = (Entity, &mut A, &B)> + '_, WorldError>;

    /// Calls `f(entity, &mut a, &mut b)` for every entity that has both `A` and `B`, writing
    /// both in one loop; returns how many it visited. Bumps `A::DOMAINS` and `B::DOMAINS`.
    /// `A` and `B` must differ ([`WorldError::AliasedQuery`](crate::world::WorldError::AliasedQuery) otherwise). Either may
    /// be stored field-SoA:
    /// its rows are then read whole, handed over and written back (convenient, not fast: the
    /// `f32x8` kernels are the fast path for field-SoA data).
    ///
    /// Walks `A`'s dense rows (put the rarer component first). The leading rows where `B`'s row
    /// at the same index holds the same entity (all of them when the components were inserted
    /// together, or after [`WorldHooks::compact`]) run as two linear sweeps with no per-row check;
    /// that count is cached per pair of columns and recounted only after a row was added,
    /// removed or reordered in either. Each later row uses `B`'s row at the same index when it
    /// holds the same entity, else `B`'s sparse index (one indexed load).
    ///
    /// ```
    /// use lanegraph::hooks::WorldHooks;
    /// use lanegraph::world::{Component, StateHash, World};
    ///
    /// #[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
    /// #[component(domains(TRANSFORM))]
    /// struct Pos(f32);
    /// #[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
    /// #[component(domains(PHYSICS))]
    /// struct Vel(f32);
    ///
    /// let mut world = World::new();
    /// let e = world.spawn();
    /// world.insert(e, Pos(120.0)).unwrap();
    /// world.insert(e, Vel(5.0)).unwrap();
    /// let dt = 0.5;
    /// world
    ///     .for_each_mut2::<Pos, Vel>(|_, p, v| {
    ///         v.0 = v.0 - 9.81 * dt;
    ///         p.0 = p.0 + v.0 * dt;
    ///         if p.0 > 100.0 {
    ///             p.0 = 100.0;
    ///             v.0 = -v.0;
    ///         }
    ///     })
    ///     .unwrap();
    /// assert_eq!(*world.get::<Pos>(e).unwrap(), Pos(100.0));
    /// assert_eq!(*world.get::<Vel>(e).unwrap(), Vel(-(5.0 - 9.81 * 0.5)));
    /// ```
    fn for_each_mut2<A: Component, B: Component>(
        &mut self,
        f: impl FnMut(Entity, &mut A, &mut B),
    ) -> Result<usize, WorldError>;

    /// [`WorldHooks::for_each_mut2`] over the entities that also pass `filter`: every component of
    /// [`Filter::with`] present, none of [`Filter::without`]. A `with` component the world
    /// never stored matches nothing; a `without` one excludes nothing.
    ///
    /// Errors: as `for_each_mut2`, plus [`WorldError::TooManyFilters`] for more than
    /// [`Filter::MAX`] filter components, and [`WorldError::AliasedQuery`] when a filter names
    /// `A` or `B`.
    fn for_each_mut2_filtered<A: Component, B: Component>(
        &mut self,
        filter: &Filter,
        f: impl FnMut(Entity, &mut A, &mut B),
    ) -> Result<usize, WorldError>;

    /// How many resources the world holds.
    fn resource_count(&self) -> usize;

    /// Reads `entity`'s field-SoA `T` (assembled from its field columns).
    fn get_fields<T: Component + SoaComponent>(&self, entity: Entity) -> Result<T, WorldError>;

    /// Lends `T`'s field columns mutably (to a kernel, or to the physics lane for one step);
    /// bumps `T::DOMAINS`. `None` when `T` was never opted in.
    fn lend_soa<T: Component + SoaComponent>(
        &mut self,
    ) -> Result<Option<SoaMut<'_, T>>, WorldError>;

    /// Lends two row-aligned field-SoA components mutably at once (position and velocity for
    /// an integrator); bumps both components' domains. Errors when `A == B`, either is not
    /// field-SoA, or their rows are not aligned (see the module docs). `None` when either
    /// was never opted in.
    #[allow(clippy::type_complexity)]
    fn lend_soa_pair<A: Component + SoaComponent, B: Component + SoaComponent>(
        &mut self,
    ) -> Result<Option<(SoaMut<'_, A>, SoaMut<'_, B>)>, WorldError>;

    /// Reorders `B`'s rows to follow `A`'s, so the two are row-aligned, when both hold exactly
    /// the same entities; returns whether they are aligned afterwards. Bumps `B::DOMAINS` when
    /// rows moved. Cold path (allocates a scratch copy).
    fn align_soa_rows<A: Component + SoaComponent, B: Component + SoaComponent>(
        &mut self,
    ) -> Result<bool, WorldError>;

    /// Calls `f(entity, &mut a, &mut b, &mut c)` for every entity that has `A`, `B` and `C`;
    /// returns how many it visited. Bumps all three components' domains. The three must
    /// differ ([`WorldError::AliasedQuery`](crate::world::WorldError::AliasedQuery) otherwise); any may be field-SoA. Walks
    /// `A`'s rows (put the rarest first).
    ///
    /// ```
    /// use lanegraph::hooks::WorldHooks;
    /// use lanegraph::world::{Component, StateHash, World};
    ///
    /// #[derive(Clone, Copy, Component, StateHash)]
    /// struct Pos(f32);
    /// #[derive(Clone, Copy, Component, StateHash)]
    /// struct Vel(f32);
    /// #[derive(Clone, Copy, Component, StateHash)]
    /// struct Mass(f32);
    ///
    /// let mut world = World::new();
    /// let e = world.spawn();
    /// world.insert(e, Pos(0.0)).unwrap();
    /// world.insert(e, Vel(0.0)).unwrap();
    /// world.insert(e, Mass(2.0)).unwrap();
    /// let (force, dt) = (10.0, 0.5);
    /// world
    ///     .for_each_mut3::<Pos, Vel, Mass>(|_, p, v, m| {
    ///         v.0 = v.0 + force / m.0 * dt;
    ///         p.0 = p.0 + v.0 * dt;
    ///     })
    ///     .unwrap();
    /// assert_eq!(world.get::<Pos>(e).unwrap().0, 1.25);
    /// ```
    fn for_each_mut3<A: Component, B: Component, C: Component>(
        &mut self,
        f: impl FnMut(Entity, &mut A, &mut B, &mut C),
    ) -> Result<usize, WorldError>;

    /// [`WorldHooks::for_each_mut3`] over the entities that also pass `filter` (see
    /// [`WorldHooks::for_each_mut2_filtered`]; a filter naming any of the three is
    /// [`WorldError::AliasedQuery`]).
    fn for_each_mut3_filtered<A: Component, B: Component, C: Component>(
        &mut self,
        filter: &Filter,
        f: impl FnMut(Entity, &mut A, &mut B, &mut C),
    ) -> Result<usize, WorldError>;

    /// Records every system run as a trace span named after the system, on the running
    /// thread's track, from the scheduler's own timing stamps (while trace spans are on:
    /// `telemetry::spans::set_enabled`). In an engine it costs about 7 ns per run on this
    /// machine, the per-frame collection included (`lanegraph bench timing`,
    /// `engine_frame_system_spans` against `engine_frame`). Off for a bare `World`; an `Engine`
    /// turns it on unless its config says `system_spans = false`.
    fn set_system_spans(&mut self, on: bool);

    /// Systems registered.
    fn system_count(&self) -> usize;

    /// The ids of every system, in schedule order.
    fn system_ids(&self) -> impl ExactSizeIterator<Item = SystemId> + '_;

    /// The registered name of `id`.
    fn system_name(&self, id: SystemId) -> Result<&str, WorldError>;

    /// The declared budget of `id`.
    fn system_budget(&self, id: SystemId) -> Result<Budget, WorldError>;

    /// The declared domain of `id`.
    fn system_domain(&self, id: SystemId) -> Result<Option<Domain>, WorldError>;

    /// Starts a frame: closes rate-limit windows that expired with suppressed events (emitting
    /// their summaries) and counts the frame. Does not touch the timing windows: they roll
    /// across ticks, not frames.
    fn begin_frame(&mut self);

    /// The rolling 64-sample window of `id`, for percentiles ([`RollingWindow::stats`], cold
    /// path). An invalid id is an error and logs nothing. The borrow ends before the world
    /// runs again.
    fn system_timing_window(
        &self,
        id: SystemId,
    ) -> Result<&RollingWindow<SYSTEM_TIMING_WINDOW_SAMPLES>, WorldError>;

    /// How often `kind` was emitted, suppressed and summarised in this world.
    fn event_counts(&self, kind: EngineEvent) -> EventCounts;

    /// Access telemetry for every component column (for the layout advisor). Cold path: it
    /// allocates the returned list.
    fn component_access(&self) -> Vec<ColumnAccess>;

    /// The layout advisor's recommendation for every component, from the access telemetry since
    /// the world was made (for a window, snapshot `component_access` twice and call
    /// [`ColumnAccess::since`] then [`ColumnAccess::advice`]). Advice only: nothing is
    /// repacked. Cold path: allocates.
    fn layout_advice(&self) -> Vec<lanegraph_simd::advisor::LayoutAdvice>;
}

impl WorldHooks for World {
    fn id(&self) -> WorldId {
        World::id(self)
    }

    fn epochs(&self) -> Epochs {
        World::epochs(self)
    }

    fn frame_index(&self) -> u64 {
        World::frame_index(self)
    }

    fn set_fixed_step(&mut self, step: FixedStep) {
        World::set_fixed_step(self, step)
    }

    fn mark_changed(&mut self, domains: DomainSet) {
        World::mark_changed(self, domains)
    }

    fn compact(&mut self) {
        World::compact(self)
    }

    fn set_parallel_lane(&mut self, lanes: &Arc<Lanes>, lane: LaneId) {
        World::set_parallel_lane(self, lanes, lane)
    }

    fn parallel_lane(&self) -> Option<LaneId> {
        World::parallel_lane(self)
    }

    fn clear_parallel_lane(&mut self) {
        World::clear_parallel_lane(self)
    }

    fn par_for_each_mut2<A: Component, B: Component>(
        &mut self,
        f: impl Fn(Entity, &mut A, &mut B) + Sync,
    ) -> Result<usize, WorldError> {
        World::par_for_each_mut2(self, f)
    }

    fn par_for_each_mut2_filtered<A: Component, B: Component>(
        &mut self,
        filter: &Filter,
        f: impl Fn(Entity, &mut A, &mut B) + Sync,
    ) -> Result<usize, WorldError> {
        World::par_for_each_mut2_filtered(self, filter, f)
    }

    fn column<T: Component>(&self) -> Result<ColumnRef<'_, T>, WorldError> {
        World::column::<T>(self)
    }

    fn column_mut<T: Component>(&mut self) -> Result<ColumnMut<'_, T>, WorldError> {
        World::column_mut::<T>(self)
    }

    fn query_pair<A: Component, B: Component>(
        &self,
    ) -> Result<impl Iterator<Item = (Entity, &A, &B)> + '_, WorldError> {
        World::query_pair::<A, B>(self)
    }

    fn query_pair_mut<A: Component, B: Component>(
        &mut self,
    ) -> Result<impl Iterator<Item = (Entity, &mut A, &B)> + '_, WorldError> {
        World::query_pair_mut::<A, B>(self)
    }

    fn for_each_mut2<A: Component, B: Component>(
        &mut self,
        f: impl FnMut(Entity, &mut A, &mut B),
    ) -> Result<usize, WorldError> {
        World::for_each_mut2(self, f)
    }

    fn for_each_mut2_filtered<A: Component, B: Component>(
        &mut self,
        filter: &Filter,
        f: impl FnMut(Entity, &mut A, &mut B),
    ) -> Result<usize, WorldError> {
        World::for_each_mut2_filtered(self, filter, f)
    }

    fn resource_count(&self) -> usize {
        World::resource_count(self)
    }

    fn get_fields<T: Component + SoaComponent>(&self, entity: Entity) -> Result<T, WorldError> {
        World::get_fields::<T>(self, entity)
    }

    fn lend_soa<T: Component + SoaComponent>(
        &mut self,
    ) -> Result<Option<SoaMut<'_, T>>, WorldError> {
        World::lend_soa::<T>(self)
    }

    fn lend_soa_pair<A: Component + SoaComponent, B: Component + SoaComponent>(
        &mut self,
    ) -> Result<Option<(SoaMut<'_, A>, SoaMut<'_, B>)>, WorldError> {
        World::lend_soa_pair::<A, B>(self)
    }

    fn align_soa_rows<A: Component + SoaComponent, B: Component + SoaComponent>(
        &mut self,
    ) -> Result<bool, WorldError> {
        World::align_soa_rows::<A, B>(self)
    }

    fn for_each_mut3<A: Component, B: Component, C: Component>(
        &mut self,
        f: impl FnMut(Entity, &mut A, &mut B, &mut C),
    ) -> Result<usize, WorldError> {
        World::for_each_mut3(self, f)
    }

    fn for_each_mut3_filtered<A: Component, B: Component, C: Component>(
        &mut self,
        filter: &Filter,
        f: impl FnMut(Entity, &mut A, &mut B, &mut C),
    ) -> Result<usize, WorldError> {
        World::for_each_mut3_filtered(self, filter, f)
    }

    fn set_system_spans(&mut self, on: bool) {
        World::set_system_spans(self, on)
    }

    fn system_count(&self) -> usize {
        World::system_count(self)
    }

    fn system_ids(&self) -> impl ExactSizeIterator<Item = SystemId> + '_ {
        World::system_ids(self)
    }

    fn system_name(&self, id: SystemId) -> Result<&str, WorldError> {
        World::system_name(self, id)
    }

    fn system_budget(&self, id: SystemId) -> Result<Budget, WorldError> {
        World::system_budget(self, id)
    }

    fn system_domain(&self, id: SystemId) -> Result<Option<Domain>, WorldError> {
        World::system_domain(self, id)
    }

    fn begin_frame(&mut self) {
        World::begin_frame(self)
    }

    fn system_timing_window(
        &self,
        id: SystemId,
    ) -> Result<&RollingWindow<SYSTEM_TIMING_WINDOW_SAMPLES>, WorldError> {
        World::system_timing_window(self, id)
    }

    fn event_counts(&self, kind: EngineEvent) -> EventCounts {
        World::event_counts(self, kind)
    }

    fn component_access(&self) -> Vec<ColumnAccess> {
        World::component_access(self)
    }

    fn layout_advice(&self) -> Vec<lanegraph_simd::advisor::LayoutAdvice> {
        World::layout_advice(self)
    }
}

/// Runs every system of `world` once exactly like [`World::run_systems`] but without timing,
/// windows or budget checks: the baseline the `timing` bench measures the timing overhead
/// against.
pub fn run_systems_untimed(world: &mut World) {
    world.run_systems_untimed();
}

/// An entity handle's parts, for the runtime's tables and tests of slot reuse. A game treats an
/// [`Entity`] as opaque: it compares, orders and hashes it, prints it (`12v3`: slot 12, third
/// use) and sends it as [`Entity::to_bits`].
pub trait EntityHooks {
    /// The slot index (reused after despawn, under a new generation).
    fn index(self) -> u32;

    /// How many times the slot had been reused when this handle was made (starts at 1).
    fn generation(self) -> u32;
}

impl EntityHooks for Entity {
    fn index(self) -> u32 {
        Entity::index(self)
    }

    fn generation(self) -> u32 {
        Entity::generation(self)
    }
}

/// A query's tuning knob for tests and benches: the parallel split forced to a chunk size.
pub trait QueryHooks: Sized {
    /// Parallel runs split into chunks of `rows` rows (at least 1) whenever the world has a
    /// lane, whatever the cost model predicts: for a caller who knows its rows' cost.
    fn chunk_rows(self, rows: usize) -> Self;
}

impl<Q: QueryData, F: QueryFilter> QueryHooks for Query<'_, Q, F> {
    fn chunk_rows(self, rows: usize) -> Self {
        Query::chunk_rows(self, rows)
    }
}

/// A system id built from its parts, for tests of the registry's checks (a game gets ids from `register_system`).
pub trait SystemIdHooks {
    /// Rebuilds an id from its parts (e.g. read back from a profiler capture). It is validated
    /// on use, never trusted.
    fn from_parts(world: WorldId, index: u32) -> Self
    where
        Self: Sized;

    /// The 0-based schedule position (the run record's and the summary's system order).
    fn index(self) -> u32;

    /// The world the id belongs to.
    fn world(self) -> WorldId;
}

impl SystemIdHooks for SystemId {
    fn from_parts(world: WorldId, index: u32) -> Self {
        SystemId::from_parts(world, index)
    }

    fn index(self) -> u32 {
        SystemId::index(self)
    }

    fn world(self) -> WorldId {
        SystemId::world(self)
    }
}

/// A snapshot's copy-on-change figures and the tick it holds, for tests (a game reads none of it).
pub trait SnapshotHooks {
    /// Columns the latest [`World::snapshot_into`] copied. A capture into a snapshot that last
    /// held the same world skips every column whose domains' change epochs have not moved since
    /// (every write, insert, removal, despawn and restore moves them), so a static column costs
    /// nothing after its first capture.
    fn columns_copied(&self) -> usize;

    /// Live entities captured.
    fn entities(&self) -> usize;

    /// The fixed step the world had run when captured (`World::tick`); `None` when empty. A
    /// game finds a snapshot by its tick through `SnapshotRing::at_tick`.
    fn tick(&self) -> Option<u64>;
}

impl SnapshotHooks for Snapshot {
    fn columns_copied(&self) -> usize {
        Snapshot::columns_copied(self)
    }

    fn entities(&self) -> usize {
        Snapshot::entities(self)
    }

    fn tick(&self) -> Option<u64> {
        Snapshot::tick(self)
    }
}
