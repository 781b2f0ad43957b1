use bankfree::cudarc::driver::CudaSlice;
use bankfree::tiled_transpose;

struct S;
impl S {
    #[tiled_transpose]
    pub fn t(&self, src: &CudaSlice<f32>, dst: &mut CudaSlice<f32>, rows: usize, cols: usize) -> bankfree::Result<()>;
}

fn main() {}
