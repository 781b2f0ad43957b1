//! A permute's axes: their strides checked, merged where they stay adjacent
//! and in order on both sides, and laid out as the tile or copy shape a
//! kernel runs, the other axes its batch.
//!
//! ```
//! use bankfree_gen::select::permute::{plan, Permute};
//! // NCHW -> NHWC: C is the tile's rows, H and W merge into its columns.
//! let p = plan(&Permute::new(&[64, 256, 56, 56], &[0, 2, 3, 1], 2))?;
//! assert_eq!((p.shape.rows, p.shape.cols, p.shape.batch), (256, 3136, 64));
//! # Ok::<(), bankfree_gen::select::permute::PermuteError>(())
//! ```

use crate::ir::expr::{Var, MAX_FOLD, MAX_OUTER};
use crate::ir::shape::{Axis, Chain, Fold, Outer, Shape};
use crate::kernel::geometry::MAX_NARROW;
use crate::select::gather::tile_fill;
use crate::select::permute::error::PermuteError;

/// Whether two elements of a tensor of `dims` and `strides` share a place: sorted
/// by stride, each axis (of more than one item) must start past what the smaller
/// ones span (a sufficient test; the layouts views produce pass it).
pub(super) fn overlaps(dims: &[u64], strides: &[u64]) -> bool {
    if dims.contains(&0) {
        return false;
    }
    let mut axes: Vec<(u64, u64)> = dims
        .iter()
        .zip(strides)
        .filter(|(&d, _)| d > 1)
        .map(|(&d, &s)| (s, d))
        .collect();
    axes.sort_unstable();
    let mut span = 1u64;
    for (stride, ext) in axes {
        if stride < span {
            return true;
        }
        match (ext - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(span))
        {
            Some(s) => span = s,
            None => return true,
        }
    }
    false
}

/// That `perm` is a permutation of `0..perm.len()` (the attribute checks its
/// `perm` with this at compile time).
pub fn check_perm(perm: &[usize]) -> Result<(), PermuteError> {
    let rank = perm.len();
    let mut seen = vec![false; rank];
    for &a in perm {
        match seen.get_mut(a) {
            Some(s) if !*s => *s = true,
            _ => {
                return Err(PermuteError::NotPermutation {
                    perm: perm.to_vec(),
                    rank,
                })
            }
        }
    }
    Ok(())
}

/// Row-major strides of `dims`, or the caller's (checked for length).
pub(super) fn strides(
    which: &'static str,
    given: Option<&[u64]>,
    dims: &[u64],
) -> Result<Vec<u64>, PermuteError> {
    if let Some(s) = given {
        if s.len() != dims.len() {
            return Err(PermuteError::Strides {
                which,
                len: s.len(),
                rank: dims.len(),
            });
        }
        return Ok(s.to_vec());
    }
    let mut out = vec![0u64; dims.len()];
    let mut step = 1u64;
    for (o, &d) in out.iter_mut().zip(dims).rev() {
        *o = step;
        step = step.checked_mul(d.max(1)).ok_or(PermuteError::Overflow {
            what: "tensor size",
        })?;
    }
    Ok(out)
}

/// Merges axis pairs that are adjacent and in order on both sides, until none is.
pub(super) fn merge(axes: &mut Vec<Axis>) {
    'again: loop {
        for x in 0..axes.len() {
            for y in 0..axes.len() {
                let (ax, ay) = (axes[x], axes[y]);
                let follows = |sx: u64, sy: u64| ay.ext.checked_mul(sy) == Some(sx);
                if x != y && follows(ax.src, ay.src) && follows(ax.dst, ay.dst) {
                    if let Some(ext) = ax.ext.checked_mul(ay.ext) {
                        axes[y] = Axis { ext, ..ay };
                        axes.remove(x);
                        continue 'again;
                    }
                }
            }
        }
        return;
    }
}

/// The call's shape for merged axes (every extent above 1). With `tall`, a
/// transpose whose rows can fold on for the `tall` kernel ([`tall_folds`]) folds
/// them on past a tile; with `step`, each side of a transpose steps over the
/// axes the other holds ([`chain`]).
pub(super) fn shape_of(
    axes: &[Axis],
    elem_bytes: u32,
    tall: bool,
    step: bool,
) -> Result<Shape, PermuteError> {
    let inner = |key: fn(&Axis) -> u64| {
        axes.iter()
            .enumerate()
            .filter(|(_, a)| key(a) == 1)
            .map(|(i, _)| i)
            .next()
    };
    let (s_in, d_in) = (inner(|a| a.src), inner(|a| a.dst));
    let mut rest: Vec<usize> = (0..axes.len()).collect();
    let take = |rest: &mut Vec<usize>, i: usize| rest.retain(|&r| r != i);
    let unit = Axis {
        ext: 1,
        src: 1,
        dst: 1,
    };
    let mut shape = Shape::new(1, 1);
    match (s_in, d_in) {
        (Some(s), Some(d)) if s != d => {
            // A transpose of rows (the destination's innermost) by cols, each
            // side folding in the axes that continue it contiguously while it is
            // shorter than a tile.
            take(&mut rest, s);
            take(&mut rest, d);
            let (r, c) = (axes[d], axes[s]);
            let product = |ch: &[Axis], first: &Axis| {
                ch.iter()
                    .try_fold(first.ext, |p, a| p.checked_mul(a.ext))
                    .ok_or(PermuteError::Overflow { what: "tile side" })
            };
            // An axis may continue both sides (`[a, j, b] -> [b, j, a]`): it
            // goes to the side that fills more of the tile with it. With
            // `step`, a side steps over the axes the other holds.
            let folds = |cols_first: bool| {
                let mut left = rest.clone();
                let held = |first: Axis, more: &[Axis]| {
                    if step {
                        [&[first], more].concat()
                    } else {
                        Vec::new()
                    }
                };
                let (cols, rows) = if cols_first {
                    let cols = chain(axes, s, &mut left, |a| a.src, &held(r, &[]));
                    let rows = chain(axes, d, &mut left, |a| a.dst, &held(c, &cols));
                    (cols, rows)
                } else {
                    let rows = chain(axes, d, &mut left, |a| a.dst, &held(c, &[]));
                    (chain(axes, s, &mut left, |a| a.src, &held(r, &rows)), rows)
                };
                let fill = match (product(&rows, &r), product(&cols, &c)) {
                    (Ok(nr), Ok(nc)) => tile_fill(nr) * tile_fill(nc),
                    _ => 0.0,
                };
                (fill, cols, rows, left)
            };
            // The tall kernel takes a box (`[a, j, b] -> [b, j, a]`, both sides
            // short) with `j` in its rows: its chunks then read runs of whole
            // source rows of each `a`.
            let (by_cols, by_rows) = (folds(true), folds(false));
            let tall_box = tall && tall_folds(&by_rows.1, &c, &r, &by_rows.2);
            let (_, cols, rows, left) = if tall_box || by_rows.0 > by_cols.0 {
                by_rows
            } else {
                by_cols
            };
            rest = left;
            // For the tall kernel, rows stored as runs of whole source rows fold
            // on past a tile: its chunks then read those runs and write long
            // destination runs. A box's rows stop at its `j`: a further axis
            // would have the split divide by `j`'s long extent, past what its
            // 32-bit quotient keeps exact.
            let mut rows = rows;
            if tall && tall_folds(&cols, &c, &r, &rows) && r.src == c.ext {
                extend(axes, d, &mut rows, &mut rest, |a| a.dst, u64::MAX, &[]);
            }
            shape.rows = product(&rows, &r)?;
            shape.cols = product(&cols, &c)?;
            shape.src_ld = r.src;
            shape.dst_ld = c.dst;
            shape.fold = Fold {
                rows: Chain::new(&rows).unwrap_or(Chain::NONE),
                cols: Chain::new(&cols).unwrap_or(Chain::NONE),
            };
        }
        _ => {
            // A copy of blocks contiguous on both sides, or of single elements.
            let block = match (s_in, d_in) {
                (Some(s), Some(d)) if s == d => {
                    take(&mut rest, s);
                    axes[s]
                }
                _ => unit,
            };
            shape.copy = true;
            shape.cols = block.ext;
            // Rows along the destination's innermost remaining axis, unless its
            // items would be smaller than a block's chunk: then along the
            // longest.
            let mut rows = rest.iter().copied().min_by_key(|&i| axes[i].dst);
            let item_bytes = |i: usize| {
                axes[i]
                    .ext
                    .saturating_mul(block.ext)
                    .saturating_mul(u64::from(elem_bytes))
            };
            if rows.is_some_and(|i| item_bytes(i) < COPY_ITEM_BYTES) {
                rows = rest
                    .iter()
                    .copied()
                    .max_by_key(|&i| (axes[i].ext, std::cmp::Reverse(axes[i].dst)));
            }
            let row = rows.map_or(
                Axis {
                    ext: 1,
                    src: block.ext,
                    dst: block.ext,
                },
                |i| axes[i],
            );
            if let Some(i) = rows {
                take(&mut rest, i);
            }
            shape.rows = row.ext;
            shape.src_ld = row.src;
            shape.dst_ld = row.dst;
        }
    }
    // The batch: innermost first by destination stride.
    rest.sort_by_key(|&i| axes[i].dst);
    let batch: Vec<Axis> = rest.iter().map(|&i| axes[i]).collect();
    shape.batch = batch
        .iter()
        .try_fold(1u64, |p, a| p.checked_mul(a.ext))
        .ok_or(PermuteError::Overflow { what: "batch" })?;
    if let Some((first, more)) = batch.split_first() {
        shape.src_batch_stride = first.src;
        shape.dst_batch_stride = first.dst;
        if more.len() > usize::from(MAX_OUTER) {
            // Rank 8 keeps at most 7 batch axes; this cannot happen.
            return Err(PermuteError::Rank { rank: axes.len() });
        }
        shape.outer = Outer::new(more).unwrap_or(Outer::NONE);
    } else {
        shape.src_batch_stride = shape.rows.saturating_mul(shape.src_ld);
        shape.dst_batch_stride = shape.rows.saturating_mul(shape.dst_ld);
    }
    Ok(shape)
}

/// Bytes a copy kernel's block moves per chunk of 16-byte vectors: a copy
/// whose batch items (rows of blocks) are smaller, and so leave its threads
/// idle while the batch loop does the work, runs along its longest axis
/// instead. H100, ratio to memcpy as it was -> along the longest axis:
/// `[2,4660,15,60,2] [1,2,3,0,4]` f16 (items of 8 bytes) 0.012 -> 0.54,
/// `[9,3,17,47,18,43] [2,3,1,4,0,5]` f16 (774 bytes) 0.34 -> 0.48,
/// `[51,2,2570,4,32] [2,1,3,0,4]` u8 0.79 -> 0.86, `[11,55461,55] [1,0,2]` u8
/// 0.26 -> 0.29; `[12,27962,25] [1,0,2]` f32 (1200 bytes) 0.61 -> 0.59 and
/// `[4,5518,19,10] [1,0,2,3]` f64 1.06 -> 1.04, whose destination runs then
/// lie apart.
pub const COPY_ITEM_BYTES: u64 = 16 * 1024;

/// A tile side shorter than this many items folds in more axes.
pub const FOLD_BELOW: u64 = 32;

/// Whether `shape`'s rows fold on past a tile ([`shape_of`] with `tall`): the
/// axes inside their outermost one hold [`FOLD_BELOW`] items or more, where the
/// tile's folding stops.
pub fn rows_past_tile(shape: &Shape) -> bool {
    let n = shape.fold.rows.n;
    n > 0
        && (0..n)
            .map(|k| shape.fold_value(Var::RowExt(k)))
            .try_fold(1u64, u64::checked_mul)
            .is_none_or(|items| items >= FOLD_BELOW)
}

/// Whether `shape` is a box for the `tall` kernel (`[a, j, b] -> [b, j, a]`
/// with both inner sides short, [`shape_of`] with `tall`): columns of one axis
/// and 2 to [`MAX_NARROW`] items, and rows that fold an axis `cols` elements
/// apart in the source, so that its chunks read runs of whole source rows of
/// each `a` though the rows' first axis steps between them.
pub fn rows_box(shape: &Shape) -> bool {
    let n = shape.fold.rows.n;
    shape.fold.cols.n == 0
        && (2..=MAX_NARROW).contains(&shape.cols)
        && shape.src_ld != shape.cols
        && (1..=n).any(|k| shape.fold_value(Var::RowSrc(k)) == shape.cols)
}

/// The axes a tile side starting at `axes[first]` folds in (innermost first,
/// taken out of `rest`): while the side has fewer than [`FOLD_BELOW`] items, the
/// axis of `rest` that continues it contiguously in the buffer it runs along
/// (`key`: source strides for columns, destination strides for rows), up to
/// [`MAX_FOLD`] of them. An axis the other side of the tile holds (`other`)
/// is stepped over: the side goes on with the axis that continues past it,
/// whose elements the tile then reads (or writes) next to the other side's.
/// A side continued by no axis stays as it is: the narrow kernels serve it
/// better than a tile reading scattered runs.
fn chain(
    axes: &[Axis],
    first: usize,
    rest: &mut Vec<usize>,
    key: fn(&Axis) -> u64,
    other: &[Axis],
) -> Vec<Axis> {
    let mut out: Vec<Axis> = Vec::new();
    extend(axes, first, &mut out, rest, key, FOLD_BELOW, other);
    out
}

/// Whether a transpose whose columns are the axis `c` (folding `cols`) and
/// whose rows start at the axis `r` can fold its rows on past a tile for the
/// `tall` kernel ([`shape_of`]; the caller asks whether that kernel folds rows of
/// its elements): columns of one axis and 2 to [`MAX_NARROW`] items, the rows'
/// first axis `c.ext` apart in the source (whole source rows, one run), or, for
/// a box, one of the axes `rows` folds.
fn tall_folds(cols: &[Axis], c: &Axis, r: &Axis, rows: &[Axis]) -> bool {
    cols.is_empty()
        && (2..=MAX_NARROW).contains(&c.ext)
        && (r.src == c.ext || rows.iter().any(|a| a.src == c.ext))
}

/// Extends `out`, the axes a side starting at `axes[first]` folds in so far,
/// with the axes of `rest` that continue it ([`chain`], stepping over the
/// axes of `other`) while it has fewer than `below` items.
fn extend(
    axes: &[Axis],
    first: usize,
    out: &mut Vec<Axis>,
    rest: &mut Vec<usize>,
    key: fn(&Axis) -> u64,
    below: u64,
    other: &[Axis],
) {
    let last = out.last().copied().unwrap_or(axes[first]);
    let mut items = out
        .iter()
        .fold(axes[first].ext, |p, a| p.saturating_mul(a.ext));
    let mut next_stride = last.ext.checked_mul(key(&last));
    while items < below && out.len() < usize::from(MAX_FOLD) {
        let Some(at) = rest
            .iter()
            .position(|&i| Some(key(&axes[i])) == next_stride)
        else {
            match other.iter().find(|o| Some(key(o)) == next_stride) {
                Some(o) => {
                    next_stride = o.ext.checked_mul(key(o));
                    continue;
                }
                None => break,
            }
        };
        let a = axes[rest.remove(at)];
        items = items.saturating_mul(a.ext);
        next_stride = a.ext.checked_mul(key(&a));
        out.push(a);
    }
}
