//! Savegames: a World's simulation state written to a file and read back, across program runs
//! and across versions of the game's types.
//!
//! Owns: [`SaveSchema`] (the components and resources a game saves, each registered once), the
//! file format, and its typed errors ([`SaveError`], [`LoadError`]). Must never: write part of a
//! loaded file into the World (every check, every decode runs before the first write), panic or
//! hang on any input (truncated, corrupt, hostile), or drop a row silently (a saved component
//! the schema does not know is an error, not a skip).
//!
//! # The format
//! One CBOR document (ciborium), each column's values one byte string inside it (read straight
//! into the component type): self-describing, with struct fields by name, so serde's own
//! migration attributes work on it (`#[serde(default)]` for a field added since the save,
//! `#[serde(alias = "old")]` for a renamed one), where a positional codec (bincode, postcard)
//! would misread the previous version. [`SaveSchema::save_text`] writes the same document as
//! JSON for reading and diffing (JSON has no NaN or infinity: a float that is one reads back
//! as an error, so debug with it, ship with the binary form). [`SaveSchema::load_into`] reads
//! either.
//!
//! The document holds a magic string and a format number, a fingerprint of every saved type's
//! shape ([`Component::schema`], written by the derives: field names and types), the state
//! hash the world had, the step and frame counters and the fixed step, the entity table
//! (generations, live order, free list: the same entity ids and the same next spawn), and per
//! component its rows in row order (entity and value) and its layout; per resource its value.
//!
//! # Loading
//! When the fingerprint matches, every type reads as it was written and the loaded world's
//! state hash must equal the saved one (a mismatch is [`LoadError::HashMismatch`]), checked
//! when the save held all of its world's state and the loading world holds nothing more (the
//! hash covers every component and resource). When a
//! type's shape changed, its rows are decoded through serde into the current type: a
//! migration serde can express succeeds and is listed in [`LoadReport::migrated`]; one it
//! cannot is [`LoadError::ChangedComponent`] with both shapes. Components the schema does not
//! register lose their rows on load (the entity table is replaced): register everything that
//! must survive. Resources the save does not hold are kept. Not saved: event queues the schema does not register (`resource::<Events<E>>()`),
//! change ticks (every loaded row reads as changed), systems and their closures' state, the
//! input.
//!
//! [`Component::schema`]: super::Component::schema
//!
//! | file | idea |
//! |------|------|
//! | `columns` | How one component column and one resource are written to and read from a save: the CBOR values (a column is one array written straight ... |
//! | `document` | The shape of a save's document: its header fields, entity table, columns and resources, and how each form holds a column's values until they are decoded into their type |
//! | `frame` | The savegame's frame: one ASCII header line that sizes and checksums every byte of the document after it, so a load knows the size ... |

use std::io::{Read, Write};
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::access::ColumnLayout;
use super::entity::{Entity, EntityTable};
use super::epoch::DomainSet;
use super::{Component, Resource, World};
use crate::fixed_step::FixedStep;

mod columns;
mod document;
mod frame;
use columns::*;
use document::*;
use frame::DEFAULT_READ_LIMIT;

/// An unset read limit is this many times the bytes of the world loaded into (at least
/// [`DEFAULT_READ_LIMIT`]).
const WORLD_SIZED_LIMIT_FACTOR: u64 = 8;

/// What the file's first field says.
const MAGIC: &str = "lanegraph-save";
/// The format this build writes and reads (it also reads format 1, the unframed first one).
pub const SAVE_FORMAT: u32 = 3;
/// The oldest framed format this build reads (2: resources' values as value trees in the
/// binary form; 3 writes them as CBOR byte strings, like columns).
const OLDEST_FRAMED_FORMAT: u32 = 2;
/// The most simulated time a loaded step counter may stand for: a century, in nanoseconds.
const MAX_SIMULATED_NS: u128 = 100 * 365 * 86_400 * 1_000_000_000;
/// The first format: the document alone, with no header or checksum.
const UNFRAMED_FORMAT: u32 = 1;

type Value = ciborium::Value;

/// Why a save could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// A value could not be encoded (serde said why).
    #[error("`{name}` could not be encoded: {reason}; fix: check its `Serialize` impl")]
    Encode {
        /// The component or resource.
        name: &'static str,
        /// serde's message.
        reason: String,
    },
    /// The writer failed.
    #[error("the save could not be written: {0}; fix: check the path and free space")]
    Io(#[from] std::io::Error),
    /// A registered component is stored in a way the schema cannot read.
    #[error("component `{name}` could not be read for saving: {reason}")]
    Read {
        /// The component.
        name: &'static str,
        /// Why.
        reason: String,
    },
}

/// Why a save could not be loaded. The World is unchanged whenever one is returned, except
/// after [`LoadError::HashMismatch`].
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The bytes are not a lanegraph save (or are cut before its header).
    #[error("not a lanegraph save: {reason}; fix: pass a file written by `SaveSchema::save`")]
    NotASave {
        /// What was wrong.
        reason: String,
    },
    /// The save is of a format this build does not read.
    #[error(
        "save format {found} is not supported (this build reads format {supported}); fix: load \
         it with the build that wrote it and save again"
    )]
    Format {
        /// The file's format number.
        found: u64,
        /// [`SAVE_FORMAT`].
        supported: u32,
    },
    /// The file is damaged: truncated, or a part fails to decode or to check.
    #[error("the save is corrupt at {at}: {reason}; fix: load an intact copy")]
    Corrupt {
        /// Which part (`"header"`, `"entity table"`, a component's name).
        at: String,
        /// What failed.
        reason: String,
    },
    /// The save holds a component or resource this schema does not register.
    #[error(
        "the save holds {kind} `{name}`, which the schema does not register; fix: register it \
         (`SaveSchema::{kind}::<T>()`), or load with the version of the game that had it"
    )]
    UnknownType {
        /// `"component"` or `"resource"`.
        kind: &'static str,
        /// Its saved name.
        name: String,
    },
    /// A type's shape changed since the save and serde could not migrate it.
    #[error(
        "{kind} `{name}` changed since the save (saved `{saved}`, now `{current}`) and the saved \
         values do not decode: {reason}; fix: mark an added field `#[serde(default)]`, a renamed \
         one `#[serde(alias = \"old_name\")]`, or convert the save with the old version"
    )]
    ChangedComponent {
        /// `"component"` or `"resource"`.
        kind: &'static str,
        /// Its name.
        name: String,
        /// The saved shape.
        saved: String,
        /// The current shape.
        current: &'static str,
        /// serde's message.
        reason: String,
    },
    /// Every type read as written, but the loaded world does not hash as the saved one did
    /// (found after the write: the world holds the loaded state).
    #[error(
        "the loaded world's state hash {loaded:#018x} differs from the saved {saved:#018x}; a \
         type's `Serialize`/`Deserialize` do not round-trip; fix: check the types' serde impls"
    )]
    HashMismatch {
        /// The hash in the file.
        saved: u64,
        /// The loaded world's.
        loaded: u64,
    },
    /// The loading world cannot take a type (its name is another type's there, or the layout
    /// cannot change).
    #[error("the world cannot take `{name}`: {reason}")]
    World {
        /// The type's name.
        name: &'static str,
        /// Why.
        reason: String,
    },
    /// The reader failed.
    #[error("the save could not be read: {0}")]
    Io(#[from] std::io::Error),
    /// The save is larger than the schema's read limit (checked before it is read).
    #[error(
        "the save's document is {} bytes, over the read limit of {limit} bytes; fix: raise it \
         with `SaveSchema::read_limit` if the save is genuine",
        size.map_or_else(|| "more than the limit's".to_string(), |s| s.to_string())
    )]
    TooLarge {
        /// The size the header or the file states, when known before reading.
        size: Option<u64>,
        /// The limit in force.
        limit: u64,
    },
    /// The path is not a regular file (a directory, a FIFO, a device).
    #[error("`{path}` is not a regular file; fix: pass the path of a save file")]
    NotAFile {
        /// The path, at most 80 characters.
        path: String,
    },
}

/// What a load did besides loading.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Types whose shape changed since the save and were decoded through serde's migration
    /// attributes.
    pub migrated: Vec<&'static str>,
    /// Entities loaded.
    pub entities: usize,
    /// The step counter the save was taken at.
    pub tick: u64,
}

/// A decoded part, waiting for every check to pass before it writes into the world.
type Apply = Box<dyn FnOnce(&mut World)>;

struct ComponentEntry {
    name: &'static str,
    schema: &'static str,
    save: fn(&mut World, Form) -> Result<Option<SavedColumn>, SaveError>,
    /// Decodes the rows (checking each entity against the loaded table) and prepares the
    /// world's column; returns the write to run once everything checked.
    load: fn(&mut World, SavedColumn, &EntityTable) -> Result<Apply, LoadError>,
}

struct ResourceEntry {
    name: &'static str,
    schema: &'static str,
    save: fn(&World, Form) -> Result<Option<SavedResource>, SaveError>,
    load: fn(&World, SavedResource) -> Result<Apply, LoadError>,
}

/// The components and resources a game saves (`SaveSchema::default()` is empty): register
/// each once, then
/// [`save`](Self::save) and [`load_into`](Self::load_into) any number of times. A type opts in
/// by deriving serde's `Serialize` and `Deserialize` beside `Component` (or `Resource`).
///
/// ```
/// use lanegraph::prelude::*;
/// use lanegraph::world::SaveSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Clone, Copy, Component, StateHash, Serialize, Deserialize)]
/// struct Hp(i32);
/// #[derive(Clone, Copy, Resource, StateHash, Serialize, Deserialize)]
/// struct Score(u64);
///
/// let schema = SaveSchema::default().component::<Hp>().resource::<Score>();
/// let mut world = World::new();
/// world.spawn_batch((0..10).map(|i| (Hp(i),))).unwrap();
/// world.insert_resource(Score(7)).unwrap();
/// let mut file = Vec::new();
/// schema.save(&mut world, &mut file).unwrap();
///
/// let mut other = World::new();
/// let report = schema.load_into(&mut other, &file[..]).unwrap();
/// assert_eq!(report.entities, 10);
/// assert_eq!(other.state_hash(), world.state_hash());
/// assert_eq!(other.spawn(), world.spawn(), "the same next entity");
/// ```
#[derive(Default)]
pub struct SaveSchema {
    components: Vec<ComponentEntry>,
    resources: Vec<ResourceEntry>,
    /// The largest document a load reads, bytes (`None`: sized from the world loaded into, `read_limit`).
    read_limit: Option<u64>,
}

impl std::fmt::Debug for SaveSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SaveSchema")
            .field(
                "components",
                &self.components.iter().map(|c| c.name).collect::<Vec<_>>(),
            )
            .field(
                "resources",
                &self.resources.iter().map(|r| r.name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl SaveSchema {
    /// Saves component `T` in either layout; a load stores it as the save did (field-SoA when it
    /// was and `T` derives `SoaComponent`, else AoS unless the loading world already stores it
    /// field-SoA).
    pub fn component<T: Component + Serialize + DeserializeOwned>(mut self) -> Self {
        self.push_component(ComponentEntry {
            name: T::NAME,
            schema: T::schema(),
            save: save_column::<T>,
            load: load_column_in_its_layout::<T>,
        });
        self
    }

    /// Saves resource `R`.
    pub fn resource<R: Resource + Serialize + DeserializeOwned>(mut self) -> Self {
        self.resources.retain(|r| r.name != R::NAME);
        self.resources.push(ResourceEntry {
            name: R::NAME,
            schema: R::schema(),
            save: save_resource::<R>,
            load: load_resource::<R>,
        });
        self
    }

    /// The largest save document a load reads, in bytes. Checked against the size a save's
    /// header states before anything is allocated: a larger file is [`LoadError::TooLarge`].
    /// Unset, it is sized from the world loaded into: 8 times the bytes its component rows and
    /// entities take now (a binary save of a world is smaller than the world's rows), and at
    /// least 256 MiB (so a freshly built world loads any ordinary save).
    pub fn read_limit(mut self, bytes: u64) -> Self {
        self.read_limit = Some(bytes);
        self
    }

    /// The read limit for a load into `world` (see [`Self::read_limit`]).
    fn limit(&self, world: &World) -> u64 {
        self.read_limit.unwrap_or_else(|| {
            let rows: u64 = world
                .columns
                .iter()
                .map(|c| (c.len() as u64).saturating_mul(c.size_bytes() as u64))
                .sum();
            let entities = (world.entities.live().len() as u64).saturating_mul(16);
            rows.saturating_add(entities)
                .saturating_mul(WORLD_SIZED_LIMIT_FACTOR)
                .max(DEFAULT_READ_LIMIT)
        })
    }

    fn push_component(&mut self, entry: ComponentEntry) {
        self.components.retain(|c| c.name != entry.name);
        self.components.push(entry);
    }

    fn file_of(&self, world: &mut World, form: Form) -> Result<SaveFile, SaveError> {
        let mut components = Vec::new();
        for c in &self.components {
            if let Some(col) = (c.save)(world, form)? {
                components.push(col);
            }
        }
        let mut resources = Vec::new();
        for r in &self.resources {
            if let Some(v) = (r.save)(world, form)? {
                resources.push(v);
            }
        }
        let fingerprint = fingerprint(&components, &resources);
        let unsaved_rows = world
            .columns
            .iter()
            .any(|c| c.len() > 0 && !components.iter().any(|s| s.name == c.name()));
        let whole = !unsaved_rows && world.resources.values().len() == resources.len();
        let (generations, live, free) = world.entities.saved_parts();
        Ok(SaveFile {
            magic: MAGIC.to_owned(),
            format: SAVE_FORMAT,
            fingerprint,
            state_hash: whole.then(|| world.state_hash()),
            state_hash_format: crate::world::hash::STATE_HASH_FORMAT,
            tick: world.tick,
            frame: world.frame,
            fixed_step: (world.fixed_step.numer_ns(), world.fixed_step.denom()),
            entities: SavedEntities {
                generations,
                live,
                free,
            },
            components,
            resources,
        })
    }

    /// Writes `world`'s state as CBOR (see the module docs for what that is). Takes `&mut`
    /// because a field-SoA column is read through a query; nothing in the world changes.
    ///
    /// To save to a file, prefer [`save_to_path`](Self::save_to_path): a `File` written
    /// through this method is half-written if the game is killed meanwhile.
    pub fn save(&self, world: &mut World, out: impl Write) -> Result<(), SaveError> {
        self.write_framed(world, Form::Binary, out)
    }

    /// [`save`](Self::save) as pretty JSON, for reading and diffing. Its header checksums the
    /// JSON too: after editing one by hand, [`reseal`](Self::reseal) it.
    pub fn save_text(&self, world: &mut World, out: impl Write) -> Result<(), SaveError> {
        self.write_framed(world, Form::Text, out)
    }

    fn write_framed(
        &self,
        world: &mut World,
        form: Form,
        mut out: impl Write,
    ) -> Result<(), SaveError> {
        let doc = self.document(world, form)?;
        out.write_all(frame::header(&doc, form, SAVE_FORMAT).as_bytes())?;
        out.write_all(&doc)?;
        Ok(())
    }

    /// Saves `world` (the binary form) to the file at `path` atomically: written to a
    /// temporary file beside it, flushed to disk, then renamed over `path` and the directory
    /// flushed. Killed at any moment, the game leaves the previous save or the new one, whole.
    pub fn save_to_path(&self, world: &mut World, path: impl AsRef<Path>) -> Result<(), SaveError> {
        let doc = self.document(world, Form::Binary)?;
        let head = frame::header(&doc, Form::Binary, SAVE_FORMAT);
        frame::write_atomically(path.as_ref(), &[head.as_bytes(), &doc])?;
        Ok(())
    }

    /// Loads the save at `path` ([`load_into`](Self::load_into)): a regular file (a
    /// directory, FIFO or device is [`LoadError::NotAFile`]) within the read limit.
    pub fn load_from_path(
        &self,
        world: &mut World,
        path: impl AsRef<Path>,
    ) -> Result<LoadReport, LoadError> {
        let file = frame::open_regular(path.as_ref(), self.limit(world))?;
        self.load_into(world, std::io::BufReader::new(file))
    }

    /// A save's bytes with a fresh header: for a text save edited by hand, whose checksums no
    /// longer match. The document itself is not checked here (a load checks it).
    pub fn reseal(save: &[u8]) -> Vec<u8> {
        let body = match save.iter().position(|&b| b == b'\n') {
            Some(end) if save.starts_with(frame::HEADER_MAGIC.as_bytes()) => &save[end + 1..],
            _ => save,
        };
        // The format the document says it is (a hand edit of an older save stays that format).
        let form = Form::of_document(body);
        let format = parse::<SaveHeader>(body, form)
            .ok()
            .and_then(|h| h.format)
            .and_then(|f| u32::try_from(f).ok())
            .unwrap_or(SAVE_FORMAT);
        let mut out = frame::header(body, form, format).into_bytes();
        out.extend_from_slice(body);
        out
    }

    fn document(&self, world: &mut World, form: Form) -> Result<Vec<u8>, SaveError> {
        let file = self.file_of(world, form)?;
        let mut doc = Vec::new();
        match form {
            Form::Binary => ciborium::into_writer(&file, &mut doc).map_err(|e| match e {
                ciborium::ser::Error::Io(io) => SaveError::Io(io),
                ciborium::ser::Error::Value(reason) => SaveError::Encode {
                    name: "save file",
                    reason,
                },
            })?,
            Form::Text => {
                serde_json::to_writer_pretty(&mut doc, &file).map_err(|e| SaveError::Encode {
                    name: "save file",
                    reason: e.to_string(),
                })?
            }
        }
        Ok(doc)
    }

    /// Replaces `world`'s simulation state with the save read from `input` (CBOR, or the JSON
    /// of [`save_text`](Self::save_text)): its entities, the rows of every registered
    /// component, the saved resources, the step and frame counters and the fixed step.
    /// Systems, lanes, unsaved resources and the world's identity stay. Every part is decoded
    /// and checked before the first write: on an error the world is unchanged, except for
    /// [`LoadError::HashMismatch`], which only the written world can show (it then holds the
    /// loaded state, which differs from the saved one because a type's serde impls do not
    /// round-trip).
    pub fn load_into(&self, world: &mut World, input: impl Read) -> Result<LoadReport, LoadError> {
        let formats = OLDEST_FRAMED_FORMAT..=SAVE_FORMAT;
        let (bytes, format, form) = match frame::read(input, self.limit(world), formats)? {
            frame::Read1::Framed(doc, form, format) => (doc, format, form),
            frame::Read1::Unframed(doc) => {
                let form = Form::of_document(&doc);
                (doc, UNFRAMED_FORMAT, form)
            }
        };
        // The magic and the format first (every other key skipped, nothing built), so a newer
        // format is named as such; then the document decodes straight into the save's parts,
        // a binary column's values staying one byte string. The document bytes are dropped
        // before anything is applied: a load holds the file at most twice (the bytes and the
        // decoded parts), then the world.
        let header: SaveHeader = parse(&bytes, form).map_err(|e| LoadError::NotASave {
            reason: format!(
                "not {} a save reads: {e}",
                if form == Form::Text { "JSON" } else { "CBOR" }
            ),
        })?;
        let magic = header.magic.ok_or_else(|| LoadError::NotASave {
            reason: "it has no magic string".into(),
        })?;
        if magic != MAGIC {
            return Err(LoadError::NotASave {
                reason: format!(
                    "its magic is {:?}, not {MAGIC:?}",
                    crate::world::quoted(&magic, 80)
                ),
            });
        }
        let found = header.format.ok_or_else(|| LoadError::NotASave {
            reason: "it has no format number".into(),
        })?;
        if found != u64::from(format) {
            return Err(LoadError::Format {
                found,
                supported: SAVE_FORMAT,
            });
        }
        let corrupt = |reason: String| LoadError::Corrupt {
            at: "header".into(),
            reason,
        };
        // Each form's values into its own holder: CBOR bytes, raw JSON; the first format's
        // binary saves through a tree, as they were written.
        let file: SaveFile = match (form, format) {
            (Form::Text, _) => parse::<
                SaveFile<Box<serde_json::value::RawValue>, Box<serde_json::value::RawValue>>,
            >(&bytes, form)
            .map_err(corrupt)?
            .held(),
            (Form::Binary, UNFRAMED_FORMAT) => parse::<SaveFile<Value, Value>>(&bytes, form)
                .map_err(corrupt)?
                .held(),
            (Form::Binary, 2) => parse::<SaveFile<CborBytes, Value>>(&bytes, form)
                .map_err(corrupt)?
                .held(),
            (Form::Binary, _) => parse::<SaveFile<CborBytes, CborBytes>>(&bytes, form)
                .map_err(corrupt)?
                .held(),
        };
        drop(bytes);
        self.apply(world, file)
    }

    /// Applies a decoded save to `world`: every column and resource is decoded before the first
    /// one is applied (a corrupt column changes nothing), then the world's hash is checked
    /// against the saved one.
    fn apply(&self, world: &mut World, file: SaveFile) -> Result<LoadReport, LoadError> {
        let table = EntityTable::from_saved_parts(
            &file.entities.generations,
            &file.entities.live,
            &file.entities.free,
        )
        .map_err(|reason| LoadError::Corrupt {
            at: "entity table".into(),
            reason: reason.into(),
        })?;
        let step = checked_header(&file)?;
        let saved_resources = file.resources.len();
        let (writes, migrated) = self.decode_all(world, file.components, file.resources, &table)?;
        // Every part decoded and checked: now write.
        for c in &mut world.columns {
            c.clear_rows();
        }
        world.entities = table;
        for write in writes {
            write(world);
        }
        world.tick = file.tick;
        world.frame = file.frame;
        world.fixed_step = step;
        world.advance_change_tick();
        world.query_align.clear();
        world.epochs.bump(DomainSet::ALL);
        // The hash covers the whole world: comparable when the save held all of the saved
        // world's state, the loading world holds nothing else, and the save's hash was made
        // by this build's hash format (an older save's hash is not a claim about this one's).
        let whole = world.resources.values().len() == saved_resources;
        let same_format = file.state_hash_format == crate::world::hash::STATE_HASH_FORMAT;
        if let (Some(saved), true, true, true) =
            (file.state_hash, migrated.is_empty(), whole, same_format)
        {
            let loaded = world.state_hash();
            if loaded != saved {
                return Err(LoadError::HashMismatch { saved, loaded });
            }
        }
        Ok(LoadReport {
            migrated,
            entities: world.entities.live().len(),
            tick: file.tick,
        })
    }

    /// Every saved column and resource admitted against the schema (migrating an older
    /// shape) and decoded into a write, none applied yet; with the names migrated.
    fn decode_all(
        &self,
        world: &mut World,
        components: Vec<SavedColumn>,
        resources: Vec<SavedResource>,
        table: &EntityTable,
    ) -> Result<(Vec<Apply>, Vec<&'static str>), LoadError> {
        let mut admitted = Admitted::default();
        let mut writes: Vec<Apply> = Vec::new();
        for col in components {
            let i = admitted.admit(
                "component",
                self.components.iter().map(|c| (c.name, c.schema)),
                &col.name,
                &col.schema,
            )?;
            writes.push((self.components[i].load)(world, col, table)?);
        }
        for res in resources {
            let i = admitted.admit(
                "resource",
                self.resources.iter().map(|r| (r.name, r.schema)),
                &res.name,
                &res.schema,
            )?;
            writes.push((self.resources[i].load)(world, res)?);
        }
        Ok((writes, admitted.migrated))
    }
}

/// The save's header values checked: the fixed step, the fingerprint of the shapes it lists,
/// and the tick and frame counters within what a game can reach. Returns the step.
fn checked_header(file: &SaveFile) -> Result<FixedStep, LoadError> {
    let step = FixedStep::from_parts(file.fixed_step.0, file.fixed_step.1).ok_or_else(|| {
        LoadError::Corrupt {
            at: "header".into(),
            reason: format!(
                "fixed step {:?} (nanoseconds over a denominator) is not a step of 1 us \
                     to 10 s",
                file.fixed_step
            ),
        }
    })?;
    // The fingerprint is of the shapes the file lists: a file whose shapes were damaged
    // (so a value could be misread as another version's) is refused here.
    let listed = fingerprint(&file.components, &file.resources);
    if listed != file.fingerprint {
        return Err(LoadError::Corrupt {
            at: "header".into(),
            reason: format!(
                "the schema fingerprint {:#018x} does not match the shapes listed \
                 ({listed:#018x})",
                file.fingerprint
            ),
        });
    }
    // The step counter in simulated time: past a century of steps, it is damage or a
    // forgery (2^40 steps is 580 years at 60 Hz), not a game's save.
    let simulated_ns =
        u128::from(file.tick) * u128::from(step.numer_ns()) / u128::from(step.denom());
    // The frame counter too: past 2^53 frames (a million years at 300 fps) it is a forgery,
    // and counting on from near u64::MAX would overflow.
    if file.frame > 1 << 53 {
        return Err(LoadError::Corrupt {
            at: "header".into(),
            reason: format!("frame {} is past 2^53", file.frame),
        });
    }
    if simulated_ns > MAX_SIMULATED_NS {
        return Err(LoadError::Corrupt {
            at: "header".into(),
            reason: format!(
                "tick {} at a {} s step is more than a century of simulated time",
                file.tick,
                step.as_secs_f64()
            ),
        });
    }
    Ok(step)
}
