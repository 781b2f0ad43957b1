//! When a `thin` call runs the kernel that splits its column words between two
//! warps ([`Geometry::split`]): a rule of the width and of how many of the
//! call's tiles the GPU holds at once.
//!
//! A `thin` call of fewer tiles than the GPU's SMs hold at once loads every
//! tile, then stores every tile, with no other tile's work to overlap: ncu on
//! 285715 x 28 u8 (8 MB, H100) showed 289 blocks, a quarter of the SM's warps
//! active and the memory 16% busy. The split kernel moves tiles of half the
//! rows with the same 8 warps, each lane's column words split between warps
//! `w` and `w + 4`: twice the blocks and half the column stores in a row per
//! warp. Against the unsplit kernel (H100, CuPy over the kernels as emitted,
//! median of 25 graph-captured rounds, 2026-11-28):
//!
//! | call | unsplit | split |
//! |---|---|---|
//! | 1-byte widths 21 to 32, 8 MB (0.5 to 0.7 of the blocks held at once) | 0.65 to 0.78 | 0.71 to 0.89 |
//! | 1-byte 428571 x 28, 387097 x 31 (12 MB) | 0.78, 0.79 | 0.88, 0.93 |
//! | 1-byte 714285 x 28, 645161 x 31 (20 MB, 1.2 to 1.4 times what is held) | 0.92, 0.88 | 0.95, 0.99 |
//! | 2-byte widths 19 to 40, 8 MB | 0.59 to 0.84 | 0.68 to 0.91 |
//! | 2-byte 384615 x 26, 322581 x 31 (20 MB) | 0.91, 0.92 | 0.92, 1.00 |
//! | widths from 21 (1-byte), 19 (2-byte), 40 MB (2.5 to 3.8 times) | 0.84 to 1.10 | 0.85 to 1.07, each within -0.16 to +0.11 |
//! | 1-byte widths 9 to 20, 2-byte 9 to 18, 8 MB | | each within -0.22 to +0.06 |
//!
//! Through the runtime (`bench -- --shape ...`, H100, 2026-11-28, unsplit then
//! split in one call), 1-byte widths 21 to 32 at 10 and 16 MB ran at 0.68 to
//! 1.05 of memcpy unsplit and 0.92 to 1.18 split, 2-byte widths 19 to 32 at
//! 0.74 to 1.13 and 0.89 to 1.20.
//!
//! So the split kernel runs widths from [`split_min_cols`](crate::kernel::thin::split_min_cols) in calls of fewer
//! than twice the blocks the GPU holds at once ([`thin_min_blocks`] an SM).
//!
//! ```
//! use bankfree_gen::select::split::thin_split;
//! use bankfree_gen::{Kernel, TransposeSpec};
//! let k = Kernel::build(TransposeSpec::thin(1)?)?.with_width(28)?;
//! assert!(thin_split(&k, 1, 285_715, 132)); // 8 MB: 289 tiles
//! assert!(!thin_split(&k, 1, 1_428_571, 132)); // 40 MB: 1441 tiles
//! assert!(!thin_split(&k.with_width(12)?, 1, 666_667, 132));
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

use crate::kernel::geometry::Geometry;
use crate::kernel::launch::launch;
use crate::kernel::thin::{thin_min_blocks, widths_of};
use crate::kernel::Kernel;

/// Whether a call of `batch` matrices of `rows` source rows on `k`, a plain
/// `thin` kernel of one width, runs its split twin ([`Kernel::with_split`])
/// on a GPU of `sms` SMs: a width from [`split_min_cols`](crate::kernel::thin::split_min_cols), and fewer of the
/// call's tiles than twice the blocks the GPU holds at once. Kernels with outer
/// axes or folded columns (a permute's) keep theirs.
pub fn thin_split(k: &Kernel, batch: u64, rows: u64, sms: u32) -> bool {
    let g = &k.spec().geometry;
    let Some(cols) = k.width() else {
        return false;
    };
    let split = Geometry { split: true, ..*g };
    if !g.thins()
        || g.split
        || k.outer() > 0
        || k.fold() != [0, 0]
        || !widths_of(&split).contains(&cols)
    {
        return false;
    }
    let l = launch(g, 0, batch, rows, u64::from(cols));
    let blocks = u64::from(l.grid[0]) * u64::from(l.grid[1]);
    blocks < 2 * u64::from(sms) * u64::from(thin_min_blocks(cols, false))
}
