//! Gameplay events: typed messages between systems, double-buffered per fixed step.
//!
//! Owns: the [`Event`] trait, the per-type queue [`Events`] (a resource: hashed, replayed,
//! epoch-tracked), the reader's [`EventCursor`], and the `World` methods that add, send and read
//! events. Must never: allocate once warm (both buffers are reused), reorder events (they are
//! read in the order sent, and the order is in the state hash), or keep an event past the step
//! after the one it was sent in.
//!
//! # Lifetime of an event
//! Sent in step N (directly with [`World::send_event`], or deferred with `ctx.commands().send`,
//! which applies right after the sending system), an event is readable by every system after
//! the sender in step N and by every system in step N + 1; the end of step N + 1 drops it. A
//! reader keeps an [`EventCursor`] (in a resource of its own) and reads each event once,
//! whichever side of the sender it runs on.

use super::epoch::{Domain, DomainSet};
use super::hash::{StateHash, StateHasher};
use super::resource::{Resource, ResourceMeta};
use super::World;
use crate::world::error::WorldError;

/// A gameplay event type. `NAME` shares the resources' name space (its queue is a resource).
///
/// ```
/// use lanegraph::world::{Event, StateHash};
/// #[derive(Debug, Clone, StateHash)]
/// struct Hit { damage: u32 }
/// impl Event for Hit { const NAME: &'static str = "Hit"; }
/// ```
pub trait Event: StateHash + Clone + Send + Sync + 'static {
    /// Stable, unique name (orders the queue in the state hash).
    const NAME: &'static str;
}

/// The queue of one event type: last step's events and this step's. A savegame holds it when
/// the game registers it as a resource, `SaveSchema::default().resource::<Events<Hit>>()`
/// (`E` deriving serde's `Serialize` and `Deserialize`): its events and its sequence counter,
/// so the loaded world hashes as the saved one and its readers go on where they were.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Events<E> {
    last: Vec<E>,
    this: Vec<E>,
    /// Sequence number of `last[0]` (events are numbered from 0 in the order sent).
    first_seq: u64,
}

impl<E> Default for Events<E> {
    fn default() -> Self {
        Events {
            last: Vec::new(),
            this: Vec::new(),
            first_seq: 0,
        }
    }
}

impl<E: Event> StateHash for Events<E> {
    fn hash_state(&self, h: &mut StateHasher) {
        self.first_seq.hash_state(h);
        self.last.hash_state(h);
        self.this.hash_state(h);
    }
}

impl<E: Event> Resource for Events<E> {}

impl<E: Event> ResourceMeta for Events<E> {
    const NAME: &'static str = E::NAME;
    const DOMAINS: DomainSet = DomainSet::of(Domain::GAMEPLAY);
    fn snapshot_clone() -> Option<fn(&Self) -> Self> {
        Some(|q| Events {
            last: q.last.clone(),
            this: q.this.clone(),
            first_seq: q.first_seq,
        })
    }
    fn snapshot_copy(src: &Self, dst: &mut Self) -> bool {
        dst.last.clone_from(&src.last);
        dst.this.clone_from(&src.this);
        dst.first_seq = src.first_seq;
        true
    }
}

/// Where a reader is in an event queue: the next event it has not read; it starts at the
/// oldest event still held. Keep one per reader **in the World**, in a resource of the
/// reader's own (`#[derive(Resource, StateHash, Default, Clone)] struct HitReader(EventCursor);`,
/// read through `World::split`), so snapshots, saves, the state hash, the SyncTest mode and a
/// rollback see it: a cursor captured in a system's closure is outside every one of them, and
/// a rollback or a SyncTest re-simulation reads nothing the second time
/// (`docs/systems.md#state-a-system-keeps`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EventCursor {
    next: u64,
}

impl StateHash for EventCursor {
    fn hash_state(&self, h: &mut StateHasher) {
        self.next.hash_state(h);
    }
}

impl<E> Events<E> {
    fn next_seq(&self) -> u64 {
        // Saturating: a loaded (forged) counter near u64::MAX must not overflow.
        self.first_seq
            .saturating_add((self.last.len() + self.this.len()) as u64)
    }

    /// Appends an event to this step's buffer (`World::send_event`, `Commands::send`).
    pub(crate) fn send(&mut self, event: E) {
        self.this.push(event);
    }

    /// Every event held, oldest first: last step's, then this step's.
    pub fn iter(&self) -> impl Iterator<Item = &E> {
        self.last.iter().chain(self.this.iter())
    }

    /// The events `cursor` has not read, oldest first, and moves it past them.
    pub fn read(&self, cursor: &mut EventCursor) -> impl Iterator<Item = &E> {
        let skip = cursor.next.saturating_sub(self.first_seq) as usize;
        cursor.next = self.next_seq();
        self.iter().skip(skip)
    }

    /// Events held (last step's and this step's); a game counts with `iter().count()`.
    pub(crate) fn len(&self) -> usize {
        self.last.len() + self.this.len()
    }

    /// True when none is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// End of a step: last step's events are dropped, this step's become last step's.
    fn end_step(&mut self) {
        self.first_seq = self.first_seq.saturating_add(self.last.len() as u64);
        self.last.clear();
        std::mem::swap(&mut self.last, &mut self.this);
    }
}

/// Ends the step of one event type's queue (registered by [`World::add_event`]).
fn end_step_of<E: Event>(world: &mut World) {
    if let Ok(q) = world.resource_mut::<Events<E>>() {
        // Only a queue that holds something changes: an idle one bumps no epoch.
        if q.is_empty() {
            return;
        }
        q.end_step();
    }
}

impl World {
    /// Adds the queue of event type `E` (idempotent). Errors when `E::NAME` is taken by
    /// another resource or event type.
    pub fn add_event<E: Event>(&mut self) -> Result<(), WorldError> {
        if self.resource::<Events<E>>().is_ok() {
            return Ok(());
        }
        self.insert_resource(Events::<E>::default())?;
        self.event_steps.push(end_step_of::<E>);
        Ok(())
    }

    /// Sends `event` now: systems after the caller in this step, and every system in the next,
    /// read it. Inside a query's closure, use `ctx.commands().send(event)`.
    pub fn send_event<E: Event>(&mut self, event: E) -> Result<(), WorldError> {
        self.resource_mut::<Events<E>>()?.send(event);
        Ok(())
    }

    /// The queue of event type `E` (read it with [`Events::read`] and a cursor).
    pub fn events<E: Event>(&self) -> Result<&Events<E>, WorldError> {
        self.resource::<Events<E>>()
    }

    /// End of a fixed step: every event queue drops last step's events (the step loop calls
    /// it; registration order: deterministic).
    pub(crate) fn end_event_step(&mut self) {
        let steps = std::mem::take(&mut self.event_steps);
        for f in &steps {
            f(self);
        }
        self.event_steps = steps;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct Ping(u32);
    impl StateHash for Ping {
        fn hash_state(&self, h: &mut StateHasher) {
            self.0.hash_state(h);
        }
    }
    impl Event for Ping {
        const NAME: &'static str = "Ping";
    }

    #[test]
    fn a_cursor_reads_each_event_once_and_events_live_two_steps() {
        fn read(w: &World, c: &mut EventCursor) -> Vec<u32> {
            w.events::<Ping>().unwrap().read(c).map(|p| p.0).collect()
        }
        let mut w = World::new();
        w.add_event::<Ping>().unwrap();
        w.add_event::<Ping>().unwrap(); // idempotent
        let mut before = EventCursor::default();
        let mut after = EventCursor::default();
        w.send_event(Ping(1)).unwrap();
        // A reader after the sender, same step.
        assert_eq!(read(&w, &mut after), [1]);
        w.end_event_step();
        // Next step: a reader before the sender reads it; the one after does not again.
        assert_eq!(read(&w, &mut before), [1]);
        w.send_event(Ping(2)).unwrap();
        assert_eq!(read(&w, &mut after), [2]);
        w.end_event_step();
        w.end_event_step();
        // Two step ends later, nothing is held.
        assert!(w.events::<Ping>().unwrap().is_empty());
        assert!(w.send_event(Ping(3)).is_ok());
        #[derive(Clone)]
        struct Nope;
        impl StateHash for Nope {
            fn hash_state(&self, _: &mut StateHasher) {}
        }
        impl Event for Nope {
            const NAME: &'static str = "Nope";
        }
        assert!(w.send_event(Nope).is_err());
    }
}
