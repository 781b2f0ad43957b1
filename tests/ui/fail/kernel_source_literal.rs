// A `KernelSource` pairs a source with the geometry the launcher checks shapes
// against: safe code cannot build one from parts, nor edit one.
use bankfree::gen::{Kernel, Strategy, TransposeSpec};
use bankfree::runtime::KernelSource;

fn main() {
    let k = Kernel::build(TransposeSpec::new(32, 4, Strategy::Xor).unwrap()).unwrap();
    let checked = KernelSource::from_kernel(&k);
    let _forged = KernelSource {
        source: "extern \"C\" __global__ void k() {}".into(),
        ..checked
    };
}
