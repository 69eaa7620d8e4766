//! Resources: typed singletons that systems read and write (the score, the wind, the RNG), held
//! by the World beside its components.
//!
//! Owns: the [`Resource`] trait, the store ([`Resources`], one value per type, kept in name
//! order), the typed errors, and the `World` methods that hand resources out. Must never: hand
//! out a resource mutably without bumping its domains, or leave a resource out of the state
//! hash (a resource is simulation state: replays must see it).
//!
//! Why not a singleton entity: a resource is one indexed lookup away, needs no query, cannot be
//! despawned by accident, and says by its type that there is exactly one.

use std::any::{Any, TypeId};

use super::epoch::DomainSet;
use super::hash::{StateHash, StateHasher};
use super::World;
use crate::world::error::WorldError;

/// A typed singleton of simulation state. Derive it (`#[derive(Resource, StateHash)]`, options
/// `#[resource(name = "...", domains(...))]` as for [`Component`](super::Component)); the
/// runtime reads the name and domains through [`ResourceMeta`](crate::hooks::ResourceMeta).
pub trait Resource: ResourceMeta + StateHash + Send + Sync + 'static {}

/// What `#[derive(Resource)]` writes and the runtime reads: the resource's stable name, its
/// change domains and how snapshots and savegames copy and describe it. A game sets these
/// through the derive's options (`#[resource(name = "...", domains(...))]`) and does not call
/// them; a hand-written resource implements this and then [`Resource`] (empty).
///
/// `NAME` orders resources in the state hash and must be unique among a world's resources;
/// `DOMAINS` are the change epochs a write bumps.
pub trait ResourceMeta {
    /// Stable, unique name (e.g. `"Score"`).
    const NAME: &'static str;
    /// The domains whose epochs move when this resource changes.
    const DOMAINS: DomainSet;

    /// How a snapshot copies the value: as for
    /// [`ComponentMeta::snapshot_clone`](super::component::ComponentMeta::snapshot_clone) (the derive fills it in
    /// for `Clone` types).
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

    /// Copies `src` over `dst` for a snapshot; false when the type cannot be copied. The
    /// default assigns a [`snapshot_clone`](Self::snapshot_clone); a resource holding buffers
    /// may copy into `dst`'s own (as `Clone::clone_from` does) so warm snapshots allocate
    /// nothing.
    fn snapshot_copy(src: &Self, dst: &mut Self) -> bool
    where
        Self: Sized,
    {
        match Self::snapshot_clone() {
            Some(copy) => {
                *dst = copy(src);
                true
            }
            None => false,
        }
    }
}

#[doc(hidden)]
pub trait ErasedResource: Send + Sync + 'static {
    fn name(&self) -> &'static str;
    fn type_name(&self) -> &'static str;
    fn hash_state(&self, h: &mut StateHasher);
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
    /// A boxed copy, for snapshots; an error when the type has no `snapshot_clone`.
    fn boxed_copy(&self) -> Result<Box<dyn ErasedResource>, super::error::WorldError>;
    /// Copies `from` (the same type) over this value; false when the types differ.
    fn load(&mut self, from: &dyn ErasedResource) -> bool;
}

impl<R: Resource> ErasedResource for R {
    fn name(&self) -> &'static str {
        R::NAME
    }
    fn type_name(&self) -> &'static str {
        std::any::type_name::<R>()
    }
    fn hash_state(&self, h: &mut StateHasher) {
        StateHash::hash_state(self, h);
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
    fn boxed_copy(&self) -> Result<Box<dyn ErasedResource>, super::error::WorldError> {
        let copy = R::snapshot_clone().ok_or(super::error::WorldError::NotCloneable {
            kind: "resource",
            name: R::NAME,
        })?;
        Ok(Box::new(copy(self)))
    }
    fn load(&mut self, from: &dyn ErasedResource) -> bool {
        from.as_any()
            .downcast_ref::<R>()
            .is_some_and(|src| R::snapshot_copy(src, self))
    }
}

/// The world's resources, in name order, with an index by type.
#[derive(Default)]
#[doc(hidden)]
pub struct Resources {
    values: Vec<Box<dyn ErasedResource>>,
    by_type: super::type_map::TypeMap<usize>,
}

impl Resources {
    fn reindex(&mut self) {
        self.by_type.clear();
        for (i, v) in self.values.iter().enumerate() {
            self.by_type.insert(v.as_any().type_id(), i);
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    /// `R`'s index in the store.
    pub(crate) fn index_of<R: Resource>(&self) -> Option<usize> {
        self.by_type.get(&TypeId::of::<R>()).copied()
    }

    /// The stored values, in name order (snapshots).
    pub(crate) fn values(&self) -> &[Box<dyn ErasedResource>] {
        &self.values
    }

    /// Replaces every value (a snapshot's restore, when the set of resources changed).
    pub(crate) fn replace_all(&mut self, values: Vec<Box<dyn ErasedResource>>) {
        self.values = values;
        self.reindex();
    }

    /// The stored values (for `resource_set`, which hands several out at once).
    pub(crate) fn values_mut(&mut self) -> &mut [Box<dyn ErasedResource>] {
        &mut self.values
    }

    /// Feeds every resource, in name order, to `h`; nothing at all when there is none (so a
    /// world without resources hashes as it always did).
    pub(crate) fn hash_state(&self, h: &mut StateHasher) {
        if self.values.is_empty() {
            return;
        }
        h.write_str("resources");
        h.write_u64(self.values.len() as u64);
        for v in &self.values {
            h.write_str(v.name());
            v.hash_state(h);
        }
    }
}

impl World {
    /// Inserts (or replaces) the resource `R`, returning the previous value; bumps
    /// `R::DOMAINS`. Errors: another type already uses `R::NAME`.
    pub fn insert_resource<R: Resource>(&mut self, value: R) -> Result<Option<R>, WorldError> {
        let res = &mut self.resources;
        if let Some(&i) = res.by_type.get(&TypeId::of::<R>()) {
            self.epochs.bump(R::DOMAINS);
            let slot = res.values[i]
                .as_any_mut()
                .downcast_mut::<R>()
                .expect("indexed by its own type");
            return Ok(Some(std::mem::replace(slot, value)));
        }
        if let Some(existing) = res.values.iter().find(|v| v.name() == R::NAME) {
            return Err(WorldError::ResourceNameClash {
                name: R::NAME,
                existing: existing.type_name(),
                new: std::any::type_name::<R>(),
            });
        }
        let pos = res.values.partition_point(|v| v.name() < R::NAME);
        res.values.insert(pos, Box::new(value));
        res.reindex();
        self.epochs.bump(R::DOMAINS);
        Ok(None)
    }

    /// The resource `R`.
    pub fn resource<R: Resource>(&self) -> Result<&R, WorldError> {
        let res = &self.resources;
        res.by_type
            .get(&TypeId::of::<R>())
            .and_then(|&i| res.values[i].as_any().downcast_ref::<R>())
            .ok_or(WorldError::MissingResource { resource: R::NAME })
    }

    /// The resource `R`, mutably; bumps `R::DOMAINS` (the caller may write it).
    pub fn resource_mut<R: Resource>(&mut self) -> Result<&mut R, WorldError> {
        let res = &mut self.resources;
        let Some(&i) = res.by_type.get(&TypeId::of::<R>()) else {
            return Err(WorldError::MissingResource { resource: R::NAME });
        };
        self.epochs.bump(R::DOMAINS);
        res.values[i]
            .as_any_mut()
            .downcast_mut::<R>()
            .ok_or(WorldError::MissingResource { resource: R::NAME })
    }

    /// Removes the resource `R`, returning it; bumps `R::DOMAINS` when there was one.
    pub fn remove_resource<R: Resource>(&mut self) -> Option<R> {
        let res = &mut self.resources;
        let i = *res.by_type.get(&TypeId::of::<R>())?;
        let boxed = res.values.remove(i);
        res.reindex();
        self.epochs.bump(R::DOMAINS);
        boxed.into_any().downcast::<R>().ok().map(|b| *b)
    }

    /// The body of [`WorldHooks::resource_count`](crate::hooks::WorldHooks::resource_count), which documents it.
    pub(crate) fn resource_count(&self) -> usize {
        self.resources.len()
    }
}
