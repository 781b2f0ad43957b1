use bankfree::cudarc::driver::CudaSlice;
use bankfree::tiled_permute;

#[tiled_permute(perm = [8, 7, 6, 5, 4, 3, 2, 1, 0])]
pub fn p(src: &CudaSlice<f32>, dst: &mut CudaSlice<f32>, dims: [usize; 9]) -> bankfree::Result<()>;

fn main() {}
