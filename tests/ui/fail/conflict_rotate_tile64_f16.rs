use bankfree::cudarc::driver::CudaSlice;
use bankfree::tiled_transpose;

#[tiled_transpose(tile = 64, strategy = swizzle(rotate))]
pub fn t(src: &CudaSlice<bankfree::half::f16>, dst: &mut CudaSlice<bankfree::half::f16>, rows: usize, cols: usize) -> bankfree::Result<()>;

fn main() {}
