//! The snapshot suite's peer baseline: the same 10,000 entities x 4 components in a hecs 0.11
//! world, round-tripped through hecs's column serializer and bincode 1.3 (the way hecs's docs
//! save a world), so `bench snapshot` can set World snapshots and savegames beside it.
//!
//! Owns: the hecs-side component types and their serialize/deserialize contexts. Must never:
//! report a round trip that lost an entity or a value (the caller compares checksums).

use hecs::serialize::column::{
    deserialize_column, try_serialize, try_serialize_id, DeserializeContext, SerializeContext,
};
use hecs::{Archetype, ColumnBatchBuilder, ColumnBatchType, World};
use serde::de::SeqAccess;
use serde::ser::SerializeTuple;
use serde::{Deserialize, Serialize};

use bincode::Options;

#[derive(Clone, Copy, Serialize, Deserialize)]
pub(super) struct Transform(pub(super) [f32; 16]);
#[derive(Clone, Copy, Serialize, Deserialize)]
pub(super) struct Position(pub(super) [f32; 3]);
#[derive(Clone, Copy, Serialize, Deserialize)]
pub(super) struct Rotation(pub(super) [f32; 3]);
#[derive(Clone, Copy, Serialize, Deserialize)]
pub(super) struct Velocity(pub(super) [f32; 3]);

#[derive(Serialize, Deserialize, Clone, Copy)]
enum Id {
    Transform,
    Position,
    Rotation,
    Velocity,
}

#[derive(Default)]
struct Context {
    ids: Vec<Id>,
}

impl SerializeContext for Context {
    fn component_count(&self, archetype: &Archetype) -> usize {
        archetype.component_types().len()
    }

    fn serialize_component_ids<S: SerializeTuple>(
        &mut self,
        archetype: &Archetype,
        mut out: S,
    ) -> Result<S::Ok, S::Error> {
        try_serialize_id::<Transform, _, _>(archetype, &Id::Transform, &mut out)?;
        try_serialize_id::<Position, _, _>(archetype, &Id::Position, &mut out)?;
        try_serialize_id::<Rotation, _, _>(archetype, &Id::Rotation, &mut out)?;
        try_serialize_id::<Velocity, _, _>(archetype, &Id::Velocity, &mut out)?;
        out.end()
    }

    fn serialize_components<S: SerializeTuple>(
        &mut self,
        archetype: &Archetype,
        mut out: S,
    ) -> Result<S::Ok, S::Error> {
        try_serialize::<Transform, _>(archetype, &mut out)?;
        try_serialize::<Position, _>(archetype, &mut out)?;
        try_serialize::<Rotation, _>(archetype, &mut out)?;
        try_serialize::<Velocity, _>(archetype, &mut out)?;
        out.end()
    }
}

impl DeserializeContext for Context {
    fn deserialize_component_ids<'de, A: SeqAccess<'de>>(
        &mut self,
        mut seq: A,
    ) -> Result<ColumnBatchType, A::Error> {
        self.ids.clear();
        let mut batch = ColumnBatchType::new();
        while let Some(id) = seq.next_element::<Id>()? {
            match id {
                Id::Transform => batch.add::<Transform>(),
                Id::Position => batch.add::<Position>(),
                Id::Rotation => batch.add::<Rotation>(),
                Id::Velocity => batch.add::<Velocity>(),
            };
            self.ids.push(id);
        }
        Ok(batch)
    }

    fn deserialize_components<'de, A: SeqAccess<'de>>(
        &mut self,
        entity_count: u32,
        mut seq: A,
        batch: &mut ColumnBatchBuilder,
    ) -> Result<(), A::Error> {
        for id in &self.ids {
            match id {
                Id::Transform => deserialize_column::<Transform, _>(entity_count, &mut seq, batch)?,
                Id::Position => deserialize_column::<Position, _>(entity_count, &mut seq, batch)?,
                Id::Rotation => deserialize_column::<Rotation, _>(entity_count, &mut seq, batch)?,
                Id::Velocity => deserialize_column::<Velocity, _>(entity_count, &mut seq, batch)?,
            }
        }
        Ok(())
    }
}

struct AsSerialize<'a>(&'a World);

impl Serialize for AsSerialize<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        hecs::serialize::column::serialize(self.0, &mut Context::default(), s)
    }
}

/// A hecs world of `n` entities built as the lanegraph side builds its own.
pub(super) fn world(n: usize) -> World {
    let mut w = World::new();
    w.spawn_batch((0..n).map(|i| {
        (
            Transform([i as f32; 16]),
            Position([i as f32, 1.0, 2.0]),
            Rotation([0.0, 1.0, 0.0]),
            Velocity([1.0, 0.0, 0.0]),
        )
    }));
    w
}

/// Serializes `w` into `out` (cleared first) with bincode.
pub(super) fn save(w: &World, out: &mut Vec<u8>) -> Result<(), String> {
    out.clear();
    bincode::DefaultOptions::new()
        .serialize_into(&mut *out, &AsSerialize(w))
        .map_err(|e| e.to_string())
}

/// A world back from [`save`]'s bytes.
pub(super) fn load(bytes: &[u8]) -> Result<World, String> {
    let mut de = bincode::Deserializer::from_slice(bytes, bincode::DefaultOptions::new());
    hecs::serialize::column::deserialize(&mut Context::default(), &mut de)
        .map_err(|e| e.to_string())
}

/// A checksum of every position's `x` and every transform's first cell.
pub(super) fn checksum(w: &World) -> f64 {
    let mut sum = 0.0;
    for (p, t) in w.query::<(&Position, &Transform)>().iter() {
        sum += f64::from(p.0[0]) + f64::from(t.0[0]);
    }
    sum
}
