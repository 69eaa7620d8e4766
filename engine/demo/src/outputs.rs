//! Writing a run's outputs so that a reader never sees a mixed or cut-off set.
//!
//! Owns: checking an output folder before a run ([`check_out_dir`]), writing each file
//! atomically (a temporary file in the same folder, flushed to disk, renamed over the old one),
//! and the manifest that publishes the set ([`MANIFEST`]). Must never: leave a cut-off file
//! under an output's name (a failed write removes its temporary file and keeps the old output),
//! or let an old manifest vouch for new files.
//!
//! # Publishing a set
//! 1. The old `manifest.json` is removed first: from then on the folder holds no claim.
//! 2. Each output is written to `.<name>.tmp-<pid>`, flushed (`sync_all`), and renamed to
//!    `<name>` (atomic on one file system).
//! 3. `manifest.json` is written last, the same way: each file's name, size and FNV-1a 64
//!    hash. A reader trusts a set only when the manifest is there and every file matches it; a
//!    run killed at any point leaves either the old files without a manifest, or the new set
//!    with one.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The manifest's file name.
pub const MANIFEST: &str = "manifest.json";

/// One published file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ManifestEntry {
    /// Its name in the folder.
    pub name: String,
    /// Its size, bytes.
    pub bytes: u64,
    /// FNV-1a 64 of its contents, `0x`-prefixed hex.
    pub fnv1a64: String,
}

/// The manifest: the files of one run's output set.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    /// What wrote it.
    pub writer: String,
    /// The files, in the order written.
    pub files: Vec<ManifestEntry>,
}

/// Why an output could not be written.
#[derive(Debug, thiserror::Error)]
#[error("output `{path}` ({what}): {source}; fix: {fix}")]
pub struct OutputError {
    /// What was being written.
    pub what: &'static str,
    /// Where.
    pub path: PathBuf,
    /// The OS error.
    #[source]
    pub source: std::io::Error,
    /// What the user can do.
    pub fix: &'static str,
}

/// FNV-1a, 64 bits.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Creates `dir` if needed and proves it writable (writes, flushes and removes a probe file),
/// so a bad `--out` fails before the first frame instead of after the whole run.
pub fn check_out_dir(dir: &Path) -> Result<(), OutputError> {
    let err = |what, source| OutputError {
        what,
        path: dir.to_path_buf(),
        source,
        fix: "pass --out a folder you can write to (it is created if missing)",
    };
    if dir.exists() && !dir.is_dir() {
        return Err(err(
            "output folder",
            std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "it is a file, not a folder",
            ),
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| err("output folder", e))?;
    let probe = dir.join(format!(".lanegraph-probe-{}", std::process::id()));
    let wrote = std::fs::File::create(&probe)
        .and_then(|mut f| f.write_all(b"probe").and_then(|()| f.sync_all()));
    let _ = std::fs::remove_file(&probe);
    wrote.map_err(|e| err("write test", e))
}

/// Writes `bytes` to `dir/name` atomically (see the module docs, step 2).
pub fn write_atomic(
    dir: &Path,
    name: &str,
    what: &'static str,
    bytes: &[u8],
) -> Result<PathBuf, OutputError> {
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, &path));
    written.map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        OutputError {
            what,
            path: path.clone(),
            source,
            fix: "free space on the disk or pick another --out folder; the previous output was left as it was",
        }
    })?;
    Ok(path)
}

/// A set of outputs being published (see the module docs).
#[derive(Debug)]
pub struct OutputSet {
    dir: PathBuf,
    manifest: Manifest,
    files: Vec<PathBuf>,
}

impl OutputSet {
    /// Starts publishing into `dir` (created if missing): step 1, the old manifest goes.
    pub fn begin(dir: &Path, writer: &str) -> Result<OutputSet, OutputError> {
        check_out_dir(dir)?;
        let old = dir.join(MANIFEST);
        if let Err(e) = std::fs::remove_file(&old) {
            if e.kind() != std::io::ErrorKind::NotFound {
                return Err(OutputError {
                    what: "old manifest",
                    path: old,
                    source: e,
                    fix: "make the folder writable, or remove manifest.json by hand",
                });
            }
        }
        Ok(OutputSet {
            dir: dir.to_path_buf(),
            manifest: Manifest {
                writer: writer.to_string(),
                files: Vec::new(),
            },
            files: Vec::new(),
        })
    }

    /// Step 2 for one file.
    pub fn put(&mut self, name: &str, what: &'static str, bytes: &[u8]) -> Result<(), OutputError> {
        let path = write_atomic(&self.dir, name, what, bytes)?;
        self.manifest.files.push(ManifestEntry {
            name: name.to_string(),
            bytes: bytes.len() as u64,
            fnv1a64: format!("{:#018x}", fnv1a64(bytes)),
        });
        self.files.push(path);
        Ok(())
    }

    /// Step 3: writes the manifest and returns every file written, the manifest last.
    pub fn publish(mut self) -> Result<Vec<PathBuf>, OutputError> {
        let json = serde_json::to_string_pretty(&self.manifest).expect("a manifest serialises");
        let path = write_atomic(&self.dir, MANIFEST, "manifest", json.as_bytes())?;
        self.files.push(path);
        Ok(self.files)
    }
}

/// Checks a published set: the manifest is there and every file it names has its size and hash.
/// Returns the manifest, or what does not match.
pub fn verify(dir: &Path) -> Result<Manifest, String> {
    let text = std::fs::read_to_string(dir.join(MANIFEST))
        .map_err(|e| format!("no readable {MANIFEST}: {e}"))?;
    let m: Manifest = serde_json::from_str(&text).map_err(|e| format!("{MANIFEST}: {e}"))?;
    for f in &m.files {
        let bytes = std::fs::read(dir.join(&f.name)).map_err(|e| format!("{}: {e}", f.name))?;
        let hash = format!("{:#018x}", fnv1a64(&bytes));
        if bytes.len() as u64 != f.bytes || hash != f.fnv1a64 {
            return Err(format!(
                "{} is {} bytes with hash {hash}; the manifest says {} bytes, {}",
                f.name,
                bytes.len(),
                f.bytes,
                f.fnv1a64
            ));
        }
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("lanegraph-out-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_set_publishes_with_a_manifest_that_catches_a_changed_file() {
        let dir = scratch("set");
        let mut set = OutputSet::begin(&dir, "test").unwrap();
        set.put("a.json", "a", b"{\"a\":1}").unwrap();
        set.put("b.txt", "b", b"bee").unwrap();
        let files = set.publish().unwrap();
        assert_eq!(files.last().unwrap(), &dir.join(MANIFEST));
        let m = verify(&dir).unwrap();
        assert_eq!(m.files.len(), 2);
        // A file changed after publishing (a mixed set) is caught.
        std::fs::write(dir.join("b.txt"), b"wasp").unwrap();
        assert!(verify(&dir).unwrap_err().contains("b.txt"));
        // Starting a new set withdraws the old manifest before anything else changes.
        let set = OutputSet::begin(&dir, "test").unwrap();
        assert!(!dir.join(MANIFEST).exists());
        drop(set);
        // No temporary file is left behind.
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_keeps_the_old_output_and_leaves_no_partial_file() {
        let dir = scratch("fail");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("trace.json"), b"old").unwrap();
        // The target name is taken by a folder: the rename fails after the temporary file was
        // written.
        std::fs::create_dir_all(dir.join("summary.json")).unwrap();
        let e = write_atomic(&dir, "summary.json", "summary", b"new").unwrap_err();
        assert!(e.to_string().contains("fix:"), "{e}");
        assert_eq!(std::fs::read(dir.join("trace.json")).unwrap(), b"old");
        let tmp = dir.join(format!(".summary.json.tmp-{}", std::process::id()));
        assert!(!tmp.exists(), "the temporary file was removed");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_out_dir_that_is_a_file_or_unwritable_is_refused_before_any_run() {
        let dir = scratch("check");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("not-a-folder");
        std::fs::write(&file, b"x").unwrap();
        let e = check_out_dir(&file).unwrap_err();
        assert!(e.to_string().contains("not a folder"), "{e}");
        assert!(check_out_dir(&dir.join("new/nested")).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn fnv1a64_matches_its_reference_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
