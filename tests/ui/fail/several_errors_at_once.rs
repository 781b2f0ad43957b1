use bankfree::cudarc::driver::CudaSlice;
use bankfree::tiled_transpose;

#[tiled_transpose(tile = 12, strategy = zigzag, speed = 3)]
pub fn t(src: &mut CudaSlice<f32>, dst: &CudaSlice<f32>, rows: u32, cols: usize) -> bankfree::Result<()>;

fn main() {}
