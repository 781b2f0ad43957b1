use bankfree::cudarc::driver::CudaSlice;
use bankfree::tiled_permute;

// Both stride arrays are wrong, and both are reported.
#[tiled_permute(perm = [1, 0], strategy = pad)]
pub fn p(
    src: &CudaSlice<u8>,
    dst: &mut CudaSlice<u8>,
    dims: [usize; 2],
    src_strides: [usize; 3],
    dst_strides: [usize; 1],
) -> bankfree::Result<()>;

fn main() {}
