//! The savegame's frame: one ASCII header line that sizes and checksums every byte of the
//! document after it, so a load knows the size before it allocates and refuses any damage.
//!
//! Owns: the header's text, the checksum (CRC-32 and FNV-1a 64 over the document, both
//! mandatory), the bounded read and the atomic write to a path. Must never: read past the size
//! the header states or the caller's limit, or leave a half-written file where a save was.
//!
//! # The header
//! `lanegraph-save <format> <document bytes> <crc32 as 8 hex> <fnv1a64 as 16 hex> <cbor|json>\n`,
//! then the document (CBOR, or the pretty JSON of the text form). CRC-32 detects every 1- and
//! 2-bit error in a file of any size and every burst up to 32 bits; FNV-1a 64 beside it makes
//! any other damage pass with odds near 2^-96. A hand-edited text save is resealed with
//! [`super::SaveSchema::reseal`].

use std::io::{Read, Write};
use std::path::Path;

use super::columns::Form;
use super::LoadError;

/// The header's first word.
pub(crate) const HEADER_MAGIC: &str = "lanegraph-save";
/// The longest header a load reads before giving up.
const MAX_HEADER: usize = 96;
/// The floor of the read limit when the game sets none: 256 MiB (`SaveSchema::read_limit`).
pub(crate) const DEFAULT_READ_LIMIT: u64 = 256 << 20;

impl Form {
    /// The header's word for the document.
    fn word(self) -> &'static str {
        match self {
            Form::Binary => "cbor",
            Form::Text => "json",
        }
    }

    /// What an unheaded document is: JSON when it opens with `{`, else CBOR.
    pub(crate) fn of_document(doc: &[u8]) -> Form {
        match doc.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{') => Form::Text,
            _ => Form::Binary,
        }
    }
}

/// CRC-32 and FNV-1a 64 of `doc`.
fn checksums(doc: &[u8]) -> (u32, u64) {
    (crc32fast::hash(doc), super::columns::fnv1a64(doc))
}

/// The header line for `doc`.
pub(crate) fn header(doc: &[u8], form: Form, format: u32) -> String {
    let (crc, fnv) = checksums(doc);
    format!(
        "{HEADER_MAGIC} {format} {} {crc:08x} {fnv:016x} {}\n",
        doc.len(),
        form.word()
    )
}

/// A read save: the document and what it is, or a file of the unframed first format.
pub(crate) enum Read1 {
    /// The document, its form and the format its header states.
    Framed(Vec<u8>, Form, u32),
    Unframed(Vec<u8>),
}

fn corrupt(reason: impl Into<String>) -> LoadError {
    LoadError::Corrupt {
        at: "header".into(),
        reason: reason.into(),
    }
}

/// Up to `size` bytes of `input` (fewer when it ends first), in a buffer that grows as the
/// bytes arrive (a header's size is a claim until they come: 1 MiB, then doubling) and ends at
/// exactly the bytes read: never the slack of a doubling past them, so a load holds the
/// document once, not up to twice.
fn read_exactly(input: &mut impl Read, size: u64) -> std::io::Result<Vec<u8>> {
    let total = usize::try_from(size).unwrap_or(usize::MAX);
    let mut doc: Vec<u8> = Vec::new();
    let mut filled = 0usize;
    while filled < total {
        if filled == doc.len() {
            let grow = (total - filled).min(doc.len().max(1 << 20));
            doc.reserve_exact(grow);
            doc.resize(filled + grow, 0);
        }
        match input.read(&mut doc[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    doc.truncate(filled);
    Ok(doc)
}

/// Reads a save from `input`, reading at most `limit` bytes of document: the header first,
/// then exactly the size it states (checked against `limit` before any allocation), then
/// checks that nothing follows and that both checksums match.
pub(crate) fn read(
    mut input: impl Read,
    limit: u64,
    formats: std::ops::RangeInclusive<u32>,
) -> Result<Read1, LoadError> {
    let head = header_line(&mut input)?;
    if !head.starts_with(HEADER_MAGIC.as_bytes()) {
        let mut rest = head;
        let cap = limit.saturating_add(1);
        (&mut input)
            .take(cap.saturating_sub(rest.len() as u64))
            .read_to_end(&mut rest)?;
        if rest.len() as u64 > limit {
            return Err(LoadError::TooLarge { size: None, limit });
        }
        return Ok(Read1::Unframed(rest));
    }
    let h = Header::parse(&head, limit, formats)?;
    let doc = read_exactly(&mut input, h.size)?;
    if (doc.len() as u64) < h.size {
        return Err(corrupt(format!(
            "the file is cut: {} of {} document bytes",
            doc.len(),
            h.size
        )));
    }
    if input.read(&mut [0u8; 1])? != 0 {
        return Err(corrupt("bytes follow the document"));
    }
    let (c, f) = checksums(&doc);
    if u64::from(c) != h.crc || f != h.fnv {
        return Err(LoadError::Corrupt {
            at: "checksum".into(),
            reason: "the document does not match the checksums in its header (the file was \
                     damaged, or edited by hand: reseal an edited text save with \
                     `SaveSchema::reseal`)"
                .into(),
        });
    }
    Ok(Read1::Framed(doc, h.form, h.version))
}

/// The header line, read a byte at a time up to its newline (at most `MAX_HEADER` bytes), or
/// the first bytes of an unframed save, up to where they stop matching the magic.
fn header_line(input: &mut impl Read) -> Result<Vec<u8>, LoadError> {
    let mut head = Vec::with_capacity(MAX_HEADER);
    let mut byte = [0u8; 1];
    loop {
        if input.read(&mut byte)? == 0 {
            break;
        }
        head.push(byte[0]);
        if byte[0] == b'\n' || head.len() >= MAX_HEADER {
            break;
        }
        // Not a framed save: the first format began with its document.
        if !HEADER_MAGIC
            .as_bytes()
            .starts_with(&head[..head.len().min(HEADER_MAGIC.len())])
        {
            break;
        }
    }
    Ok(head)
}

/// A framed save's header: `lanegraph-save VERSION SIZE CRC32 FNV64 KIND`.
struct Header {
    version: u32,
    size: u64,
    crc: u64,
    fnv: u64,
    form: Form,
}

impl Header {
    /// Parses and checks a header line: a supported format, a size within `limit`, checksums
    /// in hexadecimal, a known document kind.
    fn parse(
        head: &[u8],
        limit: u64,
        formats: std::ops::RangeInclusive<u32>,
    ) -> Result<Header, LoadError> {
        let line = std::str::from_utf8(head)
            .ok()
            .and_then(|l| l.strip_suffix('\n'))
            .ok_or_else(|| corrupt("the header line is cut or not text"))?;
        let words: Vec<&str> = line.split(' ').collect();
        let [_, version, size, crc, fnv, kind] = words[..] else {
            return Err(corrupt(format!(
                "the header has {} words, not 6",
                words.len()
            )));
        };
        let version: u64 = version
            .parse()
            .map_err(|_| corrupt("the header's format is not a number"))?;
        let Some(version) = u32::try_from(version).ok().filter(|v| formats.contains(v)) else {
            return Err(LoadError::Format {
                found: version,
                supported: *formats.end(),
            });
        };
        let size: u64 = size
            .parse()
            .map_err(|_| corrupt("the header's size is not a number"))?;
        if size > limit {
            return Err(LoadError::TooLarge {
                size: Some(size),
                limit,
            });
        }
        let hex = |s: &str, digits: usize| {
            (s.len() == digits)
                .then(|| u64::from_str_radix(s, 16).ok())
                .flatten()
        };
        let (Some(crc), Some(fnv)) = (hex(crc, 8), hex(fnv, 16)) else {
            return Err(corrupt("the header's checksums are not hexadecimal"));
        };
        let form = match kind {
            "cbor" => Form::Binary,
            "json" => Form::Text,
            other => {
                return Err(corrupt(format!(
                    "unknown document kind {:?}",
                    crate::world::quoted(other, 80)
                )))
            }
        };
        Ok(Header {
            version,
            size,
            crc,
            fnv,
            form,
        })
    }
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, written, flushed to disk,
/// renamed over `path`, then the directory flushed. A crash at any moment leaves either the
/// previous file or the new one, whole.
///
/// Once the rename is done the new file is in place: a directory flush that then fails is an
/// error that says so (a power loss before the folder reaches the disk may bring back the
/// previous save), and a file system with no directory flush (`EINVAL`, unsupported) is taken
/// as flushed, since nothing more can be done there.
pub(crate) fn write_atomically(path: &Path, bytes: &[&[u8]]) -> std::io::Result<()> {
    write_atomically_with(path, bytes, |dir| std::fs::File::open(dir)?.sync_all())
}

/// [`write_atomically`] with the directory flush given (a test fails it).
fn write_atomically_with(
    path: &Path,
    bytes: &[&[u8]],
    sync_dir: impl FnOnce(&Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "no file name"))?;
    // One temporary file per save: two saves of one path at once (an autosave thread and a
    // player's save) never share one, and `create_new` follows no planted link.
    static SAVES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SAVES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp-{}-{n}", std::process::id()));
    let tmp = dir.join(tmp_name);
    let mut created = false;
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        created = true;
        for part in bytes {
            f.write_all(part)?;
        }
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() && created {
        let _ = std::fs::remove_file(&tmp);
    }
    result?;
    // The rename is durable once the directory is.
    match sync_dir(&dir) {
        Ok(()) => Ok(()),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::InvalidInput | std::io::ErrorKind::Unsupported
            ) =>
        {
            Ok(())
        }
        Err(e) => Err(std::io::Error::new(
            e.kind(),
            format!(
                "the save is in place, but its folder could not be flushed to disk ({e}): a \
                 power loss now may bring back the previous save"
            ),
        )),
    }
}

/// Opens `path` for a load: a regular file no larger than the limit allows (a FIFO, a
/// directory or a device is refused before it is read).
pub(crate) fn open_regular(path: &Path, limit: u64) -> Result<std::fs::File, LoadError> {
    // Checked on the open handle: a path swapped after a check cannot be what is read.
    let (file, meta) = crate::files::open_to_read(path)?;
    if !meta.is_file() {
        return Err(LoadError::NotAFile {
            path: crate::world::quoted(&path.display().to_string(), 80),
        });
    }
    if meta.len() > limit.saturating_add(MAX_HEADER as u64) {
        return Err(LoadError::TooLarge {
            size: Some(meta.len()),
            limit,
        });
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        use super::super::columns::fnv1a64;
        // From the FNV specification's test suite: the file format depends on these.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("lanegraph-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A failed folder flush after the rename: an error that says the save is in place, the
    /// new file whole at the path, no temporary file left.
    #[test]
    fn a_failed_folder_flush_after_the_rename_says_the_save_is_in_place() {
        let dir = scratch("dirsync");
        let path = dir.join("slot.save");
        std::fs::write(&path, b"old").unwrap();
        let err = write_atomically_with(&path, &[b"ne", b"w"], |_| {
            Err(std::io::Error::other("injected"))
        })
        .unwrap_err();
        let said = err.to_string();
        assert!(
            said.contains("in place") && said.contains("injected"),
            "{said}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "a temporary file was left: {left:?}");
        // A file system without a directory flush is taken as flushed.
        write_atomically_with(&path, &[b"newer"], |_| {
            Err(std::io::Error::from(std::io::ErrorKind::InvalidInput))
        })
        .unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"newer");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
