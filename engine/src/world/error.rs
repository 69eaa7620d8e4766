//! [`WorldError`]: every way a World call can fail, in one type. Each variant says what failed,
//! why, and how to fix it, so a game handles the World's failures with one `?` and one match.
//!
//! Owns: the error type and its one report payload, [`Desync`] (the checks that raise them live
//! with the data they check). Must never: log (the caller decides whether a failure is worth a
//! line), or lose the figures a fix needs (the names, the entity, the sizes).
//!
//! Import cycle with `entity`, kept on purpose: a stale-handle error carries the `Entity`, and
//! the entity table returns the error; splitting either would move one type away from the
//! only code that uses it.

use lanegraph_jobs::JobPanicked;
use lanegraph_simd::InvalidFields;

use super::entity::Entity;

/// Why a World call failed: entities, components, resources, queries, snapshots, field-SoA
/// columns, commands and the determinism check all report here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WorldError {
    /// The entity handle is stale: it was despawned.
    #[error(
        "entity {entity} is stale: it was despawned (its slot is now at generation {current}); \
         fix: drop handles when you despawn, or check `World::is_alive` first"
    )]
    StaleEntity {
        /// The stale handle.
        entity: Entity,
        /// The slot's current generation (0 when the slot was never allocated).
        current: u32,
    },
    /// The entity lacks the component.
    #[error(
        "entity {entity} has no `{component}` component; \
         fix: insert it first, or use `World::has` to check"
    )]
    MissingComponent {
        /// The entity.
        entity: Entity,
        /// The component's `NAME`.
        component: &'static str,
    },
    /// Two component types declare one name (names order the state hash).
    #[error(
        "component name `{name}` is declared by both `{existing}` and `{new}`; names order the \
         state hash and must be unique; fix: give one of the types a different `Component::NAME`"
    )]
    ComponentNameClash {
        /// The clashing name.
        name: &'static str,
        /// The Rust type that registered the name first.
        existing: &'static str,
        /// The Rust type that tried to register it again.
        new: &'static str,
    },
    /// The component is stored in the other layout (AoS or field-SoA).
    #[error(
        "component `{component}` is stored {actual}, but it was accessed as {requested}; the \
         layout is chosen once per component; fix: reach it with `World::query`, which reads and \
         writes either layout (a field-SoA component's rows by field: `World::soa_columns`)"
    )]
    WrongLayout {
        /// The component's `NAME`.
        component: &'static str,
        /// The layout it is stored in.
        actual: &'static str,
        /// The layout it was accessed as.
        requested: &'static str,
    },
    /// A query asks for one component mutably and again: two references to one row, one of
    /// them `&mut`.
    #[error(
        "query asks for `{component}` both mutably and shared, which would alias; \
         fix: query it once, mutably"
    )]
    AliasedQuery {
        /// The component's `NAME`.
        component: &'static str,
    },
    /// A query names more components than a query checks for aliasing.
    #[error("the query names more than {max} components; fix: split it into two queries")]
    QueryTooWide {
        /// The most components one query names.
        max: usize,
    },
    /// A query filter names more components than a filter holds.
    #[error(
        "the query filter names more than {max} components; fix: split the query, or keep the \
         rarest conditions"
    )]
    TooManyFilters {
        /// The most components one filter names.
        max: usize,
    },
    /// The world holds no such resource (or no such event queue).
    #[error(
        "the world has no `{resource}` resource; \
         fix: `World::insert_resource` it before the first system that reads it runs"
    )]
    MissingResource {
        /// The resource's `NAME`.
        resource: &'static str,
    },
    /// Two resource types declare one name.
    #[error(
        "resource name `{name}` is declared by both `{existing}` and `{new}`; names order the \
         state hash and must be unique; fix: give one of the types a different `Resource::NAME`"
    )]
    ResourceNameClash {
        /// The clashing name.
        name: &'static str,
        /// The Rust type that holds the name.
        existing: &'static str,
        /// The Rust type that tried to take it.
        new: &'static str,
    },
    /// A resource set names one resource twice.
    #[error(
        "the resource set names `{resource}` twice; fix: name it once (mutably if any use \
         writes it)"
    )]
    AliasedResource {
        /// The resource's `NAME`.
        resource: &'static str,
    },
    /// A component or resource has no way to be copied into a snapshot.
    #[error(
        "{kind} `{name}` cannot be snapshotted: it is not `Clone`; fix: derive `Clone` for it \
         (the `Component`/`Resource` derive then copies it), or return `Some(Self::clone)` from \
         `snapshot_clone` in a hand-written `ComponentMeta`/`ResourceMeta` impl"
    )]
    NotCloneable {
        /// `"component"` or `"resource"`.
        kind: &'static str,
        /// Its `NAME`.
        name: &'static str,
    },
    /// The snapshot was taken of another world (column indices differ between worlds).
    #[error(
        "the snapshot was taken of another world; fix: restore a world from its own snapshots \
         (use save/load to move state between worlds)"
    )]
    SnapshotOfOtherWorld,
    /// The snapshot holds nothing.
    #[error("the snapshot is empty: nothing was captured into it yet; fix: `snapshot_into` first")]
    SnapshotEmpty,
    /// A component changed layout (AoS <-> field-SoA) since the snapshot.
    #[error(
        "component `{component}` changed layout since the snapshot; fix: choose layouts before \
         the first snapshot"
    )]
    LayoutChanged {
        /// The component's `NAME`.
        component: &'static str,
    },
    /// The component's field list cannot be stored field-SoA.
    #[error("component cannot be stored field-SoA: {0}")]
    InvalidFields(InvalidFields),
    /// Two field-SoA columns do not name the same entities in the same order.
    #[error(
        "field-SoA columns `{a}` and `{b}` are not row-aligned ({a_rows} and {b_rows} rows), so \
         row i is not one entity in both; fix: call `World::align_soa_rows::<{a}, {b}>()` after \
         structural changes"
    )]
    NotAligned {
        /// First component.
        a: &'static str,
        /// Second component.
        b: &'static str,
        /// Rows of the first.
        a_rows: usize,
        /// Rows of the second.
        b_rows: usize,
    },
    /// A parallel query's closure panicked on a chunk: the chunks already claimed finished,
    /// later ones were not started.
    #[error(transparent)]
    Panicked(#[from] JobPanicked),
    /// A queued command failed when it was applied.
    #[error(
        "command `{command}`: {source} (fix: check the entity is still alive when the command \
         applies, e.g. not despawned by an earlier command)"
    )]
    Command {
        /// `insert Position`, `remove Velocity`, `despawn`, `spawn`.
        command: String,
        /// Why.
        source: Box<WorldError>,
    },
    /// An event was sent for a type the world has no queue for.
    #[error(
        "command `send {event}`: the world has no `{event}` event queue (fix: \
         `World::add_event::<{event}>()` at setup)"
    )]
    NoEventQueue {
        /// The event's name.
        event: &'static str,
    },
    /// The determinism check's re-simulation differed from the run.
    #[error(transparent)]
    Desync(#[from] Desync),
    /// A system id that names no system of this world.
    #[error("system id {id} names no system of this world ({count} registered); fix: use the id `register_system` returned, on the world that returned it")]
    NoSuchSystem {
        /// The id.
        id: crate::systems::SystemId,
        /// Systems registered in this world.
        count: usize,
    },
}

// Written out, not `#[from]`: that would also make the field list the error's `source`, and a
// reporter walking the chain would print it twice (the message already holds it).
impl From<InvalidFields> for WorldError {
    fn from(f: InvalidFields) -> Self {
        WorldError::InvalidFields(f)
    }
}

/// Where a re-simulation first differed from the run it re-played.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "desync at step {tick}: after system `{system}`, {} differ between the run and its \
     re-simulation from the same snapshot and input; fix: `{system}` computes from something the World does not hold: state kept between runs \
     outside the World (an `EventCursor`, a counter or a cache captured in a closure: keep it \
     in a resource, docs/systems.md#state-a-system-keeps), a wall clock, or a `HashMap`'s \
     iteration order",
    .differ.join(", ")
)]
pub struct Desync {
    /// The step (`World::tick` before it ran).
    pub tick: u64,
    /// The first system after which the states differed.
    pub system: String,
    /// What differs: component and resource names, or `"entities"` for the live set.
    pub differ: Vec<String>,
}

/// At most `max` characters of `s`, control characters escaped: a value quoted in an error
/// cannot flood the terminal (a 10 MB value) or forge a log line (an escaped newline).
pub(crate) fn quoted(s: &str, max: usize) -> String {
    let mut out: String = s.chars().take(max).flat_map(char::escape_debug).collect();
    if s.chars().count() > max {
        out.push('…');
    }
    out
}
