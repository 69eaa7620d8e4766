//! Opening a file to read it, safely against what a path can name.
//!
//! Owns: the one open used for every file the runtime reads from a path (saves, configs,
//! assets). Must never: look at a path's metadata before opening it (what is checked must be
//! what is read), or block on a FIFO or a device.

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::Path;

/// Opens `path` for reading and returns it with the metadata of the open handle. A FIFO opens
/// without waiting for a writer (`O_NONBLOCK`: a regular file reads as before), so the caller
/// refuses what is not a regular file from the metadata of the very file it opened: a path
/// swapped for a FIFO after a check cannot block the read.
pub(crate) fn open_to_read(path: &Path) -> std::io::Result<(File, Metadata)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    Ok((file, meta))
}

/// Why [`read_regular`] read nothing.
#[derive(Debug)]
pub(crate) enum ReadRefused {
    /// The path could not be opened or read.
    Io(std::io::Error),
    /// The path names a directory, a FIFO, a socket or a device.
    NotAFile,
    /// The file holds more than the limit (its size when known, else the limit + 1).
    TooLarge(u64),
}

/// Reads the regular file at `path`, of at most `max` bytes: refused before a byte is read
/// when it is not a regular file or is larger, and read at most one byte past the limit when
/// it grows meanwhile.
pub(crate) fn read_regular(path: &Path, max: u64) -> Result<Vec<u8>, ReadRefused> {
    let (file, meta) = open_to_read(path).map_err(ReadRefused::Io)?;
    if !meta.is_file() {
        return Err(ReadRefused::NotAFile);
    }
    if meta.len() > max {
        return Err(ReadRefused::TooLarge(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadRefused::Io)?;
    if bytes.len() as u64 > max {
        return Err(ReadRefused::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A FIFO with no writer: opening it returns at once, and the handle's metadata says FIFO.
    /// (A plain open would wait for a writer for ever: the test's deadline catches that.)
    #[test]
    fn a_fifo_opens_without_waiting_and_is_refused() {
        let dir = std::env::temp_dir().join(format!("lanegraph-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("SKIPPED a_fifo_opens_without_waiting: mkfifo unavailable");
            return;
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let _ = tx.send(read_regular(&path, 1 << 20).map(|b| b.len()));
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("opening a FIFO waited for a writer");
        assert!(matches!(got, Err(ReadRefused::NotAFile)), "{got:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_regular_file_is_read_and_a_larger_one_refused() {
        let dir = std::env::temp_dir().join(format!("lanegraph-files-r-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("f");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(read_regular(&f, 10).unwrap(), b"0123456789");
        assert!(matches!(
            read_regular(&f, 9),
            Err(ReadRefused::TooLarge(10))
        ));
        assert!(matches!(read_regular(&dir, 9), Err(ReadRefused::NotAFile)));
        assert!(matches!(
            read_regular(&dir.join("missing"), 9),
            Err(ReadRefused::Io(_))
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
