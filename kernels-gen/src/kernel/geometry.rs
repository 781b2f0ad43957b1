//! What one block moves and how: the form, the tile, the threads, the element size
//! and the vector width. The launcher needs only this of a kernel to size its grid
//! and check a shape; the spec adds the strategy.
//!
//! * [`Form::Tile`]: a square tile per block (any shape).
//! * [`Form::Skew`]: a tile of `tile` source columns and at least 64 source rows
//!   ([`Geometry::skew_rows`]) whose window in each destination row is shifted (by
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
//!   ([`Geometry::packs`]).
//! * [`Form::Wide`]: sources of at most 32 rows whose destination is one run
//!   (`dst_ld == rows`): the mirror image.
//!
//! * [`Form::Small`]: batches of small matrices stored densely (`src_ld == cols`,
//!   `dst_ld == rows`, matrices back to back): the batch is one flat run on both
//!   sides. A block moves a run of [`Geometry::small_chunk`] destination elements
//!   that crosses matrices freely; each thread gathers `vec` consecutive destination
//!   elements (words, for word-array elements) from the source (reads that stay
//!   within a few cache lines while the matrices are small) and stores them as one
//!   16-byte vector. No shared memory,
//!   so nothing to conflict, and no thread idles however small the matrices are.
//! * [`Form::Strip`]: matrices of at most 32 rows, each one's destination one run
//!   (`dst_ld == rows`; any batch strides), gathered the same way: a thread's 16-byte vector of the
//!   destination holds a few columns of every source row, so a warp's gathered
//!   loads of one vector element read one stretch of one source row.
//! * [`Form::Planar`]: sources of at most [`PLANAR_MAX_COLS`] columns of 1- or
//!   2-byte elements stored as one run (`src_ld == cols`; an interleaved image's
//!   pixels), every destination row starting on 16 bytes. A thread loads a block
//!   of `vec` whole source rows (`16 / elem_bytes` of them) as `cols` 16-byte
//!   vectors, transposes it in registers and stores one 16-byte vector to each
//!   destination row: no shared memory, every access a whole aligned vector.
//! * [`Form::Realign`]: 1- and 2-byte elements of any shape, pitch and pointer
//!   ([`Geometry::realigns`]): a tile of `tile * vec` source rows and columns
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
//! * [`Form::Copy`]: no transpose: a permute's strided copy of blocks that are
//!   contiguous on both sides (a shape whose `copy` is set: destination element
//!   `(b, r, c)` at `b * dst_batch_stride + r * dst_ld + c`). A block moves a
//!   flat run of [`Geometry::copy_chunk`] vectors of `vec` elements of one
//!   batch item, each thread `COPY_ITERS` of them, with no shared memory.
//!
//! The narrow forms keep a chunk of source rows (columns) flat in shared memory,
//! viewed as rows of `tile` units for the layout (padding or swizzle), and size the
//! chunk at run time from the narrow side so every block moves about 16 KB.
//!
//! ```
//! use bankfree_gen::{Form, Geometry};
//! let g = Geometry { form: Form::Skew, tile: 32, block_rows: 8, elem_bytes: 4, vec: 1 };
//! // f32: a sector is 8 elements, so a skew tile reads 7 rows more than it writes.
//! assert_eq!((g.skew_depth(), g.skew_rows(), g.shared_rows()), (2, 64, 71));
//! assert_eq!((g.threads(), g.iters()), (256, 4));
//! ```

use crate::ir::expr::{Env, Expr, Var};
use crate::kernel::layout::Layout;
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
    Realign,
    Thin,
    Squat,
}

/// Every form.
pub const FORMS: [Form; 11] = [
    Form::Tile,
    Form::Skew,
    Form::Tall,
    Form::Wide,
    Form::Small,
    Form::Strip,
    Form::Copy,
    Form::Planar,
    Form::Realign,
    Form::Thin,
    Form::Squat,
];

/// The widest source a `planar` kernel takes: its thread holds `2 * cols`
/// 16-byte vectors in registers.
pub const PLANAR_MAX_COLS: u64 = 8;

/// The widest source a `thin` kernel takes. From 41 columns a tile would
/// stage two sub-tiles ([`thin_subtiles_of`]), and ptxas spilled those widths
/// at every register budget up to 128 (NVRTC 13.0, sm_75 to sm_90).
pub const THIN_MAX_COLS: u64 = 40;

/// Blocks of a warp's run: a lane each but lane 0's.
pub const THIN_RUN: u32 = 31;

/// Blocks a sub-tile moves and stages: 31 per warp of its 8, and the block
/// before them.
pub const THIN_BLOCKS: u32 = THIN_RUN * 8 + 1;

/// Words a `thin` tile's stage reaches past its blocks: up to 4 for the 16-byte
/// boundary below the first element, and the funnel shift's next word.
pub const THIN_STAGE_REACH: u32 = 5;

/// Sub-tiles of a `thin` tile at a width of `cols` (the kernel's `Var::Cols`,
/// 2 to [`THIN_MAX_COLS`]): `8 / cols`, and 1 from 9 columns (`(cols + 23) >>
/// 5`). A tile stages the run of all its sub-tiles at once and each lane then
/// transposes its block of each, one after another: a sub-tile stages `cols /
/// 4` vectors a thread, and with fewer than two in flight the loads' latency
/// set the pace (20000001 x 2 u8: 0.72 of memcpy with one sub-tile, 0.99 with
/// 4; 10000001 x 2 2-byte: 0.81 and 1.03; 13333331 x 3 u8 0.98 and 1.05 with
/// 2; H100, CuPy, one call). More ran slower: 8 at width 2 (0.92), 4 at widths
/// 3 and 4 (0.84, 0.69), where the stage's registers outgrow the 32 that 8
/// blocks an SM leave.
pub fn thin_subtiles_of(cols: Expr) -> Expr {
    Expr::Lit(8) / cols.clone() + ((cols + 23) >> 5)
}

/// [`thin_subtiles_of`] a width of `cols`.
pub fn thin_subtiles(cols: u32) -> u32 {
    constant(thin_subtiles_of(Expr::Lit(i64::from(cols))))
}

/// 16-byte vectors a `thin` tile stages for a width of `cols` (the kernel's
/// `Var::Cols`): its sub-tiles' blocks, each sub-tile's first block the one
/// before it (the last of the sub-tile before), and the words its last block's
/// rows reach past them ([`THIN_STAGE_REACH`]).
pub fn thin_vectors_of(cols: Expr) -> Expr {
    let blocks = thin_subtiles_of(cols.clone()) * i64::from(THIN_BLOCKS - 1) + 1;
    (cols * blocks + i64::from(THIN_STAGE_REACH) + 3) / 4
}

/// [`thin_vectors_of`] a width of `cols`.
pub fn thin_stage_vectors(cols: u32) -> u32 {
    constant(thin_vectors_of(Expr::Lit(i64::from(cols))))
}

/// Words a tile's stage holds for a width of `cols`: its vectors, rounded up to
/// whole rows of 32 words (the swizzle of an even width moves words within
/// their row).
pub fn thin_stage_words(cols: u32) -> u32 {
    thin_stage_vectors(cols).div_ceil(8) * 32
}

/// The most source rows a `squat` kernel takes.
pub const SQUAT_MAX_ROWS: u32 = 32;

/// Blocks a tile writes: 31 per warp of its 8.
pub const SQUAT_BLOCKS: u32 = THIN_RUN * 8;

/// 16-byte vectors a tile's stage holds for a width of `rows`: its blocks'
/// words and up to 3 before them (the 16-byte boundary below the first).
pub fn squat_stage_vectors(rows: u32) -> u32 {
    constant(squat_vectors_of(Expr::Lit(i64::from(rows))))
}

/// [`squat_stage_vectors`] of a height `rows` (the kernel's `Var::Rows`).
pub fn squat_vectors_of(rows: Expr) -> Expr {
    (rows * i64::from(SQUAT_BLOCKS) + 3 + 3) / 4
}

/// Words of a tile's stage for a width of `rows`: the [`squat_lead`] words,
/// its vectors, rounded up to whole rows of 32 words (the swizzle moves words
/// within their row).
pub fn squat_stage_words(rows: u32) -> u32 {
    (squat_lead(rows) / 4 + squat_stage_vectors(rows)).div_ceil(8) * 32
}

/// Words before a tile's stage vectors: `rows` rounded up to a vector, so that
/// the slot of lane 0's block (which writes none) is not negative and the
/// vectors stay 16-byte aligned.
pub fn squat_lead(rows: u32) -> u32 {
    constant(squat_lead_of(Expr::Lit(i64::from(rows))))
}

/// [`squat_lead`] of a height `rows` (the kernel's `Var::Rows`).
pub fn squat_lead_of(rows: Expr) -> Expr {
    (rows + 3) / 4 * 4
}

/// The value of an expression of literals below 2^32.
fn constant(e: Expr) -> u32 {
    e.eval(&Env::default())
        .ok()
        .and_then(|v| u32::try_from(v).ok())
        .unwrap_or(0)
}

/// Words of a `thin` kernel's shared stage: enough for the width that stages
/// the most.
pub fn thin_shared_words() -> u32 {
    (2..=THIN_MAX_COLS as u32)
        .map(thin_stage_words)
        .max()
        .unwrap_or(0)
}

/// Vectors a `copy` kernel's thread moves per chunk (twice as many where they
/// are staged: [`Geometry::copy_iters`]).
pub const COPY_ITERS: u32 = 4;

/// Most vectors per row a `copy` kernel takes: its thread divides a position in
/// its chunk's rows by the row length in 32-bit arithmetic.
pub const COPY_MAX_COLS: u64 = 1 << 31;

/// The widest narrow side a tall or wide kernel takes.
pub const MAX_NARROW: u64 = 32;

/// Bytes of source a narrow kernel's block moves per chunk (at least 1024 elements).
pub const CHUNK_BYTES: u32 = 16 * 1024;

/// Most elements per matrix a `small` kernel takes: it divides positions below
/// `SMALL_MAX_ELEMS + chunk` by the matrix size with 32-bit magic multipliers,
/// exact while their product stays below 2^32 (a test checks every form's bound).
pub const SMALL_MAX_ELEMS: u64 = 1 << 14;

/// Which of a `small` kernel's per-element divisions are exact 32-bit
/// ([`crate::ir::expr::Expr::quot_exact`]) or 64-bit quotients
/// ([`crate::ir::expr::Expr::quot64`]) rather than plain 32-bit ones
/// ([`crate::Kernel::with_quotients`]); other forms divide per tile or batch
/// item only and are always [`Quotients::Narrow`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Quotients {
    /// All 32-bit: batches whose `batch x extent` stays below 2^32 for every
    /// extent it divides by, matrices of at most [`SMALL_MAX_ELEMS`] elements.
    #[default]
    Narrow,
    /// The batch items' exact 32-bit (batches of up to [`SMALL_ITEMS_MAX_BATCH`]
    /// items); matrices as [`Quotients::Narrow`].
    Items,
    /// The batch items' and the matrix positions' exact 32-bit: batches as
    /// [`Quotients::Items`], matrices of up to [`SMALL_EXACT_MAX_ELEMS`] elements.
    Wide,
    /// The batch items' and the matrix positions' 64-bit: any batch, matrices
    /// of up to [`SMALL_WIDE_MAX_ELEMS`] elements.
    Any,
}

impl Quotients {
    /// Most elements per matrix a `small` kernel with these quotients takes.
    pub fn max_elems(self) -> u64 {
        match self {
            Quotients::Wide => SMALL_EXACT_MAX_ELEMS,
            Quotients::Any => SMALL_WIDE_MAX_ELEMS,
            _ => SMALL_MAX_ELEMS,
        }
    }

    /// Most batch items a `small` kernel with these quotients takes.
    pub fn max_batch(self) -> u64 {
        match self {
            Quotients::Items | Quotients::Wide => SMALL_ITEMS_MAX_BATCH,
            _ => u64::MAX,
        }
    }

    /// Which quotients are wider than plain 32-bit ones, in words for a kernel's
    /// description ("" for none).
    pub fn describe(self) -> &'static str {
        match self {
            Quotients::Narrow => "",
            Quotients::Items => "its batch items by exact 32-bit quotients",
            Quotients::Wide => "by exact 32-bit quotients",
            Quotients::Any => "by 64-bit quotients",
        }
    }
}

/// Most batch items a `small` kernel with exact 32-bit item quotients
/// ([`Quotients::Items`], [`Quotients::Wide`]) takes: an item index and its
/// quotient's high half then sum below 2^32 in either build.
pub const SMALL_ITEMS_MAX_BATCH: u64 = 1 << 31;

/// Most elements per matrix a `small` kernel with exact 32-bit matrix quotients
/// ([`Quotients::Wide`]) takes: its positions in a matrix plus a chunk (at most
/// 16384 elements) stay below 2^31, as [`crate::ir::expr::Expr::quot_exact`]
/// needs.
pub const SMALL_EXACT_MAX_ELEMS: u64 = (1 << 31) - (1 << 14);

/// Most elements per matrix a `small` kernel with 64-bit matrix quotients
/// ([`Quotients::Any`]) takes: its positions in a matrix plus a chunk stay
/// below 2^32.
pub const SMALL_WIDE_MAX_ELEMS: u64 = 1 << 31;

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
/// Largest element, in bytes.
pub const MAX_ELEM_BYTES: u32 = 64;
/// `vec` values accepted.
pub const VECS: [u32; 3] = [1, 2, 4];

/// The element sizes a kernel moves, in words: the one statement of the rule that
/// every message quoting it uses.
pub const ELEM_SIZES: &str = "1, 2, 4, 8 or 16 bytes, or another multiple of 4 up to 64";

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
            Form::Realign => "realign",
            Form::Thin => "thin",
            Form::Squat => "squat",
        })
    }
}

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
/// rows above it ([`Geometry::sector_elems`] rows), which its shared tile also
/// holds so that every destination window can start on a sector.
pub const REALIGN_BLOCK_ROWS: u32 = 10;

/// The `block_rows` values valid for a tile.
pub fn allowed_block_rows(tile: u32) -> Vec<u32> {
    (1..=tile)
        .filter(|r| tile.is_multiple_of(*r) && tile * r <= MAX_THREADS)
        .collect()
}

/// What the launcher needs of a kernel to size its grid and check a shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Geometry {
    /// What one block moves: a square tile, a skewed tile or a narrow chunk.
    pub form: Form,
    /// Elements (vectors, with `vec > 1`) per tile side.
    pub tile: u32,
    /// Thread rows per block; each thread moves `tile / block_rows` rows.
    pub block_rows: u32,
    /// Bytes per element.
    pub elem_bytes: u32,
    /// Side of the square block of elements each thread moves per step (1, 2 or 4).
    /// Above 1 a thread loads `vec` rows of `vec` elements as `vec` vector accesses
    /// of `vec * elem_bytes` bytes (4, 8 or 16), transposes the block in registers
    /// and stores `vec` vectors: the tile is then `tile * vec` elements square and
    /// shared memory holds it as `vec` planes of vectors. Such a kernel needs rows,
    /// cols, pitches and batch strides divisible by `vec`, and aligned pointers.
    /// A `small` kernel's thread instead gathers `vec` consecutive destination
    /// elements (32-bit words of word-array elements) and stores them as one
    /// vector ([`small_vec`]).
    pub vec: u32,
}

impl Geometry {
    /// Whether the kernel folds the batch into its tile loop (`small`): its grid
    /// is one block high and it has no batch loop.
    pub fn folds_batch(&self) -> bool {
        self.form == Form::Small
    }

    /// Whether the kernel gathers its destination vectors from the source with no
    /// shared memory (`small` and `strip`).
    pub fn gathers(&self) -> bool {
        matches!(self.form, Form::Small | Form::Strip)
    }

    /// Whether the kernel stores its vectors from where the destination's
    /// addresses are aligned, whatever the pointer (`strip`, and `tall` kernels
    /// that pack), or stores them unit by unit where they are not (a `small`
    /// kernel of word arrays), so that only the other forms need an aligned `dst`.
    pub fn aligns_dst(&self) -> bool {
        self.vec > 1 && matches!(self.form, Form::Strip | Form::Tall) || self.gathers_words()
    }

    /// Whether a `small` kernel's vector is 32-bit words of word-array elements
    /// (12-, 20-, 24-byte... elements): its positions count words, `vec` of them
    /// to a 16-byte vector, each gathered from its element's word.
    pub fn gathers_words(&self) -> bool {
        self.form == Form::Small && self.vec > 1 && self.elem_words() > 1
    }

    /// 32-bit words per element of a word array (1 for the other sizes).
    pub fn elem_words(&self) -> u32 {
        unit_of(self.elem_bytes).map_or(1, |(_, n)| n)
    }

    /// Whether a thread moves `vec` units as one vector it gathers or scatters
    /// unit by unit (`small` and `strip`, and `tall` with 1- and 2-byte elements,
    /// whose `vec` makes a 32-bit word); its unit is then the element.
    pub fn packs(&self) -> bool {
        self.vec > 1 && (self.gathers() || self.form == Form::Tall)
    }

    /// Elements a packed tall kernel's destination windows shift back by at most,
    /// and the extra rows its chunk holds for it (0 for every other kernel).
    pub fn word_shift(&self) -> u32 {
        if self.packs() && self.form == Form::Tall {
            self.vec
        } else {
            0
        }
    }

    /// Whether the kernel is a `realign` one ([`Form::Realign`]).
    pub fn realigns(&self) -> bool {
        self.form == Form::Realign
    }

    /// Whether the kernel is a `thin` one ([`Form::Thin`]).
    pub fn thins(&self) -> bool {
        self.form == Form::Thin
    }

    /// Whether the kernel is a `squat` one ([`Form::Squat`]).
    pub fn squats(&self) -> bool {
        self.form == Form::Squat
    }

    /// Whether the kernel has an entry point per width, a constant inside each
    /// (`thin`: the source's columns, `squat`: its rows).
    pub fn has_widths(&self) -> bool {
        self.width_var().is_some()
    }

    /// The parameter an entry point per width holds constant: a `thin`
    /// kernel's columns, a `squat` kernel's rows.
    pub fn width_var(&self) -> Option<Var> {
        if self.thins() {
            Some(Var::Cols)
        } else if self.squats() {
            Some(Var::Rows)
        } else {
            None
        }
    }

    /// Source rows of a `thin` kernel's sub-tile: [`THIN_RUN`] blocks of `vec`
    /// rows for each warp (a tile holds [`thin_subtiles_of`] sub-tiles).
    pub fn thin_tile_rows(&self) -> u32 {
        self.vec * THIN_RUN * self.block_rows
    }

    /// `run`: source rows of a `thin` kernel's tile, its sub-tiles' (declared
    /// with the tile count, read by each tile's first row).
    pub fn thin_run(&self) -> Expr {
        Expr::named(
            "run",
            thin_subtiles_of(Expr::var(Var::Cols)) * i64::from(self.thin_tile_rows()),
        )
    }

    /// Source columns a `realign` kernel's lane reads per row: one 16-byte
    /// vector's elements (16 / elem_bytes).
    pub fn realign_cols(&self) -> u32 {
        16 / self.elem_bytes.max(1)
    }

    /// Vectors a `copy` kernel's block moves per chunk (blocks of `vec` rows, for a
    /// `planar` kernel).
    pub fn copy_chunk(&self) -> u32 {
        self.threads() * self.copy_iters()
    }

    /// Vectors a `copy` kernel's thread moves per chunk: [`COPY_ITERS`], twice
    /// that where [`Self::copy_stages`] (H100, CuPy, copies of blocks of odd
    /// lengths, one 2-byte element per step, loaded first: 0.77 to 0.79 of
    /// memcpy with 4 a thread, 0.83 to 0.88 with 8, 0.78 to 0.88 with 16;
    /// 1-byte: 0.44, 0.48 to 0.49, 0.49 to 0.52 with 63 registers).
    pub fn copy_iters(&self) -> u32 {
        if self.copy_stages() {
            2 * COPY_ITERS
        } else {
            COPY_ITERS
        }
    }

    /// Whether a `copy` kernel's vectors are narrower than 16 bytes and its
    /// elements one unit each (not word arrays, whose words the move's loop
    /// unrolls in part): it moves [`Self::copy_iters`] of them a thread, all
    /// loaded before the first store.
    pub fn copy_stages(&self) -> bool {
        self.form == Form::Copy
            && self.vec_bytes() < 16
            && unit_of(self.elem_bytes).is_some_and(|(_, n)| n == 1)
    }

    /// Threads per block.
    pub fn threads(&self) -> u32 {
        self.tile * self.block_rows
    }

    /// Rows each thread handles (`tile / block_rows`).
    pub fn iters(&self) -> u32 {
        self.tile / self.block_rows
    }

    /// Bytes per vector access (`vec * elem_bytes`, or `vec` words for a `small`
    /// kernel of word arrays; the element size when `vec` is 1).
    pub fn vec_bytes(&self) -> u32 {
        if self.gathers_words() {
            self.vec * 4
        } else {
            self.vec * self.elem_bytes
        }
    }

    /// Elements per tile side (`tile * vec`).
    pub fn tile_elems(&self) -> u32 {
        self.tile * self.vec
    }

    /// The unit of one element (of one of its words for a word array).
    pub fn elem_unit(&self) -> Unit {
        unit_of(self.elem_bytes).map_or(Unit::U8, |(u, _)| u)
    }

    /// The unit one access moves, and how many units make one step of a thread (the
    /// words of a word-array element, or the `vec` rows of a block).
    pub fn unit(&self) -> (Unit, u32) {
        if self.realigns() {
            return (Unit::U32, self.realign_cols());
        }
        if self.has_widths() {
            return (Unit::U32, 1);
        }
        if matches!(self.form, Form::Copy | Form::Planar) && self.vec > 1 {
            return unit_of(self.vec_bytes())
                .map(|(u, _)| (u, 1))
                .unwrap_or((Unit::U8, 1));
        }
        if self.packs() {
            return (self.elem_unit(), self.vec);
        }
        if self.vec > 1 {
            return unit_of(self.vec_bytes())
                .map(|(u, _)| (u, self.vec))
                .unwrap_or((Unit::U8, 1));
        }
        unit_of(self.elem_bytes).unwrap_or((Unit::U8, self.elem_bytes))
    }

    /// The period, in elements, at which element addresses meet 32-byte sectors (a
    /// `skew` window's alignment): a sector's elements for 1- to 16-byte powers of
    /// two, 8 for 12-byte elements (8 x 12 bytes are 3 sectors), 1 for multiples
    /// of 32 bytes.
    pub fn sector_elems(&self) -> u32 {
        32 / sector_gcd(self.elem_bytes)
    }

    /// How a pointer's address gives its position modulo [`Geometry::sector_elems`],
    /// as `(d, m)`: an element at position `i` from the pointer starts on a sector
    /// when `(i + address / d * m) % sector_elems == 0`. With `d = gcd(elem_bytes,
    /// 32)` the address is `d * (a + i * elem_bytes / d)` bytes, and `m` is the
    /// inverse of `elem_bytes / d` modulo the period (12-byte elements: `d = 4`,
    /// `m = 3`, since `3 * 3 = 9` is 1 modulo 8).
    pub fn sector_phase(&self) -> (u32, u32) {
        let d = sector_gcd(self.elem_bytes);
        let (n, s) = (self.elem_bytes / d, 32 / d);
        let m = (1..=s).find(|m| (n * m) % s == 1 % s).unwrap_or(1);
        (d, m)
    }

    /// How the kernel's `dst_off` comes from the destination pointer's address,
    /// as `(d, m)`: `address / d * m`. A `small` kernel of word arrays counts the
    /// pointer's words (`(4, 1)`: its vectors are whole where that is a multiple
    /// of 4); every other kernel its element position modulo the sector period
    /// ([`Geometry::sector_phase`]).
    pub fn dst_off_of_address(&self) -> (u32, u32) {
        if self.gathers_words() {
            (4, 1)
        } else {
            self.sector_phase()
        }
    }

    /// Elements a narrow kernel's shared chunk holds: about [`CHUNK_BYTES`], at least
    /// 1024, a multiple of the block's threads.
    pub fn chunk_elems(&self) -> u32 {
        let want = (CHUNK_BYTES / self.elem_bytes).max(1024);
        want.div_ceil(self.threads()) * self.threads()
    }

    /// Destination elements (words, for a `small` kernel of word arrays) a `small`
    /// or `strip` kernel's block moves per tile: a vector per thread and step.
    pub fn small_chunk(&self) -> u32 {
        self.threads() * SMALL_ITERS * self.vec
    }

    /// [`Geometry::small_chunk`] in elements (about, for word arrays).
    pub fn small_chunk_elems(&self) -> u32 {
        if self.gathers_words() {
            self.small_chunk() / self.elem_words()
        } else {
            self.small_chunk()
        }
    }

    /// Destination elements of one skew tile's windows per destination row: `tile`
    /// times [`Geometry::skew_depth`].
    pub fn skew_rows(&self) -> u32 {
        self.tile * self.skew_depth()
    }

    /// Windows of `tile` destination elements a skew tile writes per destination
    /// row: enough for 64 (two for tile 32). Each tile reads `sector - 1` source rows
    /// more than it writes, so a deeper tile wastes less, up to the point where the
    /// tile no longer fits enough blocks per SM (docs/design.md has the measurements).
    pub fn skew_depth(&self) -> u32 {
        (64 / self.tile).max(1)
    }

    /// Rows of the shared tile (tile forms).
    pub fn shared_rows(&self) -> u32 {
        match self.form {
            Form::Skew => self.skew_rows() + self.sector_elems() - 1,
            Form::Realign => self.tile_elems(),
            _ => self.tile,
        }
    }

    /// Bytes of one shared-memory access (an element, a word of a word array or a
    /// vector).
    pub fn unit_bytes(&self) -> u32 {
        if self.realigns() || self.has_widths() {
            return 4;
        }
        if self.gathers() || self.packs() {
            return self.elem_unit().bytes();
        }
        match self.elem_bytes * self.vec {
            b @ (1 | 2 | 4 | 8 | 16) => b,
            _ => 4,
        }
    }

    /// Units of one bank row (128 bytes): a narrow chunk's padding period is this
    /// times the odd part of the narrow side.
    pub fn bank_row_units(&self) -> u32 {
        128 / self.unit_bytes()
    }

    /// Units of one shared plane with `layout` (a word-array element has one plane
    /// per word).
    pub fn shared_units(&self, layout: Layout) -> u64 {
        match (self.form, layout) {
            (_, Layout::Direct) => 0,
            (Form::Thin, _) => u64::from(thin_shared_words()),
            (Form::Squat, _) => u64::from(squat_stage_words(SQUAT_MAX_ROWS)),
            (Form::Tall | Form::Wide, Layout::Pad(n)) => {
                let e = u64::from(self.chunk_elems());
                e + e / u64::from(self.bank_row_units()) * u64::from(n)
            }
            (Form::Tall | Form::Wide, _) => u64::from(self.chunk_elems()),
            (_, l) => u64::from(self.shared_rows()) * u64::from(self.shared_row_units(l)),
        }
    }

    /// Units of one row of the shared tile with `layout` (tile forms): a
    /// `realign` kernel's column of blocks in a row of [`REALIGN_PITCH`] words.
    pub fn shared_row_units(&self, layout: Layout) -> u32 {
        if self.realigns() {
            REALIGN_PITCH
        } else {
            layout.row_stride(self.tile)
        }
    }
}

/// `gcd(elem_bytes, 32)`: the largest power of two, up to a sector, dividing an
/// element.
fn sector_gcd(elem_bytes: u32) -> u32 {
    1 << elem_bytes.trailing_zeros().min(5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        let g = |elem_bytes, vec| Geometry {
            form: Form::Tile,
            tile: 32,
            block_rows: 8,
            elem_bytes,
            vec,
        };
        assert_eq!(g(12, 1).unit(), (Unit::U32, 3));
        assert_eq!(g(16, 1).unit(), (Unit::U128, 1));
        assert_eq!(g(1, 4).unit(), (Unit::U32, 4));
        assert_eq!(all_elem_bytes().len(), 18);
    }

    #[test]
    fn skew_tiles_are_64_rows_deep() {
        let skew = |tile| Geometry {
            form: Form::Skew,
            tile,
            block_rows: 8,
            elem_bytes: 4,
            vec: 1,
        };
        assert_eq!((skew(32).skew_depth(), skew(32).shared_rows()), (2, 71));
        assert_eq!((skew(64).skew_depth(), skew(64).shared_rows()), (1, 71));
    }

    #[test]
    fn the_sector_phase_says_which_elements_start_on_sectors() {
        for elem_bytes in [1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 36, 48, 60, 64] {
            let g = Geometry {
                form: Form::Skew,
                tile: 32,
                block_rows: 8,
                elem_bytes,
                vec: 1,
            };
            let (s, (d, m)) = (g.sector_elems(), g.sector_phase());
            assert_eq!(s * elem_bytes % 32, 0, "{elem_bytes}-byte period");
            // Every pointer the element's alignment allows, every position.
            for address in (0..256).map(|k| k * d) {
                for i in 0..64 {
                    let on_sector = (address + i * elem_bytes) % 32 == 0;
                    assert_eq!(
                        (i + address / d * m) % s == 0,
                        on_sector,
                        "{elem_bytes}-byte elements at {address} + {i}"
                    );
                }
            }
        }
        let twelve = Geometry {
            form: Form::Skew,
            tile: 32,
            block_rows: 8,
            elem_bytes: 12,
            vec: 1,
        };
        assert_eq!((twelve.sector_elems(), twelve.sector_phase()), (8, (4, 3)));
    }
}
