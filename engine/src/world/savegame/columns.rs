//! How one component column and one resource are written to and read from a save: the CBOR
//! values (a column is one array written straight into the output), the entity remapping, and
//! the fingerprint that ties a save to its schema.
//!
//! Owns: the per-column and per-resource codecs. Must never: size a buffer from an unchecked
//! count, or apply part of a column that fails to decode.

use super::*;

pub(super) fn encode<T: Serialize + ?Sized>(name: &'static str, v: &T) -> Result<Value, SaveError> {
    Value::serialized(v).map_err(|e| SaveError::Encode {
        name,
        reason: e.to_string(),
    })
}

pub(super) fn entity_of(bits: u64, table: &EntityTable) -> Option<Entity> {
    let e = table.live_at(bits as u32)?;
    (e.to_bits() == bits).then_some(e)
}

/// Which form a save is written in: a column's values are one CBOR byte string in the binary
/// form (decoded straight into the component type on load, no value tree), a value tree in
/// the text form (readable JSON).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    Binary,
    Text,
}

/// Appends a CBOR array header for `n` items (major type 4).
pub(super) fn cbor_array_header(n: usize, out: &mut Vec<u8>) {
    let n = n as u64;
    match n {
        0..=23 => out.push(0x80 | n as u8),
        24..=0xff => out.extend_from_slice(&[0x98, n as u8]),
        0x100..=0xffff => {
            out.push(0x99);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(0x9a);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        }
        _ => {
            out.push(0x9b);
            out.extend_from_slice(&n.to_be_bytes());
        }
    }
}

/// A column's values as the form wants them, written row by row.
pub(super) struct ValuesOut {
    form: Form,
    bytes: Vec<u8>,
    tree: Vec<Value>,
}

impl ValuesOut {
    pub(super) fn new(form: Form, rows: usize) -> Self {
        let mut bytes = Vec::new();
        if form == Form::Binary {
            cbor_array_header(rows, &mut bytes);
        }
        ValuesOut {
            form,
            bytes,
            tree: Vec::new(),
        }
    }

    pub(super) fn push<T: Serialize>(
        &mut self,
        name: &'static str,
        v: &T,
    ) -> Result<(), SaveError> {
        match self.form {
            Form::Binary => {
                ciborium::into_writer(v, &mut self.bytes).map_err(|e| SaveError::Encode {
                    name,
                    reason: e.to_string(),
                })
            }
            Form::Text => {
                self.tree.push(encode(name, v)?);
                Ok(())
            }
        }
    }

    pub(super) fn finish(self) -> Value {
        match self.form {
            Form::Binary => Value::Bytes(self.bytes),
            Form::Text => Value::Array(self.tree),
        }
    }
}

pub(super) fn save_column<T: Component + Serialize>(
    world: &mut World,
    form: Form,
) -> Result<Option<SavedColumn>, SaveError> {
    let Some(i) = world.column_index::<T>() else {
        return Ok(None);
    };
    let layout = world.columns[i].layout();
    let rows = world.columns[i].len();
    let mut values = ValuesOut::new(form, rows);
    let mut entities = Vec::with_capacity(rows);
    // Every layout through one query: the rows in the column's row order.
    let mut failed = None;
    let mut q = world.query::<(Entity, &T)>().map_err(|e| SaveError::Read {
        name: T::NAME,
        reason: e.to_string(),
    })?;
    q.for_each(|(e, v)| {
        entities.push(e.to_bits());
        if let Err(e) = values.push(T::NAME, v) {
            failed = Some(e);
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(Some(SavedColumn {
        name: T::NAME.to_owned(),
        schema: T::schema().to_owned(),
        layout: layout.name().to_owned(),
        entities,
        values: Values::Tree(values.finish()),
    }))
}

pub(super) fn decode<T: DeserializeOwned>(
    kind: &'static str,
    name: &str,
    saved_schema: &str,
    current: &'static str,
    v: Values,
    column: bool,
) -> Result<T, LoadError> {
    let decoded = match v {
        // The binary form: the value's own CBOR (a column's values, or since format 3 a
        // resource's value), read straight into `T`.
        Values::Bytes(bytes) => {
            ciborium::from_reader::<T, _>(&bytes[..]).map_err(|e| e.to_string())
        }
        Values::Tree(Value::Bytes(bytes)) if column => {
            ciborium::from_reader::<T, _>(&bytes[..]).map_err(|e| e.to_string())
        }
        // The text form: the raw JSON, read straight into `T`.
        Values::Json(raw) => serde_json::from_str::<T>(raw.get()).map_err(|e| e.to_string()),
        Values::Tree(tree) => tree.deserialized::<T>().map_err(|e| e.to_string()),
    };
    decoded.map_err(|e| {
        if saved_schema == current {
            LoadError::Corrupt {
                at: name.to_owned(),
                reason: e.to_string(),
            }
        } else {
            LoadError::ChangedComponent {
                kind,
                name: name.to_owned(),
                saved: saved_schema.to_owned(),
                current,
                reason: e.to_string(),
            }
        }
    })
}

pub(super) fn load_column<T: Component + DeserializeOwned>(
    world: &mut World,
    saved: SavedColumn,
    table: &EntityTable,
) -> Result<Apply, LoadError> {
    let values: Vec<T> = decode(
        "component",
        T::NAME,
        &saved.schema,
        T::schema(),
        saved.values,
        true,
    )?;
    if values.len() != saved.entities.len() {
        return Err(LoadError::Corrupt {
            at: T::NAME.to_owned(),
            reason: format!(
                "{} entities but {} values",
                saved.entities.len(),
                values.len()
            ),
        });
    }
    let mut rows = Vec::with_capacity(values.len());
    let mut seen = vec![false; table.slot_count()];
    for (bits, v) in saved.entities.iter().zip(values) {
        let e = entity_of(*bits, table).ok_or_else(|| LoadError::Corrupt {
            at: T::NAME.to_owned(),
            reason: format!("a row of entity bits {bits:#x}, which is not live in the save"),
        })?;
        if std::mem::replace(&mut seen[e.index() as usize], true) {
            return Err(LoadError::Corrupt {
                at: T::NAME.to_owned(),
                reason: format!("entity {e} has two rows"),
            });
        }
        rows.push((e, v));
    }
    // A name clash is found now, before anything is written; the column itself is created in
    // the apply phase, so a refused load adds no column to the world.
    if world.ids.get::<T>().is_none() {
        if let Some(existing) = world.columns.iter().find(|c| c.name() == T::NAME) {
            return Err(LoadError::World {
                name: T::NAME,
                reason: format!(
                    "another component type ({}) has that name in this world",
                    existing.type_name()
                ),
            });
        }
    }
    Ok(Box::new(move |w: &mut World| {
        let created = w.column_index_or_create::<T>();
        debug_assert!(created.is_ok(), "name clash checked before the first write");
        for (e, v) in rows {
            // Live in the loaded table (checked above), column created: cannot fail.
            let inserted = w.insert(e, v);
            debug_assert!(inserted.is_ok(), "checked before the first write");
        }
    }))
}

/// [`load_column`], and the column back in field-SoA storage when the save stored it so and the
/// type can be (it derives `SoaComponent`: [`ComponentMeta::use_field_soa_fn`]).
///
/// [`ComponentMeta::use_field_soa_fn`]: crate::world::component::ComponentMeta::use_field_soa_fn
pub(super) fn load_column_in_its_layout<T: Component + DeserializeOwned>(
    world: &mut World,
    saved: SavedColumn,
    table: &EntityTable,
) -> Result<Apply, LoadError> {
    let switch = match T::use_field_soa_fn() {
        Some(use_field_soa) if saved.layout == ColumnLayout::FieldSoa.name() => {
            // Tried on a scratch world now, so a load that cannot switch fails here, before
            // anything is written; the switch itself waits for the apply phase (a load refused
            // later must leave the world as it was).
            use_field_soa(&mut World::new()).map_err(|e| LoadError::World {
                name: T::NAME,
                reason: e.to_string(),
            })?;
            Some(use_field_soa)
        }
        _ => None,
    };
    let apply = load_column::<T>(world, saved, table)?;
    Ok(match switch {
        None => apply,
        Some(use_field_soa) => Box::new(move |w: &mut World| {
            apply(w);
            let switched = use_field_soa(w);
            debug_assert!(
                switched.is_ok(),
                "tried on a scratch world before the first write"
            );
        }),
    })
}

pub(super) fn save_resource<R: Resource + Serialize>(
    world: &World,
    form: Form,
) -> Result<Option<SavedResource>, SaveError> {
    let Ok(r) = world.resource::<R>() else {
        return Ok(None);
    };
    // The binary form holds the value as its own CBOR in a byte string, as a column's values:
    // a load decodes it straight into `R`, never through a tree.
    let value = match form {
        Form::Binary => {
            let mut bytes = Vec::new();
            ciborium::into_writer(r, &mut bytes).map_err(|e| SaveError::Encode {
                name: R::NAME,
                reason: e.to_string(),
            })?;
            Values::Bytes(bytes)
        }
        Form::Text => Values::Tree(encode(R::NAME, r)?),
    };
    Ok(Some(SavedResource {
        name: R::NAME.to_owned(),
        schema: R::schema().to_owned(),
        value,
    }))
}

pub(super) fn load_resource<R: Resource + DeserializeOwned>(
    world: &World,
    saved: SavedResource,
) -> Result<Apply, LoadError> {
    let value: R = decode(
        "resource",
        R::NAME,
        &saved.schema,
        R::schema(),
        saved.value,
        false,
    )?;
    // Another type under the same name would refuse the insert after the writes began.
    if world.resource::<R>().is_err()
        && world.resources.values().iter().any(|v| v.name() == R::NAME)
    {
        return Err(LoadError::World {
            name: R::NAME,
            reason: "another resource type in this world has that name".into(),
        });
    }
    Ok(Box::new(move |w: &mut World| {
        let inserted = w.insert_resource(value);
        debug_assert!(inserted.is_ok(), "name checked before the first write");
    }))
}

/// FNV-1a over the sorted `kind NAME = shape` lines of what a save holds.
pub(super) fn fingerprint(components: &[SavedColumn], resources: &[SavedResource]) -> u64 {
    let items = components
        .iter()
        .map(|c| ("component", &c.name, &c.schema))
        .chain(resources.iter().map(|r| ("resource", &r.name, &r.schema)));
    let mut lines: Vec<String> = items
        .map(|(kind, name, schema)| format!("{kind} {name} = {schema}\n"))
        .collect();
    lines.sort();
    fnv1a64(lines.concat().as_bytes())
}

/// 64-bit FNV-1a (Fowler, Noll, Vo) of `bytes`: the save header's second checksum and the
/// schema fingerprint, part of the file format (the state hash moved on; these did not).
pub(super) fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The saved types a load has matched to their registrations so far.
#[derive(Default)]
pub(super) struct Admitted {
    seen: Vec<(&'static str, &'static str)>,
    /// Those whose shape changed since the save.
    pub(super) migrated: Vec<&'static str>,
}

impl Admitted {
    /// The index of the registration (`(name, shape)` pairs, in order) of a saved `kind` named
    /// `name`: an unknown or repeated type is refused, a changed shape is noted.
    pub(super) fn admit(
        &mut self,
        kind: &'static str,
        registered: impl Iterator<Item = (&'static str, &'static str)>,
        name: &str,
        schema: &str,
    ) -> Result<usize, LoadError> {
        let Some((i, (known, shape))) = registered.enumerate().find(|(_, (n, _))| *n == name)
        else {
            return Err(LoadError::UnknownType {
                kind,
                name: name.to_owned(),
            });
        };
        if self.seen.contains(&(kind, known)) {
            return Err(LoadError::Corrupt {
                at: known.to_owned(),
                reason: format!("the {kind} is saved twice"),
            });
        }
        self.seen.push((kind, known));
        if schema != shape {
            self.migrated.push(known);
        }
        Ok(i)
    }
}
