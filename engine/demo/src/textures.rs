//! The demo's asset files: PNG textures generated into a temporary folder at start, plus one
//! corrupt file and one missing file, so the asset lane's error path runs in every demo.
//!
//! Owns: generating, listing and removing those files. Must never: write outside its own
//! temporary folder.

use std::path::{Path, PathBuf};

use lanegraph::runtime::encode_png;

/// Good textures generated.
pub const TEXTURES: usize = 8;
/// Side of each texture, pixels.
pub const TEXTURE_SIDE: u32 = 64;

/// The generated folder; removed on drop.
#[derive(Debug)]
pub struct TextureFolder {
    dir: PathBuf,
    /// Every path the demo requests: the good ones, then the corrupt one, then the missing one.
    pub requests: Vec<PathBuf>,
}

impl TextureFolder {
    /// Generates the files under the system's temporary folder.
    pub fn generate(seed: u64) -> std::io::Result<TextureFolder> {
        let unique = format!(
            "lanegraph-demo-{}-{}",
            std::process::id(),
            lanegraph::jobs::clock::now().as_ns()
        );
        let dir = std::env::temp_dir().join(unique);
        std::fs::create_dir_all(&dir)?;
        let mut requests = Vec::new();
        for i in 0..TEXTURES {
            let path = dir.join(format!("texture_{i}.png"));
            let png = encode_png(TEXTURE_SIDE, TEXTURE_SIDE, &pattern(i as u64 ^ seed))
                .map_err(std::io::Error::other)?;
            std::fs::write(&path, png)?;
            requests.push(path);
        }
        // A PNG cut in half: the signature and header parse, the image data does not.
        let good = encode_png(TEXTURE_SIDE, TEXTURE_SIDE, &pattern(seed))
            .map_err(std::io::Error::other)?;
        let corrupt = dir.join("corrupt.png");
        std::fs::write(&corrupt, &good[..good.len() / 2])?;
        requests.push(corrupt);
        requests.push(dir.join("missing.png"));
        Ok(TextureFolder { dir, requests })
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for TextureFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A checkerboard tinted by `k`, RGBA8.
fn pattern(k: u64) -> Vec<u8> {
    let side = TEXTURE_SIDE as usize;
    let mut out = Vec::with_capacity(side * side * 4);
    for y in 0..side {
        for x in 0..side {
            let on = ((x / 8) + (y / 8)) % 2 == 0;
            let base = if on { 220u8 } else { 40 };
            out.extend_from_slice(&[
                base,
                base.wrapping_add((k * 37) as u8),
                base.wrapping_add((k * 91) as u8),
                255,
            ]);
        }
    }
    out
}
