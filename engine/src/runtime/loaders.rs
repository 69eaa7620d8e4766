//! Asset loaders: how a file becomes something the game uses. The game registers one decoder per
//! file extension; a PNG loader is provided (feature `png`: registered for `png` unless replaced).
//!
//! Owns: the [`AssetLoader`] trait, what a loader produces ([`Asset`]) and why it failed
//! ([`AssetError`]), the [`AssetLimits`] every
//! load is held to, the registry the asset lane consults, reading a file within those limits. Must never: read a file that is not a regular file (a FIFO would block the
//! lane), read more than the limit, or let a decoder size a buffer from an unchecked header.

use std::any::Any;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// What a loader produced.
#[derive(Clone)]
pub enum Asset {
    /// An RGBA8 image: the render lane hands it to the game's render pass
    /// ([`super::RenderPass::upload`]) and keeps no copy.
    Image(Arc<DecodedImage>),
    /// Anything else (audio, meshes, levels): handed back to the owner, where the game takes it
    /// with [`crate::Engine::take_loaded`].
    Data(Arc<dyn Any + Send + Sync>),
}

impl std::fmt::Debug for Asset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Asset::Image(i) => f
                .debug_struct("Image")
                .field("path", &i.path)
                .field("width", &i.width)
                .field("height", &i.height)
                .finish(),
            Asset::Data(_) => f.write_str("Data(..)"),
        }
    }
}

/// Limits every load is held to: a file or an image beyond them is refused with
/// [`AssetError::TooLarge`] before anything of its size is allocated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AssetLimits {
    /// Largest file read, bytes (default 256 MiB).
    pub max_file_bytes: u64,
    /// Largest decoded image, pixels (default 64 Mi: 8192 x 8192, 256 MiB of RGBA8).
    pub max_image_pixels: u64,
}

impl Default for AssetLimits {
    fn default() -> Self {
        AssetLimits {
            max_file_bytes: 256 << 20,
            max_image_pixels: 64 << 20,
        }
    }
}

/// Decodes one kind of asset file (on the asset lane, inside a panic guard: a panicking decoder
/// fails its request and the lane lives on). Register it with
/// [`crate::runtime::EngineBuilder::asset_loader`].
pub trait AssetLoader: Send + Sync + 'static {
    /// Decodes the bytes read from `path` (already within `limits.max_file_bytes`). Check any
    /// size the file declares against `limits` before allocating for it.
    fn decode(&self, path: &Path, bytes: &[u8], limits: &AssetLimits) -> Result<Asset, AssetError>;
}

/// The loaders by file extension (lowercase, without the dot), and the limits.
#[derive(Clone)]
pub(crate) struct Loaders {
    by_extension: BTreeMap<String, Arc<dyn AssetLoader>>,
    pub(crate) limits: AssetLimits,
}

impl std::fmt::Debug for Loaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loaders")
            .field("extensions", &self.by_extension.keys().collect::<Vec<_>>())
            .field("limits", &self.limits)
            .finish()
    }
}

impl Default for Loaders {
    /// No loader, default limits (the builder adds the provided PNG loader with feature `png`).
    fn default() -> Self {
        Loaders {
            by_extension: BTreeMap::new(),
            limits: AssetLimits::default(),
        }
    }
}

impl Loaders {
    /// Whether a loader is registered for `extension` (without the dot, any case).
    #[cfg(feature = "png")]
    pub(crate) fn handles(&self, extension: &str) -> bool {
        self.by_extension
            .contains_key(&extension.trim_start_matches('.').to_ascii_lowercase())
    }

    /// Registers `loader` for `extension` (replacing any before it).
    pub(crate) fn register(&mut self, extension: &str, loader: impl AssetLoader) {
        let ext = extension.trim_start_matches('.').to_ascii_lowercase();
        self.by_extension.insert(ext, Arc::new(loader));
    }

    /// Reads `path` within the limits and decodes it with the loader of its extension.
    pub(crate) fn load(&self, path: &Path) -> Result<Asset, AssetError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        let Some(loader) = self.by_extension.get(&ext) else {
            return Err(AssetError::NoLoader {
                path: path.to_path_buf(),
                extension: ext,
                known: self.by_extension.keys().cloned().collect(),
            });
        };
        let bytes = read_limited(path, self.limits.max_file_bytes)?;
        loader.decode(path, &bytes, &self.limits)
    }
}

/// Reads a regular file of at most `max` bytes.
pub(crate) fn read_limited(path: &Path, max: u64) -> Result<Vec<u8>, AssetError> {
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => AssetError::Missing {
            path: path.to_path_buf(),
        },
        _ => AssetError::Unreadable {
            path: path.to_path_buf(),
            why: e.to_string(),
        },
    };
    use crate::files::{read_regular, ReadRefused};
    read_regular(path, max).map_err(|e| match e {
        ReadRefused::Io(e) => io(e),
        // A FIFO or a device would block the asset lane, a directory cannot be decoded.
        ReadRefused::NotAFile => AssetError::Unreadable {
            path: path.to_path_buf(),
            why: "not a regular file".into(),
        },
        ReadRefused::TooLarge(size) => AssetError::TooLarge {
            path: path.to_path_buf(),
            what: "file",
            size,
            limit: max,
        },
    })
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
    /// The file is not one its loader reads.
    #[error("asset `{path}` is corrupt: {why}; fix: re-export it in a form its loader reads (PNG: 8-bit RGBA or RGB)")]
    Corrupt {
        /// The path.
        path: PathBuf,
        /// The decoder's complaint.
        why: String,
    },
    /// The file, or the image it declares, is larger than the limits allow.
    #[error("asset `{path}`: the {what} is {size}, over the limit of {limit}; fix: shrink the asset, or raise the limit with EngineBuilder::asset_limits")]
    TooLarge {
        /// The path.
        path: PathBuf,
        /// What is too large (`file`: bytes; `image (pixels)`).
        what: &'static str,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The engine has nowhere to load it: the lane plan has no `asset` lane, or the load graph
    /// did not build. The request was not lost: it fails here, visibly.
    #[error("asset `{path}` was not loaded: {why}; fix: give the lane plan an `asset` lane (EngineBuilder::lanes_spec, e.g. `physics=1,asset=1`; `--lanes` in the demo)")]
    NoAssetLane {
        /// The path.
        path: PathBuf,
        /// Why the engine cannot load assets.
        why: String,
    },
    /// No loader is registered for the file's extension.
    #[error("asset `{path}`: no loader for extension `{extension}` (loaders: {known:?}); fix: register one with EngineBuilder::asset_loader, or convert the file")]
    NoLoader {
        /// The path.
        path: PathBuf,
        /// Its extension, lowercase (empty when it has none).
        extension: String,
        /// The extensions with a loader.
        known: Vec<String>,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("lanegraph-loaders-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    #[cfg(feature = "png")]
    fn files_beyond_the_limit_and_special_files_are_refused() {
        let dir = scratch("limits");
        use crate::runtime::png_loader::tests::{png_at, with_png};
        let p = png_at(&dir, "big.png", 64, 64);
        let mut l = with_png();
        l.limits.max_file_bytes = 16;
        let e = l.load(&p).unwrap_err();
        assert!(
            matches!(e, AssetError::TooLarge { what: "file", .. }),
            "{e}"
        );
        let e = with_png().load(&dir).unwrap_err();
        assert!(
            matches!(e, AssetError::NoLoader { .. }),
            "a folder has no extension: {e}"
        );
        let as_png = dir.join("folder.png");
        std::fs::create_dir_all(&as_png).unwrap();
        let e = with_png().load(&as_png).unwrap_err();
        assert!(
            matches!(&e, AssetError::Unreadable { why, .. } if why.contains("regular file")),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_registered_loader_decodes_its_extension_and_unknown_ones_say_what_is_known() {
        struct Lines;
        impl AssetLoader for Lines {
            fn decode(&self, _: &Path, bytes: &[u8], _: &AssetLimits) -> Result<Asset, AssetError> {
                Ok(Asset::Data(Arc::new(bytes.split(|&b| b == b'\n').count())))
            }
        }
        let dir = scratch("custom");
        let p = dir.join("level.TXT");
        std::fs::write(&p, "a\nb\nc").unwrap();
        let mut l = Loaders::default();
        let e = l.load(&p).unwrap_err();
        assert!(
            matches!(&e, AssetError::NoLoader { extension, known, .. } if extension == "txt" && known.is_empty()),
            "{e}"
        );
        l.register(".txt", Lines);
        match l.load(&p).unwrap() {
            Asset::Data(d) => assert_eq!(d.downcast_ref::<usize>(), Some(&3)),
            other => panic!("expected data, got {other:?}"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
