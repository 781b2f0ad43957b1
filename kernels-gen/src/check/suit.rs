//! Whether a kernel's form is meant for a call it can run: the planner's
//! measured rules on top of [`crate::check::fit`], checked without allocating
//! (the runtime asks on every launch).
//!
//! ```
//! use bankfree_gen::{check::suit::unsuited, Form, Geometry, Shape};
//! let tile64 = Geometry { form: Form::Tile, tile: 64, block_rows: 4, elem_bytes: 1, vec: 1, split: false };
//! // A 64-tile on a side below it leaves most of itself idle.
//! assert!(unsuited(&tile64, &Shape::new(100_000, 21)).is_some());
//! assert_eq!(unsuited(&tile64, &Shape::new(4097, 4095)), None);
//! ```

use crate::check::fit::{kernel_refusal, outer_strides, vec_refusal};
use crate::check::refusal::{Refusal, SMALL_SUITS_BYTES};
use crate::ir::shape::{Fold, Shape};
use crate::kernel::geometry::{Form, Geometry, Quotients, MAX_NARROW};
use crate::kernel::quotients::SMALL_MAX_ELEMS;
use crate::kernel::squat::SQUAT_BLOCKS;

/// Whether the planner runs a `squat` kernel on `rows` rows of
/// `elem_bytes`-byte elements (the strip kernel runs the other heights): every
/// 1-byte height from 3 but the multiples of 4 from 24, and the odd 2-byte
/// heights from 5. On the H100 (`bench --alternatives`, 12 and 40 MB of each
/// height, one call, squat / strip): 1-byte 3 rows 1.039 / 1.094 and 0.967 /
/// 0.923, 6 rows 1.052 / 1.096 and 0.987 / 0.915, 10 rows 1.039 / 1.034 and
/// 1.003 / 0.892, 16 rows 1.011 / 1.005 and 0.975 / 0.839, 22 rows 0.822 /
/// 0.874 and 0.907 / 0.824, 26 rows 0.910 / 0.812 and 0.905 / 0.815, 30 rows
/// 0.873 / 0.590 and 0.789 / 0.774; but 24, 28 and 32 rows 0.967 / 1.068 and
/// 0.850 / 0.903, 0.873 / 0.993 and 0.816 / 0.859, 0.914 / 0.998 and 0.749 /
/// 0.822. 2-byte 5 rows 1.199 / 1.149 and 1.017 / 0.933 (odd heights from 7
/// ran 0.94 to 1.03 against 0.71 to 0.89 from 21 rows); 3 rows 1.034 / 1.181
/// and 0.935 / 0.973, and every even height from 4 to 32 ran faster or alike
/// on the strip kernel (20 rows 0.856 / 1.133 and 0.882 / 0.953).
pub fn squat_suits_height(elem_bytes: u32, rows: u64) -> bool {
    // `SQUAT_HEIGHTS` says this in words.
    match elem_bytes {
        1 => rows >= 3 && !(rows >= 24 && rows.is_multiple_of(4)),
        _ => rows >= 5 && !rows.is_multiple_of(2),
    }
}

/// Whether a `skew` tile also suits destinations whose rows start on 32-byte
/// sectors: the 32 x 16-thread one of 12-byte elements (the planner's default),
/// whose 71 rows of three words outran the 64-tile of 64 x 8 threads on every
/// aligned shape measured (CuPy, CUDA events over rotating source copies, the
/// kernels as emitted, one call per GPU, 2026-11-25; H200 / H100): 8192 x 8192
/// 0.889 against 0.865 / 0.936 against 0.940, 4096 x 8192 0.894 against 0.857
/// / 0.934 against 0.930, 16384 x 1024 0.874 against 0.830 / 0.927 against
/// 0.911, 8 x 2048 x 2048 0.896 against 0.852 / 0.951 against 0.935, 3000 x
/// 5000 0.823 against 0.793 / 0.915 against 0.880, 64 x 512 x 512 0.897
/// against 0.844 / 0.972 against 0.938. (This layer cannot ask
/// `select::choice::skew_spec(12)`; a test there keeps the two equal.)
pub fn skew_everywhere(g: &Geometry) -> bool {
    g.form == Form::Skew && g.elem_bytes == 12 && g.tile == 32 && g.block_rows == 16
}

/// The planner's rule for the `realign` form: shapes no vec kernel takes
/// ([`REALIGN_VEC`]; the runtime also runs it where a pointer keeps them off),
/// rows and columns at least [`realign_min_sides`].
fn realign_unsuited(elem_bytes: u32, shape: &Shape) -> Option<Refusal> {
    let (min_rows, min_cols) = realign_min_sides(elem_bytes);
    let short = [
        ("rows", shape.rows, min_rows),
        ("cols", shape.cols, min_cols),
    ]
    .into_iter()
    .find(|&(_, n, min)| n < min);
    if let Some((side, n, min)) = short {
        return Some(Refusal::Edges { side, n, min });
    }
    vec_refusal(REALIGN_VEC, shape)
        .is_none()
        .then_some(Refusal::VecRuns { vec: REALIGN_VEC })
}

/// The fewest rows and columns the planner runs a `realign` kernel on.
///
/// 1-byte elements: rows from 257 (fewer gather where the permute planner
/// gathers them, which outruns this kernel there: 200 x 200001 0.58 of memcpy
/// against 0.40, 101 x 400001 0.53 against 0.26), columns from 33 (past what
/// the tall kernels take; the thin kernel, up to 40 columns, comes first where
/// the source rows are one run), against the 64-tile of single bytes (or the
/// 32-tile, below 64 columns). H100, `bench -- --shape ... --alternatives` (20
/// to 40 MB, one call each, 2026-11-27): 257 x 130003 0.46 against 0.37, 300 x
/// 100001 0.53 against 0.37, 450 x 70001 0.60 against 0.37, 499 x 67001 0.62
/// against 0.37, 200001 x 129 0.68 against 0.48, 100001 x 300 0.84 against
/// 0.51, 70001 x 450 0.90 against 0.49 (8 MB: 333 x 25001 0.63 against 0.65).
/// The earlier kernel (one word stored a lane) on the columns: 1000001 x 38
/// 0.49 against 0.32, 1290323 x 33 0.44 against 0.28, 600001 x 67 0.60
/// against 0.42, batches of 1025 x 130 0.60 against 0.49 and of 600 x 101
/// 0.64 against 0.54.
///
/// 2-byte elements: rows from 192 and columns from 96, against the skew tile
/// (same call): 200 x 75001 0.75 against 0.72, 300 x 50001 0.86 against 0.79,
/// 513 x 31001 0.90 against 0.80, 999 x 16001 0.95 against 0.82, 150001 x 100
/// 0.89 against 0.80, 100001 x 130 0.80 against 0.77, 75001 x 200 0.91
/// against 0.83, 50001 x 300 0.97 against 0.83; below them the skew tile ran
/// as fast or faster: 150 x 100001 0.65 against 0.67, 230001 x 65 0.74 against
/// 0.76 (and matrices of up to 128 rows gather: 100 x 150001 0.80, where this
/// kernel ran 0.54). Calls of 8 MB ran both above their target, the skew tile
/// the faster (the earlier kernel: 364 x 17384 0.92 against 1.00, 8193 x 511
/// 1.06 against 1.11).
pub fn realign_min_sides(elem_bytes: u32) -> (u64, u64) {
    if elem_bytes == 1 {
        (257, MAX_NARROW + 1)
    } else {
        (192, 96)
    }
}

/// Whether every destination row of `shape` (of `e`-byte elements) starts on a
/// 32-byte sector where the first one does: its pitch, batch stride and outer
/// strides whole sectors (`n * e` modulo 32 without the product, which may not
/// fit 64 bits).
fn dst_on_sectors(e: u64, shape: &Shape) -> bool {
    let aligned = |n: u64| ((n % 32) * e).is_multiple_of(32);
    aligned(shape.dst_ld)
        && (shape.batch <= 1 || aligned(shape.dst_batch_stride))
        && outer_strides(shape).all(|(name, s)| !name.starts_with("dst") || aligned(s))
}

/// The narrowest sources a `thin` kernel leaves to the vec kernels where they
/// take the call (every side, pitch and stride a multiple of [`REALIGN_VEC`],
/// the pointers on its vector) and no skew tile comes first (2-byte
/// destination rows on sectors): 40 columns of 1-byte elements, 32 of 2-byte
/// ones. `bench -- --shape ... --alternatives` (40 MB, one call per GPU,
/// 2026-11-27), thin against the vec kernel, H100 / H200: 1-byte 28 columns
/// 0.94 / 0.85 of memcpy against 0.71 / 0.54, 32 0.80 / 0.68 against 0.72 /
/// 0.54, 36 0.82 / 0.70 against 0.82 / 0.64, 40 0.76 / 0.61 against 0.81 /
/// 0.62; 2-byte 28 0.97 / 0.89 against 0.96 / 0.84, 32 0.84 / 0.73 against
/// 0.94 / 0.83, 36 0.87 / 0.76 against 0.99 / 0.91, 40 0.83 / 0.71 against
/// 0.98 / 0.89. Narrower sources leave most of a vec tile idle (1-byte 12
/// columns: 0.98 against 0.36 on the H100). The skew tile, which comes before
/// the vec kernels in the list, ran 582540 x 36 2-byte (rows off their
/// sectors) at 0.48 on the H200, where thin ran 0.76.
pub fn thin_vec_cols(elem_bytes: u32) -> u64 {
    if elem_bytes == 1 {
        40
    } else {
        32
    }
}

/// The fewest rows of a batch's matrices a `thin` kernel with folded columns
/// (a permute's) runs: half a sub-tile's ([`Geometry::thin_tile_rows`]: 496
/// of 1-byte elements, 248 of 2-byte ones). A block moves one matrix's
/// sub-tiles, so shorter matrices leave most of it idle; the planner gathers
/// batches of matrices shorter than a whole sub-tile where the gather uses its
/// sectors well (`crate::select::gather`). Batches of plain matrices keep the
/// thin kernel where the list reaches it (the small kernel comes first below
/// `SMALL_SUITS_BYTES`); the kernels after it were not measured against it
/// there. H100, `[B, R, 6, 3] -> [B, 3, 6, R]` permutes of
/// 24 MB (the columns folded), thin against a gather and the 32-tile, one
/// call, 2026-11-27: 1-byte 5 rows 0.004 of memcpy against 0.57 and 0.07, 60
/// rows 0.05 against 0.58 and 0.35, 400 rows 0.37 against 0.54 and 0.36, 1000
/// rows 0.51 against 0.51 and 0.40; 2-byte 5 rows 0.01 against 0.86 and 0.12,
/// 150 rows 0.34 against 0.79 and 0.54, 400 rows 0.64 against 0.74 and 0.56
/// (of 4 x 5 columns 0.69 against 0.60), 1000 rows 0.70 against 0.44 and
/// 0.56. torch's `y.copy_(x.permute(p))` ran them at 0.36 (1-byte) and 0.45
/// to 0.62 (2-byte). Where the gather's sectors are used less, a matrix of
/// half a sub-tile or more stays the thin kernel's: `[9,22,25,282,12]
/// [0,4,2,1,3]` f16 (282 rows, a twelfth of each source sector gathered) ran
/// at 0.26 gathered, torch 0.53.
pub fn thin_min_rows(g: &Geometry) -> u64 {
    u64::from(g.thin_tile_rows()) / 2
}

/// The block side of the 1- and 2-byte vec kernels the planner runs first
/// ([`crate::select::choice::HOPPER_DEFAULTS`]): a `realign` kernel leaves them
/// the shapes whose sides, pitches and strides divide by it (on aligned 8192 x
/// 8192 u8 it ran at 0.61 to 0.70 of memcpy, the vec kernel at 0.94).
pub const REALIGN_VEC: u32 = 4;

/// The planner's rule for the `small` form (`bench --random 1 --ladder
/// --alternatives`, H100, 32 MB batches): it beats the tile kernels on matrices
/// below [`SMALL_SUITS_BYTES`] (f32 12 x 40: 1.02 of memcpy against 0.47; 12-byte
/// 16 x 16: 0.86 against 0.74; 16-byte 8 x 8: 0.97 against 0.56) and loses above
/// it (f32 32 x 32: 0.92 against 0.99; 8-byte 24 x 57: 1.00 against 1.08;
/// 2-byte 64 x 64: 0.88 against 0.96), except for 1-byte elements whose sides are
/// not multiples of 4, which no vector tile kernel runs (63 x 61: 0.82 against
/// 0.60), up to the largest matrices the 32-bit kernel takes
/// ([`SMALL_MAX_ELEMS`]). Larger unaligned ones, which only the wider
/// quotients' twins take (a permute's batch over outer axes), go to the
/// kernels a plain batch of them runs: the squat, thin, strip and realign
/// kernels. On an H200 (`--example permute -- --shape ...`, the build before
/// and this one in one call, 2026-11-29), the 51 random permutes of
/// `permute --plans --random 12`, seeds 8 to 800, that this moves ran 2.2 to
/// 8.0 times faster, from 0.09 to 0.20 of memcpy to 0.32 to 1.01, and from
/// below torch's permuted copy on 50 of them to above it on all
/// (`[15,15,6,24855] [2,0,3,1]` u8, 15 x 24855 matrices: 0.20 -> 0.93 on
/// the squat kernel, torch 0.29).
fn small_unsuited(e: u64, shape: &Shape) -> Option<Refusal> {
    // Matrices of one column: a permute's gather, which no tile runs.
    if shape.cols == 1 {
        return None;
    }
    let elems = shape.rows * shape.cols; // `refusal` bounded rows * cols
    let bytes = elems * e;
    let unaligned_bytes = e == 1
        && elems <= SMALL_MAX_ELEMS
        && !(shape.rows.is_multiple_of(4) && shape.cols.is_multiple_of(4));
    (bytes >= SMALL_SUITS_BYTES && !unaligned_bytes).then_some(Refusal::TileFaster { bytes })
}

/// Why `shape` is not what this form is for, if it is not (the runtime's
/// `transpose_first` skips kernels whose form does not suit a call): `skew`
/// suits destinations whose rows (or matrices) do not start on 32-byte sectors
/// (every destination, for the 12-byte one: [`skew_everywhere`]),
/// the narrow forms the shapes they fit, `small` batches of matrices below
/// [`SMALL_SUITS_BYTES`] (and of unaligned 1-byte ones), `realign` large
/// matrices no vec kernel takes (`realign_unsuited`), `tile` every shape
/// (but a 1-element tile above 32, matrices at least that wide and deep).
pub fn unsuited(g: &Geometry, shape: &Shape) -> Option<Refusal> {
    kernel_unsuited(g, Quotients::Narrow, shape)
}

/// Whether a kernel suits a call over buffers at byte addresses `(src, dst)`:
/// [`kernel_unsuited`] finds nothing, or the pointers undo what it found: a
/// `skew` tile also suits a destination that starts inside a sector, and a
/// `realign` kernel the vec kernels' shapes where a pointer keeps them off
/// (not on a whole vector of [`REALIGN_VEC`] elements).
pub fn kernel_suits_at(
    g: &Geometry,
    quotients: Quotients,
    shape: &Shape,
    (src, dst): (u64, u64),
) -> bool {
    match kernel_unsuited(g, quotients, shape) {
        None => true,
        Some(_) if g.form == Form::Skew => !dst.is_multiple_of(32),
        Some(Refusal::VecRuns { vec }) => {
            let bytes = u64::from(vec * g.elem_bytes);
            !src.is_multiple_of(bytes) || !dst.is_multiple_of(bytes)
        }
        Some(_) => false,
    }
}

/// [`unsuited`] for a kernel with the wider quotients `quotients` names.
pub fn kernel_unsuited(g: &Geometry, quotients: Quotients, shape: &Shape) -> Option<Refusal> {
    if let Some(r) = kernel_refusal(g, quotients, shape) {
        return Some(r);
    }
    let e = u64::from(g.elem_bytes);
    if g.form == Form::Small {
        return small_unsuited(e, shape);
    }
    if g.realigns() {
        return realign_unsuited(g.elem_bytes, shape);
    }
    // A wide thin source the vec kernels take, where no skew tile takes it
    // first (2-byte destination rows off their sectors). The form is asked
    // first: every kernel of a list is asked this on every launch.
    if g.thins()
        && shape.cols >= thin_vec_cols(g.elem_bytes)
        && vec_refusal(REALIGN_VEC, shape).is_none()
        && (e == 1 || dst_on_sectors(e, shape))
    {
        return Some(Refusal::VecRuns { vec: REALIGN_VEC });
    }
    if g.thins() && shape.batch > 1 && shape.fold != Fold::NONE && shape.rows < thin_min_rows(g) {
        return Some(Refusal::ShortItems {
            rows: shape.rows,
            min: thin_min_rows(g),
        });
    }
    // A planar block's threads each take a block of `vec` rows per step: a
    // matrix of fewer blocks than a block has threads leaves some idle (the
    // small kernel runs such batches).
    if g.form == Form::Planar && shape.rows / u64::from(g.vec) < u64::from(g.threads()) {
        return Some(Refusal::FewRows {
            rows: shape.rows,
            min: u64::from(g.vec) * u64::from(g.threads()),
        });
    }
    // A squat tile covers `248 * vec` columns: narrower matrices leave most of
    // its lanes idle (the strip kernel gathers them). Of the heights, the
    // squat kernel takes those of `squat_suits_height`.
    let squat_cols = u64::from(SQUAT_BLOCKS) * u64::from(g.vec);
    if g.squats() && shape.cols < squat_cols {
        return Some(Refusal::FewCols {
            form: g.form,
            cols: shape.cols,
            min: squat_cols,
        });
    }
    // An interleave tile is at least a block of `vec` columns per thread:
    // narrower matrices leave threads idle (the strip or small kernel gathers
    // them). Every height it takes, it runs faster than the squat and strip
    // kernels (`kernel::interleave` has the figures).
    let interleave_cols = u64::from(g.threads()) * u64::from(g.vec);
    if g.form == Form::Interleave && shape.cols < interleave_cols {
        return Some(Refusal::FewCols {
            form: g.form,
            cols: shape.cols,
            min: interleave_cols,
        });
    }
    if g.squats() && !squat_suits_height(g.elem_bytes, shape.rows) {
        return Some(Refusal::StripHeight { rows: shape.rows });
    }
    let skew_not_needed = g.form == Form::Skew && !skew_everywhere(g) && dst_on_sectors(e, shape);
    if skew_not_needed {
        return Some(Refusal::Aligned {
            row_bytes: shape.dst_ld.saturating_mul(e),
        });
    }
    // A 1-element square tile above 32 on a matrix with a side below it leaves
    // most of itself idle: on 857079 x 21 u8 the 64-tile with 4 thread rows ran
    // at 0.29 of memcpy, the 32-tile at 0.34 (H100, `bench --random 8 --seed 4`).
    if g.form == Form::Tile && g.vec == 1 && g.tile > 32 {
        let tile = u64::from(g.tile);
        let below = [("rows", shape.rows), ("cols", shape.cols)]
            .into_iter()
            .find(|&(_, n)| n < tile);
        if let Some((side, n)) = below {
            return Some(Refusal::BelowTile {
                side,
                n,
                tile: g.tile,
            });
        }
    }
    if g.packs() && g.form == Form::Tall {
        let max = packed_tall_max_cols(g.elem_bytes);
        if shape.cols > max {
            return Some(Refusal::TileWins {
                cols: shape.cols,
                max,
                elem_bytes: g.elem_bytes,
            });
        }
    }
    // A skew tile wider than 32 on a narrower source leaves most of it idle: on
    // 774979 x 31 2-byte elements the 64-wide skew tile ran at 0.54 of memcpy, the
    // 32-wide square tile at 0.66; the 32-wide skew tile runs it at 0.88, and
    // 435405 x 24 at 0.74 (the square tile 0.65; H100, `bench --random 8 --seed 1
    // --alternatives`).
    (g.form == Form::Skew && g.tile > 32 && shape.cols < u64::from(g.tile)).then_some(
        Refusal::Narrow {
            cols: shape.cols,
            tile: g.tile,
        },
    )
}

/// The most columns for which a tall kernel of 1- or 2-byte elements beats the
/// square and skew tiles. The tall kernel's speed does not depend on the width
/// (0.55-0.61 of memcpy), a 32-wide tile's grows with it; H100, 32 MB matrices of
/// every width from 2 to 32: 2-byte 0.59 against 0.54 at 17 columns, 0.58
/// against 0.60 at 20; 1-byte 0.55 against 0.50 at 31, 0.51 against 0.53 at 32.
pub fn packed_tall_max_cols(elem_bytes: u32) -> u64 {
    if elem_bytes == 1 {
        31
    } else {
        17
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(form: Form, tile: u32, elem_bytes: u32, vec: u32) -> Geometry {
        Geometry {
            form,
            tile,
            block_rows: 8,
            elem_bytes,
            vec,
            split: false,
        }
    }

    #[test]
    fn packed_tall_kernels_suit_the_widths_they_win() {
        for (e, max) in [(1u32, 31u64), (2, 17)] {
            let tall = g(Form::Tall, 32, e, 4 / e);
            assert_eq!(unsuited(&tall, &Shape::new(100_001, max)), None);
            assert_eq!(
                unsuited(&tall, &Shape::new(100_001, max + 1)),
                Some(Refusal::TileWins {
                    cols: max + 1,
                    max,
                    elem_bytes: e
                })
            );
        }
        // 4-byte tall kernels take every width up to 32.
        assert_eq!(
            unsuited(&g(Form::Tall, 32, 4, 1), &Shape::new(100_001, 32)),
            None
        );
    }

    #[test]
    fn only_skew_tiles_wider_than_32_skip_narrow_sources() {
        let odd = Shape::new(435_405, 24);
        assert_eq!(unsuited(&g(Form::Skew, 32, 2, 1), &odd), None);
        assert_eq!(
            unsuited(&g(Form::Skew, 64, 4, 1), &odd),
            Some(Refusal::Narrow { cols: 24, tile: 64 })
        );
    }
}
