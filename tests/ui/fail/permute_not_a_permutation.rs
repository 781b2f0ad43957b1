use bankfree::cudarc::driver::CudaSlice;
use bankfree::tiled_permute;

#[tiled_permute(perm = [0, 2, 2, 1])]
pub fn p(src: &CudaSlice<f32>, dst: &mut CudaSlice<f32>, dims: [usize; 4]) -> bankfree::Result<()>;

fn main() {}
