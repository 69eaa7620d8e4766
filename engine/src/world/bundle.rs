//! Several components spawned together ([`Bundle`]: tuples of 1-8 components), and spawning
//! many at once straight into their columns ([`World::spawn_batch`]).
//!
//! Owns: the `Bundle` trait, its per-column sinks, `spawn_batch` and
//! `reserve`. Must never: spawn part of a batch (every column is resolved, and every name clash
//! reported, before the first entity exists), hold a sink across a change to the column list,
//! or give two sinks one column (a bundle naming a type twice takes the one-insert-at-a-time
//! path, where the later value wins as with `insert`).
//!
//! Why sinks: a batch resolves each component's column once (the type lookup, the layout
//! downcast, the reservation) and then appends each entity's values with plain pushes, the
//! way an archetype ECS fills its tables; per-entity `insert` repays the lookup per component.

// Opted in from the workspace's `unsafe_code = "deny"`: a batch appends to up to eight columns
// of one world at once, so it holds them as raw pointers resolved once (distinct columns,
// checked) instead of re-borrowing and downcasting the column list per value.
#![allow(unsafe_code)]

use std::any::TypeId;

use super::column::AosColumn;
use super::component::Component;
use super::entity::Entity;
use super::soa::SoaColumn;
use super::World;
use crate::world::error::WorldError;

mod sealed {
    pub trait Sealed {}
}

/// Several components spawned together: any tuple of one to eight [`Component`]s.
pub trait Bundle: sealed::Sealed + Send + 'static {
    /// Inserts every component of the bundle on `entity` (what `World::spawn_batch` and
    /// `World::insert` run; a game calls those).
    #[doc(hidden)]
    fn insert_into(self, world: &mut World, entity: Entity) -> Result<(), WorldError>;
    #[doc(hidden)]
    type Sinks;
    /// Resolves (creating when new) and reserves every column; `None` when the bundle names a
    /// type twice.
    #[doc(hidden)]
    fn sinks(world: &mut World, additional: usize) -> Result<Option<Self::Sinks>, WorldError>;
    /// # Safety
    /// `sinks` came from this world with no column added or removed since; `entity` is fresh
    /// (no row in any column).
    #[doc(hidden)]
    unsafe fn push(self, sinks: &mut Self::Sinks, entity: Entity);
}

/// Where one component of a batch goes.
#[doc(hidden)]
pub struct Sink<T>(SinkTo<T>);

enum SinkTo<T> {
    Aos(*mut AosColumn<T>),
    Soa(*mut SoaColumn<T>),
}

impl<T: Component> Sink<T> {
    fn of(world: &mut World, col: usize, additional: usize, slots: usize) -> Self {
        let c = world.erased_column_mut(col).as_any_mut();
        if let Some(c) = c.downcast_mut::<AosColumn<T>>() {
            c.reserve(additional, slots);
            return Sink(SinkTo::Aos(c));
        }
        let c = c
            .downcast_mut::<SoaColumn<T>>()
            .expect("a column of T is AoS or field-SoA (broken invariant)");
        c.reserve(additional);
        Sink(SinkTo::Soa(c))
    }

    /// # Safety
    /// As for [`Bundle::push`].
    #[inline]
    unsafe fn push(&mut self, entity: Entity, value: T) {
        match self.0 {
            // SAFETY: the column is alive (boxed, and the column list unchanged since `of`),
            // and this sink is its only reference while the batch runs (distinct columns).
            SinkTo::Aos(c) => unsafe { (*c).push_new(entity, value) },
            // SAFETY: as above.
            SinkTo::Soa(c) => unsafe { (*c).push_new(entity, &value) },
        }
    }
}

macro_rules! bundle_tuple {
    ($($t:ident $v:ident $i:tt),+) => {
        impl<$($t: Component),+> sealed::Sealed for ($($t,)+) {}
        impl<$($t: Component),+> Bundle for ($($t,)+) {
            fn insert_into(self, world: &mut World, entity: Entity) -> Result<(), WorldError> {
                let ($($v,)+) = self;
                $(world.insert(entity, $v)?;)+
                Ok(())
            }
            type Sinks = ($(Sink<$t>,)+);
            fn sinks(
                world: &mut World,
                additional: usize,
            ) -> Result<Option<Self::Sinks>, WorldError> {
                let types = [$(TypeId::of::<$t>()),+];
                if (1..types.len()).any(|i| types[..i].contains(&types[i])) {
                    return Ok(None);
                }
                // Every column exists before any sink points into the column list.
                let cols = ($(world.column_index_or_create::<$t>()?,)+);
                let slots = world.entities.reserve(additional);
                $(world.bump($t::DOMAINS);)+
                Ok(Some(($(Sink::<$t>::of(world, cols.$i, additional, slots),)+)))
            }
            #[inline]
            unsafe fn push(self, sinks: &mut Self::Sinks, entity: Entity) {
                let ($($v,)+) = self;
                // SAFETY: forwarded contract; the sinks are distinct columns.
                unsafe { $(sinks.$i.push(entity, $v);)+ }
            }
        }
    };
}
bundle_tuple!(A a 0);
bundle_tuple!(A a 0, B b 1);
bundle_tuple!(A a 0, B b 1, C c 2);
bundle_tuple!(A a 0, B b 1, C c 2, D d 3);
bundle_tuple!(A a 0, B b 1, C c 2, D d 3, E e 4);
bundle_tuple!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5);
bundle_tuple!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6);
bundle_tuple!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7);

impl World {
    /// Spawns one entity per bundle, writing each component straight into its column (each
    /// column resolved and reserved once per batch, not looked up per value); returns the new
    /// entities, in spawn order. A name clash is reported before any entity is spawned. The
    /// iterator's lower size hint is reserved up front.
    ///
    /// ```
    /// use lanegraph::prelude::*;
    ///
    /// #[derive(Clone, Copy, Component, StateHash)]
    /// struct Pos(f32);
    /// #[derive(Clone, Copy, Component, StateHash)]
    /// struct Vel(f32);
    ///
    /// let mut world = World::new();
    /// let spawned = world
    ///     .spawn_batch((0..1000).map(|i| (Pos(i as f32), Vel(1.0))))
    ///     .unwrap()
    ///     .to_vec();
    /// assert_eq!(spawned.len(), 1000);
    /// assert_eq!(world.get::<Pos>(spawned[7]).unwrap().0, 7.0);
    /// ```
    pub fn spawn_batch<B: Bundle>(
        &mut self,
        bundles: impl IntoIterator<Item = B>,
    ) -> Result<&[Entity], WorldError> {
        let bundles = bundles.into_iter();
        let first = self.entities.live().len();
        match B::sinks(self, bundles.size_hint().0)? {
            Some(mut sinks) => {
                for b in bundles {
                    let e = self.entities.spawn();
                    // SAFETY: the sinks were made just above from this world and nothing since
                    // added or removed a column; `e` was just spawned, so it has no row.
                    unsafe { b.push(&mut sinks, e) };
                }
            }
            None => {
                for b in bundles {
                    let e = self.entities.spawn();
                    b.insert_into(self, e)?;
                }
            }
        }
        Ok(&self.entities.live()[first..])
    }
}
