//! When a permute's transpose or copy runs faster as a gather, and the gather's
//! shape.
//!
//! A gather writes the destination as one dense run and reads each element
//! from its own source address (a `small` kernel whose matrices are one column
//! of the destination's innermost axis, every other axis a batch axis). It
//! needs no tile, so short tile sides cost it nothing, and its stores are whole
//! 16-byte vectors whatever the blocks of a copy; what it pays for is the
//! source sectors it touches: a sector whose elements lie far apart in the
//! destination is fetched once per far-apart use ([`sector_use`]).
//!
//! ```
//! use bankfree_gen::select::permute::{plan, Kind, Permute};
//! // [a, b, c] -> [c, b, a] of a short `a`: tiles of 2 rows, a gather instead.
//! assert_eq!(plan(&Permute::new(&[2, 8388608, 2], &[2, 1, 0], 1))?.kind, Kind::Gather);
//! // NCHW -> NHWC fills its tiles: a transpose.
//! assert_eq!(plan(&Permute::new(&[64, 256, 56, 56], &[0, 2, 3, 1], 2))?.kind, Kind::Transpose);
//! // Blocks of 40 bytes, not whole 16-byte vectors: a gather; of 256, a copy.
//! assert_eq!(plan(&Permute::new(&[4, 209715, 5], &[1, 0, 2], 8))?.kind, Kind::Gather);
//! assert_eq!(plan(&Permute::new(&[4, 2048, 128], &[1, 0, 2], 2))?.kind, Kind::Copy);
//! # Ok::<(), bankfree_gen::select::permute::PermuteError>(())
//! ```

use crate::check::fit::refusal;
use crate::check::refusal::Refusal;
use crate::check::suit::unsuited;
use crate::ir::expr::MAX_OUTER;
use crate::ir::shape::{Axis, Fold, Outer, Shape};
use crate::kernel::geometry::{Form, Geometry, SMALL_MAX_ELEMS, SMALL_WIDE_MAX_ELEMS};
use crate::kernel::spec::{SpecError, Strategy, TransposeSpec};
use crate::memo::Memo;
use crate::select::choice::{fast_variant, shape_specs};

mod thin;

pub use thin::{
    short_thin_items, short_thin_tiles, thin_tile_min_cols, THIN_GATHER_MAX_MATRIX_BYTES,
    THIN_GATHER_MAX_ROW_BYTES,
};

/// The shape of a gather over merged `axes`, where a `small` kernel takes it:
/// the destination one dense run (each axis's destination stride the product of
/// the extents inside it), its innermost axis of 2 to [`SMALL_WIDE_MAX_ELEMS`]
/// items (the rows of one-column matrices; above 16384 only the kernels with
/// wider quotients take them), at most [`MAX_OUTER`] axes outside the batch's
/// first.
pub(crate) fn gather_shape(axes: &[Axis]) -> Option<Shape> {
    let mut order: Vec<Axis> = axes.to_vec();
    order.sort_by_key(|a| a.dst);
    let mut want = 1u64;
    for a in &order {
        if a.dst != want {
            return None;
        }
        want = want.checked_mul(a.ext)?;
    }
    let (row, batch) = order.split_first()?;
    if !(2..=SMALL_WIDE_MAX_ELEMS).contains(&row.ext) || batch.len() > usize::from(MAX_OUTER) + 1 {
        return None;
    }
    let mut shape = Shape {
        src_ld: row.src,
        dst_ld: row.ext,
        ..Shape::new(row.ext, 1)
    };
    if let Some((first, more)) = batch.split_first() {
        shape.batch = batch.iter().map(|a| a.ext).product();
        shape.src_batch_stride = first.src;
        shape.dst_batch_stride = first.dst;
        shape.outer = Outer::new(more)?;
    }
    Some(shape)
}

/// The share of each 32-byte source sector a gather uses while it is near:
/// over the axes that step inside a sector (innermost source stride first), the
/// elements a block's chunk of `chunk` consecutive destination elements reaches
/// (an axis whose destination stride is `d` keeps `chunk / d` of its steps in
/// one chunk, at least 1), over the sector's elements. 1 where a sector's
/// elements lie close in the destination; `1 / 32` of a byte sector whose
/// elements each land a chunk or more apart, which the gather fetches again for
/// each of them.
pub fn sector_use(axes: &[Axis], elem_bytes: u32, chunk: u64) -> f64 {
    let per_sector = (32 / u64::from(elem_bytes)).max(1) as f64;
    let mut inner: Vec<&Axis> = axes.iter().collect();
    inner.sort_by_key(|a| a.src);
    let mut near = 1.0;
    for a in inner {
        if a.src as f64 >= per_sector {
            break;
        }
        let steps = (a.ext as f64).min(per_sector / a.src as f64);
        near *= steps.min((chunk as f64 / a.dst as f64).max(1.0));
    }
    (near / per_sector).min(1.0)
}

/// [`sector_use`] over a block's chunk of the `small` kernel that gathers
/// `elem_bytes`-byte elements (the share of each source sector a gather of
/// merged `axes` uses).
pub fn gather_sector_use(axes: &[Axis], elem_bytes: u32) -> Result<f64, SpecError> {
    let chunk = TransposeSpec::small(elem_bytes)?
        .geometry
        .small_chunk_elems();
    Ok(sector_use(axes, elem_bytes, u64::from(chunk)))
}

/// The least [`sector_use`] a gather needs to replace 1-byte tiles filled
/// above [`GATHER_BELOW_FILL`].
pub const GATHER_MIN_SECTOR_USE: f64 = 1.0 / 3.0;

/// Tiles filled below this share run slower than a gather that uses
/// [`GATHER_LOW_FILL_MIN_USE`] of its sectors.
pub const GATHER_BELOW_FILL: f64 = 0.4;

/// The least [`sector_use`] a gather needs to replace tiles filled below
/// [`GATHER_BELOW_FILL`].
pub const GATHER_LOW_FILL_MIN_USE: f64 = 0.1;

/// Tiles filled below this share (and above [`GATHER_BELOW_FILL`]) run
/// slower than a gather that uses its sectors well: 1-byte tiles where the
/// gather uses [`GATHER_MIN_SECTOR_USE`] of them, 2- and 4-byte tiles where
/// it uses them whole.
pub const GATHER_PART_FILL: f64 = 0.6;

/// The fewest elements of each source sector a gather must use while it is
/// near (its [`sector_use`] times the sector's elements) to replace folded
/// tiles that split their destination's sectors ([`splits_sectors`]): at most
/// one sector fetched for every 4 elements moved.
pub const GATHER_SPLIT_MIN_ELEMS: f64 = 4.0;

/// The most destination rows (the destination's innermost side) of a
/// transpose whose 32-wide tiles write enough of their pieces as parts of
/// sectors for [`splits_sectors`]: each destination row's last piece is one in
/// at most 8.
pub const SPLIT_MAX_ROWS: u64 = 256;

/// The most rows of a plain 2-byte matrix (no folded side) that gathers where
/// its tiles split sectors ([`splits_sectors`]).
pub const SPLIT_PLAIN_MAX_ROWS: u64 = 128;

/// Whether the tiles of a transpose of `elem_bytes`-byte elements whose rows
/// are one axis leave pieces of the destination's 32-byte sectors for other
/// blocks to finish, on at least one of every eight of the pieces they write:
/// its rows (the destination's innermost side) longer than one 32-wide tile and
/// at most [`SPLIT_MAX_ROWS`], and a row's last piece, or the rows' starts (the
/// destination strides of the column axes), off a sector boundary. (Folded
/// rows keep their tiles:
/// `[11,1323,9,64] [1,3,0,2]` f32, rows of 99 over two axes, ran at 0.92 of
/// memcpy as tiles and 0.78 gathered.)
pub fn splits_sectors(shape: &Shape, elem_bytes: u32) -> bool {
    let off = |n: u64| off_sector(n, elem_bytes);
    shape.fold.counts()[0] == 0
        && (33..=SPLIT_MAX_ROWS).contains(&shape.rows)
        && (off(shape.rows % 32)
            || std::iter::once(shape.dst_ld)
                .chain(shape.fold.cols.axes().iter().map(|a| a.dst))
                .any(off))
}

/// Whether a transpose whose tiles split sectors ([`splits_sectors`]) was
/// measured faster gathered for its element size and batch: 1- and 2-byte
/// elements of one matrix or of a batch whose axis is the outermost in both
/// buffers, 4-byte elements of one matrix. Batch axes between the matrices'
/// axes in either buffer keep the tiles: of 14 random permutes of that kind
/// (`permute --random 12`, seeds 8 to 89) 9 ran faster as tiles
/// (`[56,11,238,19,3,4] [1,3,4,2,5,0]` u8 0.42 of memcpy as tiles, 0.20
/// gathered), and so do batches of 4-byte matrices (`[64,47,1394,2]
/// [0,3,2,1]` f32 0.97 and 0.89; H100, 2026-11-27).
///
/// Of plain matrices (no folded side; the 1-byte rule gathers 1-byte ones
/// already), one 2-byte matrix of at most [`SPLIT_PLAIN_MAX_ROWS`] rows. Of
/// `R x C` f16 matrices with rows of 40 to 250, 130 ran slower gathered (0.59
/// of memcpy as tiles, 0.45 gathered) and the rest of those up to 128 rows
/// faster; then 11 more of 36 to 125 rows, of 32 and 128 MB, all ran faster
/// gathered, x1.09 to x1.91 (`66 x 254203` 0.45 as tiles, 0.77 gathered, torch
/// 0.54; `58 x 1157050` 0.37 and 0.71, torch 0.53). Whole-sector rows keep
/// their tiles (`80 x 209716` 1.03 and 0.89), and 4-byte matrices ran alike
/// either way (`101 x 83056` 0.77 both ways; H100, 2026-11-27).
fn split_gathers(shape: &Shape, elem_bytes: u32) -> bool {
    if shape.fold == Fold::NONE {
        return elem_bytes == 2 && shape.batch == 1 && shape.rows <= SPLIT_PLAIN_MAX_ROWS;
    }
    let one = Shape { batch: 1, ..*shape };
    let apart = shape.batch == 1
        || (shape.outer.n == 0
            && one.src_elems().is_ok_and(|n| shape.src_batch_stride >= n)
            && one.dst_elems().is_ok_and(|n| shape.dst_batch_stride >= n));
    match elem_bytes {
        1 | 2 => apart,
        4 => shape.batch == 1,
        _ => false,
    }
}

/// Whether the transpose `shape` over merged `axes` runs faster as a gather
/// (H100, `permute --random 12` over seeds 8 to 27, each plan run both ways;
/// docs/design.md has the figures):
/// * a square-tile transpose whose tiles are filled below [`GATHER_BELOW_FILL`]
///   (`fill`, the product of both sides' shares of their 32-wide tiles) where
///   the gather uses at least [`GATHER_LOW_FILL_MIN_USE`] of its sectors:
///   `[2,4,524288] [2,1,0]` f64 0.70 of memcpy as tiles, 0.95 gathered,
///   `[54,3,46,2,51,11] [4,2,0,5,1,3]` f32 0.23 and 0.90, `[4,838860,5]
///   [2,1,0]` f16 (a fifth of each sector) 0.11 and 0.49; below that the gather
///   loses too (`[5,5,2,55924,12] [4,0,2,3,1]` u8, a twelfth: 0.18 and 0.14;
///   down the columns it wins, `permute::box_gathers`), and so it does for
///   4- and 8-byte elements longer than a tile on both sides
///   ([`sparse_keeps_tiles`]);
/// * for 1-byte elements, whose square tiles are slow, tiles filled below
///   [`GATHER_PART_FILL`], or any tiles with whole sectors used, where the
///   gather uses at least [`GATHER_MIN_SECTOR_USE`] of them:
///   `[6,2,3,8176,38,3] [3,4,5,0,2,1]` u8 0.20 and 0.66; where sectors are
///   used less it loses (`[8,4,24,8,18,303] [5,1,3,4,2,0]` u8, a 32nd of
///   each: 0.34 and 0.09);
/// * for 2- and 4-byte elements, tiles filled below [`GATHER_PART_FILL`] where
///   the gather uses its sectors whole (H100, each plan both ways in one
///   call, 2026-11-27): `[37,3,75573] [2,1,0]` f32 0.60 as tiles, 0.90
///   gathered, `[38,3,7,467,3,15] [3,1,2,5,4,0]` f16 0.43 and 0.77,
///   `[7,19,34,154,24] [1,3,0,4,2]` f16 0.50 and 0.78, `[19,8,3,1415,13]
///   [1,3,2,4,0]` f32 0.79 and 0.91, `[12,44,37,50,17] [0,1,3,4,2]` f16 0.62
///   and 0.82, `[5825,60,6,3] [0,3,2,1]` f32 0.80 and 0.96,
///   `[46,23,14,7,4,20] [1,3,2,5,0,4]` f32 0.75 both ways; 8-byte tiles of
///   the same fills ran as fast or faster (`[39,23,8,5,3,38] [0,4,2,5,1,3]`
///   f64 1.05 against 0.94, `[4,61,31,5,3,36] [0,3,1,5,2,4]` 1.04 against
///   0.94, `[716,5,13,3,30] [0,2,4,3,1]` 1.07 against 1.05);
/// * a folded transpose whose tiles split their destination's sectors
///   ([`splits_sectors`]), of the element sizes and batches
///   [`split_gathers`] names, where the gather uses at
///   least [`GATHER_SPLIT_MIN_ELEMS`] elements of each sector while it is near
///   (H100, `probe` of each plan's kernels and torch's permuted copy, 74
///   permutes of 32 and 256 MB, one call each, 2026-11-27): `[33,254200,2]
///   [2,1,0]` f16 0.43 of memcpy as tiles, 0.57 gathered (torch 0.56),
///   `[36,155344,6] [2,1,0]` u8 0.27 and 0.49 (torch 0.31), `[65,1032444,2]
///   [2,1,0]` f16 (256 MB) 0.27 and 0.50 (torch 0.40), `[47,713924,2]
///   [2,1,0]` f32 (256 MB) 0.41 and 0.58 (torch 0.50), `[2048,36,75,6]
///   [0,3,2,1]` u8 0.30 and 0.59 (torch 0.30); with fewer elements used the tiles tie
///   (`[55,50840,3] [2,1,0]` f32, 2.7 of a sector's 8: 0.58 and 0.56), and so
///   do they where their pieces are whole sectors (`[200,13981,3] [2,1,0]`
///   f32 0.96 and 0.50, `[80,69905,3] [2,1,0]` f16 0.71 and 0.57) and for
///   8-byte elements however they split (`[65,21509,3] [2,1,0]` f64 0.81 and
///   0.59);
/// * a tall or wide transpose of matrices below [`NARROW_GATHER_SHARE`] of
///   its chunk, whose blocks then move little each (one matrix a block):
///   `[21,6,94,3,39,6] [3,5,2,0,1,4]` f32, matrices of 234 elements, 0.15
///   and 0.53;
/// * a thin transpose of a batch of matrices shorter than one of the thin
///   kernel's sub-tiles, where the gather uses at least
///   [`GATHER_MIN_SECTOR_USE`] of its sectors
///   ([`crate::check::suit::thin_min_rows`], with the figures), or of plain
///   matrices whose rows are short ([`short_thin_items`]).
///
/// The gathering kernels themselves (`small`, `strip`, `planar`) keep their
/// shapes.
pub(crate) fn gathers(axes: &[Axis], shape: &Shape, elem_bytes: u32) -> bool {
    let Ok(used) = gather_sector_use(axes, elem_bytes) else {
        return false;
    };
    let base = TransposeSpec::new(32, elem_bytes, Strategy::Xor);
    let narrow = base.map(|s| shape_specs(&s)).unwrap_or_default();
    // The first narrow kernel that takes the shape (the square tiles' `skew`
    // and `wordvec` are not narrow), or a thin one that would but for its
    // batch's short matrices; a tall kernel takes folded rows only
    // where the planner folds them for it (`permute::tall_plan`), not here.
    let first = narrow.iter().map(|s| s.geometry).find(|g| {
        let square = matches!(g.form, Form::Skew | Form::Wordvec);
        let folded_tall = g.form == Form::Tall && shape.fold != Fold::NONE;
        !square
            && !folded_tall
            && matches!(unsuited(g, shape), None | Some(Refusal::ShortItems { .. }))
    });
    let elems = shape.rows.saturating_mul(shape.cols);
    match first.map(|g| (g.form, g)) {
        Some((Form::Tall | Form::Wide, g)) => {
            elems.saturating_mul(NARROW_GATHER_SHARE) < u64::from(g.chunk_elems())
        }
        Some((Form::Thin, g)) => {
            shape.rows < u64::from(g.thin_tile_rows())
                && (used >= GATHER_MIN_SECTOR_USE || short_thin_items(shape, elem_bytes))
        }
        Some(_) => false,
        None => {
            let fill = tile_fill(shape.rows) * tile_fill(shape.cols);
            if fill < GATHER_BELOW_FILL {
                used >= GATHER_LOW_FILL_MIN_USE && !sparse_keeps_tiles(shape, elem_bytes, used)
            } else if splits_sectors(shape, elem_bytes) && split_gathers(shape, elem_bytes) {
                used * f64::from(32 / elem_bytes) >= GATHER_SPLIT_MIN_ELEMS
            } else {
                let part = fill < GATHER_PART_FILL;
                match elem_bytes {
                    1 => used >= GATHER_MIN_SECTOR_USE && (part || used >= 1.0),
                    2 | 4 => part && used >= 1.0,
                    _ => false,
                }
            }
        }
    }
}

/// A batch of matrices whose narrow kernel (`tall` or `wide`, one matrix a
/// block) would fill less than `1 / NARROW_GATHER_SHARE` of each block's
/// chunk gathers (where the gather would be sparse, the planner folds the
/// rows for the tall kernel instead, `permute::tall_plan`). H200
/// (`--example permute -- --shape ...`, 2026-11-29), the 77 batches of
/// 4- and 8-byte matrices below half a chunk among `permute --plans --random
/// 12` over seeds 1000 to 3200 that the tall kernel ran at an eighth, each
/// with the bound at an eighth, a quarter and a half in one call, two runs
/// each: below a quarter all 30 ran faster (x1.35 to x2.81, `[7,49,3,14,35,8]
/// [3,2,0,5,1,4]` f64, 35 x 8 matrices: 0.365 -> 1.032); from a quarter to a
/// third 19 of 20 ran faster (x1.07 to x2.09) and one alike (x0.97); from a
/// third to a half 8 of 27 ran faster and 15 slower (x0.55: `[4,4,292,32,28]
/// [2,4,0,1,3]` f64, 896 of 2048 elements, 0.948 -> 0.523). Below a third,
/// the 50 plans ran x1.59 (median 0.439 -> 0.710 of memcpy, torch 0.546),
/// below torch 33 -> 2.
pub const NARROW_GATHER_SHARE: u64 = 3;

/// The most [`sector_use`] of a gather that a batch of 4- and 8-byte
/// matrices longer than one 32-wide tile on both sides keeps its tiles
/// under ([`sparse_keeps_tiles`]).
pub const SPARSE_TILES_MAX_USE: f64 = 0.3;

/// Whether a transpose of `elem_bytes`-byte elements that the low-fill rule
/// would gather ([`GATHER_BELOW_FILL`]) keeps its tiles: 4-byte elements or
/// wider, both sides longer than one 32-wide tile (33 to about 50 items fill
/// their two tiles a side below the bar), and a gather that would use less
/// than [`SPARSE_TILES_MAX_USE`] of each source sector, one element of each
/// for 4- and 8-byte ones. H200, `--example permute -- --shape ...`
/// (2026-11-29), every gather of 4- and 8-byte elements under that use that
/// the tall kernel did not take among `permute --plans --random 12` over
/// seeds 1000 to 2500 (103), gather and tiles in one call: all 28 with both
/// sides above 32 ran faster as tiles, x1.10 to x3.59 (`[44,5295,36] [2,1,0]`
/// f32, 44 x 36: 0.278 gathered, 0.760 as tiles, torch 0.315;
/// `[112,4,3,2,38,41] [5,2,3,0,1,4]` f64 0.527 and 0.892); of the 20 with a
/// shorter side of 8 to 23, 10 ran faster as tiles and 9 gathered, and of
/// the 55 with a side below 8, 44 ran faster gathered. The build before and
/// this one in one call: x1.62 on the 28, median 0.410 -> 0.721 of memcpy
/// (torch 0.423), 23 -> 1 slower than torch.
pub fn sparse_keeps_tiles(shape: &Shape, elem_bytes: u32, used: f64) -> bool {
    elem_bytes >= 4 && shape.rows > 32 && shape.cols > 32 && used < SPARSE_TILES_MAX_USE
}

/// Whether the attribute's list runs its measured vector kernel on the plain
/// matrix `shape` of `elem_bytes`-byte elements (both pointers aligned): no
/// narrow kernel takes it, no skew tile either, and the vector kernel fits and
/// suits it. The gather rules above were measured against the skew and
/// 1-element tiles, never against a vector kernel, so a `tile = auto` function
/// keeps its list for such a matrix (`bankfree::permute` of the same call
/// follows the gather rules alone).
///
/// A `tile = auto` call that the planner gathers asks on every launch, so each
/// (shape, element size) is decided once per process (the decision builds and
/// checks the list's specs: about 2 us).
pub fn vector_runs(shape: &Shape, elem_bytes: u32) -> bool {
    static RUNS: Memo<(Shape, u32), bool> = Memo::new(1 << 12);
    *RUNS.get_or_insert_with(&(*shape, elem_bytes), || {
        let Ok(base) = TransposeSpec::new(32, elem_bytes, Strategy::Xor) else {
            return false;
        };
        let takes = |g: &Geometry| refusal(g, shape).is_none() && unsuited(g, shape).is_none();
        shape.fold == Fold::NONE
            && !shape_specs(&base).iter().any(|s| takes(&s.geometry))
            && fast_variant(&base).is_some_and(|v| v.geometry.vec > 1 && takes(&v.geometry))
    })
}

/// Whether a copy of `shape` runs faster as a gather: where its widest copy
/// kernel (`widest`, of 16-byte vectors) refuses the shape, so that a narrower
/// one would run, its blocks or strides not whole vectors, and its blocks
/// (`cols`) are at most [`SMALL_MAX_ELEMS`] elements; longer blocks copy faster
/// however narrow (`[25,8,167772] [1,0,2]` u8: 0.82 as a copy, 0.27 gathered;
/// `[8,11,10,19065] [2,1,0,3]` f16 0.53 and 0.39). Below that (H100, `permute
/// --random 12` over seeds 8 to 27, each copy plan run both ways: 22 of 23 such
/// copies ran faster gathered, `[4,209715,5] [1,0,2]` f64 0.43 of memcpy as a
/// copy of 40-byte blocks, 1.04 gathered, `[11,55461,55] [1,0,2]` u8 0.29 and
/// 0.74; `[2,6,36,8630,9] [2,0,3,1,4]` u8 0.29 and 0.23; of the 12 copies of
/// whole vectors, 11 ran as fast as copies (within 1%) or faster,
/// `[51,2,2570,4,32] [2,1,3,0,4]` u8 0.87 and 0.41).
///
/// Copies of whole vectors whose destination blocks are not whole 32-byte
/// sectors (a block's bytes or the destination pitch not a multiple of 32) run
/// as gathers too, for elements of 2 bytes or more: each block then shares a
/// sector with a block that another batch item writes, later. H100, `probe` of
/// `[A, B, C] -> [B, A, C]` of 32 MB, copy against gather, one call,
/// 2026-11-27: blocks of 80 bytes 0.68 to 0.71 of memcpy against 0.87 to 1.04
/// (2-, 4- and 8-byte elements, A = 7 and 29), `[29,1205,12,10] [2,1,0,3]`
/// f64 0.73 against 0.98 (torch 0.88); blocks of 32, 64, 128 and 256 bytes
/// 0.89 to 1.08 against 0.83 to 1.07.
pub(crate) fn gathers_copy(widest: &TransposeSpec, shape: &Shape) -> bool {
    let e = widest.geometry.elem_bytes;
    let off = |n: u64| off_sector(n, e);
    shape.cols <= SMALL_MAX_ELEMS
        && (refusal(&widest.geometry, shape).is_some()
            || (e >= 2 && (off(shape.cols) || off(shape.dst_ld))))
}

/// Whether `n` elements of `elem_bytes` bytes end off a 32-byte sector boundary
/// (`n * elem_bytes` not a multiple of 32, computed without overflow).
fn off_sector(n: u64, elem_bytes: u32) -> bool {
    !((n % 32) * u64::from(elem_bytes)).is_multiple_of(32)
}

/// The share of the 32-wide tiles covering a side of `n` items that it fills.
pub(crate) fn tile_fill(n: u64) -> f64 {
    n as f64 / n.next_multiple_of(32).max(1) as f64
}

#[cfg(test)]
mod tests;
