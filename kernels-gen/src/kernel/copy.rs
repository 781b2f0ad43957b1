//! The move of the `copy` form, built once as expressions: a flat run of one batch
//! item's `rows x cols` block, copied vector by vector with no shared memory.

use crate::ir::expr::{Expr, Var};
use crate::ir::guard::{Guard, Less};
use crate::kernel::batch::BatchBase;
use crate::kernel::geometry::Geometry;
use crate::kernel::moves::{Mem, Move, Place};
use crate::kernel::tiling::Tiling;

/// The tile lets and the one move of a `copy` kernel.
///
/// Position `p` of a batch item (of `rows * cv`, `cv` vectors per row) is vector
/// `c` of row `r`, `p = r * cv + c`, read from `r * src_ld + c` and written to `r *
/// dst_ld + c` (in vectors). A chunk starts at `base = t * chunk`, in row `r0 = base
/// / cv` at offset `off0` (one division per chunk); inside it a position is below
/// 2^32, so its row comes from a 32-bit division.
pub(crate) fn copy_moves(
    g: &Geometry,
    t: &Tiling,
    words: u32,
    batch: &BatchBase,
) -> (Vec<Expr>, Vec<Move>) {
    let v = Expr::var;
    let vec = i64::from(g.vec);
    let cv = t.cols.clone();
    let base = Expr::named("base", v(Var::Tile) * i64::from(g.copy_chunk()));
    let r0 = Expr::named("r0", base.clone() / cv.clone());
    let off0 = Expr::small("off0", base.clone() - r0.clone() * cv.clone());
    let f = Expr::small(
        "f",
        v(Var::Ty) * i64::from(g.tile) + v(Var::Tx) + v(Var::J) * i64::from(g.threads()),
    );
    let dr = Expr::small("dr", (off0.clone() + f.clone()) / cv.clone());
    let c = Expr::small("c", off0.clone() + f.clone() - dr.clone() * cv);
    let r = r0.clone() + dr.clone();
    let in_vecs = |x: Var| if vec > 1 { v(x) / vec } else { v(x) };
    let at = |start: &Expr, ld: Var| {
        let e = start.clone() + r.clone() * in_vecs(ld) + c.clone();
        if words > 1 {
            e * i64::from(words) + v(Var::K)
        } else {
            e
        }
    };
    let mv = Move {
        lets: vec![f.clone(), dr, c.clone()],
        guard: Guard(vec![Less(base.clone() + f, t.mat.clone())]),
        from: Place {
            mem: Mem::Src,
            index: at(&batch.src, Var::SrcLd),
        },
        to: Place {
            mem: Mem::Dst,
            index: at(&batch.dst, Var::DstLd),
        },
        transpose: false,
        iters: g.copy_iters(),
        pack: None,
    };
    (vec![base, r0, off0], vec![mv])
}
