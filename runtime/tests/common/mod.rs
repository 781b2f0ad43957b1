//! Helpers the runtime's GPU suites share (each uses some of them).
#![allow(unsafe_code)] // the user-side `DeviceRepr` impl of a 12-byte element
#![allow(dead_code)] // each suite uses part of these

use bankfree_gen::{Kernel, Shape, Strategy, TransposeSpec};
use bankfree_runtime::{transpose, KernelSource};
use cudarc::driver::{CudaContext, CudaStream, DeviceRepr};
use std::fmt::Debug;
use std::sync::Arc;

/// A float3-like element, as a user's crate would declare it.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct F3(pub [u32; 3]);
// SAFETY: plain old data, `repr(C)`, no padding.
unsafe impl DeviceRepr for F3 {}

pub fn stream() -> Arc<CudaStream> {
    CudaContext::new(0).expect("GPU 0").default_stream()
}

pub fn kernel(tile: u32, elem: u32, strategy: Strategy) -> KernelSource {
    KernelSource::from_kernel(
        &Kernel::build(TransposeSpec::new(tile, elem, strategy).expect("spec")).expect("builds"),
    )
}

pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

pub fn reference<T: Copy>(shape: &Shape, src: &[T], dst: &mut [T]) {
    bankfree_gen::check::sim::transpose_elems(shape, src, dst).expect("reference");
}

/// Random source, poisoned destination, the whole destination compared.
pub fn check<T: DeviceRepr + Copy + PartialEq + Debug>(
    s: &Arc<CudaStream>,
    k: &KernelSource,
    shape: &Shape,
    make: impl Fn(u64) -> T,
) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ shape.rows ^ (shape.cols << 20));
    let host: Vec<T> = (0..shape.src_elems().expect("shape"))
        .map(|_| make(rng.next()))
        .collect();
    let poison: Vec<T> = (0..shape.dst_elems().expect("shape"))
        .map(|_| make(rng.next()))
        .collect();
    let src = s.clone_htod(&host).expect("upload");
    let mut dst = s.clone_htod(&poison).expect("upload");
    transpose(k, &src, &mut dst, shape, None).unwrap_or_else(|e| panic!("{}: {e}", k.entry()));
    let got = s.clone_dtoh(&dst).expect("download");
    let mut want = poison;
    reference(shape, &host, &mut want);
    assert!(got == want, "{} on {shape:?}: wrong result", k.entry());
}

pub fn shapes() -> Vec<Shape> {
    vec![
        Shape::new(1, 1),
        Shape::new(1, 7),
        Shape::new(7, 1),
        Shape::new(31, 33),
        Shape::new(1080, 1920),
        Shape::batched(3, 37, 41),
        Shape {
            src_ld: 75,
            dst_ld: 50,
            src_batch_stride: 45 * 75 + 11,
            dst_batch_stride: 70 * 50 + 7,
            ..Shape::batched(2, 45, 70)
        },
    ]
}
