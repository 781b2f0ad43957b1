//! Every form of `#[tiled_transpose]` a user writes, and a derived element type
//! allocated with cudarc and transposed with `?` on every call, built from outside
//! the workspace with no `unsafe`.
#![deny(warnings, unsafe_code)]

use bankfree::cudarc::driver::{CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut};
use bankfree::tiled_transpose;

/// A pixel: `derive(Element)` checks it is plain old data and lets cudarc allocate it.
#[derive(Clone, Copy, Debug, Default, PartialEq, bankfree::Element)]
#[repr(C)]
pub struct Rgb {
    pub r: f32,
    pub g: f32,
    pub b: f32,
}

#[tiled_transpose(strategy = pad)]
pub fn transpose_rgb(src: &CudaSlice<Rgb>, dst: &mut CudaSlice<Rgb>, rows: usize, cols: usize) -> bankfree::Result<()>;

/// Uploads `rows x cols` pixels, transposes them on GPU 0 and downloads the result:
/// every cudarc error converts into `bankfree::Error` with `?`.
pub fn transpose_on_gpu(pixels: &[Rgb], rows: usize, cols: usize) -> bankfree::Result<Vec<Rgb>> {
    let stream = CudaContext::new(0)?.default_stream();
    let src = stream.clone_htod(pixels)?;
    let mut dst = stream.alloc_zeros::<Rgb>(pixels.len())?;
    transpose_rgb(&src, &mut dst, rows, cols)?;
    Ok(stream.clone_dtoh(&dst)?)
}

/// The user's docs are kept.
#[tiled_transpose(tile = 32, strategy = pad)]
pub fn transpose_f32(src: &CudaSlice<f32>, dst: &mut CudaSlice<f32>, rows: usize, cols: usize) -> bankfree::Result<()>;

#[tiled_transpose(strategy = swizzle)]
pub fn batched(src: &CudaSlice<u16>, dst: &mut CudaSlice<u16>, batch: usize, rows: usize, cols: usize) -> bankfree::Result<()>;

#[tiled_transpose(strategy = swizzle(xor), block_rows = 16)]
pub fn pitched(src: &CudaView<'_, u8>, dst: &mut CudaViewMut<'_, u8>, rows: usize, cols: usize, src_ld: usize, dst_ld: usize) -> bankfree::Result<()>;

#[tiled_transpose(tile = 16, strategy = swizzle(rotate))]
pub fn on_stream(src: &CudaSlice<bankfree::half::bf16>, dst: &mut CudaSlice<bankfree::half::bf16>, rows: usize, cols: usize, stream: &CudaStream) -> Result<(), bankfree::Error>;

#[tiled_transpose(tile = 64, strategy = naive)]
pub fn generic<T: bankfree::Element>(src: &CudaSlice<T>, dst: &mut CudaSlice<T>, rows: usize, cols: usize) -> bankfree::Result<()>;
