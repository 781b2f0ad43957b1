use bankfree::cudarc::driver::CudaSlice;
use bankfree::tiled_transpose;

#[tiled_transpose]
pub fn t(rows: usize, cols: usize) -> bankfree::Result<()>;

fn main() {}
