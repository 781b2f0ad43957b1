#[derive(Clone, Copy, bankfree::Element)]
#[repr(u32)]
enum Channel {
    Red,
    Green,
}

fn main() {}
