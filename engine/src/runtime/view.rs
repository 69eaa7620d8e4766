//! The game's render view and its epoch cache.
//!
//! Owns: [`ViewCache`], which re-derives the game's view (any type `V` the game chooses) only
//! when the change epochs of the world domains it reads moved, counting hits and misses, and
//! reuses its buffers so a derived view costs no allocation once warm. Must never: hand the
//! render lane anything that aliases the world (the view is a copy the owner made), or serve a
//! view whose inputs changed.
//!
//! # Protocol (owner thread, once per frame)
//! 1. Read `(world.id(), world.epochs())` (both from `WorldHooks`).
//! 2. If the world and the epochs of the view's domains equal the cached key, the cached view
//!    is published again (a hit).
//! 3. Otherwise the view is derived again (a miss) into a buffer nobody else holds: of the
//!    [`VIEW_BUFFERS`] buffers at most two are held elsewhere (the newest, in the mailbox or
//!    kept for capture, and the one the render lane is drawing), so one is always free; a new
//!    buffer is made only if that ever fails.

use std::any::Any;
use std::sync::Arc;

use super::render::Published;
use crate::world::{DomainSet, Epochs, World, WorldId};

/// Derives the game's view from the world into `out`, which holds an older view of the same
/// type (reuse its vectors' capacity; overwrite every field).
pub type DeriveView<V> = Box<dyn FnMut(&World, &mut V) + Send>;

/// Buffers a view cache rotates through (see the module docs).
pub const VIEW_BUFFERS: usize = 3;

/// Hit and miss counts of a [`ViewCache`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ViewCacheStats {
    /// Frames that published the cached view unchanged.
    pub hits: u64,
    /// Frames that derived it again.
    pub misses: u64,
    /// Buffers made beyond the first [`VIEW_BUFFERS`] (0 unless the render lane held more
    /// views than the protocol allows).
    pub extra_buffers: u64,
}

/// Re-derives the game's view only when its inputs moved (see the module docs).
pub struct ViewCache<V> {
    domains: DomainSet,
    derive: DeriveView<V>,
    key: Option<(WorldId, Epochs)>,
    buffers: Vec<Arc<V>>,
    /// Index of the newest view in `buffers`, and the frame it was derived in.
    newest: usize,
    newest_frame: u64,
    stats: ViewCacheStats,
}

impl<V> std::fmt::Debug for ViewCache<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewCache")
            .field("domains", &self.domains)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl<V: Default> ViewCache<V> {
    /// A cache for a view derived by `derive` from the world domains `domains`.
    pub fn new(domains: DomainSet, derive: DeriveView<V>) -> Self {
        ViewCache {
            domains,
            derive,
            key: None,
            buffers: (0..VIEW_BUFFERS).map(|_| Arc::new(V::default())).collect(),
            newest: 0,
            newest_frame: 0,
            stats: ViewCacheStats::default(),
        }
    }

    /// The view for the world as it is now (steps 1-3 of the module docs) and the frame it was
    /// derived in (`frame` when it was derived now).
    pub fn get(&mut self, world: &World, frame: u64) -> (u64, Arc<V>) {
        let now = (world.id(), world.epochs());
        let fresh = match &self.key {
            Some((id, epochs)) => *id == now.0 && !epochs.changed_in(&now.1, self.domains),
            None => false,
        };
        if fresh {
            self.stats.hits += 1;
            return (self.newest_frame, Arc::clone(&self.buffers[self.newest]));
        }
        self.stats.misses += 1;
        let free = (0..self.buffers.len())
            .map(|k| (self.newest + 1 + k) % self.buffers.len())
            .find(|&i| Arc::strong_count(&self.buffers[i]) == 1);
        let i = free.unwrap_or_else(|| {
            self.stats.extra_buffers += 1;
            self.buffers.push(Arc::new(V::default()));
            self.buffers.len() - 1
        });
        let v = Arc::get_mut(&mut self.buffers[i]).expect("unique: just checked or just made");
        (self.derive)(world, v);
        self.key = Some(now);
        self.newest = i;
        self.newest_frame = frame;
        (frame, Arc::clone(&self.buffers[i]))
    }

    /// Hits and misses so far.
    pub fn stats(&self) -> ViewCacheStats {
        self.stats
    }
}

/// A view cache with its view type erased, as the engine holds it.
pub(crate) trait ViewSource: Send {
    fn publishable(&mut self, world: &World, frame: u64) -> Published;
    fn stats(&self) -> ViewCacheStats;
}

impl<V: Default + Send + Sync + 'static> ViewSource for ViewCache<V> {
    fn publishable(&mut self, world: &World, frame: u64) -> Published {
        let (derived, view) = self.get(world, frame);
        let view: Arc<dyn Any + Send + Sync> = view;
        Published {
            frame: derived,
            view,
            for_frame: frame,
        }
    }
    fn stats(&self) -> ViewCacheStats {
        ViewCache::stats(self)
    }
}

/// The game's view source and pass, their view type erased (one builder call pairs them).
pub(crate) struct RenderSetup {
    pub(crate) source: Box<dyn ViewSource>,
    pub(crate) pass: Box<dyn super::render::HeldPass>,
}

impl std::fmt::Debug for RenderSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderSetup")
            .field("device", &self.pass.device())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::Domain;

    #[derive(Debug, Clone, Copy, crate::world::Component, crate::world::StateHash)]
    #[component(domains(GAMEPLAY))]
    struct Score(u32);

    #[test]
    fn derives_again_only_when_its_domains_moved() {
        let mut world = World::new();
        let mut cache = ViewCache::new(
            DomainSet::of(Domain::STRUCTURE),
            Box::new(|w: &World, v: &mut Vec<f32>| {
                v.clear();
                v.resize(w.len(), 1.0);
            }),
        );
        let (fa, a) = cache.get(&world, 1);
        let (fb, b) = cache.get(&world, 2);
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!((fa, fb), (1, 1), "a hit keeps the frame it was derived in");
        let hits_misses = |c: &ViewCache<Vec<f32>>| (c.stats().hits, c.stats().misses);
        assert_eq!(hits_misses(&cache), (1, 1));
        let e = world.spawn();
        let (fc, c) = cache.get(&world, 3);
        assert_eq!((c.len(), fc), (1, 3));
        // A change in a domain the view does not read is a hit.
        world.insert(e, Score(1)).unwrap();
        let (_, d) = cache.get(&world, 4);
        assert!(Arc::ptr_eq(&c, &d));
        assert_eq!(hits_misses(&cache), (2, 2));
    }

    #[test]
    fn a_miss_derives_into_a_buffer_nobody_holds() {
        let mut world = World::new();
        let mut cache = ViewCache::new(
            DomainSet::of(Domain::STRUCTURE),
            Box::new(|w: &World, v: &mut Vec<f32>| {
                v.clear();
                v.resize(w.len(), 2.0);
            }),
        );
        // The render lane holds the view it draws and the mailbox the newest: two held views.
        let (_, drawing) = cache.get(&world, 1);
        world.spawn();
        let (_, newest) = cache.get(&world, 2);
        world.spawn();
        let (_, next) = cache.get(&world, 3);
        assert!(!Arc::ptr_eq(&next, &drawing) && !Arc::ptr_eq(&next, &newest));
        assert_eq!((next.len(), newest.len(), drawing.len()), (2, 1, 0));
        assert_eq!(cache.stats().extra_buffers, 0);
        // Every buffer held: a new one is made, and counted.
        world.spawn();
        let (_, fourth) = cache.get(&world, 4);
        assert_eq!(fourth.len(), 3);
        assert_eq!(cache.stats().extra_buffers, 1);
    }
}
