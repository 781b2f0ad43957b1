#[derive(Clone, Copy, bankfree::Element)]
#[repr(C)]
struct Pair<T: Copy + 'static> {
    a: T,
    b: T,
}

fn main() {}
