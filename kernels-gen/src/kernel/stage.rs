//! The shared stages of the `thin` and `squat` kernels: how many sub-tiles,
//! blocks, vectors and words a tile stages for a width, as expressions the
//! kernels compute with and as the constants that size their shared memory.
//!
//! ```
//! use bankfree_gen::kernel::stage::{thin_stage_words, thin_subtiles, THIN_MAX_COLS};
//! assert_eq!((thin_subtiles(2), thin_subtiles(9)), (4, 1));
//! assert!(thin_stage_words(THIN_MAX_COLS as u32, 248) % 32 == 0);
//! ```

use crate::ir::expr::{Env, Expr};

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
/// rows reach past them ([`THIN_STAGE_REACH`]). A sub-tile moves `blocks`
/// blocks: `THIN_BLOCKS - 1`, or half as many where the kernel splits its
/// column words ([`crate::Geometry::thin_subtile_blocks`]).
pub fn thin_vectors_of(cols: Expr, blocks: u32) -> Expr {
    let blocks = thin_subtiles_of(cols.clone()) * i64::from(blocks) + 1;
    (cols * blocks + i64::from(THIN_STAGE_REACH) + 3) / 4
}

/// [`thin_vectors_of`] a width of `cols`, sub-tiles of `blocks` blocks.
pub fn thin_stage_vectors(cols: u32, blocks: u32) -> u32 {
    constant(thin_vectors_of(Expr::Lit(i64::from(cols)), blocks))
}

/// Words a tile's stage holds for a width of `cols`: its vectors, rounded up to
/// whole rows of 32 words (the swizzle of an even width moves words within
/// their row). Sub-tiles of `blocks` blocks, as [`thin_vectors_of`].
pub fn thin_stage_words(cols: u32, blocks: u32) -> u32 {
    thin_stage_vectors(cols, blocks).div_ceil(8) * 32
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
pub(crate) fn constant(e: Expr) -> u32 {
    e.eval(&Env::default())
        .ok()
        .and_then(|v| u32::try_from(v).ok())
        .unwrap_or(0)
}

/// Words of a `thin` kernel's shared stage: enough for the width that stages
/// the most (an unsplit kernel's: a split one stages half the blocks).
pub fn thin_shared_words() -> u32 {
    (2..=THIN_MAX_COLS as u32)
        .map(|c| thin_stage_words(c, THIN_BLOCKS - 1))
        .max()
        .unwrap_or(0)
}
