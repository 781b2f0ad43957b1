use bankfree::cudarc::driver::CudaSlice;
use bankfree::tiled_transpose;

#[tiled_transpose]
pub struct Transposer;

fn main() {}
