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
//!    blocks are not whole 16-byte vectors or (of elements of 2 bytes or more)
//!    whole destination sectors, as a **gather** instead where the
//!    destination is one dense run ([`crate::select::gather`]; [`plan_tiles`]
//!    stops before steps 4 and 5, [`plan_unwidened`] skips 4), or such a
//!    transpose whose gather would use little of each source sector, where the
//!    source stores its rows as runs of whole rows, as the **tall** kernel of
//!    rows folded past a tile ([`TALL_MAX_SECTOR_USE`]).
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

mod axes;
mod error;

pub use axes::{check_perm, COPY_ITEM_BYTES, FOLD_BELOW};
use axes::{merge, overlaps, rows_past_tile, shape_of, strides};
pub use error::{PermuteError, MAX_RANK};

use crate::check::fit::kernel_refusal;
use crate::check::suit::kernel_unsuited;
use crate::ir::shape::{Axis, Fold, Shape};
use crate::kernel::geometry::{elem_align, elem_bytes_ok, Form, Quotients, MAX_NARROW};
use crate::kernel::spec::{Strategy, TransposeSpec};
use crate::kernel::Kernel;
use crate::select::choice::{auto_kernels, permute_tile, permute_tile_rows};
use crate::select::gather::{gather_shape, gathers, gathers_copy, sector_use};
use crate::select::widen::widened;
use serde::Serialize;

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

impl Plan {
    /// The scalar tile (width, thread rows) of the plan's transposes: for a
    /// folded one by its shorter side ([`permute_tile`]), else the 32-wide one
    /// its list ends on.
    pub fn tile(&self) -> (u32, u32) {
        let s = &self.shape;
        if self.kind == Kind::Transpose && s.fold != Fold::NONE {
            permute_tile(self.elem_bytes, s.rows.min(s.cols))
        } else {
            (32, permute_tile_rows(self.elem_bytes))
        }
    }
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
        if let Some(tall) = tall_plan(&tiled)? {
            return Ok(tall);
        }
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

/// A gather uses less than this share of each source sector
/// ([`sector_use`]) where the `tall` kernel, its rows folded on past a tile,
/// runs the transpose instead (see the module docs, step 5).
///
/// Gather against the folded tall kernel, `--example permute -- --shape ...`
/// with the build before it and with it in one call per GPU (2026-11-28),
/// ratio to memcpy, H100 / H200: `[21,6,94,3,39,6] [3,5,2,0,1,4]` f32 (a
/// sixth of each sector) 0.56 -> 0.75 / 0.50 -> 0.61, `[50,3,700,37,5]
/// [1,4,2,0,3]` f64 (a quarter) 0.37 -> 0.89 / 0.41 -> 0.79; at a third the
/// gather ran as fast or faster: `[2000,33,17,3] [3,1,0,2]` f32 0.91 gathered
/// against 0.51 folded, `[61,60,6,63,3] [0,4,2,1,3]` f64 0.96 against 0.88
/// (H200). `docs/design.md` has the table.
pub const TALL_MAX_SECTOR_USE: f64 = 0.3;

/// The transpose `tiled` (which the planner would gather) as a `tall` kernel
/// of rows folded on past a tile, where its elements, columns and rows allow
/// it ([`axes::shape_of`]), the gather would use less than
/// [`TALL_MAX_SECTOR_USE`] of each source sector, and the runtime would run
/// the tall kernel on the shape ([`pick`]).
fn tall_plan(tiled: &Plan) -> Result<Option<Plan>, PermuteError> {
    let e = tiled.elem_bytes;
    if tiled.kind != Kind::Transpose || e < 4 {
        return Ok(None);
    }
    let chunk = u64::from(TransposeSpec::small(e)?.geometry.small_chunk_elems());
    if sector_use(&tiled.axes, e, chunk) >= TALL_MAX_SECTOR_USE {
        return Ok(None);
    }
    let shape = shape_of(&tiled.axes, e, true)?;
    if shape.fold.rows.n == tiled.shape.fold.rows.n {
        return Ok(None);
    }
    shape.validate()?;
    let plan = Plan {
        shape,
        ..tiled.clone()
    };
    let kernels = plan_kernels(&plan, Strategy::Pad(None))?;
    let takes = pick(&kernels, &plan.shape).is_some_and(|k| k.spec().geometry.form == Form::Tall);
    Ok(takes.then_some(plan))
}

/// The plan of merged `axes` (every extent above 1) of `elem_bytes`-byte
/// elements, each `unit` of the permute's: a transpose, or a copy where one axis
/// is innermost on both sides.
fn axes_plan(axes: Vec<Axis>, elem_bytes: u32, unit: u64) -> Result<Plan, PermuteError> {
    let shape = shape_of(&axes, elem_bytes, false)?;
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
    // A scalar tile of (width, thread rows): the plan's is the one a permute's
    // transposes fold on or end on.
    let scalar = |(width, rows): (u32, u32)| {
        TransposeSpec::new(width, elem_bytes, strategy)?.with_block_rows(rows)
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
        // runs the thin kernel, its columns folded; rows folded on past a
        // tile for the tall kernel ([`tall_plan`]) the tall kernel first;
        // anything else the tile.
        Kind::Transpose if plan.shape.fold != Fold::NONE => {
            let [r, c] = plan.shape.fold.counts();
            let thin = (elem_bytes <= 2 && r == 0)
                .then(|| TransposeSpec::thin(elem_bytes))
                .transpose()?;
            let tall = (elem_bytes >= 4
                && c == 0
                && plan.shape.cols <= MAX_NARROW
                && rows_past_tile(&plan.shape))
            .then(|| {
                TransposeSpec::new(32, elem_bytes, Strategy::Pad(None))
                    .and_then(|s| s.with_form(Form::Tall))
            })
            .transpose()?;
            // A 16-wide tile that no padding makes conflict-free (`pad` on
            // 4-byte elements) leaves the side to the 32-wide one.
            let folded = |s: TransposeSpec| -> Result<Kernel, PermuteError> {
                Ok(Kernel::build(s)?.with_outer(outer)?.with_fold(r, c)?)
            };
            let last = scalar(plan.tile())
                .map_err(PermuteError::from)
                .and_then(folded)
                .or_else(|_| folded(scalar((32, permute_tile_rows(elem_bytes)))?))?;
            thin.into_iter()
                .chain(tall)
                .map(folded)
                .chain([Ok(last)])
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
            Ok(auto_kernels(&Kernel::build(scalar(plan.tile())?)?)
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
