//! Deferred world changes: spawn, despawn, insert, remove and events, queued where the world
//! cannot be borrowed (inside a query's closure) and applied at a defined point.
//!
//! Owns: [`Commands`] (the queue: payloads moved into one reusable byte buffer, each with the
//! function that applies it) and [`WorldError`]. Must never: allocate once warm (the buffers
//! are reused, never shrunk), apply a command out of the order it was queued (replays and the
//! state hash depend on the order), or lose one silently (a command that fails is counted, with
//! its error, on the world).
//!
//! # When commands apply
//! A system's commands (`ctx.commands()`) apply right after that system returns, in the order
//! they were queued, before the next system runs: a later system in the same step sees the
//! spawned entities and the sent events. Entity ids are allocated when a spawn applies, so they
//! follow the queue's order and are the same on every replay.

// Unsafe, with a reason: a queue of differently typed commands without a box per command (no
// allocation once warm) stores each payload as bytes and moves it back out with the one
// function that knows its type. Every block carries its `// SAFETY:` checklist.
#![allow(unsafe_code)]

use std::mem::MaybeUninit;

use super::bundle::Bundle;
use super::component::Component;
use super::entity::Entity;
use super::World;
use crate::world::error::WorldError;

/// Applies the payload at `ptr` (moving it out) to the world.
type ApplyFn = unsafe fn(*const MaybeUninit<u8>, &mut World) -> Result<(), WorldError>;
/// Drops the payload at `ptr` in place (a queue dropped before it applied).
type DropFn = unsafe fn(*const MaybeUninit<u8>);

#[derive(Clone, Copy)]
struct Meta {
    offset: usize,
    apply: ApplyFn,
    drop: DropFn,
}

/// A queue of deferred world changes (module docs). In a system: `ctx.commands()`; anywhere
/// else: make one with `Commands::default()` and apply it with [`World::apply_commands`].
///
/// ```
/// use lanegraph::systems::SystemDef;
/// use lanegraph::world::{Component, Entity, StateHash, World};
/// #[derive(Clone, Copy, Component, StateHash)]
/// #[component(domains(TRANSFORM))]
/// struct Pos(f32);
/// #[derive(Clone, Copy, Component, StateHash)]
/// #[component(domains(PHYSICS))]
/// struct Vel(f32);
/// let mut w = World::new();
/// let e = w.spawn();
/// w.insert(e, Pos(99.5)).unwrap();
/// w.insert(e, Vel(1.0)).unwrap();
/// w.register_system(SystemDef::new("move", 1.0, |w: &mut World, ctx| {
///     let c = ctx.commands();
///     w.query::<(Entity, &mut Pos, &Vel)>().unwrap().for_each(|(e, p, v)| {
///         p.0 += v.0;
///         if p.0 > 100.0 {
///             c.despawn(e); // also: spawn((A, B, ..)), insert, remove, send
///             c.spawn((Pos(0.0), Vel(v.0 * 0.5)));
///         }
///     });
/// }))
/// .unwrap();
/// w.run_systems();
/// assert!(w.get::<Pos>(e).is_err(), "despawned right after the system");
/// assert_eq!(w.len(), 1);
/// ```
#[derive(Default)]
pub struct Commands {
    /// Payloads, back to back, unaligned (written and read with `write_unaligned` /
    /// `read_unaligned`).
    bytes: Vec<MaybeUninit<u8>>,
    metas: Vec<Meta>,
}

impl std::fmt::Debug for Commands {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Commands")
            .field("queued", &self.metas.len())
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

/// # Safety
/// `ptr` points to a `T` written by `Commands::push::<T>` and not yet read or dropped.
unsafe fn drop_payload<T>(ptr: *const MaybeUninit<u8>) {
    // SAFETY: (1) the caller guarantees a live `T` at `ptr`, written whole by `push`; (2) it is
    // read once, here, and never again (the queue forgets it after this call); (3) unaligned
    // read: `push` wrote it unaligned.
    drop(unsafe { std::ptr::read_unaligned(ptr.cast::<T>()) });
}

impl Commands {
    /// True when nothing is queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.metas.is_empty()
    }

    fn push<T: Send + 'static>(&mut self, value: T, apply: ApplyFn) {
        let offset = self.bytes.len();
        let size = std::mem::size_of::<T>();
        self.bytes.reserve(size);
        // SAFETY: (1) `reserve` made room for `size` more bytes after `offset`, so the write
        // stays inside the allocation (for a zero-sized `T` nothing is written, and the pointer
        // is non-null); (2) `write_unaligned` needs no alignment; (3) the bytes become "in use"
        // only by `set_len` after the write, and `MaybeUninit<u8>` allows any contents.
        unsafe {
            std::ptr::write_unaligned(self.bytes.as_mut_ptr().add(offset).cast::<T>(), value);
            self.bytes.set_len(offset + size);
        }
        self.metas.push(Meta {
            offset,
            apply,
            drop: drop_payload::<T>,
        });
    }

    /// Spawns an entity with `bundle` (a tuple of components) when the queue applies.
    pub fn spawn<B: Bundle>(&mut self, bundle: B) {
        /// # Safety
        /// As `ApplyFn`: a `B` written by `push`, read once.
        unsafe fn apply<B: Bundle>(
            ptr: *const MaybeUninit<u8>,
            world: &mut World,
        ) -> Result<(), WorldError> {
            // SAFETY: a `B` written by `push::<B>`, moved out once, here (`ApplyFn` contract).
            let bundle = unsafe { std::ptr::read_unaligned(ptr.cast::<B>()) };
            let e = world.spawn();
            bundle
                .insert_into(world, e)
                .map_err(|source| WorldError::Command {
                    command: "spawn".into(),
                    source: Box::new(source),
                })
        }
        self.push(bundle, apply::<B>);
    }

    /// Despawns `entity` when the queue applies.
    pub fn despawn(&mut self, entity: Entity) {
        /// # Safety
        /// As `ApplyFn`.
        unsafe fn apply(ptr: *const MaybeUninit<u8>, world: &mut World) -> Result<(), WorldError> {
            // SAFETY: an `Entity` written by `push`, read once (`ApplyFn` contract).
            let e = unsafe { std::ptr::read_unaligned(ptr.cast::<Entity>()) };
            world.despawn(e).map_err(|s| WorldError::Command {
                command: "despawn".into(),
                source: Box::new(s),
            })
        }
        self.push(entity, apply);
    }

    /// Inserts (or replaces) `component` on `entity` when the queue applies.
    pub fn insert<T: Component>(&mut self, entity: Entity, component: T) {
        /// # Safety
        /// As `ApplyFn`.
        unsafe fn apply<T: Component>(
            ptr: *const MaybeUninit<u8>,
            world: &mut World,
        ) -> Result<(), WorldError> {
            // SAFETY: an `(Entity, T)` written by `push`, moved out once (`ApplyFn` contract).
            let (e, c) = unsafe { std::ptr::read_unaligned(ptr.cast::<(Entity, T)>()) };
            world
                .insert(e, c)
                .map(|_| ())
                .map_err(|source| WorldError::Command {
                    command: format!("insert {}", T::NAME),
                    source: Box::new(source),
                })
        }
        self.push((entity, component), apply::<T>);
    }

    /// Removes `entity`'s `T` when the queue applies.
    pub fn remove<T: Component>(&mut self, entity: Entity) {
        /// # Safety
        /// As `ApplyFn`.
        unsafe fn apply<T: Component>(
            ptr: *const MaybeUninit<u8>,
            world: &mut World,
        ) -> Result<(), WorldError> {
            // SAFETY: an `Entity` written by `push`, read once (`ApplyFn` contract).
            let e = unsafe { std::ptr::read_unaligned(ptr.cast::<Entity>()) };
            world
                .remove::<T>(e)
                .map(|_| ())
                .map_err(|source| WorldError::Command {
                    command: format!("remove {}", T::NAME),
                    source: Box::new(source),
                })
        }
        self.push(entity, apply::<T>);
    }

    /// Sends `event` when the queue applies (after the sending system: the systems after it in
    /// this step and every system in the next step read it, see [`super::Events`]).
    pub fn send<E: super::events::Event>(&mut self, event: E) {
        /// # Safety
        /// As `ApplyFn`.
        unsafe fn apply<E: super::events::Event>(
            ptr: *const MaybeUninit<u8>,
            world: &mut World,
        ) -> Result<(), WorldError> {
            // SAFETY: an `E` written by `push`, moved out once (`ApplyFn` contract).
            let ev = unsafe { std::ptr::read_unaligned(ptr.cast::<E>()) };
            world
                .send_event(ev)
                .map_err(|_| WorldError::NoEventQueue { event: E::NAME })
        }
        self.push(event, apply::<E>);
    }

    /// Applies every queued command to `world` in queue order; returns how many failed (each
    /// counted on the world with its error). The queue is empty after, its buffers kept.
    pub(crate) fn apply_to(&mut self, world: &mut World) -> usize {
        let mut failed = 0;
        // Taken out first: if a component's code panics midway, the queue holds no meta, so its
        // `Drop` cannot drop a payload already moved out (the ones not reached leak instead).
        let mut metas = std::mem::take(&mut self.metas);
        let base = self.bytes.as_ptr();
        for m in &metas {
            // SAFETY: (1) `m.offset` is where `push` wrote this command's payload, inside
            // `bytes` (not touched until the loop ends); (2) each payload is applied exactly
            // once: `metas` is out of the queue and cleared below, never dropped per payload.
            if let Err(e) = unsafe { (m.apply)(base.add(m.offset), world) } {
                failed += 1;
                world.note_command_failure(e);
            }
        }
        // SAFETY: every payload was moved out above; the bytes are plain `MaybeUninit`.
        unsafe { self.bytes.set_len(0) };
        metas.clear();
        // The emptied list goes back: its capacity is reused (no allocation once warm).
        self.metas = metas;
        failed
    }
}

impl Drop for Commands {
    fn drop(&mut self) {
        let base = self.bytes.as_ptr();
        for m in &self.metas {
            // SAFETY: a queued, unapplied payload at its offset, dropped once (the queue is
            // going away).
            unsafe { (m.drop)(base.add(m.offset)) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unapplied_commands_are_dropped_once() {
        use std::sync::Arc;
        let probe = Arc::new(());
        {
            let mut c = Commands::default();
            c.push(Arc::clone(&probe), |_, _| Ok(()));
            c.push(Arc::clone(&probe), |_, _| Ok(()));
            assert_eq!(Arc::strong_count(&probe), 3);
        }
        assert_eq!(Arc::strong_count(&probe), 1);
    }
}
