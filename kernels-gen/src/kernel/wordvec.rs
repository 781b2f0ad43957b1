//! The moves of the `wordvec` form ([`Form::Wordvec`](crate::Form::Wordvec)),
//! built once as expressions: elements of `w` units (an odd number of 32-bit
//! words for 12, 20, ... 60 bytes or of 8-byte units for 24, 40 and 56 bytes,
//! 16-byte units for 32, 48 and 64:
//! [`wordvec_unit`](crate::kernel::unit::wordvec_unit)), a tile of 32 x 32 of
//! them, moved as 16-byte vectors of `vec` units (4, 2 or 1) on both sides
//! whatever the element boundaries.
//!
//! A tile row is a run of `32 * w` units. Warp `ty`'s lane `tx` takes line `4 *
//! ty + tx / 8` of the tile (a source row on the way in, a destination row on
//! the way out) and, in step `j`, vector `tx % 8 + 8 * j` of that line's run:
//! units `u .. u + vec`, `u = vec * (tx % 8 + 8 * j)`. The read loads the
//! vector whole and stores its units to the shared tile, which keeps each
//! source row's run in order (`row * pitch + unit`); the write gathers unit `x
//! = u + k` of destination row `c` from element `x / w` of the tile's column
//! `c` (unit `x % w` of it) and stores the vector whole. With the pitch `w`
//! units past a multiple of 32 (the pad the analyzer finds), a warp's access of
//! one unit of its vectors hits unit `vec * lane + w * line` of the rows: for
//! words, 32 banks (8 lanes a line cover one residue modulo 4, and an odd `w`
//! gives each of the 4 lines its own); for 8-byte units, which a warp accesses
//! in two halves of 16 lanes, 16 bank pairs in each half (2 lines, one even
//! and one odd).
//!
//! A vector that runs past the matrix's last column (row) moves unit by unit,
//! each where its element lies in the matrix. Vectors are aligned where each
//! row's run starts on 16 bytes: pitches and batch strides multiples of `vec`
//! elements, pointers on 16 bytes (`check::fit`).
//!
//! ```
//! use bankfree_gen::{emit, Kernel, TransposeSpec};
//! let k = Kernel::build(TransposeSpec::wordvec(20)?)?;
//! assert!(k.verdict().conflict_free);
//! assert!(emit(&k).contains("*reinterpret_cast<const bf_vec*>"));
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

use crate::ir::expr::{Expr, Var};
use crate::ir::guard::{Guard, Less};
use crate::kernel::batch::BatchBase;
use crate::kernel::geometry::Geometry;
use crate::kernel::layout::Layout;
use crate::kernel::moves::{Mem, Move, Pack, Place};
use crate::kernel::order::TileOrder;
use crate::kernel::tiling::Tiling;

/// Lanes to a line of the tile (a source row read, a destination row
/// written): a warp covers 4 lines per step.
const LANES: i64 = 8;

/// The tile lets and the two moves of a `wordvec` kernel whose blocks take its
/// tiles in `order`.
pub(crate) fn wordvec_moves(
    g: &Geometry,
    layout: Layout,
    tiling: &Tiling,
    batch: &BatchBase,
    order: TileOrder,
) -> (Vec<Expr>, Vec<Move>) {
    let v = Expr::var;
    let t = i64::from(g.tile);
    let w = i64::from(g.wordvec_units());
    let n = i64::from(g.vec);
    let (tile_r, tile_c) = tiling.tile_at(order);
    let tile_lets = vec![tile_r.clone(), tile_c.clone()];
    let line = Expr::small("line", v(Var::Ty) * (32 / LANES) + (v(Var::Tx) / LANES));
    // The thread's vector's first word in its line's run, and word `k` of it.
    let u = Expr::small("u", (v(Var::Tx) % LANES + v(Var::J) * LANES) * n);
    let word = u.clone() + v(Var::K);
    // The element of the run a word (or the vector's last word) belongs to.
    let elem = |x: Expr| x / w;
    let shared = |r: Expr, x: Expr| Place {
        mem: Mem::Shared,
        index: layout.shared_index(g.tile * g.wordvec_units(), r, x),
    };
    // Vectors of a line's run, 8 lanes to a step.
    let iters = g.tile * g.wordvec_units() / (g.vec * LANES as u32);

    let row = Expr::named("row", tile_r.clone() * t + line.clone());
    let read = Move {
        lets: vec![line.clone(), row.clone(), u.clone()],
        guard: Guard(vec![
            Less(row.clone(), v(Var::Rows)),
            Less(tile_c.clone() * t + elem(word.clone()), v(Var::Cols)),
        ]),
        from: Place {
            mem: Mem::Src,
            index: (batch.src.clone() + row.clone() * v(Var::SrcLd) + tile_c.clone() * t) * w
                + word.clone(),
        },
        to: shared(line.clone(), word.clone()),
        transpose: false,
        iters,
        pack: Some(Pack {
            full: Guard(vec![
                Less(row, v(Var::Rows)),
                Less(tile_c.clone() * t + elem(u.clone() + (n - 1)), v(Var::Cols)),
            ]),
            load: true,
            whole: false,
        }),
    };

    let d = Expr::named("d", tile_c * t + line.clone());
    let write = Move {
        lets: vec![line.clone(), d.clone(), u.clone()],
        guard: Guard(vec![
            Less(d.clone(), v(Var::Cols)),
            Less(tile_r.clone() * t + elem(word.clone()), v(Var::Rows)),
        ]),
        from: shared(elem(word.clone()), line * w + word.clone() % w),
        to: Place {
            mem: Mem::Dst,
            index: (batch.dst.clone() + d.clone() * v(Var::DstLd) + tile_r.clone() * t) * w + word,
        },
        transpose: false,
        iters,
        pack: Some(Pack {
            full: Guard(vec![
                Less(d, v(Var::Cols)),
                Less(tile_r * t + elem(u + (n - 1)), v(Var::Rows)),
            ]),
            load: false,
            whole: true,
        }),
    };
    (tile_lets, vec![read, write])
}
