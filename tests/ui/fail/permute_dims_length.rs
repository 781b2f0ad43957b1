use bankfree::cudarc::driver::CudaSlice;
use bankfree::half::f16;
use bankfree::tiled_permute;

#[tiled_permute(perm = [0, 2, 3, 1])]
pub fn p(src: &CudaSlice<f16>, dst: &mut CudaSlice<f16>, dims: [usize; 3]) -> bankfree::Result<()>;

fn main() {}
