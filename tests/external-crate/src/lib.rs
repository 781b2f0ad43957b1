//! Every form of `#[tiled_transpose]` a user writes, built from outside the workspace.
#![deny(warnings)]

use bankfree::cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut};
use bankfree::tiled_transpose;

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
