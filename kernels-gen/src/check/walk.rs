//! What every simulated kernel shares: the grid and its loops over blocks,
//! batch items and tiles (`walk`), the run's errors and counts, and the final
//! check that every destination element was written exactly once.

use crate::check::fit::Refusal;
use crate::ir::expr::{Env, EvalError, Var};
use crate::ir::shape::{Shape, ShapeError};
use crate::ir::tape::GuardTape;
use crate::kernel::Kernel;

/// A simulated grid (`blockIdx.x` and `blockIdx.y` ranges).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    pub x: u64,
    pub y: u64,
}

/// What went wrong in a simulated run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Shape(#[from] ShapeError),
    #[error("address arithmetic failed: {0}")]
    Eval(#[from] EvalError),
    #[error("{mem}[{index}] is outside the buffer of {len} units")]
    OutOfBounds {
        mem: &'static str,
        index: i64,
        len: u64,
    },
    #[error("block ({bx}, {by}) reads tile[{index}] that this tile never wrote (a stale read on the GPU)")]
    StaleShared { bx: u64, by: u64, index: i64 },
    #[error("the dst element of source element (batch {b}, row {row}, col {col}) written {count} times; expected once")]
    WriteCount {
        b: u64,
        row: u64,
        col: u64,
        count: u8,
    },
    #[error("block ({bx}, {by}) runs a tile by its unguarded body where the {guard} guard fails (a generator bug: the tile's interior guard does not imply it)")]
    Interior {
        bx: u64,
        by: u64,
        guard: &'static str,
    },
    #[error("{0} writes landed outside the destination matrix (in its pitch or between batches)")]
    Outside(u64),
    #[error("the tile loop's condition at t = {t} disagrees with the launcher's {ntiles} tiles (a generator bug)")]
    TileLoop { t: u64, ntiles: u64 },
    #[error("this kernel cannot run the shape: {0}")]
    Unfit(Refusal),
    #[error("a grid of {0:?} blocks is empty")]
    EmptyGrid(Grid),
    #[error("a vector store of {n} units at dst[{index}] is not {n}-unit aligned and contiguous (a generator bug)")]
    Misaligned { index: i64, n: u32 },
    #[error("the kernel takes {kernel} outer batch axes and the shape has {shape}; build it with `Kernel::with_outer({shape})`")]
    OuterAxes { kernel: u8, shape: u8 },
    #[error("the kernel is built for sources of {kernel} columns and the shape has {shape}; build it with `Kernel::with_width({shape})`")]
    Width { kernel: u32, shape: u64 },
    #[error("the kernel folds {kernel:?} more (row, column) axes and the shape {shape:?}; build it with `Kernel::with_fold`")]
    Fold { kernel: [u8; 2], shape: [u8; 2] },
}

/// What a simulated run did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Stats {
    pub blocks: u64,
    pub tiles: u64,
    pub unit_writes: u64,
    /// Whole vectors a packed move stored at once (its other units went one by one).
    pub vector_writes: u64,
    /// Tiles run by a body without bounds checks (`realign` kernels' interior tiles).
    pub interior: u64,
}

/// Runs `thread` for every thread of a block of `kernel`, with `Var::Tx` and
/// `Var::Ty` set.
pub(crate) fn each_thread(
    kernel: &Kernel,
    env: &mut Env,
    mut thread: impl FnMut(&mut Env) -> Result<(), SimError>,
) -> Result<(), SimError> {
    let g = &kernel.spec.geometry;
    for ty in 0..g.block_rows {
        for tx in 0..g.tile {
            env.set(Var::Tx, i64::from(tx));
            env.set(Var::Ty, i64::from(ty));
            thread(env)?;
        }
    }
    Ok(())
}

/// Runs `tile` for every tile of every batch item each block of `grid` walks,
/// with the kernel's own loop condition checked against the launcher's
/// `ntiles`; `tile` returns the destination units it wrote and the vectors it
/// stored whole.
pub(crate) fn walk(
    kernel: &Kernel,
    shape: &Shape,
    grid: Grid,
    env: &mut Env,
    ntiles: u64,
    mut tile: impl FnMut(&mut Env, (u64, u64)) -> Result<(u64, u64), SimError>,
) -> Result<Stats, SimError> {
    let mut stats = Stats::default();
    for by in 0..grid.y {
        for bx in 0..grid.x {
            stats.blocks += 1;
            // A kernel that folds the batch into its tiles has no batch loop.
            let batches = if kernel.spec.geometry.folds_batch() {
                1
            } else {
                shape.batch
            };
            for b in (by..batches).step_by(grid.y as usize) {
                env.set(Var::Batch, b as i64);
                for t in (bx..).step_by(grid.x as usize) {
                    env.set(Var::Tile, t as i64);
                    // The kernel's own loop condition, which must agree with the
                    // launcher's tile count.
                    let more = kernel.more.eval(env)?;
                    if more != (t < ntiles) {
                        return Err(SimError::TileLoop { t, ntiles });
                    }
                    if !more {
                        break;
                    }
                    stats.tiles += 1;
                    let (units, vectors) = tile(env, (bx, by))?;
                    stats.unit_writes += units;
                    stats.vector_writes += vectors;
                }
            }
        }
    }
    Ok(stats)
}

/// Every destination element written exactly once, nothing else written:
/// `writes` counts the writes of each `unit`-byte unit of the destination.
pub(crate) fn check_writes(
    kernel: &Kernel,
    shape: &Shape,
    writes: &[u8],
    total: u64,
    unit: u32,
) -> Result<(), SimError> {
    // Units per element (word arrays), or elements per unit (vectors of a block).
    let (unit, elem) = (u64::from(unit), u64::from(kernel.spec.geometry.elem_bytes));
    let (words, vec) = if unit > elem {
        (1, unit / elem)
    } else {
        (elem / unit, 1)
    };
    let mut inside = 0u64;
    // Over the source's (row, col): the destination's element of each.
    for b in 0..shape.batch {
        for row in 0..shape.rows {
            for col in 0..shape.cols {
                let e = shape.dst_index(b, row, col);
                for w in 0..words {
                    let u = e / vec * words + w;
                    let count = writes.get(u as usize).copied().unwrap_or(0);
                    if count != 1 {
                        return Err(SimError::WriteCount { b, row, col, count });
                    }
                    if e.is_multiple_of(vec) {
                        inside += 1;
                    }
                }
            }
        }
    }
    if total != inside {
        return Err(SimError::Outside(total - inside));
    }
    Ok(())
}

/// Whether a move's `guard` admits a thread's step; in a tile run by the
/// kernel's interior body, which tests the `kept` guard instead, the two must
/// agree.
pub(crate) fn admits(
    guard: &GuardTape,
    kept: Option<&GuardTape>,
    (bx, by): (u64, u64),
    env: &Env,
) -> Result<bool, SimError> {
    let ok = guard.eval(env)?;
    match kept {
        Some(k) if k.eval(env)? != ok => Err(SimError::Interior {
            bx,
            by,
            guard: "move's bounds",
        }),
        _ => Ok(ok),
    }
}
