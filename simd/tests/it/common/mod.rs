//! Seeded test data for the kernel tests: random values mixed with the edge values every
//! kernel must handle (NaN of both signs and odd payloads, infinities, signed zeros,
//! subnormals, extremes), and helpers to compare SIMD lanes with scalar floats bit for bit.
#![allow(dead_code)]

use lanegraph_simd::{f32x8, LANES};

/// xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift generators", 2016):
/// small, seeded, reproducible.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        let u = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * u
    }
}

pub const EDGE: [f32; 14] = [
    f32::NAN,
    -f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    0.0,
    -0.0,
    f32::MIN_POSITIVE,
    -f32::MIN_POSITIVE,
    1.0e-40, // subnormal
    -1.0e-40,
    f32::MAX,
    f32::MIN,
    1.0,
    -1.0,
];

/// `n` values: mostly uniform in [-scale, scale), one in `edge_every` an edge value (including
/// a NaN with an unusual payload).
pub fn values(rng: &mut Rng, n: usize, scale: f32, edge_every: u64) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let r = rng.next_u64();
            if edge_every > 0 && r % edge_every == 0 {
                let k = (r >> 32) as usize % (EDGE.len() + 1);
                if k == EDGE.len() {
                    f32::from_bits(0x7fc0_1234) // quiet NaN, odd payload
                } else {
                    EDGE[k]
                }
            } else {
                rng.range(-scale, scale)
            }
        })
        .collect()
}

/// `values` padded to a multiple of 8 with `pad`.
pub fn padded(mut v: Vec<f32>, pad: f32) -> Vec<f32> {
    let n = v.len().div_ceil(LANES) * LANES;
    v.resize(n, pad);
    v
}

pub fn to_lanes(v: &[f32]) -> Vec<f32x8> {
    assert_eq!(v.len() % LANES, 0);
    v.chunks(LANES)
        .map(|c| f32x8::new(c.try_into().unwrap()))
        .collect()
}

pub fn from_lanes(v: &[f32x8]) -> Vec<f32> {
    v.iter().flat_map(|x| x.to_array()).collect()
}

/// The bits of `x`, with every NaN mapped to one canonical quiet NaN.
///
/// Why: Rust (like LLVM and IEEE 754) leaves the payload of a NaN produced by arithmetic
/// unspecified among the input NaNs, and the compiler may commute `a * b`, so a twin can return
/// the other operand's NaN. Non-NaN results are compared bit for bit (signed zeros included);
/// NaN results must be NaN in both.
pub fn canon(x: f32) -> u32 {
    if x.is_nan() {
        0x7fc0_0000
    } else {
        x.to_bits()
    }
}

/// Asserts `simd` (vectors) equals `scalar` bit for bit (NaN: see [`canon`]), lane by lane, naming the first
/// difference (index, vector, lane, both values, the input that produced it).
pub fn assert_bits(what: &str, simd: &[f32x8], scalar: &[f32], inputs: &[&[f32]]) {
    let simd = from_lanes(simd);
    assert_eq!(simd.len(), scalar.len(), "{what}: lengths");
    for (i, (a, b)) in simd.iter().zip(scalar).enumerate() {
        if canon(*a) != canon(*b) {
            let ins: Vec<f32> = inputs.iter().map(|s| s[i]).collect();
            panic!(
                "{what}: row {i} (vector {}, lane {}) differs: simd {a:?} ({:#010x}) vs scalar {b:?} ({:#010x}); inputs {ins:?}",
                i / LANES,
                i % LANES,
                a.to_bits(),
                b.to_bits()
            );
        }
    }
}

/// Row counts that exercise empty, partial and whole vectors.
pub const SIZES: [usize; 9] = [0, 1, 7, 8, 9, 15, 16, 63, 1001];

/// Padding values the kernels must be agnostic to.
pub const PADS: [f32; 3] = [0.0, f32::NAN, -1.0e30];
