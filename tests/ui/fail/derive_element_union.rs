#[derive(Clone, Copy, bankfree::Element)]
#[repr(C)]
union Bits {
    f: f32,
    u: u32,
}

fn main() {}
