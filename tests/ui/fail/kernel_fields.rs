// A `Kernel`'s moves are what the emitter prints and what the fit checks were
// made for: safe code reads them but cannot edit them.
use bankfree::gen::{Kernel, Strategy, TransposeSpec};

fn main() {
    let mut k = Kernel::build(TransposeSpec::new(32, 4, Strategy::Xor).unwrap()).unwrap();
    assert_eq!(k.moves().len(), 2);
    k.moves.clear();
}
