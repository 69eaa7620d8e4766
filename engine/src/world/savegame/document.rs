//! The shape of a save's document: its header fields, entity table, columns and resources,
//! and how each form holds a column's values until they are decoded into their type (a CBOR
//! byte string, a raw JSON text; never a value tree for a current save).
//!
//! Owns: the serde shapes of the document and the decoding of a document into them. Must
//! never: decode a value into its component or resource type (the schema's entries do, once
//! every part is read), or build a value tree from a current format's values.

use super::*;

#[derive(Serialize, Deserialize)]
pub(super) struct SavedEntities {
    pub(super) generations: Vec<u32>,
    pub(super) live: Vec<u32>,
    pub(super) free: Vec<u32>,
}

/// One component column of a save. `V` is how its values are held: [`Values`] once read; a
/// load first decodes the document into the form's own holder (a CBOR byte string, a raw JSON
/// text), never into a value tree.
#[derive(Serialize, Deserialize)]
pub(super) struct SavedColumn<V = Values> {
    pub(super) name: String,
    pub(super) schema: String,
    /// `"AoS"` or `"field-SoA"`.
    pub(super) layout: String,
    /// Each row's entity (`Entity::to_bits`), in row order.
    pub(super) entities: Vec<u64>,
    /// Each row's value, in row order (an array).
    pub(super) values: V,
}

/// One resource of a save (`V` as for [`SavedColumn`]).
#[derive(Serialize, Deserialize)]
pub(super) struct SavedResource<V = Values> {
    pub(super) name: String,
    pub(super) schema: String,
    pub(super) value: V,
}

/// A column's values or a resource's value, as a save holds them until decoded into the
/// component or resource type.
pub(super) enum Values {
    /// A value tree (written by a save; read only from the first, unframed binary format).
    Tree(Value),
    /// The binary form's CBOR bytes of the values, decoded straight into the type.
    Bytes(Vec<u8>),
    /// The text form's raw JSON of the values, decoded straight into the type.
    Json(Box<serde_json::value::RawValue>),
}

impl Serialize for Values {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Values::Tree(v) => v.serialize(s),
            Values::Bytes(b) => s.serialize_bytes(b),
            Values::Json(r) => r.serialize(s),
        }
    }
}

impl From<Value> for Values {
    fn from(v: Value) -> Self {
        Values::Tree(v)
    }
}

impl From<Box<serde_json::value::RawValue>> for Values {
    fn from(v: Box<serde_json::value::RawValue>) -> Self {
        Values::Json(v)
    }
}

/// A CBOR byte string, and nothing else: in the binary form a column's values are one byte
/// string, so an array there (a forged document) is refused instead of built into a tree.
pub(super) struct CborBytes(Vec<u8>);

impl<'de> Deserialize<'de> for CborBytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = CborBytes;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a byte string of CBOR values")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<CborBytes, E> {
                Ok(CborBytes(v.to_vec()))
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<CborBytes, E> {
                Ok(CborBytes(v))
            }
        }
        d.deserialize_byte_buf(Visit)
    }
}

impl From<CborBytes> for Values {
    fn from(v: CborBytes) -> Self {
        Values::Bytes(v.0)
    }
}

#[derive(Serialize, Deserialize)]
pub(super) struct SaveFile<C = Values, R = Values> {
    pub(super) magic: String,
    pub(super) format: u32,
    pub(super) fingerprint: u64,
    /// The world's state hash, when the save holds all of its state (no unsaved component rows
    /// or resources, which the hash covers too).
    pub(super) state_hash: Option<u64>,
    /// The state-hash format `state_hash` was made with ([`STATE_HASH_FORMAT`]); absent in
    /// saves made before it was recorded, which were format 1.
    ///
    /// [`STATE_HASH_FORMAT`]: crate::world::hash::STATE_HASH_FORMAT
    #[serde(default = "crate::world::hash::format_one")]
    pub(super) state_hash_format: u32,
    pub(super) tick: u64,
    pub(super) frame: u64,
    /// The fixed step as nanoseconds over a denominator (exact).
    pub(super) fixed_step: (u64, u64),
    pub(super) entities: SavedEntities,
    pub(super) components: Vec<SavedColumn<C>>,
    pub(super) resources: Vec<SavedResource<R>>,
}

impl<C: Into<Values>, R: Into<Values>> SaveFile<C, R> {
    /// The same save with its values held as [`Values`] (moves, no copy).
    pub(super) fn held(self) -> SaveFile {
        SaveFile {
            magic: self.magic,
            format: self.format,
            fingerprint: self.fingerprint,
            state_hash: self.state_hash,
            state_hash_format: self.state_hash_format,
            tick: self.tick,
            frame: self.frame,
            fixed_step: self.fixed_step,
            entities: self.entities,
            components: self
                .components
                .into_iter()
                .map(|c| SavedColumn {
                    name: c.name,
                    schema: c.schema,
                    layout: c.layout,
                    entities: c.entities,
                    values: c.values.into(),
                })
                .collect(),
            resources: self
                .resources
                .into_iter()
                .map(|r| SavedResource {
                    name: r.name,
                    schema: r.schema,
                    value: r.value.into(),
                })
                .collect(),
        }
    }
}

/// The magic and the format number, read before the rest (every other key is skipped) so a
/// newer format is named as such.
#[derive(Deserialize)]
pub(super) struct SaveHeader {
    pub(super) magic: Option<String>,
    pub(super) format: Option<u64>,
}

/// Decodes `bytes`, a document of `form`, as `T`.
pub(super) fn parse<T: DeserializeOwned>(bytes: &[u8], form: Form) -> Result<T, String> {
    match form {
        Form::Text => serde_json::from_slice(bytes).map_err(|e| e.to_string()),
        Form::Binary => ciborium::from_reader(bytes).map_err(|e| e.to_string()),
    }
}
