//! What a component is, and the errors of component access.
//!
//! Owns: the [`Component`] trait and the typed errors of inserting, reading and removing
//! components. Must never: panic on bad input (a stale handle, a missing component, two types
//! claiming one name): each is a typed error saying what, why and how to fix.

use super::epoch::DomainSet;
use super::hash::StateHash;

/// A piece of data attached to an entity, stored in a column of its own.
///
/// Derive it (the derive has the trait's name and lives beside it). The options name the
/// component (stable and unique within a world: it orders the state hash, names the component
/// in telemetry and savegames) and say which change domains a mutation bumps (see
/// [`Domain`](super::Domain)); the runtime reads them through
/// [`ComponentMeta`](crate::hooks::ComponentMeta), which the derive writes:
///
/// ```
/// use lanegraph::hooks::ComponentMeta;
/// use lanegraph::simd::SoaComponent;
/// use lanegraph::world::{Component, Domain, DomainSet, StateHash};
///
/// #[derive(Clone, Copy, Component, StateHash, SoaComponent)]
/// #[component(domains(TRANSFORM))] // name defaults to "Position"
/// struct Position { x: f32, y: f32, z: f32 }
///
/// assert_eq!(Position::NAME, "Position");
/// assert_eq!(Position::DOMAINS, DomainSet::of(Domain::TRANSFORM));
/// assert!(Position::ALL_F32);
/// assert_eq!(Position::FIELDS, &["x", "y", "z"]);
/// ```
///
/// Without `domains(...)` a component bumps every domain: always correct, at the cost of
/// invalidating caches that did not need it. A field-SoA layout of a non-`f32` field does not
/// compile:
///
/// ```compile_fail
/// #[derive(Clone, Copy, lanegraph::simd::SoaComponent)]
/// struct Tagged { x: f32, id: u32 }
/// ```
///
/// and neither does an option the derive does not know:
///
/// ```compile_fail
/// #[derive(lanegraph::world::Component, lanegraph::world::StateHash)]
/// #[component(nmae = "Typo")]
/// struct Typo(u32);
/// ```
pub trait Component: ComponentMeta + StateHash + Send + Sync + 'static {}

/// What `#[derive(Component)]` writes and the runtime reads: a component's stable name, its
/// change domains and how snapshots and savegames copy and describe it. A game sets these
/// through the derive's options (`#[component(name = "...", domains(...), all_f32)]`) and does
/// not call them; a hand-written component implements this and then [`Component`] (empty).
///
/// `NAME` is the component's stable identity: it orders the state hash and names the component
/// in telemetry, so it must be unique within a world and stable across builds (a replay made by
/// one build is checked by another). `DOMAINS` says which change epochs a mutation of this
/// component bumps (see [`Domain`](super::Domain)).
pub trait ComponentMeta {
    /// Stable, unique name (e.g. `"Position"`).
    const NAME: &'static str;
    /// The domains whose epochs move when this component changes.
    const DOMAINS: DomainSet;
    /// Whether every field is an `f32` (so the component could be stored field-SoA and moved by
    /// the `f32x8` kernels). Only the layout advisor reads it (`layout_advice` in a run's
    /// summary and report): it recommends field-SoA + SIMD only for such components. Defaults
    /// to `false`; a component already stored field-SoA counts as all-`f32` whatever this says.
    const ALL_F32: bool = false;

    /// How a snapshot copies a value ([`World::snapshot_into`]): `Some(Self::clone)` when the
    /// type is `Clone`. `#[derive(Component)]` fills it in for every `Clone` type that has no
    /// generic parameters; a hand-written impl (or a generic type) returns
    /// `Some(<Self as Clone>::clone)` itself. `None` makes a snapshot of a world holding this
    /// component a typed error naming it.
    ///
    /// [`World::snapshot_into`]: super::World::snapshot_into
    fn snapshot_clone() -> Option<fn(&Self) -> Self> {
        None
    }

    /// The type's shape as a savegame records it (the derive writes the field names and types,
    /// `Pos{x:f32,y:f32}`; a hand-written impl answers its `NAME`). A save whose shape differs
    /// from the loading type's is decoded through serde's own migration attributes
    /// (`#[serde(default)]`, `#[serde(alias)]`) or refused with a typed error naming both shapes.
    fn schema() -> &'static str {
        Self::NAME
    }

    /// The type's dense id, which finds its column in a world with one indexed load: the
    /// derive keeps one in a `static` for every component type without generic parameters.
    /// `None` (generic types, hand-written impls) finds the column by `TypeId` instead.
    #[doc(hidden)]
    fn dense_key() -> Option<&'static super::component_ids::DenseKey> {
        None
    }

    /// Opts the type into field-SoA storage in `world` (what [`World::use_field_soa`] does):
    /// the derive fills it in for every type that also derives `SoaComponent`, so a savegame
    /// that stored the component field-SoA loads it field-SoA again. `None` otherwise.
    ///
    /// [`World::use_field_soa`]: super::World::use_field_soa
    #[doc(hidden)]
    fn use_field_soa_fn() -> Option<UseFieldSoa> {
        None
    }

    /// Reads one field-SoA row as `Self` through the type's own `SoaComponent` impl, statically
    /// (a typed query's hot path): the derive fills it in for every type that also derives
    /// `SoaComponent`. `None`: the query uses the codec captured at opt-in.
    #[doc(hidden)]
    #[inline(always)]
    fn soa_read(row: super::soa_raw::SoaRow<'_>) -> Option<Self>
    where
        Self: Sized,
    {
        let _ = row;
        None
    }

    /// Writes `self` into one field-SoA row (see [`soa_read`](Self::soa_read)); false when the
    /// type has no such path.
    #[doc(hidden)]
    #[inline(always)]
    fn soa_write(&self, row: super::soa_raw::SoaRowMut<'_>) -> bool {
        let _ = row;
        false
    }

    /// How a snapshot copies a whole column of values into a buffer it reuses: the derive
    /// fills it in with `Vec::extend_from_slice` for `Clone` types (one `memcpy` for `Copy`
    /// ones); `None` falls back to [`snapshot_clone`](Self::snapshot_clone) per value.
    #[doc(hidden)]
    fn snapshot_copy_rows() -> Option<CopyRows<Self>>
    where
        Self: Sized,
    {
        None
    }
}

/// Opts a component type into field-SoA storage in a world (see
/// [`ComponentMeta::use_field_soa_fn`]).
#[doc(hidden)]
pub type UseFieldSoa = fn(&mut super::World) -> Result<(), super::WorldError>;

/// Copies a whole column of values into a buffer it reuses (see
/// [`ComponentMeta::snapshot_copy_rows`]).
#[doc(hidden)]
pub type CopyRows<T> = fn(&[T], &mut Vec<T>);
