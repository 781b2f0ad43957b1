use bankfree::cudarc::driver::CudaSlice;
use bankfree::tiled_transpose;

#[tiled_transpose(strategy = swizzle(diagonal))]
pub fn t(src: &CudaSlice<f32>, dst: &mut CudaSlice<f32>, rows: usize, cols: usize) -> bankfree::Result<()>;

fn main() {}
