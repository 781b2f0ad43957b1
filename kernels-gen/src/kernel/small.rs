//! The move of the `small` form, built once as expressions: a chunk of the flat
//! destination run, each thread gathering `vec` consecutive destination elements
//! from the source and storing them as one vector.

use crate::ir::expr::{Expr, Guard, Less, Var};
use crate::kernel::geometry::{Geometry, SMALL_ITERS};
use crate::kernel::moves::{Mem, Move, Place};
use crate::kernel::tiling::Tiling;

/// The tile lets and the one move of a `small` kernel.
///
/// Destination position `p` (flat over the batch) is element `(r, c)` of matrix
/// `m`, with `p = m * mat + c * rows + r`; it comes from source position
/// `m * mat + r * cols + c`. A tile starts at `base = t * chunk`, in matrix `m0 =
/// base / mat` at offset `off0` (one division per tile); inside it the thread's
/// positions are small, so `m` and `c` come from 32-bit magic divisions.
pub(crate) fn small_moves(g: &Geometry, t: &Tiling, words: u32) -> (Vec<Expr>, Vec<Move>) {
    let v = Expr::var;
    let vec = i64::from(g.vec);
    let threads = i64::from(g.threads());
    let base = Expr::named("base", v(Var::Tile) * i64::from(g.small_chunk()));
    let m0 = Expr::named("m0", base.clone() / t.mat.clone());
    let off0 = Expr::small("off0", base.clone() - m0.clone() * t.mat.clone());
    let lets = vec![base.clone(), m0.clone(), off0.clone()];
    // The thread's first position in the chunk.
    let f = Expr::small(
        "f",
        (v(Var::Ty) * i64::from(g.tile) + v(Var::Tx) + v(Var::J) * threads) * vec,
    );
    // Element `k` of the vector (with `vec > 1`, `Var::K` runs over them; a word
    // array's `Var::K` runs over its words instead).
    let lane_k = if vec > 1 { v(Var::K) } else { Expr::Lit(0) };
    let local = off0.clone() + f.clone() + lane_k.clone();
    let dm = Expr::quot(local.clone(), &t.mat_m);
    let within = local - dm.clone() * t.mat.clone();
    let c = Expr::quot(within.clone(), &t.rows_m);
    let r = within - c.clone() * v(Var::Rows);
    let src_elem = (m0 + dm) * t.mat.clone() + r * v(Var::Cols) + c;
    let dst_elem = base.clone() + f.clone() + lane_k;
    let words_i = i64::from(words);
    let place = |mem, e: Expr| Place {
        mem,
        index: if vec == 1 && words > 1 {
            e * words_i + v(Var::K)
        } else {
            e
        },
    };
    let total = v(Var::Batches) * t.mat.clone();
    let first = base + f.clone();
    let mv = Move {
        lets: vec![f],
        // Per unit: element `k` is inside the run (a vector at the run's end may be
        // partly outside; a word array's words share their element's check).
        guard: Guard(vec![Less(dst_elem.clone(), total.clone())]),
        from: place(Mem::Src, src_elem),
        to: place(Mem::Dst, dst_elem),
        transpose: false,
        iters: SMALL_ITERS,
        pack: (vec > 1).then(|| Guard(vec![Less(first + (vec - 1), total)])),
    };
    (lets, vec![mv])
}
