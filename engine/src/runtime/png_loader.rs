//! The provided PNG loader (feature `png`): 8-bit RGB and RGBA PNGs to RGBA8, and the encoder
//! the demo and the tests make PNGs with.
//!
//! Owns: [`PngLoader`], [`decode_png`], [`encode_png`]. Must never: size a buffer from a header
//! it has not checked against [`AssetLimits::max_image_pixels`].

use std::path::Path;
use std::sync::Arc;

use super::loaders::{Asset, AssetError, AssetLimits, AssetLoader, DecodedImage};

/// The provided PNG loader: 8-bit RGB and RGBA PNGs (palette and grey expanded), to RGBA8.
#[derive(Debug, Clone, Copy, Default)]
pub struct PngLoader;

impl AssetLoader for PngLoader {
    fn decode(&self, path: &Path, bytes: &[u8], limits: &AssetLimits) -> Result<Asset, AssetError> {
        decode_png(path, bytes, limits).map(|img| Asset::Image(Arc::new(img)))
    }
}

/// Decodes PNG bytes to RGBA8 (8-bit RGB and RGBA inputs), refusing images larger than
/// `limits.max_image_pixels` from their header, before allocating for them.
pub fn decode_png(
    path: &Path,
    bytes: &[u8],
    limits: &AssetLimits,
) -> Result<DecodedImage, AssetError> {
    let corrupt = |why: String| AssetError::Corrupt {
        path: path.to_path_buf(),
        why,
    };
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().map_err(|e| corrupt(e.to_string()))?;
    let (w, h) = (reader.info().width, reader.info().height);
    let pixels = u64::from(w) * u64::from(h);
    if pixels > limits.max_image_pixels {
        return Err(AssetError::TooLarge {
            path: path.to_path_buf(),
            what: "image (pixels)",
            size: pixels,
            limit: limits.max_image_pixels,
        });
    }
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

/// Encodes an RGBA8 image as PNG (the demo generates its textures with it). A buffer whose
/// length is not `width * height * 4` is an `InvalidInput` error.
pub fn encode_png(width: u32, height: u32, rgba: &[u8]) -> Result<Vec<u8>, std::io::Error> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().map_err(std::io::Error::other)?;
        w.write_image_data(rgba).map_err(std::io::Error::other)?;
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::PathBuf;

    use crate::runtime::loaders::Loaders;

    /// Loaders with the provided PNG loader, as the builder sets them up.
    pub(crate) fn with_png() -> Loaders {
        let mut l = Loaders::default();
        l.register("png", PngLoader);
        l
    }

    pub(crate) fn png_at(dir: &Path, name: &str, w: u32, h: u32) -> PathBuf {
        let p = dir.join(name);
        let rgba = vec![9u8; (w * h * 4) as usize];
        std::fs::write(&p, encode_png(w, h, &rgba).unwrap()).unwrap();
        p
    }

    #[test]
    fn png_roundtrips_and_bad_files_are_typed_errors() {
        let limits = AssetLimits::default();
        let rgba: Vec<u8> = (0..4 * 4 * 4).map(|i| i as u8).collect();
        let bytes = encode_png(4, 4, &rgba).unwrap();
        let img = decode_png(Path::new("a.png"), &bytes, &limits).unwrap();
        assert_eq!((img.width, img.height), (4, 4));
        assert_eq!(img.rgba, rgba);
        let e = decode_png(Path::new("b.png"), &bytes[..bytes.len() / 2], &limits).unwrap_err();
        assert!(matches!(e, AssetError::Corrupt { .. }), "{e}");
        let e = with_png()
            .load(Path::new("/nonexistent/lanegraph/c.png"))
            .unwrap_err();
        assert!(matches!(e, AssetError::Missing { .. }), "{e}");
    }

    #[test]
    fn a_header_declaring_a_huge_image_is_refused_before_allocating() {
        // A valid 1x1 PNG whose IHDR is rewritten to 100000 x 100000 (CRC fixed up): the
        // decoder would size a 40 GB buffer from it.
        let mut bytes = encode_png(1, 1, &[0, 0, 0, 255]).unwrap();
        bytes[16..20].copy_from_slice(&100_000u32.to_be_bytes());
        bytes[20..24].copy_from_slice(&100_000u32.to_be_bytes());
        let crc = crc32(&bytes[12..29]);
        bytes[29..33].copy_from_slice(&crc.to_be_bytes());
        let e = decode_png(Path::new("huge.png"), &bytes, &AssetLimits::default()).unwrap_err();
        assert!(
            matches!(
                e,
                AssetError::TooLarge {
                    size: 10_000_000_000,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("fix:"), "{e}");
    }

    /// CRC-32 (IEEE) as PNG chunks use it.
    fn crc32(data: &[u8]) -> u32 {
        let mut c = 0xFFFF_FFFFu32;
        for &b in data {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
        }
        !c
    }
}
