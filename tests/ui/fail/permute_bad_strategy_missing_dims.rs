use bankfree::cudarc::driver::CudaSlice;
use bankfree::tiled_permute;

#[tiled_permute(perm = [1, 0], strategy = none)]
pub fn p(src: &CudaSlice<f32>, dst: &mut CudaSlice<f32>) -> bankfree::Result<()>;

fn main() {}
