//! `#[tiled_transpose]` as users write it: these must compile without warnings, and
//! their errors before any launch are checked here (no GPU needed).
#![deny(warnings)]

use bankfree::cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut};
use bankfree::tiled_transpose;
use std::sync::Arc;

/// The user's docs are kept.
#[tiled_transpose(tile = 32, strategy = pad)]
pub fn transpose_f32(
    src: &CudaSlice<f32>,
    dst: &mut CudaSlice<f32>,
    rows: usize,
    cols: usize,
) -> bankfree::Result<()>;

#[tiled_transpose]
pub fn default_args(
    src: &CudaSlice<u8>,
    dst: &mut CudaSlice<u8>,
    rows: usize,
    cols: usize,
) -> bankfree::Result<()>;

#[tiled_transpose(tile = 64, strategy = pad, block_rows = 4)]
fn everything(
    src: &CudaView<'_, bankfree::half::f16>,
    dst: &mut CudaViewMut<'_, bankfree::half::f16>,
    batch: usize,
    rows: usize,
    cols: usize,
    src_ld: usize,
    dst_ld: usize,
    stream: &CudaStream,
) -> Result<(), bankfree::Error>;

#[tiled_transpose(strategy = none, allow_conflicts)]
fn conflicting(
    src: &CudaSlice<f64>,
    dst: &mut CudaSlice<f64>,
    rows: usize,
    cols: usize,
    stream: &Arc<CudaStream>,
) -> bankfree::Result<()>;

#[derive(Clone, Copy)]
#[repr(C)]
struct Rgb {
    r: f32,
    g: f32,
    b: f32,
}
// SAFETY: three f32s, `repr(C)`, valid for any bytes.
#[allow(unsafe_code)]
unsafe impl bankfree::Element for Rgb {}

#[tiled_transpose(strategy = pad)]
fn rgb(
    src: &CudaSlice<Rgb>,
    dst: &mut CudaSlice<Rgb>,
    rows: usize,
    cols: usize,
) -> bankfree::Result<()>;

#[tiled_transpose(tile = 16, strategy = swizzle(xor))]
fn generic<T: bankfree::Element>(
    src: &CudaSlice<T>,
    dst: &mut CudaSlice<T>,
    rows: usize,
    cols: usize,
) -> bankfree::Result<()>;

#[test]
fn the_attribute_keeps_docs_and_states_the_verdict() {
    // The functions exist with the declared signatures (they need a GPU to run).
    let _f: fn(&CudaSlice<f32>, &mut CudaSlice<f32>, usize, usize) -> bankfree::Result<()> =
        transpose_f32;
    let _g = default_args;
    let _h = everything;
    let _i = conflicting;
    let _j = rgb;
    let _k = generic::<u32>;
    let _l = generic::<[f32; 3]>;
}

// Every element type, strategy and tile, as pass cases.
macro_rules! pass_cases {
    ($($name:ident: $t:ty => [$($arg:tt)*];)*) => { $(
        #[tiled_transpose($($arg)*)]
        #[allow(dead_code)]
        fn $name(src: &CudaSlice<$t>, dst: &mut CudaSlice<$t>, rows: usize, cols: usize) -> bankfree::Result<()>;
    )* };
}
pass_cases! {
    p_u8: u8 => [tile = 8, strategy = naive];
    p_i8: i8 => [tile = 8, strategy = swizzle];
    p_u16: u16 => [tile = 16, strategy = swizzle(rotate)];
    p_i16: i16 => [tile = 16, strategy = swizzle(xor)];
    p_bf16: bankfree::half::bf16 => [tile = 32, strategy = pad(2)];
    p_u32: u32 => [tile = 32, strategy = pad(1)];
    p_i32: i32 => [tile = 32, strategy = swizzle(rotate)];
    p_u64: u64 => [tile = 64, strategy = swizzle];
    p_i64: i64 => [tile = 64, strategy = pad];
    p_u128: u128 => [tile = 32, strategy = none, allow_conflicts];
    p_i128: i128 => [tile = 16, strategy = naive];
    p_f64: f64 => [tile = 8, strategy = swizzle(xor), block_rows = 2];
    p_arr: [u32; 5] => [tile = 32, strategy = pad];
    // The generator's measured variants (vec kernels with a fallback, or other tiles).
    a_u8: u8 => [tile = auto, strategy = pad];
    a_f16: bankfree::half::f16 => [tile = auto, strategy = swizzle];
    a_f32: f32 => [strategy = swizzle];
    a_f3: [f32; 3] => [tile = auto, strategy = pad];
    a_u128: u128 => [strategy = pad];
}
