//! The permute planner: an N-d permute (rank 1 to 8, any strides) as one call of a
//! transpose or copy kernel with a multi-axis batch.
//!
//! Output axis `i` is input axis `perm[i]` (numpy's `transpose`, torch's
//! `permute`). The planner
//! 1. drops axes of one item;
//! 2. merges axes that stay adjacent and in order on both sides (axis `x` just
//!    outside axis `y` in both buffers: `src_x = ext_y * src_y` and `dst_x = ext_y *
//!    dst_y`);
//! 3. then picks:
//!    * **copy**, where one axis is the innermost (stride 1) on both sides: a `copy`
//!      kernel moves that axis's contiguous blocks as vectors, rows along the axis
//!      innermost in the destination among the rest (along the longest where
//!      that would leave batch items smaller than [`COPY_ITEM_BYTES`]), the
//!      others its batch;
//!    * **transpose**, where the source's innermost axis (stride 1) differs from
//!      the destination's: the tile kernels move `rows` (the destination's innermost)
//!      by `cols` (the source's innermost), each side folding in the axes that
//!      continue it while it is shorter than a tile (an axis that could continue
//!      either goes to the side whose tiles it fills more), the other axes their
//!      batch;
//!    * **copy of single elements** where a side has no stride-1 axis (strided
//!      views): rows along the destination's innermost axis;
//! 4. **widens** a copy whose blocks are short: each block becomes one element
//!    of its bytes, and the other axes are planned again as in 3, mostly a
//!    transpose of those wider elements ([`crate::select::widen`]);
//! 5. and runs a transpose whose tiles would stay mostly empty, or a copy whose
//!    blocks are not whole 16-byte vectors, as a **gather** instead where the
//!    destination is one dense run ([`crate::select::gather`]; [`plan_tiles`]
//!    stops before steps 4 and 5, [`plan_unwidened`] skips 4).
//!
//! The batch axes go innermost first by destination stride, so consecutive batch
//! items write nearby.
//!
//! ```
//! use bankfree_gen::select::permute::{plan, Kind, Permute};
//! // NCHW -> NHWC, f16: H and W merge; a batch of 64 transposes of 256 x 3136.
//! let p = plan(&Permute::new(&[64, 256, 56, 56], &[0, 2, 3, 1], 2))?;
//! assert_eq!(p.kind, Kind::Transpose);
//! assert_eq!((p.shape.batch, p.shape.rows, p.shape.cols), (64, 256, 3136));
//! // [B, S, H, D] -> [B, H, S, D]: D stays innermost; blocks of 128 copied.
//! let p = plan(&Permute::new(&[8, 2048, 32, 128], &[0, 2, 1, 3], 2))?;
//! assert_eq!((p.kind, p.shape.rows, p.shape.cols), (Kind::Copy, 2048, 128));
//! # Ok::<(), bankfree_gen::select::permute::PermuteError>(())
//! ```

use crate::check::fit::kernel_refusal;
use crate::check::suit::kernel_unsuited;
use crate::ir::expr::{MAX_FOLD, MAX_OUTER};
use crate::ir::shape::{Axis, Chain, Fold, Outer, Shape, ShapeError};
use crate::kernel::geometry::{elem_align, elem_bytes_ok, Quotients, ELEM_SIZES};
use crate::kernel::spec::{SpecError, Strategy, TransposeSpec};
use crate::kernel::Kernel;
use crate::select::choice::{auto_kernels, permute_tile_rows};
use crate::select::gather::{gather_shape, gathers, gathers_copy, tile_fill};
use crate::select::widen::widened;
use serde::Serialize;

/// The highest rank a permute takes.
pub const MAX_RANK: usize = 8;

/// A permute call: the source's extents, the permutation, optional strides (in
/// elements, each for its own tensor's axis order; row-major when absent) and the
/// element size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Permute {
    pub dims: Vec<u64>,
    pub perm: Vec<usize>,
    pub src_strides: Option<Vec<u64>>,
    pub dst_strides: Option<Vec<u64>>,
    pub elem_bytes: u32,
}

impl Permute {
    /// A permute of contiguous tensors.
    pub fn new(dims: &[u64], perm: &[usize], elem_bytes: u32) -> Permute {
        Permute {
            dims: dims.to_vec(),
            perm: perm.to_vec(),
            src_strides: None,
            dst_strides: None,
            elem_bytes,
        }
    }
}

/// Why a permute cannot be planned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PermuteError {
    #[error("rank {rank}: a permute takes 1 to {MAX_RANK} axes")]
    Rank { rank: usize },
    #[error(
        "perm {perm:?} has {perm_len} entries but dims has {dims_len}; give one entry per axis"
    )]
    Length {
        perm: Vec<usize>,
        perm_len: usize,
        dims_len: usize,
    },
    #[error("`perm` {perm:?} is not a permutation of 0..{rank}: every axis 0 to {last} must appear exactly once", last = rank.saturating_sub(1))]
    NotPermutation { perm: Vec<usize>, rank: usize },
    #[error("{which}_strides has {len} entries for {rank} axes; give one stride per axis")]
    Strides {
        which: &'static str,
        len: usize,
        rank: usize,
    },
    #[error("element size {elem_bytes} bytes: supported are {ELEM_SIZES}")]
    ElemBytes { elem_bytes: u32 },
    #[error("{which}_strides {strides:?} put two elements of dims {dims:?} in one place; pass strides of a layout without overlap")]
    Overlap {
        which: &'static str,
        strides: Vec<u64>,
        dims: Vec<u64>,
    },
    #[error(transparent)]
    Shape(#[from] ShapeError),
    #[error("the {what} overflows 64 bits; check dims and strides")]
    Overflow { what: &'static str },
    #[error(transparent)]
    Spec(#[from] SpecError),
}

/// What the planned call does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Nothing to move (an extent is 0).
    Empty,
    /// Blocks contiguous on both sides, copied in order.
    Copy,
    /// A batch of transposes.
    Transpose,
    /// Every destination element gathered from its source address: rows along
    /// the destination's innermost axis, one column, every other axis a batch
    /// axis, written as one dense run by a `small` kernel.
    Gather,
}

/// A planned permute: the merged axes, what runs and the call's shape.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plan {
    /// The axes after dropping and merging, in source order (outermost first):
    /// extent, source stride, destination stride.
    pub axes: Vec<Axis>,
    pub kind: Kind,
    /// The call: rows, cols, pitches and the batch axes (`outer`).
    pub shape: Shape,
    /// The element size the axes and the shape count in: the permute's, or a
    /// block of `unit` of its elements ([`crate::select::widen`]).
    pub elem_bytes: u32,
    /// The permute's elements in one of the plan's (1 unless widened).
    pub unit: u64,
}

/// Plans `p` (see the module docs). The shape is validated: both tensors' strides
/// describe layouts in which no two elements share a place.
pub fn plan(p: &Permute) -> Result<Plan, PermuteError> {
    let tiled = plan_tiles(p)?;
    match widened(&tiled.axes, p.elem_bytes).filter(|_| tiled.kind == Kind::Copy) {
        Some((axes, elem_bytes, unit)) => gathered(axes_plan(axes, elem_bytes, unit)?),
        None => gathered(tiled),
    }
}

/// [`plan`] on the permute's own elements, never widened: what runs where a
/// pointer is off the widened element's alignment ([`Plan::align`]).
pub fn plan_unwidened(p: &Permute) -> Result<Plan, PermuteError> {
    gathered(plan_tiles(p)?)
}

/// `tiled` (a transpose or copy), or the gather that runs it faster.
fn gathered(tiled: Plan) -> Result<Plan, PermuteError> {
    let gather = match tiled.kind {
        Kind::Transpose => gathers(&tiled.axes, &tiled.shape, tiled.elem_bytes),
        Kind::Copy => {
            let widest = copy_vecs(tiled.elem_bytes)[0];
            widest * tiled.elem_bytes == 16
                && gathers_copy(
                    &TransposeSpec::copy(tiled.elem_bytes, widest)?,
                    &tiled.shape,
                )
        }
        _ => false,
    };
    if gather {
        if let Some(shape) = gather_shape(&tiled.axes) {
            shape.validate()?;
            return Ok(Plan {
                kind: Kind::Gather,
                shape,
                ..tiled
            });
        }
    }
    Ok(tiled)
}

/// The plan of merged `axes` (every extent above 1) of `elem_bytes`-byte
/// elements, each `unit` of the permute's: a transpose, or a copy where one axis
/// is innermost on both sides.
fn axes_plan(axes: Vec<Axis>, elem_bytes: u32, unit: u64) -> Result<Plan, PermuteError> {
    let shape = shape_of(&axes, elem_bytes)?;
    shape.validate()?;
    let kind = if shape.copy {
        Kind::Copy
    } else {
        Kind::Transpose
    };
    Ok(Plan {
        axes,
        kind,
        shape,
        elem_bytes,
        unit,
    })
}

impl Plan {
    /// The byte alignment both buffers need for this plan's kernels to load and
    /// store its elements: that of the permute's elements, or of the wider unit
    /// a widened plan moves (the runtime runs [`plan_unwidened`] otherwise).
    pub fn align(&self) -> u64 {
        u64::from(elem_align(self.elem_bytes))
    }
}

/// [`plan`] without the gather: a transpose wherever the innermost axes differ
/// (to compare the two, or to run tiles where [`plan`] gathers).
pub fn plan_tiles(p: &Permute) -> Result<Plan, PermuteError> {
    let rank = p.dims.len();
    if rank == 0 || rank > MAX_RANK {
        return Err(PermuteError::Rank { rank });
    }
    if p.perm.len() != rank {
        return Err(PermuteError::Length {
            perm: p.perm.clone(),
            perm_len: p.perm.len(),
            dims_len: rank,
        });
    }
    check_perm(&p.perm)?;
    if !elem_bytes_ok(p.elem_bytes) {
        return Err(PermuteError::ElemBytes {
            elem_bytes: p.elem_bytes,
        });
    }
    let out_dims: Vec<u64> = p.perm.iter().map(|&a| p.dims[a]).collect();
    let src = strides("src", p.src_strides.as_deref(), &p.dims)?;
    let dst_out = strides("dst", p.dst_strides.as_deref(), &out_dims)?;
    for (which, d, st) in [("src", &p.dims, &src), ("dst", &out_dims, &dst_out)] {
        if overlaps(d, st) {
            return Err(PermuteError::Overlap {
                which,
                strides: st.clone(),
                dims: d.clone(),
            });
        }
    }
    // Destination strides in source axis order.
    let mut dst = vec![0u64; rank];
    for (i, &a) in p.perm.iter().enumerate() {
        dst[a] = dst_out[i];
    }
    let mut axes: Vec<Axis> = (0..rank)
        .map(|a| Axis {
            ext: p.dims[a],
            src: src[a],
            dst: dst[a],
        })
        .collect();
    if axes.iter().any(|a| a.ext == 0) {
        let empty = Shape {
            batch: 0,
            ..Shape::new(0, 0)
        };
        return Ok(Plan {
            axes,
            kind: Kind::Empty,
            shape: empty,
            elem_bytes: p.elem_bytes,
            unit: 1,
        });
    }
    axes.retain(|a| a.ext > 1);
    merge(&mut axes);
    axes_plan(axes, p.elem_bytes, 1)
}

/// Whether two elements of a tensor of `dims` and `strides` share a place: sorted
/// by stride, each axis (of more than one item) must start past what the smaller
/// ones span (a sufficient test; the layouts views produce pass it).
fn overlaps(dims: &[u64], strides: &[u64]) -> bool {
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
fn strides(
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
fn merge(axes: &mut Vec<Axis>) {
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

/// The call's shape for merged axes (every extent above 1).
fn shape_of(axes: &[Axis], elem_bytes: u32) -> Result<Shape, PermuteError> {
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
            // goes to the side that fills more of the tile with it.
            let folds = |cols_first: bool| {
                let mut left = rest.clone();
                let (cols, rows) = if cols_first {
                    let cols = chain(axes, s, &mut left, |a| a.src);
                    (cols, chain(axes, d, &mut left, |a| a.dst))
                } else {
                    let rows = chain(axes, d, &mut left, |a| a.dst);
                    (chain(axes, s, &mut left, |a| a.src), rows)
                };
                let fill = match (product(&rows, &r), product(&cols, &c)) {
                    (Ok(nr), Ok(nc)) => tile_fill(nr) * tile_fill(nc),
                    _ => 0.0,
                };
                (fill, cols, rows, left)
            };
            let (by_cols, by_rows) = (folds(true), folds(false));
            let (_, cols, rows, left) = if by_rows.0 > by_cols.0 {
                by_rows
            } else {
                by_cols
            };
            rest = left;
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

/// The axes a tile side starting at `axes[first]` folds in (innermost first,
/// taken out of `rest`): while the side has fewer than [`FOLD_BELOW`] items, the
/// axis of `rest` that continues it contiguously in the buffer it runs along
/// (`key`: source strides for columns, destination strides for rows), up to
/// [`MAX_FOLD`] of them. A side continued by no axis stays as it is: the narrow
/// kernels serve it better than a tile reading scattered runs.
fn chain(axes: &[Axis], first: usize, rest: &mut Vec<usize>, key: fn(&Axis) -> u64) -> Vec<Axis> {
    let mut out: Vec<Axis> = Vec::new();
    let mut items = axes[first].ext;
    let mut next_stride = items.checked_mul(key(&axes[first]));
    while items < FOLD_BELOW && out.len() < usize::from(MAX_FOLD) {
        let Some(at) = rest
            .iter()
            .position(|&i| Some(key(&axes[i])) == next_stride)
        else {
            break;
        };
        let a = axes[rest.remove(at)];
        items = items.saturating_mul(a.ext);
        next_stride = a.ext.checked_mul(key(&a));
        out.push(a);
    }
    out
}

/// The vector widths a `copy` kernel of `elem_bytes` tries, widest first.
pub fn copy_vecs(elem_bytes: u32) -> Vec<u32> {
    [16, 8, 4, 2, 1]
        .into_iter()
        .filter(|&v| {
            v == 1 || (elem_bytes.is_power_of_two() && v * elem_bytes <= 16 && elem_bytes <= 16)
        })
        .collect()
}

/// The kernels a planned call may run, in the order the runtime tries them (the
/// first that fits and suits the shape): for a transpose, what `tile = auto` runs
/// for `strategy` ([`auto_kernels`]) with the plan's outer batch axes; for a copy,
/// the copy kernels from the widest vector down; for an empty call, none.
pub fn plan_kernels(plan: &Plan, strategy: Strategy) -> Result<Vec<Kernel>, PermuteError> {
    let elem_bytes = plan.elem_bytes;
    let outer = plan.shape.outer.n;
    // The 32-wide scalar tile a permute's transposes fold on or end on.
    let tile = || {
        TransposeSpec::new(32, elem_bytes, strategy)?.with_block_rows(permute_tile_rows(elem_bytes))
    };
    match plan.kind {
        Kind::Empty => Ok(Vec::new()),
        Kind::Copy => copy_vecs(elem_bytes)
            .into_iter()
            .map(|v| {
                let k = Kernel::build(TransposeSpec::copy(elem_bytes, v)?)?;
                Ok(k.with_outer(outer)?)
            })
            .collect(),
        // The small kernel storing vectors, then single elements (for a `dst`
        // off the vectors' alignment), each followed by its wider quotients'
        // twins: exact 32-bit ones of its items (batches past plain 32-bit item
        // quotients), then of its items and matrices (matrices above 16384
        // elements), then 64-bit ones of all (batches above 2^31 items, matrices
        // within a chunk of 2^31 elements).
        Kind::Gather => {
            let vector = TransposeSpec::small(elem_bytes)?;
            let mut specs = vec![vector];
            if vector.geometry.vec > 1 {
                specs.push(vector.with_vec(1)?);
            }
            // Item quotients only where there are items to split over axes.
            let levels: &[Quotients] = if outer > 0 {
                &[Quotients::Items, Quotients::Wide, Quotients::Any]
            } else {
                &[Quotients::Wide, Quotients::Any]
            };
            let mut out = Vec::new();
            for spec in specs {
                out.extend(with_twins(Kernel::build(spec)?.with_outer(outer)?, levels));
            }
            Ok(out)
        }
        // A source stored as one run of at most 32 columns over several axes
        // runs the thin kernel, its columns folded; anything else the tile.
        Kind::Transpose if plan.shape.fold != Fold::NONE => {
            let [r, c] = plan.shape.fold.counts();
            let thin = (elem_bytes <= 2 && r == 0)
                .then(|| TransposeSpec::thin(elem_bytes))
                .transpose()?;
            thin.into_iter()
                .chain([tile()?])
                .map(|s| Ok(Kernel::build(s)?.with_outer(outer)?.with_fold(r, c)?))
                .collect()
        }
        Kind::Transpose => {
            // A small kernel over outer axes is followed by its wider quotients'
            // twins, for batches its plain 32-bit quotients cannot split.
            let levels: &[Quotients] = if outer > 0 {
                &[Quotients::Items, Quotients::Any]
            } else {
                &[]
            };
            Ok(auto_kernels(&Kernel::build(tile()?)?)
                .iter()
                .filter_map(|k| k.with_outer(outer).ok())
                .flat_map(|k| with_twins(k, levels))
                .collect())
        }
    }
}

/// `k`, then its twin with each of `levels` of wider quotients that it takes
/// (only a `small` kernel does).
fn with_twins(k: Kernel, levels: &[Quotients]) -> Vec<Kernel> {
    let twins: Vec<Kernel> = levels
        .iter()
        .filter_map(|&q| k.with_quotients(q).ok())
        .collect();
    std::iter::once(k).chain(twins).collect()
}

/// The kernel of `kernels` (a plan's list) the runtime runs for `shape` when both
/// buffers start on 16-byte boundaries and no tuning is recorded: the first that
/// fits and suits the shape, else the last that fits (`None` for an empty plan).
pub fn pick<'a>(kernels: &'a [Kernel], shape: &Shape) -> Option<&'a Kernel> {
    let g = |k: &Kernel| k.spec().geometry;
    let fits: Vec<&Kernel> = kernels
        .iter()
        .filter(|k| {
            k.outer() == shape.outer.n
                && k.fold() == shape.fold.counts()
                && kernel_refusal(&g(k), k.quotients(), shape).is_none()
        })
        .collect();
    fits.iter()
        .find(|k| kernel_unsuited(&g(k), k.quotients(), shape).is_none())
        .or(fits.last())
        .copied()
}
