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
//!      batch; where the plan would run 1- or 2-byte elements on the 16-wide
//!      tile, it gathers if the gather uses a fifth of each source sector
//!      ([`STEP_GATHER_MIN_USE`]), else it is made again with each side
//!      stepping over the axes the other holds, folding on with the axis past
//!      them;
//!    * **copy of single elements** where a side has no stride-1 axis (strided
//!      views): rows along the destination's innermost axis;
//! 4. **widens** a copy whose blocks are short: each block becomes one element
//!    of its bytes, and the other axes are planned again as in 3, mostly a
//!    transpose of those wider elements ([`crate::select::widen`]); a block
//!    longer than 16 bytes only where that transpose runs the `wordvec` kernel;
//! 5. and runs a transpose whose tiles would stay mostly empty, or a copy whose
//!    blocks are not whole 16-byte vectors or (of elements of 2 bytes or more)
//!    whole destination sectors, as a **gather** instead where the
//!    destination is one dense run ([`crate::select::gather`]; [`plan_tiles`]
//!    stops before steps 4 and 5, [`plan_unwidened`] skips 4), or such a
//!    transpose whose gather would use little of each source sector, where the
//!    source stores its rows as runs of whole rows, as the **tall** kernel of
//!    rows folded past a tile ([`TALL_MAX_SECTOR_USE`]); a **box** (`[a, j, b]
//!    -> [b, j, a]` with `a` and `b` short) folds `j` into its rows for it, each
//!    chunk then reading runs of whole source rows of every `a`
//!    ([`BOX_MIN_CHUNKS`]). A box of 1- or 2-byte elements whose gather takes
//!    its chunks down their columns ([`lanes_gather`]) gathers where `b` is
//!    short enough ([`box_gathers`]).
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
mod call;
mod error;
mod lanes;
mod list;
mod tall;

pub use axes::{check_perm, COPY_ITEM_BYTES, FOLD_BELOW};
use axes::{merge, overlaps, shape_of, strides};
pub use call::{Kind, Permute, Plan};
pub use error::{PermuteError, MAX_RANK};
pub use lanes::{box_gathers, lanes_gather, LANES_BOX_MAX, LANES_PLAIN_BOX_MAX};
pub use list::{copy_vecs, pick, plan_kernels};
pub use tall::{BOX_MIN_CHUNKS, TALL_MAX_SECTOR_USE};

use crate::ir::shape::{Axis, Fold, Shape};
use crate::kernel::geometry::elem_bytes_ok;
use crate::kernel::geometry::Form;
use crate::kernel::spec::Strategy;
use crate::kernel::spec::TransposeSpec;
use crate::select::gather::{gather_sector_use, gather_shape, gathers, gathers_copy};
use crate::select::tile16::tile16_keeps;
use crate::select::widen::{widened, WIDEN_MAX_BYTES};
use tall::tall_plan;

/// Plans `p` (see the module docs). The shape is validated: both tensors' strides
/// describe layouts in which no two elements share a place.
pub fn plan(p: &Permute) -> Result<Plan, PermuteError> {
    let planned = plan_stepping(p, false)?;
    if steps_over(&planned)? {
        if let Some(gather) = tile16_gather(&planned)? {
            return Ok(gather);
        }
        return plan_stepping(p, true);
    }
    Ok(planned)
}

/// The least share of each source sector ([`gather_sector_use`]) at which a
/// folded transpose of 1- or 2-byte elements on the 16-wide tile, which the
/// planner would otherwise make again stepping over, gathers instead.
pub const STEP_GATHER_MIN_USE: f64 = 0.2;

/// The gather of `planned`, a transpose that would step over
/// ([`steps_over`]), where that gather uses at least [`STEP_GATHER_MIN_USE`]
/// of each source sector. H200, `--example permute -- --shape ...`
/// (2026-11-29), the 132 plans of that kind among `permute --plans --random
/// 12` over seeds 1000 to 2500 stepped over, unstepped and gathered in one
/// call: of the 21 this gathers (a fifth of each sector or more), 19 ran
/// faster gathered, x1.24 geometric mean, one alike and one slower
/// (`[14,59,23,7,31,8] [4,2,3,1,5,0]` u8, 0.344 stepped, 0.164 gathered);
/// `[13,516222,5] [2,1,0]` u8 0.212 -> 0.395 (torch 0.293),
/// `[7,15,45,5,355,2] [0,5,3,2,4,1]` f16 0.305 -> 0.583 (torch 0.382). Below
/// a fifth the stepped tiles ran faster on 83 of 109. The build before and
/// this one in a later call, on those 21: x1.29, 8 -> 1 slower than torch.
fn tile16_gather(planned: &Plan) -> Result<Option<Plan>, PermuteError> {
    if gather_sector_use(&planned.axes, planned.elem_bytes)? < STEP_GATHER_MIN_USE {
        return Ok(None);
    }
    gather_plan(planned)
}

/// [`plan`], each side of a transpose stepping over the other's axes where
/// `step` ([`steps_over`]).
fn plan_stepping(p: &Permute, step: bool) -> Result<Plan, PermuteError> {
    let tiled = tiles(p, step)?;
    match widened(&tiled.axes, p.elem_bytes).filter(|_| tiled.kind == Kind::Copy) {
        Some((axes, elem_bytes, unit)) => {
            let wide = gathered(axes_plan(axes, elem_bytes, unit, step)?, step)?;
            if elem_bytes <= WIDEN_MAX_BYTES || runs_wordvec(&wide)? {
                Ok(wide)
            } else {
                gathered(tiled, step)
            }
        }
        None => gathered(tiled, step),
    }
}

/// Whether the permute planned as `planned` is planned again with each side
/// of its transpose stepping over the axes the other side holds
/// ([`shape_of`]): a folded transpose of 1- or 2-byte elements on the 16-wide
/// tile (the kernel [`pick`] runs), 16 or 32 bytes a tile row, its shorter side cut
/// short by an axis the other side holds. Stepped over, the side folds on
/// with the axis that continues it past that one: the tile covers the
/// source's (or destination's) bytes around the other side's axis, mostly
/// with a 32-wide tile on both sides.
///
/// H200, `--example permute -- --shape ...`, the build before and this one in
/// one call (2026-11-29), all 132 plans of that kind among `permute --plans
/// --random 12` over seeds 1000 to 2500: x1.46 geometric mean, 91 faster, 10
/// slower by more than 3%, median 0.235 -> 0.346 of memcpy (torch 0.279), 87
/// -> 34 slower than torch. `[49056,19,9,2,2] [2,4,1,0,3]` u8 ran at 0.033
/// -> 0.17 (`98112 x 2` tiles -> `98112 x 342`), `[1398101,6,2,2]
/// [3,1,0,2]` u8 0.033 -> 0.193 (torch 0.274); the slowest,
/// `[2,32768,2,8,16] [2,4,1,3,0]` f16, 0.413 -> 0.242 (torch 0.316).
/// Stepping over in every transpose ran a sample of 300 of the other plans it
/// changes at x0.82: it folds batch axes into the tiles of the narrow kernels
/// (`thin`, `squat`, `strip`) and of transposes the gather runs faster.
fn steps_over(planned: &Plan) -> Result<bool, PermuteError> {
    if planned.kind != Kind::Transpose || planned.elem_bytes > 2 || planned.shape.fold == Fold::NONE
    {
        return Ok(false);
    }
    let kernels = plan_kernels(planned, Strategy::Xor)?;
    Ok(pick(&kernels, &planned.shape).is_some_and(|k| {
        let g = k.spec().geometry;
        g.form == Form::Tile && g.tile == 16
    }))
}

/// Whether `plan` runs the `wordvec` kernel where both pointers start on 16
/// bytes and nothing is tuned ([`pick`]).
fn runs_wordvec(plan: &Plan) -> Result<bool, PermuteError> {
    if plan.kind != Kind::Transpose {
        return Ok(false);
    }
    let kernels = plan_kernels(plan, Strategy::Xor)?;
    Ok(pick(&kernels, &plan.shape).is_some_and(|k| k.spec().geometry.form == Form::Wordvec))
}

/// [`plan`] on the permute's own elements, never widened: what runs where a
/// pointer is off the widened element's alignment ([`Plan::align`]).
pub fn plan_unwidened(p: &Permute) -> Result<Plan, PermuteError> {
    gathered(plan_tiles(p)?, false)
}

/// `tiled` (a transpose or copy, its sides stepping over each other's axes
/// where `step`), or the gather that runs it faster.
fn gathered(tiled: Plan, step: bool) -> Result<Plan, PermuteError> {
    let gather = match tiled.kind {
        Kind::Transpose => {
            gathers(&tiled.axes, &tiled.shape, tiled.elem_bytes) || box_gathers(&tiled)
        }
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
        let tall = tall_plan(&tiled, step)?;
        if keeps_tile16(&tiled, tall.is_some())? {
            return Ok(tiled);
        }
        if let Some(tall) = tall {
            return Ok(tall);
        }
        if let Some(gather) = gather_plan(&tiled)? {
            return Ok(gather);
        }
    }
    Ok(tiled)
}

/// `tiled` as a gather, where a `small` kernel takes its merged axes
/// ([`gather_shape`]).
fn gather_plan(tiled: &Plan) -> Result<Option<Plan>, PermuteError> {
    let Some(shape) = gather_shape(&tiled.axes) else {
        return Ok(None);
    };
    shape.validate()?;
    Ok(Some(Plan {
        kind: Kind::Gather,
        shape,
        ..tiled.clone()
    }))
}

/// Whether the transpose `tiled`, which the planner would gather (or run on
/// the tall kernel, where `tall`), keeps its folded 16-wide tiles
/// ([`tile16_keeps`], with the share of each source sector its gather uses).
pub(super) fn keeps_tile16(tiled: &Plan, tall: bool) -> Result<bool, PermuteError> {
    let e = tiled.elem_bytes;
    let used = gather_sector_use(&tiled.axes, e)?;
    Ok(tiled.kind == Kind::Transpose && tile16_keeps(&tiled.shape, e, used, tall))
}

/// The plan of merged `axes` (every extent above 1) of `elem_bytes`-byte
/// elements, each `unit` of the permute's: a transpose (its sides stepping
/// over each other's axes where `step`), or a copy where one axis is innermost
/// on both sides.
fn axes_plan(
    axes: Vec<Axis>,
    elem_bytes: u32,
    unit: u64,
    step: bool,
) -> Result<Plan, PermuteError> {
    let shape = shape_of(&axes, elem_bytes, false, step)?;
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

/// [`plan`] without the gather: a transpose wherever the innermost axes differ
/// (to compare the two, or to run tiles where [`plan`] gathers).
pub fn plan_tiles(p: &Permute) -> Result<Plan, PermuteError> {
    tiles(p, false)
}

/// [`plan_tiles`], each side of a transpose stepping over the other's axes
/// where `step`.
fn tiles(p: &Permute, step: bool) -> Result<Plan, PermuteError> {
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
    axes_plan(axes, p.elem_bytes, 1, step)
}
