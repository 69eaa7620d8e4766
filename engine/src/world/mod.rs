//! The World: entities with generational handles, component columns, change epochs, the state
//! hash and per-component access telemetry. Systems are registered on it and run on it
//! ([`crate::systems`]); the [`crate::game_loop`] drives it on the fixed step.
//!
//! Owns: all simulation state, on one owner thread (whoever holds `&mut World`). Must never:
//! let anything timed enter that state or the state hash, hand out a stale entity's data, or
//! mutate without bumping the change epochs of the domains the mutation can affect.
//!
//! # Layout
//! - `entity`: handles and the entity table (dense list of live entities).
//! - `column`: the sparse-set column per component (AoS), behind a type-erased interface.
//! - `soa`: field-SoA columns from `lanegraph-simd` for hot numeric components, and lending
//!   them to the physics lane for one step.
//! - `query`: the typed query (`World::query`), one engine for every layout and width, with
//!   its parallel forms on a lane.
//! - `resource`: typed singletons (the score, the wind), hashed and epoch-bumped like components.
//! - `epoch`, `hash`, `access`: change epochs, the state hash, access telemetry.
//!
//! # What a game writes first
//!
//! Components and resources are derived; a system writes several components in one loop, or
//! in parallel on the physics lane inside an engine:
//!
//! ```
//! use lanegraph::systems::SystemDef;
//! use lanegraph::world::{Component, Resource, StateHash, Without, World};
//!
//! #[derive(Clone, Copy, Component, StateHash)]
//! #[component(domains(TRANSFORM))]
//! struct Position { x: f32, y: f32 }
//!
//! #[derive(Clone, Copy, Component, StateHash)]
//! #[component(domains(PHYSICS))]
//! struct Velocity { x: f32, y: f32 }
//!
//! #[derive(Component, StateHash)]
//! #[component(domains(GAMEPLAY))]
//! struct Frozen;
//!
//! #[derive(Resource, StateHash)]
//! #[resource(domains(PHYSICS))]
//! struct Gravity(f32);
//!
//! let mut world = World::new();
//! world.insert_resource(Gravity(-9.81)).unwrap();
//! for i in 0..1000 {
//!     let e = world.spawn();
//!     world.insert(e, Position { x: i as f32, y: 100.0 }).unwrap();
//!     world.insert(e, Velocity { x: 1.0, y: 0.0 }).unwrap();
//! }
//! world
//!     .register_system(SystemDef::new("move", 2.0, |w, ctx| {
//!         let (dt, g) = (ctx.dt(), w.resource::<Gravity>().map_or(0.0, |g| g.0));
//!         // One loop, both components mutable (parallel chunks: `par_for_each`).
//!         let mut moved = 0u64;
//!         w.query_filtered::<(&mut Position, &mut Velocity), Without<Frozen>>()
//!             .unwrap()
//!             .for_each(|(p, v)| {
//!                 v.y += g * dt;
//!                 p.x += v.x * dt;
//!                 p.y += v.y * dt;
//!                 moved += 1;
//!             });
//!         ctx.report_workload(moved);
//!     }))
//!     .unwrap();
//! world.run_systems();
//! let e = world.entities()[0];
//! assert!(world.get::<Position>(e).unwrap().y < 100.0);
//! ```
//!
//! | file | idea |
//! |------|------|
//! | `access` | Per-component access telemetry, the input of the layout advisor |
//! | `bundle` | Several components spawned together (`Bundle`: tuples of 1-8 components), and spawning many at once straight into their columns ... |
//! | `change_ticks` | Per-row change ticks: which rows of a column were written since a reader last looked, for the `Changed` query filter |
//! | `column` | Component columns: the type-erased column interface and the plain typed (AoS) column |
//! | `commands` | Deferred world changes: spawn, despawn, insert, remove and events, queued where the world cannot be borrowed (inside a query's closure) ... |
//! | `component` | What a component is, and the errors of component access |
//! | `component_ids` | Finding a component's column: a dense id per component type, resolved once per process, and the world's table from those ids (and, for ... |
//! | `digests` | Column digests and their cache: what the state hash and the SyncTest probe hash per column |
//! | `entity` | Entity handles and the table that hands them out |
//! | `epoch` | Change epochs per semantic domain, and the world's identity |
//! | `error` | `WorldError`: every way a World call can fail, in one type |
//! | `events` | Gameplay events: typed messages between systems, double-buffered per fixed step |
//! | `hash` | The world state hash: a fixed, platform-independent digest of entities and component data |
//! | `query` | Typed queries: `World::query` / `World::query_filtered`, their data and filters, column access, and the parallel forms (its own table) |
//! | `resource` | Resources: typed singletons that systems read and write (the score, the wind, the RNG), held by the World beside its components |
//! | `resource_set` | Several resources at once, and a world split into its components, resources and input, so a system holds what it needs without borrow fights |
//! | `savegame` | Savegames: a World's simulation state written to a file and read back, across program runs and across versions of the game's types |
//! | `snapshot` | Snapshots of a World, and restoring one: what rollback, a SyncTest and desync hunting start from |
//! | `soa` | Field-SoA component columns (from `lanegraph-simd`), and lending them to the physics lane |
//! | `soa_raw` | One field-SoA column as raw parts for typed queries: each field's first row and the row codec (`SoaRaw`), and the cached field pointers ... |
//! | `sync_test` | SyncTest: every step, roll the World back and re-simulate the last N steps, comparing a checksum of every component, resource and the ... |
//! | `tests` | Unit tests of the world: entities, components, epochs, the hash, telemetry, SoA columns |
//! | `type_map` | The World's maps from a Rust type to its column or resource index |

pub(crate) mod access;
pub(crate) mod bundle;
pub(crate) mod change_ticks;
pub(crate) mod column;
pub(crate) mod commands;
pub(crate) mod component;
pub(crate) mod component_ids;
pub(crate) mod digests;
pub(crate) mod entity;
pub(crate) mod epoch;
pub(crate) mod error;
pub(crate) mod events;
pub(crate) mod hash;
pub(crate) mod query;
pub(crate) mod resource;
pub(crate) mod resource_set;
#[cfg(feature = "savegame")]
pub(crate) mod savegame;
pub(crate) mod snapshot;
pub(crate) mod soa;
pub(crate) mod soa_raw;
pub(crate) mod sync_test;
pub(crate) mod type_map;

pub(crate) use access::ColumnAccess;
pub use bundle::Bundle;
pub use commands::Commands;
pub use component::Component;
#[doc(hidden)]
pub use component::CopyRows;
#[doc(hidden)]
pub use component::UseFieldSoa as __UseFieldSoa;
#[doc(hidden)]
pub use component_ids::DenseKey as __DenseKey;
pub use entity::Entity;
pub(crate) use epoch::Epochs;
pub(crate) use epoch::WorldId;
pub use epoch::{Domain, DomainSet};
pub(crate) use error::quoted;
pub use error::{Desync, WorldError};
pub use events::{Event, EventCursor, Events};
pub use hash::{StateHash, StateHasher};
/// The derives, each named as its trait: `#[derive(Component, StateHash)]`, `#[derive(Resource)]`.
pub use lanegraph_derive::{Component, Resource, StateHash};
pub use query::data::{Changed, QueryData, QueryFilter, With, Without};
pub use query::{Components, ParRun, Query, SerialReason};
pub use resource::Resource;
pub use resource_set::ResourceSet;
#[cfg(feature = "savegame")]
pub use savegame::{LoadError, LoadReport, SaveError, SaveSchema};
#[doc(hidden)]
pub use snapshot::probe as __snapshot_probe;
pub use snapshot::{Snapshot, SnapshotRing};
pub use soa::SoaRef;
#[doc(hidden)]
pub use soa_raw::{SoaRow as __SoaRow, SoaRowMut as __SoaRowMut};
pub use sync_test::SyncTest;

use crate::engine_events::EventLog;
use crate::fixed_step::FixedStep;
use crate::systems::registry::SystemTable;
use column::{AosColumn, ErasedColumn};
use entity::EntityTable;

/// The simulation world of one game instance.
///
/// `World` is `Send` (it may be built on one thread and moved to the owner thread) but not
/// `Sync`: system run functions are `FnMut + Send` only. All mutation goes through
/// `&mut World`, i.e. the owner thread; other threads get lent columns ([`SoaMut`](crate::hooks::SoaMut)) or
/// published views, never the world.
pub struct World {
    id: WorldId,
    entities: EntityTable,
    /// Columns in registration order; `ids` finds them by type, `hash_order` sorts them by name.
    columns: Vec<Box<dyn ErasedColumn>>,
    ids: component_ids::ColumnIds,
    hash_order: Vec<usize>,
    epochs: Epochs,
    /// Systems, their timing windows and budgets (see [`crate::systems`]).
    pub(crate) systems: SystemTable,
    /// Rate-limited structured events (see [`crate::engine_events`]).
    pub(crate) events: EventLog,
    /// Fixed steps run since construction (incremented by `run_systems`).
    pub(crate) tick: u64,
    /// Frames begun since construction (incremented by `begin_frame`).
    pub(crate) frame: u64,
    /// The fixed step systems simulate (set by the game loop).
    pub(crate) fixed_step: FixedStep,
    /// Typed singletons ([`Resource`]).
    resources: resource::Resources,
    /// Where parallel queries run ([`World::set_parallel_lane`]); `None`: on the caller.
    parallel: Option<query::parallel::ParallelLane>,
    /// Per (driving column, other column) of typed queries: where their rows run in step.
    pub(crate) query_align: query::data::AlignCache,
    /// What each parallel query call site learned of its cost per row.
    par_costs: query::ParCosts,
    /// This step's input and the state it left ([`World::input`]). Not part of the state
    /// hash: it is an input, and what systems make of it is in the hashed state.
    pub(crate) input: crate::input::Input,
    /// The strategy in force for each budget agent (index = agent id), written by the engine
    /// at each frame boundary ([`World::agent_strategy`]). Not hashed: decisions are inputs,
    /// recorded and replayed; what systems make of them is in the hashed state.
    pub(crate) agent_strategies: Vec<lanegraph_budget::StrategyIndex>,
    /// The command queue lent to each system run (`SystemContext::commands`), applied after
    /// it; kept between runs so its buffers are reused.
    pub(crate) command_buf: commands::Commands,
    /// Commands that failed to apply, and the latest one's error.
    command_failures: u64,
    last_command_error: Option<WorldError>,
    /// Per event type, in registration order: ends its step (`events`).
    pub(crate) event_steps: Vec<fn(&mut World)>,
    /// Set while a [`SyncTest`] records a step: the schedule records checksums after each
    /// system.
    pub(crate) sync_probe: Option<Box<sync_test::SyncProbe>>,
    /// The change tick rows are stamped with and what each reader saw last ([`Changed`]).
    pub(crate) change: change_ticks::ChangeClock,
    /// The columns' and the entity set's content versions and digests, so a state hash or a
    /// SyncTest record rehashes only what changed and a capture or restore copies only what
    /// differs. A `Mutex` so `state_hash` and `snapshot_into` take `&self`; never waited on (a
    /// contended cache is bypassed: everything is read or copied).
    pub(crate) content: std::sync::Mutex<digests::ContentCache>,
}

impl Default for World {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("id", &self.id)
            .field("entities", &self.entities.live().len())
            .field("components", &self.columns.len())
            .field("systems", &self.systems.len())
            .field("tick", &self.tick)
            .finish_non_exhaustive()
    }
}

impl World {
    /// Applies `commands` now, in the order queued (a system's own commands apply right after
    /// it; this is for a queue filled elsewhere). Returns how many failed; each is counted in
    /// [`World::command_failures`].
    pub fn apply_commands(&mut self, commands: &mut Commands) -> usize {
        commands.apply_to(self)
    }

    /// Commands that could not be applied since the world was made, and the latest error.
    pub fn command_failures(&self) -> (u64, Option<&WorldError>) {
        (self.command_failures, self.last_command_error.as_ref())
    }

    pub(crate) fn note_command_failure(&mut self, e: WorldError) {
        self.command_failures += 1;
        if self.command_failures == 1 {
            tracing::warn!(target: "lanegraph", code = "LG-WORLD-CMD", error = %e, "a queued command could not be applied; it was skipped and counted (World::command_failures)");
        }
        self.last_command_error = Some(e);
    }

    /// The strategy in force for this step for a budget agent (the id
    /// [`Engine::add_agent`](crate::runtime::Engine::add_agent) returned): what a system reads
    /// to do its agent's work the chosen way. Set at the frame boundary where a decision, a pin
    /// or a replayed decision takes effect, the same live and in replay. `None` for an unknown
    /// agent, or a world not run by an engine.
    pub fn agent_strategy(
        &self,
        agent: lanegraph_budget::AgentId,
    ) -> Option<lanegraph_budget::StrategyIndex> {
        self.agent_strategies
            .get(lanegraph_budget::hooks::AgentIdHooks::index(agent))
            .copied()
    }

    /// An empty world. Pays the one-time setup cost of the system table (room for the maximum
    /// number of systems, each with its fixed timing window) so registration never reallocates.
    pub fn new() -> Self {
        World {
            id: WorldId::fresh(),
            entities: EntityTable::default(),
            columns: Vec::new(),
            ids: component_ids::ColumnIds::default(),
            hash_order: Vec::new(),
            epochs: Epochs::default(),
            systems: SystemTable::new(),
            events: EventLog::default(),
            tick: 0,
            frame: 0,
            fixed_step: FixedStep::DEFAULT,
            resources: resource::Resources::default(),
            parallel: None,
            par_costs: query::ParCosts::default(),
            query_align: query::data::AlignCache::default(),
            input: crate::input::Input::default(),
            agent_strategies: Vec::new(),
            command_buf: commands::Commands::default(),
            command_failures: 0,
            last_command_error: None,
            content: Default::default(),
            event_steps: Vec::new(),
            sync_probe: None,
            change: change_ticks::ChangeClock::new(),
        }
    }

    /// The body of [`WorldHooks::id`](crate::hooks::WorldHooks::id), which documents it.
    pub(crate) fn id(&self) -> WorldId {
        self.id
    }

    /// Fixed steps run so far (each `run_systems` call is one).
    pub fn tick(&self) -> u64 {
        self.tick
    }

    /// The fixed step the systems simulate (exact; see [`FixedStep`]).
    pub fn fixed_step(&self) -> FixedStep {
        self.fixed_step
    }

    /// The body of [`WorldHooks::set_fixed_step`](crate::hooks::WorldHooks::set_fixed_step), which documents it.
    pub(crate) fn set_fixed_step(&mut self, step: FixedStep) {
        self.fixed_step = step;
    }

    // ---- entities -------------------------------------------------------------------------

    /// Spawns an entity with no components; bumps [`Domain::STRUCTURE`].
    pub fn spawn(&mut self) -> Entity {
        self.epochs.bump(DomainSet::of(Domain::STRUCTURE));
        self.entities.spawn()
    }

    /// Despawns `entity` and drops its components; bumps `STRUCTURE` and the domains of every
    /// component it had. Every copy of the handle becomes stale.
    pub fn despawn(&mut self, entity: Entity) -> Result<(), WorldError> {
        self.entities.check(entity)?;
        let mut touched = DomainSet::of(Domain::STRUCTURE);
        for c in &mut self.columns {
            if c.remove_entity(entity) {
                touched = touched.union(c.domains());
            }
        }
        self.entities.despawn(entity)?;
        self.epochs.bump(touched);
        Ok(())
    }

    /// Whether `entity` is alive.
    pub fn is_alive(&self, entity: Entity) -> bool {
        self.entities.is_alive(entity)
    }

    /// The live entities, densely.
    pub fn entities(&self) -> &[Entity] {
        self.entities.live()
    }

    /// Input for systems: this step's events in order, keys held, cursor, focus (see
    /// [`crate::input`]). Filled by [`Engine::push_input`](crate::Engine::push_input).
    pub fn input(&self) -> &crate::input::Input {
        &self.input
    }

    /// How many entities are alive.
    pub fn len(&self) -> usize {
        self.entities.live().len()
    }

    /// Whether no entity is alive.
    pub fn is_empty(&self) -> bool {
        self.entities.live().is_empty()
    }

    // ---- components -----------------------------------------------------------------------

    /// The column index of `T`, creating an AoS column on first use.
    pub(crate) fn column_index_or_create<T: Component>(&mut self) -> Result<usize, WorldError> {
        if let Some(i) = self.ids.get::<T>() {
            return Ok(i);
        }
        self.add_column::<T>(Box::new(AosColumn::<T>::new(T::NAME, T::DOMAINS)))
    }

    /// Registers a new column, keeping `hash_order` sorted by name; rejects a name clash.
    pub(crate) fn add_column<T: Component>(
        &mut self,
        column: Box<dyn ErasedColumn>,
    ) -> Result<usize, WorldError> {
        if let Some(existing) = self.columns.iter().find(|c| c.name() == column.name()) {
            return Err(WorldError::ComponentNameClash {
                name: column.name(),
                existing: existing.type_name(),
                new: column.type_name(),
            });
        }
        let i = self.columns.len();
        let pos = self
            .hash_order
            .partition_point(|&j| self.columns[j].name() < column.name());
        self.columns.push(column);
        self.hash_order.insert(pos, i);
        self.ids.insert::<T>(i);
        Ok(i)
    }

    /// Moves the change tick on (writes from here on are newer than any reader has seen) and
    /// tells the columns that keep ticks.
    pub(crate) fn advance_change_tick(&mut self) {
        self.change.now += 1;
        if self.change.any_tracked {
            let now = self.change.now;
            for c in &mut self.columns {
                c.ticks_mut().set_now(now);
            }
        }
    }

    pub(crate) fn column_index<T: Component>(&self) -> Option<usize> {
        self.ids.get::<T>()
    }

    pub(crate) fn erased_column(&self, i: usize) -> &dyn ErasedColumn {
        &*self.columns[i]
    }

    pub(crate) fn erased_column_mut(&mut self, i: usize) -> &mut dyn ErasedColumn {
        &mut *self.columns[i]
    }

    /// Swaps in a new column for the same component at index `i` (a layout change).
    pub(crate) fn replace_column(&mut self, i: usize, column: Box<dyn ErasedColumn>) {
        debug_assert_eq!(self.columns[i].name(), column.name());
        self.columns[i] = column;
        // The new column's order counter starts afresh: forget alignments cached against it.
        self.query_align.retain(|&(a, b), _| a != i && b != i);
    }

    /// Two distinct columns, both mutably (`i != j`).
    pub(crate) fn two_columns_mut(
        &mut self,
        i: usize,
        j: usize,
    ) -> (&mut dyn ErasedColumn, &mut dyn ErasedColumn) {
        assert_ne!(
            i, j,
            "two_columns_mut: same column twice (broken invariant)"
        );
        if i < j {
            let (lo, hi) = self.columns.split_at_mut(j);
            (&mut *lo[i], &mut *hi[0])
        } else {
            let (lo, hi) = self.columns.split_at_mut(i);
            (&mut *hi[0], &mut *lo[j])
        }
    }

    pub(crate) fn entity_table(&self) -> &EntityTable {
        &self.entities
    }

    pub(crate) fn bump(&mut self, set: DomainSet) {
        self.epochs.bump(set);
    }

    /// Attaches `value` to `entity` (replacing and returning any previous one); bumps
    /// `T::DOMAINS`. Works for either layout.
    pub fn insert<T: Component>(
        &mut self,
        entity: Entity,
        value: T,
    ) -> Result<Option<T>, WorldError> {
        self.entities.check(entity)?;
        let i = self.column_index_or_create::<T>()?;
        self.epochs.bump(T::DOMAINS);
        if let Some(c) = self.columns[i].as_any_mut().downcast_mut::<AosColumn<T>>() {
            return Ok(c.insert(entity, value));
        }
        self.soa_insert(i, entity, value)
    }

    /// Detaches and returns `entity`'s `T`; bumps `T::DOMAINS`.
    pub fn remove<T: Component>(&mut self, entity: Entity) -> Result<T, WorldError> {
        self.entities.check(entity)?;
        let missing = || WorldError::MissingComponent {
            entity,
            component: T::NAME,
        };
        let i = self.column_index::<T>().ok_or_else(missing)?;
        let value = match self.columns[i].as_any_mut().downcast_mut::<AosColumn<T>>() {
            Some(c) => c.take(entity),
            None => self.soa_take::<T>(i, entity)?,
        };
        let value = value.ok_or_else(missing)?;
        self.epochs.bump(T::DOMAINS);
        Ok(value)
    }

    /// The error for `T`, stored at column `i`, asked for in the `requested` layout.
    pub(crate) fn wrong_layout<T: Component>(
        &self,
        i: usize,
        requested: &'static str,
    ) -> WorldError {
        WorldError::WrongLayout {
            component: T::NAME,
            actual: self.columns[i].layout().name(),
            requested,
        }
    }

    /// Reads `entity`'s `T` (AoS components: a field-SoA one is [`WorldError::WrongLayout`];
    /// [`World::query`] reads either layout, `World::soa_columns` a field-SoA one by field).
    pub fn get<T: Component>(&self, entity: Entity) -> Result<&T, WorldError> {
        self.entities.check(entity)?;
        let missing = || WorldError::MissingComponent {
            entity,
            component: T::NAME,
        };
        let i = self.column_index::<T>().ok_or_else(missing)?;
        let c = self.columns[i]
            .as_any()
            .downcast_ref::<AosColumn<T>>()
            .ok_or_else(|| self.wrong_layout::<T>(i, "AoS"))?;
        c.get(entity).ok_or_else(missing)
    }

    /// Writes `entity`'s `T` in place; bumps `T::DOMAINS` when the borrow is handed out.
    pub fn get_mut<T: Component>(&mut self, entity: Entity) -> Result<&mut T, WorldError> {
        self.entities.check(entity)?;
        let missing = || WorldError::MissingComponent {
            entity,
            component: T::NAME,
        };
        let i = self.column_index::<T>().ok_or_else(missing)?;
        if self.columns[i]
            .as_any()
            .downcast_ref::<AosColumn<T>>()
            .is_none()
        {
            return Err(self.wrong_layout::<T>(i, "AoS"));
        }
        if !self.columns[i].contains(entity) {
            return Err(missing());
        }
        self.epochs.bump(T::DOMAINS);
        let c = self.columns[i]
            .as_any_mut()
            .downcast_mut::<AosColumn<T>>()
            .expect("layout checked above");
        Ok(c.get_mut(entity).expect("row checked above"))
    }

    /// Whether `entity` has a `T` (either layout).
    pub fn has<T: Component>(&self, entity: Entity) -> Result<bool, WorldError> {
        self.entities.check(entity)?;
        Ok(self
            .column_index::<T>()
            .is_some_and(|i| self.columns[i].contains(entity)))
    }

    // ---- epochs, hash, telemetry, compaction ----------------------------------------------

    /// The body of [`WorldHooks::epochs`](crate::hooks::WorldHooks::epochs), which documents it.
    pub(crate) fn epochs(&self) -> Epochs {
        self.epochs
    }

    /// The body of [`WorldHooks::mark_changed`](crate::hooks::WorldHooks::mark_changed), which documents it.
    pub(crate) fn mark_changed(&mut self, domains: DomainSet) {
        self.epochs.bump(domains);
    }

    /// The state hash: every live entity (slot order), every component column (by name, rows in
    /// slot order) and every resource (by name), XXH3-64 (state-hash format 2, specified byte
    /// for byte in `docs/state-hash.md`). Timing, telemetry, epochs and layout
    /// never enter it, so AoS and field-SoA storage of the same data hash alike. A column
    /// unchanged since the last hash (no epoch of its domains moved) is not read again.
    pub fn state_hash(&self) -> u64 {
        let mut h = StateHasher::default();
        h.write_u64(self.entities.live().len() as u64);
        h.write_u64(self.entities_digest());
        for &i in &self.hash_order {
            let c = &self.columns[i];
            if c.len() > 0 {
                h.write_str(c.name());
                h.write_u64(c.len() as u64);
                h.write_u64(self.column_digest(i));
            }
        }
        self.resources.hash_state(&mut h);
        h.finish()
    }

    /// The live entity set's digest, cached per content version.
    pub(crate) fn entities_digest(&self) -> u64 {
        let fresh = || digests::entities_digest(&self.entities);
        match self.content.try_lock() {
            Ok(mut cache) => cache.digest(None, &self.epochs, digests::STRUCTURE, fresh),
            Err(_) => fresh(),
        }
    }

    /// Column `i`'s digest (0 for an empty column), cached per content version.
    pub(crate) fn column_digest(&self, i: usize) -> u64 {
        let c = &self.columns[i];
        if c.len() == 0 {
            return 0;
        }
        match self.content.try_lock() {
            Ok(mut cache) => cache.digest(Some(i), &self.epochs, c.domains(), || c.digest()),
            Err(_) => c.digest(),
        }
    }

    /// Access telemetry for every component column (for the layout advisor). Cold path: it
    /// allocates the returned list.
    pub(crate) fn component_access(&self) -> Vec<ColumnAccess> {
        self.hash_order
            .iter()
            .map(|&i| {
                let c = &self.columns[i];
                let rows_scanned = c.access().rows_scanned();
                ColumnAccess {
                    name: c.name(),
                    layout: c.layout(),
                    size_bytes: c.size_bytes(),
                    rows: c.len(),
                    query_count: c.access().queries(),
                    rows_scanned,
                    bytes_scanned: rows_scanned.saturating_mul(c.size_bytes() as u64),
                    all_f32: c.all_f32(),
                }
            })
            .collect()
    }

    /// The layout advisor's recommendation for every component, from the access telemetry since
    /// the world was made (for a window, snapshot `component_access` twice and call
    /// [`ColumnAccess::since`] then [`ColumnAccess::advice`]). Advice only: nothing is
    /// repacked. Cold path: allocates.
    pub(crate) fn layout_advice(&self) -> Vec<lanegraph_simd::advisor::LayoutAdvice> {
        self.component_access()
            .iter()
            .map(ColumnAccess::advice)
            .collect()
    }

    /// The body of [`WorldHooks::compact`](crate::hooks::WorldHooks::compact), which documents it.
    pub(crate) fn compact(&mut self) {
        let mut touched = DomainSet::of(Domain::STRUCTURE);
        for c in &mut self.columns {
            if c.compact() {
                touched = touched.union(c.domains());
            }
        }
        self.entities.sort_dense();
        self.epochs.bump(touched);
    }
}

#[cfg(test)]
pub(crate) mod tests;
