//! The asset stream: requests go to the asset lane, files are read and decoded there, and
//! completions come back to the owner, at most the asset budget's worth per frame.
//!
//! Owns: the request queue, issuing detached decode jobs on the asset lane, the completion
//! channel, PNG decoding, and the typed errors of a load. Must never: stop the game over a bad
//! file (a missing, unreadable, corrupt or panicking load is a completion with an error), lose a
//! request (every issued request completes exactly once, also when its job panics), or block the
//! owner on a load.
//!
//! # Protocol
//! 1. `request` queues a path on the owner.
//! 2. `pump` (owner, once per frame) issues at most `jobs_per_frame` queued requests as detached
//!    jobs on the asset lane.
//! 3. A job reads and decodes the file inside `catch_unwind` and sends exactly one completion.
//! 4. `drain` (owner) takes at most `jobs_per_frame` completions; decoded images then go to the
//!    render lane, which uploads them to GPU images (the second lane of the load).

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};
use lanegraph_jobs::{clock, LaneId, Lanes};

/// A decoded image, RGBA8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedImage {
    /// The file it came from.
    pub path: PathBuf,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Pixels, row-major RGBA8.
    pub rgba: Vec<u8>,
}

/// Why an asset did not load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssetError {
    /// The file is not there.
    #[error("asset `{path}` is missing; fix: generate or copy the file, or drop the request")]
    Missing {
        /// The path.
        path: PathBuf,
    },
    /// The file could not be read.
    #[error("asset `{path}` could not be read: {why}; fix: check its permissions")]
    Unreadable {
        /// The path.
        path: PathBuf,
        /// The OS error.
        why: String,
    },
    /// The file is not a PNG this decoder reads.
    #[error("asset `{path}` is corrupt: {why}; fix: re-export it as an 8-bit RGBA or RGB PNG")]
    Corrupt {
        /// The path.
        path: PathBuf,
        /// The decoder's complaint.
        why: String,
    },
    /// The decode job panicked (the lane lives on).
    #[error("asset `{path}`: the decode job panicked: {why}; fix: this is a bug in a decoder, report it with the file")]
    Panicked {
        /// The path.
        path: PathBuf,
        /// The panic message.
        why: String,
    },
}

/// One finished request.
#[derive(Debug, Clone, PartialEq)]
pub struct AssetCompletion {
    /// The request's path.
    pub path: PathBuf,
    /// The image, or why there is none.
    pub result: Result<Arc<DecodedImage>, AssetError>,
    /// Time on the asset lane, ms.
    pub decode_ms: f64,
}

/// Totals of an [`AssetStream`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AssetTotals {
    /// Requests made.
    pub requested: u64,
    /// Requests issued to the lane.
    pub issued: u64,
    /// Completions drained that loaded.
    pub loaded: u64,
    /// Completions drained that failed.
    pub failed: u64,
}

/// The owner's side of the asset lane (see the module docs).
#[derive(Debug)]
pub struct AssetStream {
    lane: Option<LaneId>,
    queue: VecDeque<PathBuf>,
    tx: Sender<AssetCompletion>,
    rx: Receiver<AssetCompletion>,
    totals: AssetTotals,
    /// Test hook: decode jobs whose path contains this panic (the stress run injects them).
    panic_marker: Option<String>,
}

impl AssetStream {
    /// A stream issuing to `lane` (`None`: no asset lane; requests then fail at `pump` with a
    /// clear error rather than queue forever).
    pub fn new(lane: Option<LaneId>) -> Self {
        let (tx, rx) = crossbeam_channel::unbounded();
        AssetStream {
            lane,
            queue: VecDeque::new(),
            tx,
            rx,
            totals: AssetTotals::default(),
            panic_marker: None,
        }
    }

    /// Makes decode jobs panic for paths containing `marker` (fault injection for stress runs).
    pub fn inject_panics_for(&mut self, marker: &str) {
        self.panic_marker = Some(marker.to_string());
    }

    /// Queues a load of `path` (step 1).
    pub fn request(&mut self, path: impl Into<PathBuf>) {
        self.totals.requested += 1;
        self.queue.push_back(path.into());
    }

    /// Issues at most `jobs` queued requests to the asset lane (step 2); returns how many.
    pub fn pump(&mut self, lanes: &Lanes, jobs: u32) -> u32 {
        let mut issued = 0;
        while issued < jobs {
            let Some(path) = self.queue.pop_front() else {
                break;
            };
            let tx = self.tx.clone();
            let marker = self.panic_marker.clone();
            let job = move || load_job(path, marker, tx);
            let spawned = match self.lane {
                Some(lane) => lanes.spawn_detached(lane, job).is_ok(),
                None => false,
            };
            if !spawned {
                // No asset lane to run on: nothing is lost, the request fails visibly.
                let _ = self.tx.send(AssetCompletion {
                    path: PathBuf::from("(no asset lane)"),
                    result: Err(AssetError::Unreadable {
                        path: PathBuf::from("(no asset lane)"),
                        why: "the lane plan has no `asset` lane".into(),
                    }),
                    decode_ms: 0.0,
                });
            }
            self.totals.issued += 1;
            issued += 1;
        }
        issued
    }

    /// Takes at most `max` completions (step 4).
    pub fn drain(&mut self, max: u32, out: &mut Vec<AssetCompletion>) {
        for _ in 0..max {
            match self.rx.try_recv() {
                Ok(c) => {
                    if c.result.is_ok() {
                        self.totals.loaded += 1;
                    } else {
                        self.totals.failed += 1;
                    }
                    out.push(c);
                }
                Err(_) => break,
            }
        }
    }

    /// Requests issued whose completion has not been drained yet, plus those still queued.
    pub fn pending(&self) -> u64 {
        self.totals.requested - self.totals.loaded - self.totals.failed
    }

    /// Totals so far.
    pub fn totals(&self) -> AssetTotals {
        self.totals
    }
}

/// Step 3: one load, always exactly one completion.
fn load_job(path: PathBuf, panic_marker: Option<String>, tx: Sender<AssetCompletion>) {
    super::tracks::name_lane_thread();
    let _span = crate::telemetry::span("asset.decode");
    let t0 = clock::now();
    let result = catch_unwind(AssertUnwindSafe(|| {
        if let Some(m) = &panic_marker {
            if path.to_string_lossy().contains(m.as_str()) {
                panic!("injected fault for `{}`", path.display());
            }
        }
        load_png(&path)
    }))
    .unwrap_or_else(|p| {
        Err(AssetError::Panicked {
            path: path.clone(),
            why: lanegraph_jobs::error::panic_message(&*p),
        })
    });
    let decode_ms = clock::now().ms_since(t0);
    // The receiver lives as long as the stream; a send after the stream is gone has no one
    // left to tell.
    let _ = tx.send(AssetCompletion {
        path,
        result: result.map(Arc::new),
        decode_ms,
    });
}

/// Reads and decodes one PNG file.
pub fn load_png(path: &Path) -> Result<DecodedImage, AssetError> {
    let bytes = std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => AssetError::Missing {
            path: path.to_path_buf(),
        },
        _ => AssetError::Unreadable {
            path: path.to_path_buf(),
            why: e.to_string(),
        },
    })?;
    decode_png(path, &bytes)
}

/// Decodes PNG bytes to RGBA8 (8-bit RGB and RGBA inputs).
pub fn decode_png(path: &Path, bytes: &[u8]) -> Result<DecodedImage, AssetError> {
    let corrupt = |why: String| AssetError::Corrupt {
        path: path.to_path_buf(),
        why,
    };
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().map_err(|e| corrupt(e.to_string()))?;
    let mut buf = vec![0u8; reader.output_buffer_size()];
    let info = reader
        .next_frame(&mut buf)
        .map_err(|e| corrupt(e.to_string()))?;
    buf.truncate(info.buffer_size());
    let rgba = match (info.color_type, info.bit_depth) {
        (png::ColorType::Rgba, png::BitDepth::Eight) => buf,
        (png::ColorType::Rgb, png::BitDepth::Eight) => buf
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        (c, d) => return Err(corrupt(format!("unsupported colour type {c:?} at {d:?}"))),
    };
    Ok(DecodedImage {
        path: path.to_path_buf(),
        width: info.width,
        height: info.height,
        rgba,
    })
}

/// Encodes an RGBA8 image as PNG (the demo generates its textures with it).
pub fn encode_png(width: u32, height: u32, rgba: &[u8]) -> Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header()?;
        w.write_image_data(rgba)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_roundtrips_and_bad_files_are_typed_errors() {
        let rgba: Vec<u8> = (0..4 * 4 * 4).map(|i| i as u8).collect();
        let bytes = encode_png(4, 4, &rgba).unwrap();
        let img = decode_png(Path::new("a.png"), &bytes).unwrap();
        assert_eq!((img.width, img.height), (4, 4));
        assert_eq!(img.rgba, rgba);
        let e = decode_png(Path::new("b.png"), &bytes[..bytes.len() / 2]).unwrap_err();
        assert!(matches!(e, AssetError::Corrupt { .. }), "{e}");
        let e = load_png(Path::new("/nonexistent/lanegraph/c.png")).unwrap_err();
        assert!(matches!(e, AssetError::Missing { .. }), "{e}");
    }
}
