// A bool has invalid bit patterns: a transpose must be free to copy any bytes.
#[derive(Clone, Copy, bankfree::Element)]
#[repr(C)]
struct Flagged {
    value: [u8; 3],
    flag: bool,
}

fn main() {}
