//! The thin kernel's batches of short plain matrices: which gather, which
//! run the tiles with no narrow kernel.

use crate::ir::shape::{Fold, Shape};

/// The most bytes in a row of a batch's plain matrices (no folded side) that
/// the thin kernel would run where the gather runs them instead
/// ([`short_thin_items`]).
pub const THIN_GATHER_MAX_ROW_BYTES: u64 = 192;

/// Whether a batch of plain matrices (`shape`, no folded side) of
/// `elem_bytes`-byte elements has rows of at most
/// [`THIN_GATHER_MAX_ROW_BYTES`]: the thin kernel then leaves most of each
/// block idle (a block moves sub-tiles of one matrix,
/// [`Geometry::thin_tile_rows`](crate::kernel::geometry::Geometry::thin_tile_rows) each), and the gather runs them faster however
/// little of each source sector it uses. H200, `--example permute --
/// --shape ...`, the thin kernel and the gather in one call (2026-11-29),
/// 60 of the 70 plain batches with rows below a sub-tile that the thin
/// kernel ran among `permute --plans --random 12` over seeds 1000 to 2500:
/// every batch of rows of 192 bytes or less ran faster gathered but one,
/// tied (`[32,31,30,46,2,35] [0,2,5,1,3,4]` f16, 92 rows, 0.155 and 0.152),
/// the thin kernel at 0.013 to 0.16 of memcpy, the gather at 0.09 to 0.59
/// (`[2337,39,46,4] [3,1,0,2]` f16, 46 x 4: 0.044 -> 0.586, torch 0.443;
/// `[37,26,34,37,27] [1,4,2,0,3]` u8, 37 x 27: 0.028 -> 0.105, torch
/// 0.245); from 209 bytes the thin kernel ran faster on 12 of 14
/// (`[25,11,8,435,35] [2,4,0,1,3]` u8, 435 rows, 0.304 against 0.092).
///
/// Batches of such matrices with [`thin_tile_min_cols`] columns or more run
/// the tiles instead ([`short_thin_tiles`]). So do matrices of longer rows
/// but at most [`THIN_GATHER_MAX_MATRIX_BYTES`] in all.
pub fn short_thin_items(shape: &Shape, elem_bytes: u32) -> bool {
    short_thin_rows(shape, elem_bytes) && !short_thin_tiles(shape, elem_bytes)
}

/// The most bytes of a batch's plain matrices whose rows are longer than
/// [`THIN_GATHER_MAX_ROW_BYTES`] that the thin kernel would run where the
/// gather runs them instead ([`short_thin_items`]). The thin kernel's speed
/// follows the rows (how much of a block's sub-tile a matrix fills), the
/// gather's falls with the columns (each source sector feeds fewer
/// destination runs): of 37 batches of 1- and 2-byte matrices of 4 to 12
/// columns and rows of up to 1200 bytes that the thin kernel ran among
/// `permute --plans --random 12` over seeds 5000 to 9000, run both ways on
/// an H200 (`--example permute -- --shape ...`, 2026-11-29, two runs each
/// in one call), the 11 of at most 2400 bytes ran faster gathered, x1.23 to
/// x7.24 (`[34,5,31,8,99,4] [3,5,1,2,0,4]` f16, 99 x 4: 0.083 -> 0.601,
/// torch 0.424; `[18,52,10,2,149,6] [3,2,5,1,0,4]` f16 0.233 -> 0.489;
/// `[11,1460,29,12,6] [4,1,0,2,3]` u8, 348 x 6: 0.229 -> 0.387); from 2640
/// bytes on, none of the 2-byte ones (`[15,37,18,239,7] [2,4,0,1,3]` f16,
/// 239 x 7, 0.471 -> 0.383; 110 x 12 alike) and 2 of the 8 1-byte ones
/// below the thin kernel's sub-tile (355 x 11 x1.39, 545 x 5 x1.10; 449 x 12
/// x0.59).
pub const THIN_GATHER_MAX_MATRIX_BYTES: u64 = 2400;

/// A batch of plain matrices (no folded side) whose rows hold at most
/// [`THIN_GATHER_MAX_ROW_BYTES`], or that hold at most
/// [`THIN_GATHER_MAX_MATRIX_BYTES`] each.
fn short_thin_rows(shape: &Shape, elem_bytes: u32) -> bool {
    let row = shape.rows.saturating_mul(u64::from(elem_bytes));
    shape.fold == Fold::NONE
        && (row <= THIN_GATHER_MAX_ROW_BYTES
            || row.saturating_mul(shape.cols) <= THIN_GATHER_MAX_MATRIX_BYTES)
}

/// The fewest columns of a batch's short plain matrices ([`short_thin_tiles`])
/// that run the tiles rather than the gather: 15 of 1-byte elements, 26
/// of 2-byte ones (none of other sizes: no thin kernel moves them).
pub fn thin_tile_min_cols(elem_bytes: u32) -> u64 {
    match elem_bytes {
        1 => 15,
        2 => 26,
        _ => u64::MAX,
    }
}

/// Whether a batch of plain matrices with rows of at most
/// [`THIN_GATHER_MAX_ROW_BYTES`] and at least [`thin_tile_min_cols`] columns
/// runs the tiles with no narrow kernel (no `thin`, no `tall`): mostly the
/// scalar 32-wide tile of 1-byte elements (a vector tile where the sides are
/// whole vectors) and the skew tile of 2-byte ones. Such
/// matrices fill the tiles well enough on both sides, where the gather
/// fetches each source sector again for every row it feeds and the narrow
/// kernels leave most of each block idle. H200, `--example permute --
/// --shape ...` (2026-11-29), the 55 batches of that kind the thin kernel
/// would run among `permute --plans --random 12` over seeds 1000 to 2500,
/// the gather and the list without narrow kernels in one call: 1-byte
/// matrices of 15 columns or more ran at 0.19 to 0.36 of memcpy on the
/// scalar tile against 0.09 to 0.19 gathered (`[887,19,51,39] [3,1,0,2]`
/// u8, 51 x 39: 0.089 -> 0.303, torch 0.200), of 11 to 13 columns alike
/// (0.16 to 0.20 both ways), of 5 to 10 columns faster gathered (37 x 5:
/// 0.35 against 0.07); 2-byte ones of 26 columns or more at 0.22 to 0.38 on
/// the skew tile against 0.15 to 0.21 (34 x 26: 0.214 -> 0.379, torch
/// 0.375), of 20 columns faster gathered (45 x 20: 0.42 against 0.34). The
/// 1-byte ones that the list without the thin kernel ran on the `tall`
/// kernel ran there at 0.02 to 0.04, so the list leaves both out. The build
/// before and this one in one call, the 23 plans this changes: all faster,
/// x2.10 geometric mean, median 0.139 -> 0.264 (torch 0.236), 23 -> 6
/// slower than torch (`[47,14,41,48,25] [4,2,1,0,3]` u8, 48 x 25, 0.105 ->
/// 0.323; `[11,2647,48,24] [3,1,0,2]` u8, 48 x 24 on the 4-element vector
/// tile, 0.104 -> 0.192, torch 0.255).
pub fn short_thin_tiles(shape: &Shape, elem_bytes: u32) -> bool {
    short_thin_rows(shape, elem_bytes) && shape.cols >= thin_tile_min_cols(elem_bytes)
}
