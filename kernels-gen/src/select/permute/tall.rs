//! The folded tall kernel in place of a gather: rows stored as runs of whole
//! source rows, folded past a tile.

use crate::kernel::geometry::Form;
use crate::kernel::spec::Strategy;
use crate::select::gather::gather_sector_use;
use crate::select::permute::axes::{rows_box, shape_of};
use crate::select::permute::call::{Kind, Plan};
use crate::select::permute::error::PermuteError;
use crate::select::permute::list::{folding_tall, pick, plan_kernels};

/// A gather uses less than this share of each source sector
/// ([`gather_sector_use`]) where the `tall` kernel, its rows folded on past a tile,
/// runs the transpose instead ([`crate::select::permute`], step 5).
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

/// Chunks of the `tall` kernel a box's matrix spans at least where that kernel
/// runs it (a box, `axes::rows_box`; a matrix of fewer leaves most of a block's threads
/// idle). H200, gather against tall (`--example permute -- --shape ...`,
/// 2026-11-28): `[27,784,12,3,11] [4,0,1,3,2]` f32, matrices of 36 x 11 (a
/// tenth of a chunk), 0.41 -> 0.15; `[63,3,10,10,73,6] [5,0,3,1,4,2]` f32,
/// 730 x 6 (about one chunk), 0.54 both ways.
pub const BOX_MIN_CHUNKS: u64 = 4;

/// The transpose `tiled` (which the planner would gather) as a `tall` kernel
/// of rows folded on past a tile, where the tall kernel of its elements folds
/// rows ([`folding_tall`]), its columns and rows allow it ([`shape_of`], its
/// sides stepping over each other's axes where `step`), the gather would use
/// less than [`TALL_MAX_SECTOR_USE`] of each source sector, and the runtime
/// would run the tall kernel on the shape ([`pick`]).
pub(super) fn tall_plan(tiled: &Plan, step: bool) -> Result<Option<Plan>, PermuteError> {
    let e = tiled.elem_bytes;
    let Some(tall) = folding_tall(e, 1, 0).filter(|_| tiled.kind == Kind::Transpose) else {
        return Ok(None);
    };
    if gather_sector_use(&tiled.axes, e)? >= TALL_MAX_SECTOR_USE {
        return Ok(None);
    }
    let shape = shape_of(&tiled.axes, e, true, step)?;
    let boxed = rows_box(&shape);
    if shape.fold.rows.n == tiled.shape.fold.rows.n && !boxed {
        return Ok(None);
    }
    // A box's matrix fills its chunks only when it spans several of them.
    let tall_chunk = u64::from(tall.geometry.chunk_elems());
    if boxed && shape.rows.saturating_mul(shape.cols) < BOX_MIN_CHUNKS * tall_chunk {
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
