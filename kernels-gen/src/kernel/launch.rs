//! How a kernel is launched: its grid, block and dynamic shared memory, from the
//! kernel's own tile count, and the limits the launch must respect.
//!
//! ```
//! use bankfree_gen::{kernel::launch::launch, Form, Geometry};
//! let g = Geometry { form: Form::Tile, tile: 32, block_rows: 8, elem_bytes: 4, vec: 1, split: false };
//! let l = launch(&g, 32 * 33 * 4, 1, 100, 70);
//! assert_eq!((l.grid, l.block, l.dynamic_shared_bytes), ([3 * 4, 1, 1], [32, 8, 1], 0));
//! ```

use crate::ir::expr::{Env, Expr, Var};
use crate::kernel::geometry::Geometry;
use crate::kernel::tiling::tiling;
use crate::memo::Memo;

/// Largest shared memory one block may use on any supported GPU (sm_90: 227 KB).
pub const MAX_SHARED_BYTES: u64 = 227 * 1024;
/// Static `__shared__` arrays are limited to 48 KB; larger tiles use dynamic shared
/// memory and need the launcher to raise the function's limit.
pub const STATIC_SHARED_LIMIT: u64 = 48 * 1024;

/// Largest grid x the launcher uses; the tile loop strides over the rest.
pub const MAX_GRID_X: u64 = (1 << 31) - 1;
/// Largest grid y the launcher uses; the batch loop strides over the rest.
pub const MAX_GRID_Y: u64 = 65_535;

/// How to launch a kernel over a shape: what the runtime passes to the driver and
/// the simulator walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Dynamic shared memory to request (0 when the kernel declares its tile statically).
    pub dynamic_shared_bytes: u32,
}

/// Dynamic shared memory a kernel with `shared_bytes` of tile needs: the emitter
/// declares tiles above 48 KB `extern __shared__`, which the launch must size.
pub fn dynamic_shared_bytes(shared_bytes: u64) -> u32 {
    if shared_bytes > STATIC_SHARED_LIMIT {
        shared_bytes as u32
    } else {
        0
    }
}

/// The launch of a kernel of geometry `g` with `shared_bytes` of tile over `batch`
/// matrices of `rows x cols` (a shape the kernel fits): one block per tile (or
/// chunk) along x and per matrix along y (one row of blocks where the kernel folds
/// the batch into its tiles), up to the grid limits (the kernel's loops stride over
/// the rest). The tile count is the kernel's own `ntiles` expression.
pub fn launch(g: &Geometry, shared_bytes: u64, batch: u64, rows: u64, cols: u64) -> Launch {
    // Building a tiling allocates its expressions: once per geometry, not per launch
    // (the runtime calls this on every launch).
    static NTILES: Memo<Geometry, Expr> = Memo::new(1 << 12);
    let ntiles = NTILES.get_or_insert_with(g, || tiling(g).ntiles);
    let mut env = Env::default();
    env.set(Var::Rows, i64::try_from(rows).unwrap_or(i64::MAX));
    env.set(Var::Cols, i64::try_from(cols).unwrap_or(i64::MAX));
    env.set(Var::Batches, i64::try_from(batch).unwrap_or(i64::MAX));
    let tiles = ntiles
        .eval(&env)
        .map_or(1, |n| u64::try_from(n).unwrap_or(1));
    Launch {
        grid: [
            tiles.clamp(1, MAX_GRID_X) as u32,
            if g.folds_batch() {
                1
            } else {
                batch.clamp(1, MAX_GRID_Y) as u32
            },
            1,
        ],
        block: [g.tile, g.block_rows, 1],
        dynamic_shared_bytes: dynamic_shared_bytes(shared_bytes),
    }
}

impl Launch {
    /// This launch in at most `blocks` blocks (at least one; the kernels' tile and
    /// batch loops stride over the grid, so the blocks take the rest of the tiles
    /// and matrices): the batch rows first, then tiles per row within what is left.
    ///
    /// ```
    /// use bankfree_gen::kernel::launch::Launch;
    /// let l = Launch { grid: [1000, 4, 1], block: [32, 8, 1], dynamic_shared_bytes: 0 };
    /// assert_eq!(l.capped(6 * 132).grid, [198, 4, 1]);
    /// assert_eq!(l.capped(2).grid, [1, 2, 1]);
    /// assert_eq!(l.capped(1 << 20).grid, l.grid);
    /// ```
    pub fn capped(self, blocks: u32) -> Launch {
        let blocks = blocks.max(1);
        let y = self.grid[1].clamp(1, blocks);
        let x = self.grid[0].clamp(1, (blocks / y).max(1));
        Launch {
            grid: [x, y, self.grid[2]],
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capped_launch_never_exceeds_its_blocks_nor_grows() {
        for grid in [
            [1, 1, 1],
            [7, 1, 1],
            [1000, 3, 1],
            [5, 65535, 1],
            [1 << 30, 9, 1],
        ] {
            let l = Launch {
                grid,
                block: [32, 8, 1],
                dynamic_shared_bytes: 0,
            };
            for blocks in [0, 1, 2, 5, 132, 792, 1 << 20] {
                let c = l.capped(blocks);
                let [x, y, z] = c.grid;
                assert!(x >= 1 && y >= 1, "{grid:?} in {blocks}: {:?}", c.grid);
                assert!(x <= grid[0] && y <= grid[1] && z == grid[2]);
                assert!(u64::from(x) * u64::from(y) <= u64::from(blocks.max(1)));
                // Every block it may keep, it keeps.
                if u64::from(grid[0]) * u64::from(grid[1]) <= u64::from(blocks) {
                    assert_eq!(c.grid, grid);
                }
            }
        }
    }
}
