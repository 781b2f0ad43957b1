//! Helpers the integration tests share (each test crate uses some of them).
#![allow(dead_code)]

pub mod cli;
pub mod cover;
pub mod permute;

use bankfree_gen::check::sim::{self, Grid, Offsets};
use bankfree_gen::{Kernel, Shape};

/// Deterministic, non-zero, position-dependent bytes.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Runs `kernel` on `shape` at pointer phases `at` in the build `index32`, on
/// `grid` (the launcher's with `None`), over noise seeded by `seed`, and
/// compares with the CPU reference byte for byte (the destination's pitch and
/// gaps too); returns how many tiles ran by the body without bounds checks.
pub fn check_at(
    kernel: &Kernel,
    shape: &Shape,
    at: Offsets,
    index32: bool,
    grid: Option<Grid>,
    seed: u64,
) -> u64 {
    let e = kernel.spec().geometry.elem_bytes as usize;
    let src = noise(shape.src_elems().expect("valid shape") as usize * e, seed);
    let mut want = noise(
        shape.dst_elems().expect("valid shape") as usize * e,
        seed + 1,
    );
    let mut got = want.clone();
    sim::reference(shape, e, &src, &mut want).expect("reference");
    let stats =
        sim::run_offsets(kernel, shape, &src, &mut got, grid, at, index32).unwrap_or_else(|err| {
            panic!(
                "{} on {shape:?} at {at:?} (32-bit {index32}): {err}",
                kernel.entry_name()
            )
        });
    assert!(
        got == want,
        "{} on {shape:?} at {at:?} (32-bit {index32}): output differs",
        kernel.entry_name()
    );
    stats.interior
}
