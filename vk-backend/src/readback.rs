//! A frame read back to the CPU, and its PNG encoding (the demo's picture).
//!
//! Owns: [`Readback`] (tightly packed RGBA8 rows, top row first) and writing it as PNG. Must
//! never: be produced on the frame path without a request (a readback costs a copy of the
//! whole target and an allocation).

use std::io::Write;
use std::path::Path;

use crate::error::GpuError;

/// One frame's pixels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readback {
    /// The frame the pixels are from.
    pub frame: u64,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height` RGBA8 pixels, row 0 at the top of the picture.
    pub rgba: Vec<u8>,
}

impl Readback {
    /// The pixel at column `x`, row `y` (row 0 at the top); `None` outside the picture.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 4]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = (y as usize * self.width as usize + x as usize) * 4;
        self.rgba
            .get(i..i + 4)
            .and_then(|p| <[u8; 4]>::try_from(p).ok())
    }

    /// Encodes the picture as an 8-bit RGBA PNG into `out`.
    pub fn encode_png(&self, out: impl Write) -> Result<(), GpuError> {
        let mut enc = png::Encoder::new(out, self.width, self.height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header()?;
        writer.write_image_data(&self.rgba)?;
        writer.finish()?;
        Ok(())
    }

    /// Writes the picture to `path` as PNG.
    pub fn write_png(&self, path: &Path) -> Result<(), GpuError> {
        let io = |source| GpuError::Io {
            path: path.display().to_string(),
            source,
        };
        let file = std::fs::File::create(path).map_err(io)?;
        let mut buf = std::io::BufWriter::new(file);
        self.encode_png(&mut buf)?;
        buf.flush().map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_round_trips() {
        let rb = Readback {
            frame: 3,
            width: 2,
            height: 2,
            rgba: vec![
                255, 0, 0, 255, 0, 255, 0, 255, //
                0, 0, 255, 255, 9, 9, 9, 255,
            ],
        };
        assert_eq!(rb.pixel(1, 1), Some([9, 9, 9, 255]));
        assert_eq!(rb.pixel(2, 0), None);
        let mut bytes = Vec::new();
        rb.encode_png(&mut bytes).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (2, 2));
        assert_eq!(&buf[..info.buffer_size()], &rb.rgba[..]);
    }
}
