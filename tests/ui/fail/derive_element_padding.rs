// A u8 followed by an f32 leaves three padding bytes a transpose would copy.
#[derive(Clone, Copy, bankfree::Element)]
#[repr(C)]
struct Sample {
    tag: u8,
    value: f32,
}

fn main() {}
