//! The test pattern of the distributed transpose's example and GPU tests: element
//! `i` (the row-major index in the whole matrix) is `Pattern::at(i)`, so a result
//! is checked element by element without a second copy of the matrix.

use bankfree::cudarc::driver::{DeviceRepr, ValidAsZeroBits};

pub trait Pattern:
    DeviceRepr + ValidAsZeroBits + Copy + PartialEq + Default + Send + Sync + std::fmt::Debug + 'static
{
    fn at(i: u64) -> Self;
}

fn mix(i: u64) -> u64 {
    let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^ (x >> 29)
}

impl Pattern for u8 {
    fn at(i: u64) -> u8 {
        (mix(i) >> 56) as u8
    }
}

impl Pattern for u32 {
    fn at(i: u64) -> u32 {
        mix(i) as u32
    }
}

impl Pattern for [u32; 4] {
    fn at(i: u64) -> [u32; 4] {
        [
            i as u32,
            (i >> 32) as u32,
            mix(i) as u32,
            (mix(i) >> 32) as u32,
        ]
    }
}
