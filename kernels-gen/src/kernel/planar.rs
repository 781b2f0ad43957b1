//! The move of the `planar` form, built once as expressions: blocks of `vec`
//! whole source rows (`16 / elem_bytes`), each loaded as `cols` 16-byte vectors,
//! transposed in registers and stored as one 16-byte vector per destination row.

use crate::ir::expr::{Expr, Var};
use crate::ir::guard::{Guard, Less};
use crate::kernel::batch::BatchBase;
use crate::kernel::geometry::{Geometry, COPY_ITERS};
use crate::kernel::moves::{Mem, Move, Place};
use crate::kernel::tiling::Tiling;

/// The tile lets and the one move of a `planar` kernel.
///
/// Block `p` of a batch item (of `bv = rows / vec`) is source rows `p * vec ..
/// (p + 1) * vec`: vectors `p * cols + k` of the item for `k < cols` (`src_ld ==
/// cols`). Its column `k` is vector `k * dst_ld / vec + p` of the destination
/// (in 16-byte vectors; `Var::K` runs over the `cols` vectors on both sides). A
/// chunk starts at block `base = t * chunk`.
pub(crate) fn planar_moves(g: &Geometry, t: &Tiling, batch: &BatchBase) -> (Vec<Expr>, Vec<Move>) {
    let v = Expr::var;
    let vec = i64::from(g.vec);
    let base = Expr::named("base", v(Var::Tile) * i64::from(g.copy_chunk()));
    let dst_lv = Expr::named("dst_lv", v(Var::DstLd) / vec);
    let f = Expr::small(
        "f",
        v(Var::Ty) * i64::from(g.tile) + v(Var::Tx) + v(Var::J) * i64::from(g.threads()),
    );
    let p = base.clone() + f.clone();
    let mv = Move {
        lets: vec![f],
        guard: Guard(vec![Less(p.clone(), t.mat.clone())]),
        from: Place {
            mem: Mem::Src,
            index: batch.src.clone() + p.clone() * v(Var::Cols) + v(Var::K),
        },
        to: Place {
            mem: Mem::Dst,
            index: batch.dst.clone() + v(Var::K) * dst_lv.clone() + p,
        },
        transpose: true,
        iters: COPY_ITERS,
        pack: None,
    };
    (vec![base, dst_lv], vec![mv])
}
