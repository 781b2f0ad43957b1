use bankfree::cudarc::driver::CudaSlice;
use bankfree::tiled_transpose;

#[derive(Clone, Copy)]
#[repr(C)]
pub struct Odd([u8; 6]);
#[allow(unsafe_code)]
unsafe impl bankfree::Element for Odd {}

#[tiled_transpose]
pub fn t(src: &CudaSlice<Odd>, dst: &mut CudaSlice<Odd>, rows: usize, cols: usize) -> bankfree::Result<()>;

pub fn use_it(a: &CudaSlice<Odd>, b: &mut CudaSlice<Odd>) { let _ = t(a, b, 1, 1); }

fn main() {}
