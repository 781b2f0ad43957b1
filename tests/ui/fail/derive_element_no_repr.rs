// Without repr(C) the compiler may reorder the fields.
#[derive(Clone, Copy, bankfree::Element)]
struct Rgb {
    r: f32,
    g: f32,
    b: f32,
}

fn main() {}
