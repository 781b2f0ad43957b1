//! The bounds of a kernel's fields and forms: the tiles, thread rows, vector
//! widths and element sizes a spec takes, the narrow sides and chunk sizes of
//! the forms that have them, and the constants of the copy, small and realign
//! kernels.
//!
//! ```
//! use bankfree_gen::kernel::limits::{allowed_block_rows, allowed_vecs};
//! assert_eq!(allowed_vecs(4), [1, 2, 4]);
//! assert!(allowed_block_rows(32).contains(&8));
//! ```

use crate::kernel::form::Form;

/// Bytes of a `wordvec` kernel's vector: one 16-byte access of 4 words or 2
/// 8-byte units.
pub const WORDVEC_BYTES: u32 = 16;

/// The widest source a `planar` kernel takes: its thread holds `2 * cols`
/// 16-byte vectors in registers.
pub const PLANAR_MAX_COLS: u64 = 8;

/// The most source rows an `interleave` kernel takes: its thread holds `2 *
/// rows` 16-byte vectors in registers, and its shared stage `rows` of them.
pub const INTERLEAVE_MAX_ROWS: u64 = 8;

/// Vectors a `copy` kernel's thread moves per chunk (twice as many where they
/// are staged: [`Geometry::copy_iters`](crate::kernel::geometry::Geometry::copy_iters)).
pub const COPY_ITERS: u32 = 4;

/// Most vectors per row a `copy` kernel takes: its thread divides a position in
/// its chunk's rows by the row length in 32-bit arithmetic.
pub const COPY_MAX_COLS: u64 = 1 << 31;

/// The widest narrow side a tall or wide kernel takes.
pub const MAX_NARROW: u64 = 32;

/// Bytes of source a narrow kernel's block moves per chunk (at least 1024 elements).
pub const CHUNK_BYTES: u32 = 16 * 1024;

/// Bytes a `small` kernel's thread stores per step: one 16-byte vector.
pub const SMALL_VEC_BYTES: u32 = 16;

/// Steps of a `small` or `strip` kernel's `j` loop (vectors per thread per
/// chunk): two ran faster than four or more on both measured GPUs, and about
/// as fast as one (docs/design.md).
pub const SMALL_ITERS: u32 = 2;

/// Tile sides accepted.
pub const TILES: [u32; 4] = [8, 16, 32, 64];
/// Most threads a block may have.
pub const MAX_THREADS: u32 = 1024;
/// `vec` values accepted.
pub const VECS: [u32; 3] = [1, 2, 4];

/// The `vec` values valid for an element size.
pub fn allowed_vecs(elem_bytes: u32) -> Vec<u32> {
    VECS.into_iter()
        .filter(|&v| {
            v == 1 || (matches!(elem_bytes, 1 | 2 | 4 | 8) && matches!(v * elem_bytes, 4 | 8 | 16))
        })
        .collect()
}

/// The `vec` of a gathering kernel: the elements of one 16-byte vector; for the
/// element sizes that do not divide 16 (word arrays), the four 32-bit words of
/// one in a `small` kernel (which gathers the destination word by word) and 1 in
/// a `strip` one (stored word by word).
pub fn small_vec(form: Form, elem_bytes: u32) -> u32 {
    if matches!(elem_bytes, 1 | 2 | 4 | 8 | 16) {
        SMALL_VEC_BYTES / elem_bytes
    } else if form == Form::Small {
        SMALL_VEC_BYTES / 4
    } else {
        1
    }
}

/// The default thread rows: 8, or the tile if smaller.
pub fn default_block_rows(tile: u32) -> u32 {
    tile.min(8)
}

/// Words per column of a `realign` kernel's shared tile: its 40 blocks (the
/// sector above the tile and the tile's 32), in a row of 64 so that the swizzle's
/// key (bits 2 to 4) keeps every word inside it.
pub const REALIGN_PITCH: u32 = 64;

/// Thread rows of a `realign` kernel: 4 bands of 8 lanes per warp, one band for
/// each of the tile's 32 blocks of `vec` rows and the 8 of the 32-byte sector of
/// rows above it ([`Geometry::sector_elems`](crate::kernel::geometry::Geometry::sector_elems) rows), which its shared tile also
/// holds so that every destination window can start on a sector.
pub const REALIGN_BLOCK_ROWS: u32 = 10;

/// The `block_rows` values valid for a tile.
pub fn allowed_block_rows(tile: u32) -> Vec<u32> {
    (1..=tile)
        .filter(|r| tile.is_multiple_of(*r) && tile * r <= MAX_THREADS)
        .collect()
}
