// The launcher trusts a buffer's length and pointer, so only cudarc's buffer
// types implement SrcArg and DstArg.
use bankfree::cudarc::driver::{CudaStream, CudaView, DeviceSlice, SyncOnDrop};
use bankfree::runtime::SrcArg;

struct Liar;

impl DeviceSlice<f32> for Liar {
    fn len(&self) -> usize {
        usize::MAX
    }
    fn stream(&self) -> &std::sync::Arc<CudaStream> {
        unimplemented!()
    }
}

impl SrcArg<f32> for Liar {
    fn ptr<'a>(&'a self, _: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        unimplemented!()
    }
    fn address(&self, _: &CudaStream) -> u64 {
        0
    }
    fn view(&self) -> CudaView<'_, f32> {
        unimplemented!()
    }
}

fn main() {}
