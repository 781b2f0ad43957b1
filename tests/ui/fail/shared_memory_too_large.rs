use bankfree::cudarc::driver::CudaSlice;
use bankfree::tiled_transpose;

#[tiled_transpose(tile = 64, strategy = none, allow_conflicts, block_rows = 1)]
pub fn t(src: &CudaSlice<[u128; 4]>, dst: &mut CudaSlice<[u128; 4]>, rows: usize, cols: usize) -> bankfree::Result<()>;

fn main() {}
