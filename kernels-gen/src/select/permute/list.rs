//! The kernels a plan may run, in the runtime's order, and the one it runs.

use crate::check::fit::kernel_refusal;
use crate::check::suit::kernel_unsuited;
use crate::ir::shape::{Fold, Shape};
use crate::kernel::fold;
use crate::kernel::geometry::{Form, Quotients};
use crate::kernel::order::TileOrder;
use crate::kernel::spec::{Strategy, TransposeSpec};
use crate::kernel::Kernel;
use crate::select::choice::{auto_kernels, permute_tile_rows};
use crate::select::gather::{gathers, short_thin_tiles};
use crate::select::permute::axes::{rows_box, rows_past_tile};
use crate::select::permute::call::{Kind, Plan};
use crate::select::permute::error::PermuteError;
use crate::select::permute::keeps_tile16;
use crate::select::permute::lanes::lanes_gather;

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
        // off the vectors' alignment), or where its vectors' loads would each
        // touch 32 sectors ([`lanes_gather`]) the one taking each warp's chunk
        // down its columns (stored unit by unit: any `dst`). Each is followed
        // by its wider quotients' twins: exact 32-bit ones of its items
        // (batches past plain 32-bit item quotients), then of its items and
        // matrices (matrices above 16384 elements), then 64-bit ones of all
        // (batches above 2^31 items, matrices within a chunk of 2^31 elements).
        Kind::Gather => {
            let vector = TransposeSpec::small(elem_bytes)?;
            let down = lanes_gather(&plan.shape, &vector.geometry);
            let mut specs = vec![vector];
            if vector.geometry.vec > 1 && !down {
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
                let k = Kernel::build(spec)?.with_outer(outer)?;
                let k = if down {
                    k.with_order(TileOrder::Columns)?
                } else {
                    k
                };
                out.extend(with_twins(k, levels));
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
            let boxed = rows_box(&plan.shape)
                && gathers(&plan.axes, &plan.shape, elem_bytes)
                && !keeps_tile16(plan, true)?;
            let tall = (rows_past_tile(&plan.shape) || boxed)
                .then(|| folding_tall(elem_bytes, r, c))
                .flatten();
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
            // twins, for batches its plain 32-bit quotients cannot split. A
            // batch of short matrices of enough columns leaves out the narrow
            // kernels ([`short_thin_tiles`]).
            let levels: &[Quotients] = if outer > 0 {
                &[Quotients::Items, Quotients::Any]
            } else {
                &[]
            };
            let narrow = !short_thin_tiles(&plan.shape, elem_bytes);
            Ok(auto_kernels(&Kernel::build(scalar(plan.tile())?)?)
                .iter()
                .filter(|k| narrow || !matches!(k.spec().geometry.form, Form::Thin | Form::Tall))
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

/// The spec of the `tall` kernel of `elem_bytes`-byte elements, where it folds
/// `rows` more row axes and `cols` more column axes ([`fold::folds`]: one of
/// single elements, its rows alone; the tall kernels of 1- and 2-byte
/// elements pack words and fold nothing).
pub(super) fn folding_tall(elem_bytes: u32, rows: u8, cols: u8) -> Option<TransposeSpec> {
    TransposeSpec::new(32, elem_bytes, Strategy::Pad(None))
        .and_then(|s| s.with_form(Form::Tall))
        .ok()
        .filter(|s| fold::folds(&s.geometry, rows, cols))
}
