use bankfree::cudarc::driver::CudaSlice;
use bankfree::tiled_transpose;

#[tiled_transpose(tile = 7)]
pub fn t(src: &CudaSlice<f32>, dst: &mut CudaSlice<f32>, rows: usize, cols: usize) -> bankfree::Result<()>;

pub fn caller(a: &CudaSlice<f32>, b: &mut CudaSlice<f32>) -> bankfree::Result<()> { t(a, b, 2, 3) }

fn main() {}
