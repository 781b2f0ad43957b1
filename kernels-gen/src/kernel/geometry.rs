//! What one block moves and how: the form, the tile, the threads, the element size
//! and the vector width. The launcher needs only this of a kernel to size its grid
//! and check a shape; the spec adds the strategy.
//!
//! The forms ([`Form`]) are described in [`crate::kernel::form`].
//!
//! The narrow forms keep a chunk of source rows (columns) flat in shared memory,
//! viewed as rows of `tile` units for the layout (padding or swizzle), and size the
//! chunk at run time from the narrow side so every block moves about 16 KB.
//!
//! ```
//! use bankfree_gen::{Form, Geometry};
//! let g = Geometry { form: Form::Skew, tile: 32, block_rows: 8, elem_bytes: 4, vec: 1, split: false };
//! // f32: a sector is 8 elements, so a skew tile reads 7 rows more than it writes.
//! assert_eq!((g.skew_depth(), g.skew_rows(), g.shared_rows()), (2, 64, 71));
//! assert_eq!((g.threads(), g.iters()), (256, 4));
//! ```

use crate::ir::expr::{Expr, Var};
use crate::ir::shape::Shape;
pub use crate::kernel::form::{Form, FORMS};
use crate::kernel::layout::Layout;
pub use crate::kernel::limits::{
    allowed_block_rows, allowed_vecs, default_block_rows, small_vec, CHUNK_BYTES, COPY_ITERS,
    COPY_MAX_COLS, INTERLEAVE_MAX_ROWS, MAX_NARROW, MAX_THREADS, PLANAR_MAX_COLS,
    REALIGN_BLOCK_ROWS, REALIGN_PITCH, SMALL_ITERS, SMALL_VEC_BYTES, TILES, VECS, WORDVEC_BYTES,
};
pub use crate::kernel::quotients::{
    Quotients, SMALL_EXACT_MAX_ELEMS, SMALL_ITEMS_MAX_BATCH, SMALL_MAX_ELEMS, SMALL_WIDE_MAX_ELEMS,
};
pub use crate::kernel::stage::{
    squat_lead, squat_lead_of, squat_stage_vectors, squat_stage_words, squat_vectors_of,
    thin_shared_words, thin_stage_vectors, thin_stage_words, thin_subtiles, thin_subtiles_of,
    thin_vectors_of, SQUAT_BLOCKS, SQUAT_MAX_ROWS, THIN_BLOCKS, THIN_MAX_COLS, THIN_RUN,
    THIN_STAGE_REACH,
};
pub use crate::kernel::unit::{
    all_elem_bytes, elem_align, elem_bytes_ok, unit_of, vector_units, wordvec_unit, Unit,
    ELEM_SIZES, MAX_ELEM_BYTES,
};
use serde::Serialize;

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
    /// A `thin` kernel whose sub-tile is the runs of half its warps, each
    /// lane's column words split between two warps: warps `w` and `w +
    /// block_rows / 2` take the same blocks, the first half of the column words
    /// and the rest ([`Geometry::thin_halves`]). Half the rows a tile, twice the
    /// tiles, and each warp's sequence of column stores half as long: what a
    /// call of fewer tiles than the GPU holds at once needs
    /// (`select::split::thin_split`). `false` for every other kernel.
    pub split: bool,
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

    /// Whether the kernel is a `wordvec` one ([`Form::Wordvec`]): rows of
    /// elements of an odd number of words moved as 16-byte vectors of words.
    pub fn wordvecs(&self) -> bool {
        self.form == Form::Wordvec
    }

    /// Units of an element a `wordvec` kernel moves ([`wordvec_unit`]; 1 for
    /// an element size it does not take).
    pub fn wordvec_units(&self) -> u32 {
        wordvec_unit(self.elem_bytes).map_or(1, |(_, n)| n)
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
    /// (`thin`: the source's columns, `squat` and `interleave`: its rows).
    pub fn has_widths(&self) -> bool {
        self.width_var().is_some()
    }

    /// Whether the kernel moves 1- or 2-byte elements as 32-bit words through
    /// a stage whose pitch is its width (`thin` and `squat`).
    pub fn stages_words(&self) -> bool {
        self.thins() || self.squats()
    }

    /// The parameter an entry point per width holds constant: a `thin`
    /// kernel's columns, a `squat` or `interleave` kernel's rows.
    pub fn width_var(&self) -> Option<Var> {
        if self.thins() {
            Some(Var::Cols)
        } else if self.squats() || self.form == Form::Interleave {
            Some(Var::Rows)
        } else {
            None
        }
    }

    /// The width whose entry point runs a call of `shape`, for a kernel with
    /// an entry point per width ([`Geometry::width_var`]): the call's columns
    /// (`thin`) or rows (`squat`, `interleave`).
    pub fn width_of(&self, shape: &Shape) -> Option<u64> {
        match self.width_var()? {
            Var::Rows => Some(shape.rows),
            _ => Some(shape.cols),
        }
    }

    /// Source rows of a `thin` kernel's sub-tile: [`THIN_RUN`] blocks of `vec`
    /// rows for each warp (a tile holds [`thin_subtiles_of`] sub-tiles).
    pub fn thin_tile_rows(&self) -> u32 {
        self.vec * THIN_RUN * self.thin_run_warps()
    }

    /// How many ways a `thin` kernel splits each lane's column words between
    /// its warps: 2 where [`Geometry::split`], else 1.
    pub fn thin_halves(&self) -> u32 {
        if self.split {
            2
        } else {
            1
        }
    }

    /// Warps whose runs make a `thin` kernel's sub-tile: all of them, or half
    /// where the kernel splits its column words ([`Geometry::split`]).
    pub fn thin_run_warps(&self) -> u32 {
        self.block_rows / self.thin_halves()
    }

    /// Blocks a `thin` kernel's sub-tile moves: [`THIN_RUN`] per warp of its
    /// run ([`Geometry::thin_run_warps`]).
    pub fn thin_subtile_blocks(&self) -> u32 {
        THIN_RUN * self.thin_run_warps()
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
        if self.wordvecs() {
            return WORDVEC_BYTES;
        }
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
        if self.stages_words() {
            return (Unit::U32, 1);
        }
        if self.wordvecs() {
            let unit = wordvec_unit(self.elem_bytes).map_or(Unit::U32, |(u, _)| u);
            return (unit, self.vec);
        }
        if matches!(self.form, Form::Copy | Form::Planar | Form::Interleave) && self.vec > 1 {
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
        // A square tile of elements of 32, 48 or 64 bytes moves them as 16-byte
        // vectors, planar in shared memory like words.
        if let Some(units) = vector_units(self.elem_bytes).filter(|_| self.form == Form::Tile) {
            return units;
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

    /// Whether this is a skew tile that runs the tiles inside the matrix
    /// without bounds checks ([`crate::kernel::moves::Interior`]): one whose
    /// elements move as one access of 4 bytes or more (4, 8 and 16 bytes; the
    /// measurements are in `kernel::tile`).
    pub fn skew_interior(&self) -> bool {
        self.form == Form::Skew && matches!(self.elem_bytes, 4 | 8 | 16)
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
        if self.realigns() || self.stages_words() {
            return 4;
        }
        if self.wordvecs() {
            return self.unit().0.bytes();
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
            // A vector of each of the tallest height's rows per thread.
            (Form::Interleave, _) => INTERLEAVE_MAX_ROWS * u64::from(self.threads()),
            (Form::Tall | Form::Wide, Layout::Pad(n)) => {
                let e = u64::from(self.chunk_elems());
                e + e / u64::from(self.bank_row_units()) * u64::from(n)
            }
            (Form::Tall | Form::Wide, _) => u64::from(self.chunk_elems()),
            (_, l) => u64::from(self.shared_rows()) * u64::from(self.shared_row_units(l)),
        }
    }

    /// Units of one row of the shared tile with `layout` (tile forms): a
    /// `realign` kernel's column of blocks in a row of [`REALIGN_PITCH`] words,
    /// a `wordvec` kernel's row of `tile` elements' words and its padding words.
    pub fn shared_row_units(&self, layout: Layout) -> u32 {
        if self.realigns() {
            REALIGN_PITCH
        } else if self.wordvecs() {
            layout.row_stride(self.tile * self.wordvec_units())
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
