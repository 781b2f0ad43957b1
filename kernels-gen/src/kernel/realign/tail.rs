//! A `realign` kernel's tail tiles ([`Realign::tail`](super::Realign::tail)):
//! the last row of tiles where it holds at most [`TAIL_SPAN`] positions of each
//! destination row, moved element by element.

use crate::ir::expr::{Expr, Var};
use crate::ir::guard::{Guard, Less};
use crate::kernel::batch::BatchBase;
use crate::kernel::geometry::Geometry;
use crate::kernel::moves::{Mem, Move, Place};

/// The positions of each destination row a tail tile moves, one per lane:
/// from a sector before the tile's first position on (where the rows' windows
/// start at the latest).
pub const TAIL_SPAN: i64 = 32;

/// The guard of a tail tile and its one move ([`Realign::tail`]). Position
/// `tp - sector` (`tp = tile_r * side + tx`, counted a sector down so that no
/// value is negative) of destination row `td` lies in the row's window from
/// `ts` positions before the tile (`tx + ts >= sector`) and in the matrix
/// (`tp < rows + sector`); the tile's rows past the matrix hold nothing, and
/// its rows from the window's start were the row of tiles above's to write.
pub(super) fn tail_tiles(
    g: &Geometry,
    batch: &BatchBase,
    tile_r: &Expr,
    tile_c: &Expr,
    dst_phase: &dyn Fn(Expr) -> Expr,
) -> (Guard, Move) {
    let v = Expr::var;
    let side = i64::from(g.tile_elems());
    let sector = i64::from(g.sector_elems());
    let rows_per = i64::from(g.block_rows);
    let tail = Guard(vec![
        Less(Expr::Lit(0), tile_r.clone()),
        Less(
            v(Var::Rows),
            tile_r.clone() * side + (TAIL_SPAN - sector + 1),
        ),
    ]);
    let c = Expr::small("tc", v(Var::Ty) + v(Var::J) * rows_per);
    let d = Expr::named("td", tile_c.clone() * side + c.clone());
    let e0 = Expr::named("te0", batch.dst.clone() + d.clone() * v(Var::DstLd));
    let ts = Expr::small("tts", dst_phase(e0.clone()));
    let tp = Expr::named("tp", tile_r.clone() * side + v(Var::Tx));
    let iters = (side + rows_per - 1) / rows_per;
    let mut guard = Vec::new();
    if side % rows_per != 0 {
        guard.push(Less(c.clone(), Expr::Lit(side)));
    }
    guard.extend([
        Less(d.clone(), v(Var::Cols)),
        Less(Expr::Lit(sector - 1), v(Var::Tx) + ts.clone()),
        Less(tp.clone(), v(Var::Rows) + sector),
    ]);
    let tail_move = Move {
        lets: vec![c, d.clone(), e0.clone(), ts, tp.clone()],
        guard: Guard(guard),
        from: Place {
            mem: Mem::Src,
            index: batch.src.clone() + (tp.clone() - sector) * v(Var::SrcLd) + d,
        },
        to: Place {
            mem: Mem::Dst,
            index: e0 + tp - sector,
        },
        transpose: false,
        iters: iters as u32,
        pack: None,
    };
    (tail, tail_move)
}
