//! Gathers whose `small` kernel takes each warp's chunk down its columns
//! (`TileOrder::Columns`): which gathers do, and which transposes run as one.

use crate::hw::SECTOR_BYTES;
use crate::ir::shape::Shape;
use crate::kernel::geometry::Geometry;
use crate::kernel::order::TileOrder;
use crate::kernel::spec::TransposeSpec;
use crate::select::gather::gather_shape;
use crate::select::permute::call::Plan;

/// Whether a gather of `shape` runs its `small` kernel (of geometry `g`) with
/// each warp's chunk taken down its columns (`TileOrder::Columns`). Such
/// gathers are boxes `[a, j, b] -> [b, j, a]`: destination runs of `a = rows`
/// elements (source rows `src_ld` apart) shorter than a thread's vector, and
/// items `j` that share source sectors (`b = src_batch_stride` elements, under
/// 32 bytes).
/// Along the rows, consecutive lanes' vectors start `d = vec / a` items apart
/// in the source, `d * b` elements: from 32 bytes on, a vector's load touches
/// a sector per lane, where down the columns a load of 32 consecutive
/// positions covers `32 / a` neighbouring items of each source row, a sector
/// or two per row. Where `a` divides `vec`, each of a vector's loads reads one
/// source row only and runs as fast up to `d` of 64 bytes; there the columns
/// take over from 64 bytes.
///
/// Measured on an H200 (`--example permute -- --shape ...`, this kernel list
/// against one that gathers along the rows only, two runs each in one call,
/// 2026-11-28): the 20 boxes `[a, J, b] [2,1,0]` of 1- and 2-byte elements,
/// `a` of 2 to 5, that pass this test ran at x1.01 to x1.89 (geometric mean
/// x1.49; `[3,798915,7]` u16 0.35 -> 0.54, `[2,2097152,8]` u8 0.25 -> 0.42),
/// and 14 drawn boxes with a batch axis outside (`[c,a,J,b] [0,3,2,1]`) at
/// x0.98 to x1.95 (x1.36). Taken down the columns, the 15 that fail it ran at
/// x0.84 to x1.13 (x0.98; `[2,3355443,5]` u8 0.52 -> 0.44), and 5 gathers of a
/// random draw that fail it only on `d` at x0.86 to x0.98. Over 51 other
/// gathers of a random draw the columns ran at a geometric mean of x0.90
/// (CuPy, the emitted kernels), as low as x0.66 (`[28,40,29959] [0,2,1]` u8,
/// 40-element runs one source row each).
///
/// Destination runs that are runs of the source too (`src_ld` of 1: blocks
/// of `a` elements moved whole, `[J, c, a] -> [c, J, a]`) take the columns
/// only where consecutive lanes' vectors start more than 64 bytes apart
/// (`d * b` elements): up to that a thread's vector reads `d` neighbouring
/// source runs within two or three sectors, and the rows ran faster. H200
/// (`--example permute -- --shape ...`, the build before and this one, two
/// runs each in one call, 2026-11-29), the 38 such gathers of 1- and 2-byte
/// elements (`[J, c, a] [1,0,2]`, `[J, 4, c, a] [2,0,1,3]`, `a` of 2 to 14,
/// `c` of 2 to 9) that passed the rest of this test: up to 64 bytes apart all
/// ran faster along the rows (x1.06 to x1.31; `[2396745,2,7] [1,0,2]` u8
/// 0.425 -> 0.544, `[1198372,4,7] [1,0,2]` u8 at 64 bytes x1.18); at 80 the
/// u8 ones ran x1.08 to x1.11 faster along the rows and the u16 ones x0.86
/// (`[1118481,5,3] [1,0,2]` u16 0.607 -> 0.520), at 144 x0.62 (`[1242756,9,3]
/// [1,0,2]` u8 0.410 -> 0.256, torch 0.323).
pub fn lanes_gather(shape: &Shape, g: &Geometry) -> bool {
    let (e, vec, a) = (u64::from(g.elem_bytes), u64::from(g.vec), shape.rows);
    let item = shape.src_batch_stride.saturating_mul(e);
    // Bytes between consecutive lanes' first elements along the rows, times `a`.
    let apart = item.saturating_mul(vec);
    let far = if shape.src_ld == 1 {
        apart > 2 * SECTOR_BYTES * a
    } else {
        let sectors = if vec.is_multiple_of(a.max(1)) { 2 } else { 1 };
        apart >= sectors * SECTOR_BYTES * a
    };
    TileOrder::Columns.takes(g) && shape.batch > 1 && a < vec && item < SECTOR_BYTES && far
}

/// The most `b * b * elem_bytes` of a box over several batch axes (its
/// gather over two outer axes or more) that runs as its gather down the
/// columns ([`box_gathers`]).
pub const LANES_BOX_MAX: u64 = 320;

/// The most `b * b * elem_bytes` of a plain box `[a, J, b]` (its gather over
/// at most one outer axis) that runs as its gather down the columns
/// ([`box_gathers`]): 1-byte boxes up to `b = 13`, 2-byte ones up to 9.
pub const LANES_PLAIN_BOX_MAX: u64 = 180;

/// Whether the transpose `tiled` of 1- or 2-byte elements runs faster as its
/// gather down the columns: where that gather passes [`lanes_gather`] (a box
/// `[a, j, b] -> [b, j, a]`) and `b * b * elem_bytes` is at most
/// [`LANES_PLAIN_BOX_MAX`] (a gather over at most one outer axis) or
/// [`LANES_BOX_MAX`] (over more). The gather reads each source sector once
/// for each of the `b` destination rows it feeds; the folded tiles it
/// replaces fill `b` of their short side and ran at about `0.015 * b`
/// (1-byte) and `0.031 * b` (2-byte). H200, boxes `[a, J, b] [2,1,0]` of 32
/// MB, `a` of 2 to 15, tiles against the gather in one call (`--example
/// permute -- --shape ...`, 2026-11-28):
///
/// | `b` (u8) | 11 | 13 | 16 | 19 | 23 | 31 |
/// |---|---|---|---|---|---|---|
/// | tiles | 0.18 | 0.21 | 0.23 to 0.25 | 0.28 | 0.32 | 0.40 |
/// | gather | 0.33 to 0.41 | 0.29 to 0.37 | 0.24 to 0.31 | 0.22 to 0.28 | 0.18 to 0.24 | 0.14 to 0.19 |
///
/// and u16 `b = 11` 0.34 against 0.40 to 0.43, `b = 13` 0.40 against 0.36 to
/// 0.39. These gathers move from call to call far more than the tiles: in
/// two calls on 2026-11-29 the same gathers ran at about half those figures
/// (u8 `b` of 14 to 17: 0.12 to 0.20, the tiles 0.22 to 0.26 as before;
/// `[3,6,143395,13] [0,3,2,1]` u8 at 0.21 in one call and 0.34 in the
/// other, its tiles at 0.25 in both). So plain boxes gather only where the
/// gather ran faster the day before and within 15% of the tiles since: in
/// one call the build with [`LANES_BOX_MAX`] for every box against one with
/// the plain bound at 128, the 20 plain boxes past this bound ran x1.68
/// faster as tiles (every one, x1.25 to x2.25, though none as fast as torch:
/// median 0.158 -> 0.255, torch 0.318; `[7,281970,17] [2,1,0]` u8 0.115 ->
/// 0.260, torch 0.272; `[3,466033,12] [2,1,0]` u16 0.204 -> 0.378), those of
/// 1-byte `b` of 12 and 13 x1.10 to x1.15 (kept gathered at this bound), where
/// 11 of 15 boxes over two outer axes ran slower as tiles (`[3,6,143395,13]
/// [0,3,2,1]` u8 0.340 -> 0.252). Random permutes of the class:
/// `[5,5,2,55924,12] [4,0,2,3,1]` u8 0.19 -> 0.33 (torch 0.26),
/// `[60,7,6,21,37,17] [3,0,5,2,4,1]` u8 (`b` of 17) 0.22 -> 0.34, while
/// `[882,2,2,9,48,22] [5,2,1,0,4,3]` u8 (`b` of 22) keeps its tiles (0.28
/// against 0.19 gathered). 4-byte boxes run the folded tall kernel instead
/// (`tall_plan`).
pub fn box_gathers(tiled: &Plan) -> bool {
    let e = tiled.elem_bytes;
    e <= 2
        && TransposeSpec::small(e).is_ok_and(|small| {
            gather_shape(&tiled.axes).is_some_and(|g| {
                let b = g.src_batch_stride;
                let max = if g.outer.n <= 1 {
                    LANES_PLAIN_BOX_MAX
                } else {
                    LANES_BOX_MAX
                };
                lanes_gather(&g, &small.geometry)
                    && b.saturating_mul(b).saturating_mul(u64::from(e)) <= max
            })
        })
}
