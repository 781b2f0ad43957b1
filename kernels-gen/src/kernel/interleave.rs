//! The moves of the `interleave` form ([`Form::Interleave`](crate::Form::Interleave)),
//! built once as expressions: the mirror of `planar`,
//! for sources of at most [`INTERLEAVE_MAX_ROWS`] rows (an image's planes) whose
//! destination is one run (`dst_ld == rows`: the pixels interleaved).
//!
//! A *block* is `vec = 16 / elem_bytes` source columns: one 16-byte vector of
//! each source row, and `rows` 16-byte vectors of the destination's run. A
//! thread moves `bpt = 8 / rows` blocks per tile ([`tile_blocks`]), so that
//! it has 5 to 8 vectors in flight at any height (`bpt * rows`): thread `f` of
//! a tile owns blocks
//! `base + 256 j + f` for `j < bpt`. The first move loads every block's `rows`
//! vectors, then interleaves each block in registers (element `i` of row `k`
//! becomes element `i * rows + k` of the block's run,
//! [`crate::check::reference::interleave_block`]) and stores its `rows`
//! vectors to the shared stage, at `(256 j + f) * rows + k`. After the barrier,
//! the second move writes the stage out in order: step `j` of thread `f` moves
//! vector `256 j + f` of the tile's run, so a warp's stores are 512 contiguous
//! bytes.
//!
//! The stage's vector `u` lives at `u ^ ((u >> 3) & mask)`. A warp's 16-byte
//! stores go to the banks 8 lanes at a time, lane `i` of them at `(8 q + i) *
//! rows + k`: an odd height already spreads them over the 8 vector slots of a
//! bank row (mask 0), a height divisible by 4 needs the row number folded in
//! (mask 7), and the other even heights its lowest bit (mask 1, since 7 meets
//! 6 rows twice in a slot). The loads read 8 consecutive vectors, which any such
//! XOR keeps in one bank row. `stage_mask` picks the mask per call; the
//! analyzer proves every height.
//!
//! Each height has its own entry point ([`interleave_widths`]), the height a
//! constant inside.
//!
//! Against the kernels that ran these shapes before, on every height (H200,
//! `bench --shape E:RxC --alternatives`, 32 MB each, one call, 2026-11-29;
//! interleave / squat / strip, ratio to a same-bytes `cudaMemcpy`):
//!
//! | rows | 1-byte | 2-byte |
//! |---|---|---|
//! | 2 | 1.041 / 0.634 / 0.882 | 1.045 / 0.648 / 0.975 |
//! | 3 | 1.161 / 0.883 / 0.876 | 1.178 / 0.880 / 0.955 |
//! | 4 | 1.034 / 0.832 / 0.851 | 1.041 / 0.816 / 0.957 |
//! | 5 | 1.199 / 0.998 / 0.859 | 1.213 / 1.040 / 0.906 |
//! | 6 | 1.182 / 0.997 / 0.897 | 1.194 / 1.061 / 0.993 |
//! | 7 | 1.173 / 1.015 / 0.814 | 1.204 / 1.067 / 0.867 |
//! | 8 | 1.025 / 0.852 / 0.821 | 1.030 / 0.918 / 0.931 |
//!
//! The squat kernel keeps the sources whose rows do not start on 16 bytes.
//!
//! ```
//! use bankfree_gen::{emit, Kernel, TransposeSpec};
//! let k = Kernel::build(TransposeSpec::interleave(1)?)?;
//! assert!(k.verdict().conflict_free);
//! let three = k.with_width(3)?;
//! assert_eq!(three.entry_name(), "bankfree_transpose_t32_r8_e1_v16_pad0_interleave_w3");
//! assert!(emit(&three).contains("constexpr bf_index rows = 3;"));
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

use crate::ir::expr::{Env, Expr, Var};
use crate::ir::guard::{Guard, Less};
use crate::kernel::batch::BatchBase;
use crate::kernel::geometry::{Geometry, INTERLEAVE_MAX_ROWS};
use crate::kernel::moves::{Mem, Move, Place};

/// The stage swizzle's masks by `rows % 4`, 3 bits each: 7 for 0, 0 for the
/// odd heights, 1 for 2 (see the module docs).
const STAGE_MASKS: i64 = 7 | (1 << 6);

/// The call's stage mask ([`STAGE_MASKS`] at `rows % 4`), a kernel-wide value.
pub(crate) fn stage_mask() -> Expr {
    Expr::named(
        "stage_mask",
        (Expr::Lit(STAGE_MASKS) >> (Expr::var(Var::Rows).and(3) * 3)).and(7),
    )
}

/// Stage vector `u`'s place ([`stage_mask`]).
fn staged(u: Expr) -> Expr {
    u.clone().xor((u >> 3).and(stage_mask()))
}

/// The heights an `interleave` kernel runs, each by its own entry point
/// ([`crate::Kernel::with_width`]): one kernel switching on the height took
/// the tallest case's registers and more (248 for 1-byte elements, where one
/// height alone takes 40), leaving 2 blocks of 256 threads an SM.
pub fn interleave_widths() -> std::ops::RangeInclusive<u32> {
    1..=INTERLEAVE_MAX_ROWS as u32
}

/// Vectors of shared stage an `interleave` kernel of `rows` rows uses: its
/// tile's blocks' rows.
pub fn interleave_stage_vectors(g: &Geometry, rows: u32) -> u32 {
    blocks_per_thread(g, rows) * g.threads() * rows
}

/// The blocks a thread of an `interleave` kernel of `rows` rows moves per
/// tile: [`tile_blocks`]' `bpt` at that height (1 where it cannot be
/// evaluated, which a height the kernel takes never is).
pub fn blocks_per_thread(g: &Geometry, rows: u32) -> u32 {
    let mut env = Env::default();
    env.set(Var::Rows, i64::from(rows));
    tile_blocks(g)
        .0
        .eval(&env)
        .ok()
        .and_then(|b| u32::try_from(b).ok())
        .unwrap_or(1)
}

/// Blocks per thread (`bpt = 8 / rows`, at least one up to
/// [`INTERLEAVE_MAX_ROWS`] rows) and per tile (`tile_blocks = bpt * threads`),
/// kernel-wide values: a thread has 5 to 8 loads in flight at any height. A
/// first form, one block per thread and one entry point switching on the
/// height (96 registers, 2 blocks an SM), ran 2 rows of 1-byte elements at
/// 0.61 of memcpy and 3 rows at 0.84; with these blocks per thread and an
/// entry point per height, at 1.04 and 1.16 (H200, `bench --alternatives`,
/// 32 MB, two calls).
pub fn tile_blocks(g: &Geometry) -> (Expr, Expr) {
    let bpt = Expr::named(
        "bpt",
        Expr::Lit(INTERLEAVE_MAX_ROWS as i64) / Expr::var(Var::Rows),
    );
    let tile = Expr::named("tile_blocks", bpt.clone() * i64::from(g.threads()));
    (bpt, tile)
}

/// The tile lets and the two moves of an `interleave` kernel, whose batch
/// items are `bv` blocks each (the tiling's `bv`).
pub(crate) fn interleave_moves(
    g: &Geometry,
    bv: &Expr,
    batch: &BatchBase,
) -> (Vec<Expr>, Vec<Move>) {
    let v = Expr::var;
    let threads = i64::from(g.threads());
    let (bpt, tile) = tile_blocks(g);
    let base = Expr::named("base", v(Var::Tile) * tile.clone());
    let src_lv = Expr::named("src_lv", v(Var::SrcLd) / i64::from(g.vec));
    // Thread `f`'s position in the tile at step `j`: its block in the load, its
    // stage vector in the store.
    let f = Expr::small(
        "f",
        v(Var::J) * threads + v(Var::Ty) * i64::from(g.tile) + v(Var::Tx),
    );
    let iters = INTERLEAVE_MAX_ROWS as u32;
    let load = Move {
        lets: vec![f.clone()],
        guard: Guard(vec![
            Less(v(Var::J), bpt),
            Less(base.clone() + f.clone(), bv.clone()),
        ]),
        from: Place {
            mem: Mem::Src,
            index: batch.src.clone() + v(Var::K) * src_lv.clone() + base.clone() + f.clone(),
        },
        to: Place {
            mem: Mem::Shared,
            index: staged(f.clone() * v(Var::Rows) + v(Var::K)),
        },
        transpose: true,
        iters,
        pack: None,
    };
    let store = Move {
        lets: vec![f.clone()],
        guard: Guard(vec![
            Less(f.clone(), tile * v(Var::Rows)),
            Less(
                base.clone() * v(Var::Rows) + f.clone(),
                bv.clone() * v(Var::Rows),
            ),
        ]),
        from: Place {
            mem: Mem::Shared,
            index: staged(f.clone()),
        },
        to: Place {
            mem: Mem::Dst,
            index: batch.dst.clone() + base.clone() * v(Var::Rows) + f,
        },
        transpose: false,
        iters,
        pack: None,
    };
    (vec![base, src_lv], vec![load, store])
}
