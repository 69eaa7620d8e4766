//! [`WorldHooks`]: the World's methods that only the runtime, its tools and its tests call,
//! and the untimed scheduler baseline ([`run_systems_untimed`]); with them the two calls of the
//! World's companions that only tests make ([`SystemIdHooks`], [`SnapshotHooks`]).
//!
//! Owns: the traits and their delegating impls. Must never: hold World logic (each method
//! calls the type's own `pub(crate)` method of the same name).

use std::sync::Arc;

use lanegraph_jobs::{LaneId, Lanes};
use lanegraph_simd::SoaComponent;

use crate::fixed_step::FixedStep;
use crate::hooks::{EngineEvent, SoaMut};
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
}

impl EntityHooks for Entity {
    fn index(self) -> u32 {
        Entity::index(self)
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
