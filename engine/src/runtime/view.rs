//! The RenderView: the immutable picture of the world the render lane draws, and its epoch
//! cache.
//!
//! Owns: [`RenderView`] (what one frame draws: particle positions and the camera) and
//! [`ViewCache`], which re-derives the view only when the change epochs of the domains it reads
//! moved, counting hits and misses. Must never: hand the render lane anything that aliases the
//! world (the view is a copy the owner made), or serve a view whose inputs changed.
//!
//! # Protocol (owner thread, once per frame)
//! 1. Read `(world.id(), world.epochs())`.
//! 2. If the world and the epochs of the view's domains equal the cached key, the cached
//!    `Arc<RenderView>` is published again (a hit).
//! 3. Otherwise the view is derived again (a miss): into the cached allocation when the render
//!    lane has released it (`Arc::get_mut`), into a fresh one when it still holds it.

use std::sync::Arc;

use crate::world::{DomainSet, Epochs, World, WorldId};

/// What the render lane draws for one frame. Immutable once published.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RenderView {
    /// The frame it was derived in.
    pub frame: u64,
    /// X of every instance (world units).
    pub xs: Vec<f32>,
    /// Y of every instance; same length as `xs`.
    pub ys: Vec<f32>,
    /// World point at the centre of the picture.
    pub center: [f32; 2],
    /// World half width and half height shown (> 0).
    pub half_extent: [f32; 2],
    /// Instance radius, world units (> 0).
    pub radius: f32,
    /// Instance colour, linear RGBA.
    pub color: [f32; 4],
}

impl RenderView {
    /// Instances in the view.
    pub fn len(&self) -> usize {
        self.xs.len()
    }

    /// Whether the view draws nothing.
    pub fn is_empty(&self) -> bool {
        self.xs.is_empty()
    }
}

/// Derives a [`RenderView`] from the world: fills `out` (cleared of the previous frame's
/// instances by the caller's own logic, it may reuse the vectors' capacity).
pub type DeriveView = Box<dyn FnMut(&World, &mut RenderView) + Send>;

/// Hit and miss counts of a [`ViewCache`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ViewCacheStats {
    /// Frames that published the cached view unchanged.
    pub hits: u64,
    /// Frames that derived it again.
    pub misses: u64,
}

/// Re-derives the render view only when its inputs moved (see the module docs).
pub struct ViewCache {
    domains: DomainSet,
    derive: DeriveView,
    key: Option<(WorldId, Epochs)>,
    view: Arc<RenderView>,
    stats: ViewCacheStats,
}

impl std::fmt::Debug for ViewCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewCache")
            .field("domains", &self.domains)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl ViewCache {
    /// A cache for a view derived by `derive` from the world domains `domains`.
    pub fn new(domains: DomainSet, derive: DeriveView) -> Self {
        ViewCache {
            domains,
            derive,
            key: None,
            view: Arc::new(RenderView::default()),
            stats: ViewCacheStats::default(),
        }
    }

    /// The view for the world as it is now (steps 1-3 of the module docs), tagged `frame` when
    /// it was derived again.
    pub fn get(&mut self, world: &World, frame: u64) -> Arc<RenderView> {
        let now = (world.id(), world.epochs());
        let fresh = match &self.key {
            Some((id, epochs)) => *id == now.0 && !epochs.changed_in(&now.1, self.domains),
            None => false,
        };
        if fresh {
            self.stats.hits += 1;
            return Arc::clone(&self.view);
        }
        self.stats.misses += 1;
        if Arc::get_mut(&mut self.view).is_none() {
            // The render lane still holds the last view: derive into a new allocation.
            self.view = Arc::new((*self.view).clone());
        }
        let v = Arc::get_mut(&mut self.view).expect("unique: just checked or just made");
        (self.derive)(world, v);
        v.frame = frame;
        self.key = Some(now);
        Arc::clone(&self.view)
    }

    /// Hits and misses so far.
    pub fn stats(&self) -> ViewCacheStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::{Domain, StateHash, StateHasher};

    #[derive(Debug, Clone, Copy)]
    struct Score(u32);
    impl StateHash for Score {
        fn hash_state(&self, h: &mut StateHasher) {
            self.0.hash_state(h)
        }
    }
    impl crate::world::Component for Score {
        const NAME: &'static str = "Score";
        const DOMAINS: DomainSet = DomainSet::of(Domain::GAMEPLAY);
    }

    #[test]
    fn derives_again_only_when_its_domains_moved() {
        let mut world = World::new();
        let mut cache = ViewCache::new(
            DomainSet::of(Domain::STRUCTURE),
            Box::new(|w: &World, v: &mut RenderView| {
                v.xs.clear();
                v.xs.resize(w.len(), 1.0);
            }),
        );
        let a = cache.get(&world, 1);
        let b = cache.get(&world, 2);
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(cache.stats(), ViewCacheStats { hits: 1, misses: 1 });
        let e = world.spawn();
        let c = cache.get(&world, 3);
        assert_eq!((c.len(), c.frame), (1, 3));
        // A change in a domain the view does not read is a hit.
        world.insert(e, Score(1)).unwrap();
        let d = cache.get(&world, 4);
        assert!(Arc::ptr_eq(&c, &d));
        assert_eq!(cache.stats(), ViewCacheStats { hits: 2, misses: 2 });
    }
}
