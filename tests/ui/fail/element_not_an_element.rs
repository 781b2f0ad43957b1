use bankfree::cudarc::driver::CudaSlice;
use bankfree::tiled_transpose;

#[derive(Clone, Copy)]
pub struct NotPod(u32);

#[tiled_transpose]
pub fn t(src: &CudaSlice<NotPod>, dst: &mut CudaSlice<NotPod>, rows: usize, cols: usize) -> bankfree::Result<()>;

fn main() {}
