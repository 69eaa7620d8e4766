//! Aligned field-SoA columns and f32x8 kernels. (Being built: issue 6.)
