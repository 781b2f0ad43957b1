//! The element sizes a kernel moves and the C unit each moves as: one value of
//! 1, 2, 4, 8 or 16 bytes, or several 32-bit words.
//!
//! ```
//! use bankfree_gen::kernel::unit::{elem_align, unit_of, Unit};
//! assert_eq!(unit_of(12), Some((Unit::U32, 3)));
//! assert_eq!((elem_align(16), elem_align(3)), (16, 1));
//! ```

use serde::Serialize;

/// Largest element, in bytes.
pub const MAX_ELEM_BYTES: u32 = 64;
/// The element sizes a kernel moves, in words: the one statement of the rule that
/// every message quoting it uses.
pub const ELEM_SIZES: &str = "1, 2, 4, 8 or 16 bytes, or another multiple of 4 up to 64";

/// How an element moves: as one C value of 1, 2, 4, 8 or 16 bytes, or as several
/// 32-bit words (stored word-planar in shared memory, a structure of arrays).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Unit {
    U8,
    U16,
    U32,
    U64,
    U128,
}

impl Unit {
    /// Bytes per unit.
    pub fn bytes(self) -> u32 {
        match self {
            Unit::U8 => 1,
            Unit::U16 => 2,
            Unit::U32 => 4,
            Unit::U64 => 8,
            Unit::U128 => 16,
        }
    }

    /// The CUDA C type (no headers needed: `uint4` is built in).
    pub fn c_type(self) -> &'static str {
        match self {
            Unit::U8 => "unsigned char",
            Unit::U16 => "unsigned short",
            Unit::U32 => "unsigned int",
            Unit::U64 => "unsigned long long",
            Unit::U128 => "uint4",
        }
    }
}

/// The unit of an element of `bytes` and how many of them make one element, or
/// `None` for a size outside [`ELEM_SIZES`].
pub fn unit_of(bytes: u32) -> Option<(Unit, u32)> {
    Some(match bytes {
        1 => (Unit::U8, 1),
        2 => (Unit::U16, 1),
        4 => (Unit::U32, 1),
        8 => (Unit::U64, 1),
        16 => (Unit::U128, 1),
        b if b % 4 == 0 && b > 0 && b <= MAX_ELEM_BYTES => (Unit::U32, b / 4),
        _ => return None,
    })
}

/// Elements of several 16-byte units (32, 48, 64 bytes) as `uint4`s, and how
/// many make one; `None` for every other size. The square tile and the wordvec
/// kernel move them so: a typed buffer's element addresses start on 16 bytes.
pub fn vector_units(bytes: u32) -> Option<(Unit, u32)> {
    (bytes > 16 && bytes <= MAX_ELEM_BYTES && bytes.is_multiple_of(16))
        .then_some((Unit::U128, bytes / 16))
}

/// The unit a `wordvec` kernel moves elements of `bytes` in, and how many of
/// them make an element: 16-byte vectors where an element is several of them
/// (32, 48, 64 bytes), 32-bit words where it is an odd number of them (3 or
/// more: 12, 20, 28, ... 60 bytes), else 8-byte units where it is an odd number
/// of those (24, 40, 56 bytes); `None` for every other size. An odd count of
/// words or 8-byte units is what spreads a warp's accesses over the banks; a
/// 16-byte unit takes a quarter-warp's 8 lanes to fill them, which the pad
/// spreads (`kernel::wordvec`).
///
/// ```
/// use bankfree_gen::kernel::unit::{wordvec_unit, Unit};
/// assert_eq!(wordvec_unit(12), Some((Unit::U32, 3)));
/// assert_eq!(wordvec_unit(24), Some((Unit::U64, 3)));
/// assert_eq!(wordvec_unit(32), Some((Unit::U128, 2)));
/// assert_eq!(wordvec_unit(16), None);
/// assert_eq!(wordvec_unit(8), None);
/// ```
pub fn wordvec_unit(bytes: u32) -> Option<(Unit, u32)> {
    let odd = |n: u32| n >= 3 && !n.is_multiple_of(2);
    if bytes > MAX_ELEM_BYTES || !bytes.is_multiple_of(4) {
        None
    } else if let Some(units) = vector_units(bytes) {
        Some(units)
    } else if odd(bytes / 4) {
        Some((Unit::U32, bytes / 4))
    } else if bytes.is_multiple_of(8) && odd(bytes / 8) {
        Some((Unit::U64, bytes / 8))
    } else {
        None
    }
}

/// The alignment in bytes an element of `bytes` is loaded and stored at: the
/// size of its unit ([`unit_of`]; 1 outside [`ELEM_SIZES`]).
pub fn elem_align(bytes: u32) -> u32 {
    unit_of(bytes).map_or(1, |(u, _)| u.bytes())
}

/// Whether `bytes` is a supported element size ([`ELEM_SIZES`]).
pub fn elem_bytes_ok(bytes: u32) -> bool {
    unit_of(bytes).is_some()
}

/// Every supported element size.
pub fn all_elem_bytes() -> Vec<u32> {
    (1..=MAX_ELEM_BYTES).filter(|&b| elem_bytes_ok(b)).collect()
}
