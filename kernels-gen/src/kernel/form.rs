//! The forms of kernel: what one block moves and how, for each.
//!
//! * [`Form::Tile`]: a square tile per block (any shape).
//! * [`Form::Skew`]: a tile of `tile` source columns and at least 64 source rows
//!   ([`Geometry::skew_rows`](crate::kernel::geometry::Geometry::skew_rows)) whose window in each destination row is shifted (by
//!   up to a sector's elements) so that its writes start on a 32-byte sector.
//!   Destinations whose rows are not a multiple of 32 bytes long (8191 x 8193 f32)
//!   otherwise write two partial sectors per warp, which costs the H100 half its
//!   speed; the block reads `sector - 1` extra source rows for it.
//! * [`Form::Tall`]: sources of at most 32 columns stored as one run (`src_ld ==
//!   cols`): a block reads a chunk of whole rows as one flat run and writes its
//!   columns as `cols` runs. For 1- and 2-byte elements (`vec = 4 / elem_bytes`)
//!   both sides move as 32-bit words: the flat run as aligned words, and each
//!   destination row as words gathered from the chunk, its window shifted back
//!   (by up to `vec - 1` elements, for which the chunk holds `vec` more rows) so
//!   that its stores start on a word whatever the row's address
//!   ([`Geometry::packs`](crate::kernel::geometry::Geometry::packs)).
//! * [`Form::Wide`]: sources of at most 32 rows whose destination is one run
//!   (`dst_ld == rows`): the mirror image.
//!
//! * [`Form::Small`]: batches of small matrices stored densely (`src_ld == cols`,
//!   `dst_ld == rows`, matrices back to back): the batch is one flat run on both
//!   sides. A block moves a run of [`Geometry::small_chunk`](crate::kernel::geometry::Geometry::small_chunk) destination elements
//!   that crosses matrices freely; each thread gathers `vec` consecutive destination
//!   elements (words, for word-array elements) from the source (reads that stay
//!   within a few cache lines while the matrices are small) and stores them as one
//!   16-byte vector. No shared memory,
//!   so nothing to conflict, and no thread idles however small the matrices are.
//! * [`Form::Strip`]: matrices of at most 32 rows, each one's destination one run
//!   (`dst_ld == rows`; any batch strides), gathered the same way: a thread's 16-byte vector of the
//!   destination holds a few columns of every source row, so a warp's gathered
//!   loads of one vector element read one stretch of one source row.
//! * [`Form::Planar`]: sources of at most [`PLANAR_MAX_COLS`](crate::kernel::geometry::PLANAR_MAX_COLS) columns of 1- or
//!   2-byte elements stored as one run (`src_ld == cols`; an interleaved image's
//!   pixels), every destination row starting on 16 bytes. A thread loads a block
//!   of `vec` whole source rows (`16 / elem_bytes` of them) as `cols` 16-byte
//!   vectors, transposes it in registers and stores one 16-byte vector to each
//!   destination row: no shared memory, every access a whole aligned vector.
//! * [`Form::Interleave`]: the mirror of `planar`: sources of at most
//!   [`INTERLEAVE_MAX_ROWS`](crate::kernel::geometry::INTERLEAVE_MAX_ROWS) rows
//!   of 1- or 2-byte elements (an image's planes) whose rows start on 16
//!   bytes, into a destination stored as one run (`dst_ld == rows`). A thread
//!   loads one 16-byte vector of each source row (a block of `16 /
//!   elem_bytes` columns), interleaves them in registers into the block's
//!   `rows` destination vectors and stores them to a shared stage, which the
//!   block writes out as one run of 16-byte vectors
//!   ([`crate::kernel::interleave`]).
//! * [`Form::Realign`]: 1- and 2-byte elements of any shape, pitch and pointer
//!   ([`Geometry::realigns`](crate::kernel::geometry::Geometry::realigns)): a tile of `tile * vec` source rows and columns
//!   (128 x 128 bytes for 1-byte elements), `vec = 4 / elem_bytes` elements to a
//!   32-bit word. A lane reads 16 bytes of a source row as the two aligned 16-byte
//!   vectors around them, realigned in registers (rows whose vectors leave the
//!   matrix are read element by element), transposes each block of `vec` rows into
//!   words of one column and stores them to shared memory; the tile also holds the
//!   32-byte sector of rows above it. Each destination row's window starts on a
//!   sector (up to `32 / elem_bytes - 1` positions before the tile), and the warp
//!   that writes it funnel-shifts neighbouring words into the destination's word
//!   boundaries: every warp store covers whole aligned sectors, whatever the
//!   pitches and pointers.
//! * [`Form::Thin`]: 1- and 2-byte sources of 2 to 40 columns stored
//!   as one run (`src_ld == cols`), any destination pitch and pointers: a block
//!   stages a run of blocks of `vec` rows as 16-byte vectors, each lane
//!   transposes one block's words in registers and stores whole destination
//!   words realigned with its neighbour's ([`crate::kernel::thin`]).
//! * [`Form::Squat`]: the mirror of `thin`: 1- and 2-byte sources of 2 to 32
//!   rows, any source pitch and pointers, into a destination stored as one
//!   run (`dst_ld == rows`): each lane reads a word of every source row,
//!   transposes them in registers into whole destination words, and a block
//!   stages its run of them to store it as 16-byte vectors
//!   ([`crate::kernel::squat`]).
//! * [`Form::Wordvec`]: elements of an odd number of 32-bit words (12, 20,
//!   ... 60 bytes), of 8-byte units (24, 40, 56 bytes) or of 16-byte units
//!   (32, 48, 64 bytes) whose rows start on 16
//!   bytes: a tile of 32 x 32 elements moves as 16-byte vectors of units on both
//!   sides, whatever the element boundaries. A warp step covers 4 rows (4
//!   destination rows) of 8 lanes, each lane one vector; the shared tile keeps
//!   each row's units in order, padded by an element, so each unit of a vector
//!   is its own conflict-free access ([`crate::kernel::wordvec`]).
//! * [`Form::Copy`]: no transpose: a permute's strided copy of blocks that are
//!   contiguous on both sides (a shape whose `copy` is set: destination element
//!   `(b, r, c)` at `b * dst_batch_stride + r * dst_ld + c`). A block moves a
//!   flat run of [`Geometry::copy_chunk`](crate::kernel::geometry::Geometry::copy_chunk) vectors of `vec` elements of one
//!   batch item, each thread `COPY_ITERS` of them, with no shared memory.
//!

use serde::Serialize;
use std::fmt;

/// What one block moves (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    Tile,
    Skew,
    Tall,
    Wide,
    Small,
    Strip,
    Copy,
    Planar,
    Interleave,
    Realign,
    Thin,
    Squat,
    Wordvec,
}

/// Every form.
pub const FORMS: [Form; 13] = [
    Form::Tile,
    Form::Skew,
    Form::Tall,
    Form::Wide,
    Form::Small,
    Form::Strip,
    Form::Copy,
    Form::Planar,
    Form::Interleave,
    Form::Realign,
    Form::Thin,
    Form::Squat,
    Form::Wordvec,
];

impl fmt::Display for Form {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Form::Tile => "tile",
            Form::Skew => "skew",
            Form::Tall => "tall",
            Form::Wide => "wide",
            Form::Small => "small",
            Form::Strip => "strip",
            Form::Copy => "copy",
            Form::Planar => "planar",
            Form::Interleave => "interleave",
            Form::Realign => "realign",
            Form::Thin => "thin",
            Form::Squat => "squat",
            Form::Wordvec => "wordvec",
        })
    }
}
