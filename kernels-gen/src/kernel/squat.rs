//! The expressions of the `squat` form ([`Form::Squat`](crate::Form::Squat)),
//! the mirror of [`thin`](crate::kernel::thin): 1- and 2-byte matrices of 2 to
//! [`SQUAT_MAX_ROWS`] rows, any source pitch and pointers, whose destination is
//! one run (`dst_ld == rows`).
//!
//! A *block* is `vec = 4 / elem_bytes` source columns: `rows` 32-bit words of
//! the destination's run. In tile `t`, lane `tx` of warp `ty` owns the block
//! numbered `248 t + 31 ty + tx` less one: for every source row it loads the
//! aligned word at its block's first element (the next one is the next lane's,
//! `__shfl_down_sync`; lane 31 loads it) and funnel-shifts the row's `vec`
//! elements out of the pair, then permutes the `rows` words into the block's
//! `rows` destination words ([`squat_perms`], `__byte_perm` steps). Each
//! destination word is realigned to the destination's word boundary with the
//! word before it (the lane before's last, `__shfl_up_sync`). Lane 0 owns the
//! block before the warp's 31 and writes nothing, so each aligned destination
//! word is written by exactly one lane.
//!
//! The lanes write their words to a shared stage that holds the tile's run from
//! the 16-byte boundary at or below its first word; 32 lanes write one word of
//! 32 consecutive blocks `rows` words apart, so an even width's stage is
//! swizzled within rows of 32 words as the `thin` stage is
//! ([`stage_swizzle`]). The block then stores the stage as 16-byte vectors,
//! element by element where a vector leaves the tile's part of the run.
//!
//! Each width has its own entry point ([`crate::Kernel::with_width`]), the
//! width a constant inside: the rows unroll and the permutation is fixed.
//!
//! A tile inside the matrix ([`Squat::interior`]) loads every word without
//! checks; another checks the words of its first and last rows only, where
//! the rows between lie in the matrix's span ([`Squat::middle`]), so that its
//! rows' loads are in flight together as an interior tile's are. Checked
//! word by word, each row's loads waited for the row before (a branch a row):
//! such a tile took several times an interior one, and the matrix's first
//! and last tiles set the kernel's time at the sizes of a few waves.
//!
//! ```
//! use bankfree_gen::{emit, Kernel, TransposeSpec};
//! let k = Kernel::build(TransposeSpec::squat(1)?)?;
//! assert!(k.verdict().conflict_free);
//! assert!(emit(&k).contains("__shfl_down_sync"));
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

use crate::ir::expr::{Expr, Var};
use crate::ir::guard::{Guard, Less};
use crate::kernel::batch::BatchBase;
use crate::kernel::geometry::Geometry;
pub use crate::kernel::geometry::{
    squat_lead, squat_lead_of, squat_stage_vectors, squat_stage_words, squat_vectors_of,
    SQUAT_BLOCKS, SQUAT_MAX_ROWS,
};
use crate::kernel::realign::Perm;
pub use crate::kernel::thin::stage_swizzle;
use crate::kernel::thin::THIN_RUN;

/// The widths a `squat` kernel runs, each by its own entry point.
pub fn squat_widths() -> std::ops::RangeInclusive<u32> {
    2..=SQUAT_MAX_ROWS
}

/// Blocks per SM a `squat` kernel's grid holds at most (the runtime caps
/// `grid.x` at this times the SM count; the tile loop strides over the rest).
/// One block per tile left the blocks' start and end exposed: capped, 1-byte
/// 13 rows ran at 0.979 of memcpy against 0.885 with a block per tile, 15 at
/// 0.988 against 0.893, 2-byte 13 at 0.975 against 0.895 (H100, `bench
/// --alternatives`, 40 MB, one call each way; in CuPy, 8 rows at 0.86 to 0.97
/// against 0.81 to 0.92 over four launch bounds).
pub const SQUAT_BLOCKS_PER_SM: u32 = 16;

/// Stage vectors per thread of a width of `rows` (the store loop's trip count).
pub fn squat_iters(g: &Geometry, rows: u32) -> u32 {
    squat_stage_vectors(rows).div_ceil(g.threads())
}

/// Blocks per SM a `squat` kernel of `rows` rows of `elem_bytes`-byte
/// elements is compiled for (`__launch_bounds__(256, n)`): the most at which
/// no entry point spills on sm_75, sm_80 or sm_90 (NVRTC 13.0;
/// `runtime/tests/nvrtc.rs` checks every entry point). 32 registers (8
/// blocks) hold 1-byte heights up to 17 and 2-byte ones up to 20, 64 (4
/// blocks) the rest but 2-byte 30 and more rows, which take 80 (3 blocks);
/// the 64-bit build takes 2 blocks, and 1 from 13 rows of 1-byte elements and
/// from 24 of 2-byte ones. With the rows' loads in flight together, fewer
/// registers spill at some heights; before that, 8 blocks (32 registers) ran
/// 13 rows at 0.87 of memcpy against 0.84 at 3 blocks and 21 at 0.82 against
/// 0.74 at 4 (H100, 40 MB, one call), and 32 registers spilled from 23 rows
/// (32 rows: 0.67 of memcpy at 64 registers, 0.46 at 32).
pub fn squat_min_blocks(rows: u32, elem_bytes: u32, index64: bool) -> u32 {
    match (index64, elem_bytes == 1, rows) {
        (true, true, ..=12) | (true, false, ..=23) => 2,
        (true, ..) => 1,
        (false, true, ..=17) | (false, false, ..=20) => 8,
        (false, false, 30..) => 3,
        (false, ..) => 4,
    }
}

/// Whether the lanes of an interior tile load both aligned words of each
/// row's pair themselves (2-byte elements) instead of taking the second from
/// the next lane (`__shfl_down_sync`; lane 31 loads its own first, a
/// predicated load, as the rows a checked tile leaves unchecked do).
/// 2-byte heights 7 to 31 ran 0.025 to 0.076 of memcpy faster so (H100, 50
/// MB); for 1-byte elements the gain was within the noise, and from 21 rows
/// the extra registers spill under the launch bounds of [`squat_min_blocks`].
/// A checked row always shuffles: one check a row.
pub fn squat_loads_pairs(elem_bytes: u32) -> bool {
    elem_bytes == 2
}

/// The register permutation of a block of `rows` source words (registers
/// `0..rows`, row `r`'s `vec` elements) into its `rows` destination words:
/// destination word `j` holds the block's run positions `j * vec ..`, position
/// `e` being column `e / rows`, row `e % rows`. Each word is two
/// `__byte_perm`s of two rows each and one that joins them; the words land in
/// registers `rows + 3 j + 2`.
pub fn squat_perms(rows: u32, elem_bytes: u32) -> Vec<Perm> {
    let (r, eb) = (rows as usize, elem_bytes as usize);
    let vec = 4 / eb;
    let mut out = Vec::with_capacity(3 * r);
    for j in 0..r {
        // Byte `b` of word `j`: element `b / eb` of the word, byte `b % eb` of it.
        let from = |b: usize| {
            let e = j * vec + b / eb;
            (e % r, ((e / r) * eb + b % eb) as u32)
        };
        let base = r + 3 * j;
        let pair = |lo: usize, o: usize| {
            let ((ra, sa), (rb, sb)) = (from(lo), from(lo + 1));
            Perm {
                out: o,
                a: ra,
                b: rb,
                sel: sa | ((4 + sb) << 4),
            }
        };
        out.push(pair(0, base));
        out.push(pair(2, base + 1));
        out.push(Perm {
            out: base + 2,
            a: base,
            b: base + 1,
            sel: 0x5410,
        });
    }
    out
}

/// The register holding destination word `j` after [`squat_perms`].
pub fn squat_word_reg(rows: u32, j: u32) -> usize {
    (rows + 3 * j + 2) as usize
}

/// A `squat` kernel's expressions (see the module docs). Source positions are
/// counted `2 * vec` elements late and destination ones `2 * 16 / elem_bytes`
/// late, so that none is negative (the lane before a tile's first block, the
/// 16-byte boundary before its first word).
#[derive(Clone, Debug, PartialEq)]
pub struct Squat {
    /// `ub`: the lane's block plus one (lane 0 of the tile's first warp owns the
    /// block before the tile).
    pub block: Expr,
    /// Per source row `Var::Row`, word `Var::J` (0: at the block's first
    /// element, 1: the next): `lw`, the aligned word's first element, counted
    /// `2 * vec` late.
    pub word_at: Expr,
    /// `rp`: the row's first element of the block within its aligned word.
    pub row_phase: Expr,
    /// The funnel shift that takes the block's elements out of the word pair.
    pub row_shift: Expr,
    /// The word lies in the matrix's span: it is loaded whole.
    pub whole: Guard,
    /// Its index (unshifted).
    pub load: Expr,
    /// Element `Var::K` of the word lies in the span.
    pub elem_in: Guard,
    /// Its index.
    pub elem: Expr,
    /// `dp`: the destination run's first element within its aligned word.
    pub dst_phase: Expr,
    /// The funnel shift that makes an aligned destination word from a block's
    /// word and the one before: `8 * elem_bytes * (vec - dp)` bits.
    pub shift: Expr,
    /// The lane writes to the stage (lane 0 does not).
    pub stores: Guard,
    /// `e0`: the tile's first aligned destination element, counted late.
    pub tile_start: Expr,
    /// `ph`: elements from the 16-byte boundary at or below it to it.
    pub phase: Expr,
    /// Destination word `Var::J` of the lane's block: its stage word, before the
    /// swizzle ([`squat_lead`] words on).
    pub word: Expr,
    /// Its shared index ([`stage_swizzle`]).
    pub put: Expr,
    /// Per thread: `v`, its stage vector of step `Var::J`.
    pub vector: Expr,
    /// `v` is one of the stage's vectors.
    pub staged: Guard,
    /// `vx`: that vector's first element, counted late.
    pub vector_at: Expr,
    /// The vector lies in the tile's part of the run: it is stored whole.
    pub full: Guard,
    /// Its index (unshifted).
    pub to: Expr,
    /// Element `Var::K` of the vector lies in the tile's part of the run.
    pub part: Guard,
    /// Its index.
    pub part_to: Expr,
    /// `sw`: where the vector's first word lies ([`stage_swizzle`] of `lead +
    /// 4 v`).
    pub first_word: Expr,
    /// The vector's place in the stage (`sw` less its low two bits).
    pub slot: Expr,
    /// The swizzle's low two bits at the vector: its word `i` lies at `slot +
    /// (i ^ turn)`.
    pub turn: Expr,
    /// The tile lies far enough inside the matrix that every lane's words are
    /// whole and its part of the run inside the matrix's: the kernel then
    /// loads without checks and tests only the tile's ends for a vector (the
    /// simulator fails a tile where this holds and a check it leaves out
    /// would fail).
    pub interior: Guard,
    /// In such a tile: the vector lies in the tile's part of the run.
    pub full_in: Guard,
    /// Every word of the rows between the first and the last lies in the span
    /// for every lane of the tile: a checked tile loads them without checks
    /// (only the matrix's first and last rows reach its ends; the simulator
    /// fails a tile where this holds and a check left out would fail).
    pub middle: Guard,
}

/// The tile lets and the expressions of a `squat` kernel.
pub(crate) fn squat_exprs(g: &Geometry, batch: &BatchBase) -> (Vec<Expr>, Squat) {
    let v = Expr::var;
    let vec = i64::from(g.vec);
    let per = 16 / i64::from(g.elem_bytes);
    let blocks = i64::from(SQUAT_BLOCKS);
    let rows = v(Var::Rows);
    let tid = v(Var::Ty) * i64::from(g.tile) + v(Var::Tx);

    // The read side: row `Var::Row`, word `Var::J` of the pair.
    let block = Expr::named(
        "ub",
        v(Var::Tile) * blocks + v(Var::Ty) * i64::from(THIN_RUN) + v(Var::Tx),
    );
    let row_first = batch.src.clone() + v(Var::Row) * v(Var::SrcLd) + block.clone() * vec;
    let row_phase = Expr::small("rp", (row_first.clone() + v(Var::SrcOff)).and(vec - 1));
    // The block's first element, `(ub - 1) * vec`, counted `2 * vec` late.
    let word_at = Expr::named("lw", row_first + vec - row_phase.clone() + v(Var::J) * vec);
    let span_lo = batch.src.clone() + 2 * vec;
    let span_hi = batch.src.clone() + (rows.clone() - 1) * v(Var::SrcLd) + v(Var::Cols) + 2 * vec;
    let whole = Guard(vec![
        Less(span_lo.clone() - 1, word_at.clone()),
        Less(word_at.clone() + vec, span_hi.clone() + 1),
    ]);
    let at_k = word_at.clone() + v(Var::K);
    let elem_in = Guard(vec![
        Less(span_lo - 1, at_k.clone()),
        Less(at_k.clone(), span_hi),
    ]);

    // The write side.
    // Destination positions are counted `2 * per` late (the stage's start is
    // up to `per - 1 + vec - 1` before the run's).
    let late = 2 * per;
    let run_lo = batch.dst.clone() + late;
    let run_hi = batch.dst.clone() + rows.clone() * v(Var::Cols) + late;
    let dst_phase = Expr::small("dp", (batch.dst.clone() + v(Var::DstOff)).and(vec - 1));
    let tile_start = Expr::named(
        "e0",
        run_lo.clone() + v(Var::Tile) * (blocks * vec) * rows.clone() - dst_phase.clone(),
    );
    let phase = Expr::small("ph", (tile_start.clone() + v(Var::DstOff)).and(per - 1));
    let lead = squat_lead_of(rows.clone());
    let word = (phase.clone() >> vec.trailing_zeros() as i64)
        + (v(Var::Ty) * i64::from(THIN_RUN) + v(Var::Tx)) * rows.clone()
        + v(Var::J)
        + (lead.clone() - rows.clone());
    let put = stage_swizzle(word.clone(), &rows);
    let vector = Expr::small("v", v(Var::J) * i64::from(g.threads()) + tid);
    let vectors = squat_vectors_of(rows.clone());
    let staged = Guard(vec![Less(vector.clone(), vectors)]);
    let vector_at = Expr::named(
        "vx",
        tile_start.clone() - phase.clone() + vector.clone() * per,
    );
    let tile_end = tile_start.clone() + rows.clone() * (blocks * vec);
    // The tile's last lane reads up to `2 * vec` elements past its block, in the
    // last row; the first tile's lane 0 reads before the matrix.
    let interior = Guard(vec![
        Less(Expr::Lit(0), v(Var::Tile)),
        Less((v(Var::Tile) * blocks + blocks + 1) * vec, v(Var::Cols) + 1),
    ]);
    // Row `r` of `1..rows - 1`: its words start at or after `src_ld - 2 vec + 1`
    // and end by `(rows - 2) src_ld + (ub + 1) vec` (matrix positions), `ub`
    // at most `248 t + 248`.
    let middle = Guard(vec![
        Less(Expr::Lit(2 * vec - 2), v(Var::SrcLd)),
        Less(
            (v(Var::Tile) * blocks + blocks + 1) * vec,
            v(Var::SrcLd) + v(Var::Cols) + 1,
        ),
    ]);
    let full_in = Guard(vec![
        Less(tile_start.clone() - 1, vector_at.clone()),
        Less(vector_at.clone() + per, tile_end.clone() + 1),
    ]);
    let full = Guard(vec![
        Less(run_lo.clone() - 1, vector_at.clone()),
        Less(tile_start.clone() - 1, vector_at.clone()),
        Less(vector_at.clone() + per, run_hi.clone() + 1),
        Less(vector_at.clone() + per, tile_end.clone() + 1),
    ]);
    let at_k = vector_at.clone() + v(Var::K);
    let part = Guard(vec![
        Less(run_lo - 1, at_k.clone()),
        Less(tile_start.clone() - 1, at_k.clone()),
        Less(at_k.clone(), run_hi),
        Less(at_k.clone(), tile_end),
    ]);
    let first_word = Expr::small(
        "sw",
        stage_swizzle(lead + vector.clone() * 4, &v(Var::Rows)),
    );
    let turn = Expr::small("tn", first_word.clone().and(3));
    let squat = Squat {
        block,
        word_at: word_at.clone(),
        row_shift: row_phase.clone() * (8 * i64::from(g.elem_bytes)),
        row_phase,
        whole,
        load: word_at.clone() - 2 * vec,
        elem_in,
        elem: word_at + v(Var::K) - 2 * vec,
        shift: (Expr::Lit(vec) - dst_phase.clone()) * (8 * i64::from(g.elem_bytes)),
        dst_phase,
        stores: Guard(vec![Less(Expr::Lit(0), v(Var::Tx))]),
        tile_start,
        phase,
        word,
        put,
        vector,
        staged,
        vector_at: vector_at.clone(),
        full,
        to: vector_at.clone() - late,
        part,
        part_to: vector_at + v(Var::K) - late,
        slot: first_word.clone() - turn.clone(),
        turn,
        first_word,
        interior,
        full_in,
        middle,
    };
    (Vec::new(), squat)
}
