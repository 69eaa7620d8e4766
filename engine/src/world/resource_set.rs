//! Several resources at once, and a world split into its components, resources and input, so a
//! system holds what it needs without borrow fights.
//!
//! Owns: [`ResourceSet`] (tuples of 1-8 of `&R` / `&mut R`), [`World::resources_mut`] and
//! [`World::split`]. Must never: hand one resource out twice (a set naming a type twice is
//! [`WorldError::AliasedResource`], even when both are shared: one rule, no surprises), or hand one
//! out mutably without bumping its domains.

use super::epoch::Epochs;
use super::query::Components;
use super::resource::{ErasedResource, Resource, ResourceMeta, Resources};
use super::World;
use crate::world::error::WorldError;

mod sealed {
    pub trait Param {}
    pub trait Set {}
}

/// One member of a [`ResourceSet`]: `&R` or `&mut R`.
pub trait ResourceParam: sealed::Param {
    /// The resource.
    type R: Resource;
    /// What the caller receives.
    type Item<'a>;
    #[doc(hidden)]
    const MUTABLE: bool;
    #[doc(hidden)]
    fn from_erased(value: &mut Box<dyn ErasedResource>) -> Self::Item<'_>;
}

impl<R: Resource> sealed::Param for &R {}
impl<R: Resource> ResourceParam for &R {
    type R = R;
    type Item<'a> = &'a R;
    const MUTABLE: bool = false;
    fn from_erased(value: &mut Box<dyn ErasedResource>) -> &R {
        value
            .as_any()
            .downcast_ref::<R>()
            .expect("resources are indexed by their own type (broken invariant)")
    }
}

impl<R: Resource> sealed::Param for &mut R {}
impl<R: Resource> ResourceParam for &mut R {
    type R = R;
    type Item<'a> = &'a mut R;
    const MUTABLE: bool = true;
    fn from_erased(value: &mut Box<dyn ErasedResource>) -> &mut R {
        value
            .as_any_mut()
            .downcast_mut::<R>()
            .expect("resources are indexed by their own type (broken invariant)")
    }
}

/// Resources handed out together: a tuple of 1-8 of `&R` / `&mut R`, distinct types
/// (`world.resources_mut::<(&mut Score, &Wind)>()`).
pub trait ResourceSet: sealed::Set {
    /// What the caller receives: a tuple of references.
    type Item<'a>;
    #[doc(hidden)]
    fn fetch<'a>(
        resources: &'a mut Resources,
        epochs: &mut Epochs,
    ) -> Result<Self::Item<'a>, WorldError>;
}

macro_rules! resource_tuple {
    ($($p:ident $v:ident),+) => {
        impl<$($p: ResourceParam),+> sealed::Set for ($($p,)+) {}
        impl<$($p: ResourceParam),+> ResourceSet for ($($p,)+) {
            type Item<'a> = ($($p::Item<'a>,)+);
            fn fetch<'a>(
                resources: &'a mut Resources,
                epochs: &mut Epochs,
            ) -> Result<Self::Item<'a>, WorldError> {
                let names = [$(<$p::R as ResourceMeta>::NAME),+];
                let at = [$(resources
                    .index_of::<$p::R>()
                    .ok_or(WorldError::MissingResource { resource: <$p::R as ResourceMeta>::NAME })?),+];
                for (i, a) in at.iter().enumerate() {
                    if at[..i].contains(a) {
                        return Err(WorldError::AliasedResource { resource: names[i] });
                    }
                }
                $(if $p::MUTABLE {
                    epochs.bump(<$p::R as ResourceMeta>::DOMAINS);
                })+
                // Each value goes to the member that named its index (distinct, checked above).
                let mut slots = at.map(|_| None);
                for (i, v) in resources.values_mut().iter_mut().enumerate() {
                    if let Some(k) = at.iter().position(|&a| a == i) {
                        slots[k] = Some(v);
                    }
                }
                let [$($v),+] = slots.map(|s| s.expect("indices in range (index_of)"));
                Ok(($($p::from_erased($v),)+))
            }
        }
    };
}

resource_tuple!(A a);
resource_tuple!(A a, B b);
resource_tuple!(A a, B b, C c);
resource_tuple!(A a, B b, C c, D d);
resource_tuple!(A a, B b, C c, D d, E e);
resource_tuple!(A a, B b, C c, D d, E e, F f);
resource_tuple!(A a, B b, C c, D d, E e, F f, G g);
resource_tuple!(A a, B b, C c, D d, E e, F f, G g, H h);

impl World {
    /// Several resources at once, shared or mutable, distinct types; bumps the domains of the
    /// mutable ones.
    ///
    /// ```
    /// use lanegraph::prelude::*;
    ///
    /// #[derive(Resource, StateHash)]
    /// struct Score(u32);
    /// #[derive(Resource, StateHash)]
    /// struct Bonus(u32);
    ///
    /// let mut world = World::new();
    /// world.insert_resource(Score(1)).unwrap();
    /// world.insert_resource(Bonus(10)).unwrap();
    /// let (score, bonus) = world.resources_mut::<(&mut Score, &Bonus)>().unwrap();
    /// score.0 += bonus.0;
    /// assert_eq!(world.resource::<Score>().unwrap().0, 11);
    /// ```
    pub fn resources_mut<R: ResourceSet>(&mut self) -> Result<R::Item<'_>, WorldError> {
        R::fetch(&mut self.resources, &mut self.epochs)
    }

    /// The world split into its components (make queries on them), the resources `R` and this
    /// step's input, all held at once: what a system that moves entities, keeps score and
    /// reads keys needs.
    ///
    /// ```
    /// use lanegraph::prelude::*;
    ///
    /// #[derive(Clone, Copy, Component, StateHash)]
    /// struct Coin(u32);
    /// #[derive(Resource, StateHash)]
    /// struct Score(u32);
    ///
    /// let mut world = World::new();
    /// world.insert_resource(Score(0)).unwrap();
    /// for v in [1, 2, 3] {
    ///     let e = world.spawn();
    ///     world.insert(e, Coin(v)).unwrap();
    /// }
    /// let (mut components, (score,), input) = world.split::<(&mut Score,)>().unwrap();
    /// let double = input.is_down(KeyCode::ShiftLeft);
    /// components.query::<&Coin>().unwrap().for_each(|c| {
    ///     score.0 += if double { 2 * c.0 } else { c.0 };
    /// });
    /// assert_eq!(world.resource::<Score>().unwrap().0, 6);
    /// ```
    pub fn split<R: ResourceSet>(
        &mut self,
    ) -> Result<(Components<'_>, R::Item<'_>, &crate::input::Input), WorldError> {
        let (components, resources, input) = self.parts();
        let resources = R::fetch(resources, &mut *components.epochs)?;
        Ok((components, resources, input))
    }
}
