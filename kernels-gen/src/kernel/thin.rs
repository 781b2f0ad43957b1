//! The expressions of the `thin` form ([`Form::Thin`](crate::Form::Thin)):
//! 1- and 2-byte matrices of 2 to [`THIN_MAX_COLS`] columns stored as one run
//! (`src_ld == cols`), any destination pitch and pointers.
//!
//! A *block* is `vec = 4 / elem_bytes` source rows: `cols` 32-bit words of the
//! flat run. A sub-tile is `31 * 8` blocks, and a tile [`thin_subtiles`] of
//! them (4 at width 2, 2 at widths 3 and 4, else 1) and the block before them.
//! The block's 256 threads stage the tile's run, from
//! the 16-byte boundary at or below its first element, into shared memory as
//! aligned 16-byte vectors (element by element where a vector leaves the
//! matrix). With an odd width the blocks lie an odd number of words apart, so
//! the 32 lanes that read one word of 32 consecutive blocks hit 32 banks; an
//! even width's stage is swizzled within rows of 32 words ([`stage_swizzle`])
//! so that they do too.
//!
//! Lane `tx` of warp `ty` owns block `248 * si + 31 * ty + tx` of each sub-tile
//! `si` and walks its column words:
//! for each it loads one word per row (and the next, a funnel shift realigning
//! the row), transposes the `vec` rows into column words with the
//! [`network`](crate::kernel::realign::network) of the `realign` form, and
//! realigns each column's word to its destination row's word boundary with the
//! word of the lane before it (`__shfl_up_sync`). Lane 0 owns the block before
//! the warp's 31 (the previous warp's last) and stores nothing, so every store is
//! one whole aligned word, and each destination row's run is written once.
//!
//! A kernel that splits its column words ([`Geometry::split`], for calls of
//! fewer tiles than the GPU holds at once) has sub-tiles of `31 * 4` blocks:
//! warps `ty` and `ty + 4` own the same block, the first [`warp_steps`] column
//! steps and the rest ([`Thin::first_step`]).
//!
//! Each width has its own entry point ([`crate::Kernel::with_width`]), the
//! width a constant inside: the column loop unrolls, every index folds, and
//! each takes only the registers and the stage its width needs.
//!
//! The columns may run over several axes ([`crate::Kernel::with_fold`] with
//! no row axes): a permute's source run whose short inner axes the
//! destination reorders. Column `k`'s destination row then starts at the
//! split's offset ([`Thin::dst_lets`]) in place of `k * dst_ld`; the stage
//! and the lanes' reads are the plain width's.
//!
//! ```
//! use bankfree_gen::{emit, Kernel, TransposeSpec};
//! let k = Kernel::build(TransposeSpec::thin(1)?)?;
//! assert!(k.verdict().conflict_free);
//! assert!(emit(&k).contains("__shfl_up_sync"));
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

use crate::ir::expr::{Expr, Var};
use crate::ir::guard::{Guard, Less};
use crate::kernel::batch::BatchBase;
use crate::kernel::fold::{self, Side};
use crate::kernel::geometry::Geometry;
pub use crate::kernel::geometry::{
    thin_shared_words, thin_stage_vectors, thin_stage_words, thin_subtiles, thin_subtiles_of,
    thin_vectors_of, THIN_BLOCKS, THIN_MAX_COLS, THIN_RUN, THIN_STAGE_REACH,
};
use crate::kernel::layout::Swizzle;
use crate::kernel::stage::constant;

/// The widths a `thin` kernel runs, each by its own entry point.
pub fn thin_widths() -> impl Iterator<Item = u32> {
    2..=THIN_MAX_COLS as u32
}

/// The narrowest source a `thin` kernel that splits its column words
/// ([`Geometry::split`]) is built for: 21 columns of 1-byte elements (6 column
/// quads of 4), 19 of 2-byte ones (10 column pairs). Narrower, the split ran
/// slower or no faster in calls of 8 MB and lost up to 0.2 of memcpy at 40 MB
/// (H100, CuPy over the kernels as emitted, every width 9 to 40 at 8 and 40
/// MB); from these widths it gained up to 0.2 at 8 MB.
pub fn split_min_cols(elem_bytes: u32) -> u32 {
    if elem_bytes == 1 {
        21
    } else {
        19
    }
}

/// The widths a `thin` kernel of geometry `g` has entry points for: every
/// width, or from [`split_min_cols`] where it splits its column words.
pub fn widths_of(g: &Geometry) -> std::ops::RangeInclusive<u32> {
    let first = if g.split {
        split_min_cols(g.elem_bytes)
    } else {
        2
    };
    first..=THIN_MAX_COLS as u32
}

/// Column steps (`Var::J` less one: `vec` column words each) a warp takes
/// of a width of `cols` (the kernel's `Var::Cols`): all of them, or half (the
/// first warps rounding up) where the kernel splits them ([`Geometry::split`]).
pub fn warp_steps_of(g: &Geometry, cols: Expr) -> Expr {
    let (vec, halves) = (i64::from(g.vec), i64::from(g.thin_halves()));
    ((cols + (vec - 1)) / vec + (halves - 1)) / halves
}

/// [`warp_steps_of`] a width of `cols`: the column loop's trip count.
pub fn warp_steps(g: &Geometry, cols: u32) -> u32 {
    constant(warp_steps_of(g, Expr::Lit(i64::from(cols))))
}

/// Blocks per SM a `thin` kernel of `cols` columns is compiled for
/// (`__launch_bounds__(256, n)`), in the 32-bit build or the 64-bit one
/// (`index64`). Left to choose, ptxas aims at the blocks its stage allows,
/// down to 32 registers, and spilled at some widths. Up to 8 columns 32
/// registers suffice and 8 blocks hide the short tiles' latency (20000001 x 2
/// u8: 0.81 of memcpy against 0.68 with 3 blocks, H100); wider ones get 4 (at
/// most 64 registers; left to choose they took 47 to 80), the 64-bit build 2
/// (at 3 it spilled on sm_75). Against 3 blocks (H100, CuPy, median of 30
/// interleaved rounds, 8 to 40 MB), the widths that took more than 64
/// registers at 3 (1-byte 24 to 31, 2-byte 28) ran 0.01 to 0.06 of memcpy
/// faster at most sizes (1-byte width 28 at 12.8 MB: 0.82 against 0.76) and
/// up to 0.01 slower at the others; the widths that fit 64 registers anyway
/// compile alike (repeated timings of them differed by up to 0.04). No width
/// spills on sm_75, sm_80 or sm_90 in either build (`runtime/tests/nvrtc.rs`
/// checks every entry point). Widths 33 to 40 get 3 (up to 85 registers; at
/// 64, widths 37 and 39 spilled a few bytes).
pub fn thin_min_blocks(cols: u32, index64: bool) -> u32 {
    match (index64, cols) {
        (true, _) => 2,
        (false, ..=8) => 8,
        (false, ..=32) => 4,
        (false, _) => 3,
    }
}

/// Stage vectors a thread of a tile inside the matrix loads before it stores
/// them, of its `iters`: all of them up to 7 (the widths up to 28), else half.
/// Against 4 at a time, all at once ran 1- and 2-byte widths 20 to 27 faster
/// by 0.04 to 0.07 of memcpy and 31 columns (8 vectors a thread, 72 to 80
/// registers against 64 to 70) slower by 0.02 to 0.04 (H100, CuPy, one call).
pub fn stage_group(iters: u32) -> u32 {
    if iters <= 7 {
        iters
    } else {
        iters.div_ceil(2)
    }
}

/// Stage vectors per thread of a tile of a width of `cols` (the stage loop's
/// trip count).
pub fn stage_iters(g: &Geometry, cols: u32) -> u32 {
    thin_stage_vectors(cols, g.thin_subtile_blocks()).div_ceil(g.threads())
}

/// The mask of the stage's swizzle for a width of `cols`: its lowest set bit
/// less one (`(cols & -cols) - 1`, at most 31 for the widths a thin kernel
/// takes; 0 for an odd width). A constant in each width's entry point.
pub fn swizzle_mask(cols: &Expr) -> Expr {
    cols.clone().lowest_bit() - 1
}

/// The stage's swizzle: CuTe's `Swizzle<5, 0, 5>` on words, its `B` bits cut
/// to the width's trailing zero bits ([`Swizzle::flat`]).
pub const STAGE_SWIZZLE: Swizzle = Swizzle { b: 5, m: 0, s: 5 };

/// Where stage word `word` lies: `word ^ ((word >> 5) & m)` for the
/// [`swizzle_mask`] `m` ([`STAGE_SWIZZLE`]). The 32 lanes of a warp read one word of 32
/// consecutive blocks `cols` words apart: an odd width puts them in 32 banks as
/// they are, while for `cols = 2^a * odd` the blocks `32 / 2^a` apart share a
/// bank, and XORing the word's low `a` bits with those of its row of 32 words
/// separates them. The swizzle keeps every word in its row and every 16-byte
/// vector whole, so the stage still stores whole vectors (their words
/// permuted by the low two bits). The analyzer proves every width.
pub fn stage_swizzle(word: Expr, cols: &Expr) -> Expr {
    STAGE_SWIZZLE.flat(word, swizzle_mask(cols))
}

/// A `thin` kernel's expressions (see the module docs). Positions in the
/// source are counted `shift = vec * cols + 16 / elem_bytes` elements late, so
/// that none is negative: the first tile's stage starts a block and up to a
/// vector before the matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct Thin {
    /// `r0`: the tile's first source row (`t * vec * 248 * subtiles`).
    pub r0: Expr,
    /// `ph`: elements from the 16-byte boundary at or below the stage's first
    /// element (the block before the tile's) to it.
    pub phase: Expr,
    /// `sa`: the stage's first element, shifted.
    pub start: Expr,
    /// Stage vectors of a tile (`Var::Cols` a constant in each width's loop).
    pub vectors: Expr,
    /// Per thread: `v`, its stage vector of step `Var::J`.
    pub vector: Expr,
    /// `v` is one of the stage's vectors.
    pub staged: Guard,
    /// `vx`: that vector's first element, shifted.
    pub vector_at: Expr,
    /// The vector lies in the matrix: it is loaded whole.
    pub whole: Guard,
    /// Its first element's index (unshifted).
    pub load: Expr,
    /// Element `Var::K` of the vector lies in the matrix.
    pub elem_in: Guard,
    /// Its index.
    pub elem: Expr,
    /// The shared index of the vector's first word: `4 v`, its row of 32 words
    /// kept and its place in the row swizzled ([`stage_swizzle`]).
    pub slot: Expr,
    /// The swizzle's low two bits at the vector: its word `i` is stored at
    /// `slot + (i ^ turn)` (the kernel permutes the vector's words in
    /// registers and stores it whole).
    pub turn: Expr,
    /// `sw`: where the vector's first word lies ([`stage_swizzle`] of `4 v`);
    /// `slot` and `turn` are its parts.
    pub first_word: Expr,
    /// `bj`: the lane's block of sub-tile `Var::Sub`.
    pub block: Expr,
    /// `qs`: the warp's first column step, where the kernel splits its
    /// column words between two warps ([`Geometry::split`]): warps of the
    /// second half start [`warp_steps`] in. `None` for a kernel whose every
    /// warp takes every column word.
    pub first_step: Option<Expr>,
    /// `ko`: bytes from the stage's start to row `Var::Row` of block 0.
    pub row_bytes: Expr,
    /// The stage word `Var::J` of that row of the lane's block (word 0 holds
    /// the row's first byte), before the swizzle.
    pub word: Expr,
    /// Its shared index: `word ^ ((word >> 5) & m)` ([`stage_swizzle`]).
    pub read: Expr,
    /// The funnel shift that realigns the row's words (`8 * (ko % 4)` bits).
    pub row_shift: Expr,
    /// The values that split column `Var::K` into its axes' indices where the
    /// columns fold ([`crate::Kernel::with_fold`]), declared before `dst_row`.
    pub dst_lets: Vec<Expr>,
    /// Per destination row `Var::K` (a source column): `e0`, its first element.
    pub dst_row: Expr,
    /// `ts`: the tile's first source row's position in its destination word.
    pub ts: Expr,
    /// `ps`: the lane's word's first source row, plus `2 * vec` (lanes of block 0
    /// store nothing).
    pub word_end: Expr,
    /// The funnel shift that makes the lane's word from the lane before's column
    /// word and its own: `8 * elem_bytes * (vec - ts)` bits.
    pub shift: Expr,
    /// The lane stores (lane 0 does not).
    pub stores: Guard,
    /// The whole word lies in the matrix.
    pub full: Guard,
    /// The word's index.
    pub to: Expr,
    /// Element `Var::Row` of a word stored element by element lies in the matrix.
    pub part: Guard,
    /// Its index.
    pub part_to: Expr,
    /// The whole tile lies far enough inside the matrix that every vector is
    /// whole and every word full: the kernel then runs it without those guards
    /// (the simulator fails a tile where this holds and another guard does not).
    pub interior: Guard,
}

/// The tile lets and the expressions of a `thin` kernel whose columns fold over
/// the axes of `col_magics` ([`fold::magics`]; none for a plain width).
pub(crate) fn thin_exprs(
    g: &Geometry,
    batch: &BatchBase,
    col_magics: &[Expr],
) -> (Vec<Expr>, Thin) {
    let v = Expr::var;
    let vec = i64::from(g.vec);
    let eb = i64::from(g.elem_bytes);
    let per = 16 / eb;
    let cols = v(Var::Cols);
    let rows_per_tile = g.thin_run();
    let shift = cols.clone() * vec + per;
    let r0 = Expr::named("r0", v(Var::Tile) * rows_per_tile.clone());
    // (first - vec * cols) modulo a vector, as (first + (per - vec) * cols).
    let first = batch.src.clone() + r0.clone() * cols.clone();
    let phase = Expr::small(
        "ph",
        (first.clone() + v(Var::SrcOff) + cols.clone() * (per - vec)).and(per - 1),
    );
    let start = Expr::named("sa", first + per - phase.clone());
    let vectors = thin_vectors_of(cols.clone(), g.thin_subtile_blocks());
    let tid = v(Var::Ty) * i64::from(g.tile) + v(Var::Tx);
    let vector = Expr::small("v", v(Var::J) * i64::from(g.threads()) + tid);
    let staged = Guard(vec![Less(vector.clone(), vectors.clone())]);
    let vector_at = Expr::named("vx", start.clone() + vector.clone() * per);
    let lo = batch.src.clone() + shift.clone();
    let hi = lo.clone() + v(Var::Rows) * cols.clone();
    let whole = Guard(vec![
        Less(lo.clone(), vector_at.clone() + 1),
        Less(vector_at.clone() + per, hi.clone() + 1),
    ]);
    let elem_at = vector_at.clone() + v(Var::K);
    let elem_in = Guard(vec![
        Less(lo.clone(), elem_at.clone() + 1),
        Less(elem_at.clone(), hi.clone()),
    ]);

    // The read side.
    // Where the kernel splits its column words, warps `w` and `w + 4` take
    // the same blocks of a sub-tile of 4 warps' runs.
    let warps = i64::from(g.thin_run_warps());
    let warp = if g.split {
        v(Var::Ty).and(warps - 1)
    } else {
        v(Var::Ty)
    };
    let block = Expr::small(
        "bj",
        v(Var::Sub) * i64::from(g.thin_subtile_blocks()) + warp * i64::from(THIN_RUN) + v(Var::Tx),
    );
    let first_step = g.split.then(|| {
        Expr::small(
            "qs",
            (v(Var::Ty) >> i64::from(warps.trailing_zeros())) * warp_steps_of(g, cols.clone()),
        )
    });
    let row_bytes = Expr::small("ko", phase.clone() * eb + v(Var::Row) * cols.clone() * eb);
    let word = block.clone() * cols.clone() + (row_bytes.clone() >> 2) + v(Var::J);
    let read = stage_swizzle(word.clone(), &cols);
    // Where the vector's first word lies: the swizzle's low two bits permute
    // the vector's words, the rest move the whole vector within its row.
    let first_word = Expr::small("sw", stage_swizzle(vector.clone() * 4, &cols));
    let turn = Expr::small("tn", first_word.clone().and(3));
    let row_shift = row_bytes.clone().and(3) * 8;

    // The write side: destination row `Var::K`, `K * dst_ld` apart unless the
    // columns fold (the source run's columns are then several axes).
    let split = fold::split(v(Var::K), Side::Cols, col_magics, 1);
    let dst_row = Expr::named("e0", batch.dst.clone() + split.dst);
    let ts = Expr::small(
        "ts",
        (dst_row.clone() + v(Var::DstOff) + r0.clone()).and(vec - 1),
    );
    // Counted two words late: the lane's word is rows `ps - 2 * vec ..`.
    let word_end = Expr::named("ps", r0.clone() + (block.clone() + 1) * vec - ts.clone());
    let rows = v(Var::Rows);
    let full = Guard(vec![
        Less(Expr::Lit(2 * vec - 1), word_end.clone()),
        Less(word_end.clone(), rows.clone() + vec + 1),
    ]);
    let part = Guard(vec![
        Less(Expr::Lit(2 * vec - 1), word_end.clone() + v(Var::Row)),
        Less(word_end.clone() + v(Var::Row), rows.clone() + 2 * vec),
    ]);
    let to = dst_row.clone() + word_end.clone() - 2 * vec;
    let interior = Guard(vec![
        Less(lo.clone(), start.clone() + 1),
        Less(start.clone() + vectors.clone() * per, hi + 1),
        Less(r0.clone() + rows_per_tile, rows + 1),
    ]);
    let thin = Thin {
        r0: r0.clone(),
        phase,
        start,
        vectors,
        vector: vector.clone(),
        staged,
        vector_at: vector_at.clone(),
        whole,
        load: vector_at - shift.clone(),
        elem_in,
        elem: elem_at - shift,
        slot: first_word.clone() - turn.clone(),
        turn,
        first_word,
        block,
        first_step,
        row_bytes,
        word,
        read,
        row_shift,
        dst_lets: split.lets,
        dst_row,
        ts: ts.clone(),
        word_end,
        shift: (Expr::Lit(vec) - ts) * (8 * eb),
        stores: Guard(vec![Less(Expr::Lit(0), v(Var::Tx))]),
        full,
        to: to.clone(),
        part,
        part_to: to + v(Var::Row),
        interior,
    };
    (vec![r0], thin)
}
