//! A `realign` kernel's tail tiles ([`Realign::tail`](super::Realign::tail)):
//! the last row of tiles where it holds at most [`TAIL_SPAN`] positions of each
//! destination row, moved element by element.

use crate::ir::expr::{Expr, Var};
use crate::ir::guard::{Guard, Less};
use crate::kernel::geometry::Geometry;
use crate::kernel::moves::{Mem, Move, Place};

/// The positions of each destination row a tail tile moves, one per lane:
/// from a sector before the tile's first position on (where the rows' windows
/// start at the latest).
pub const TAIL_SPAN: i64 = 32;

/// The index expressions a tail tile shares with the tile's own moves, built
/// once in [`super::realign_moves`].
pub(super) struct Places<'a> {
    /// Column `c` of the tile: its destination row `d`.
    pub dst_row: &'a dyn Fn(Expr) -> Expr,
    /// Destination row `d`: its first element `e0`.
    pub dst_start: &'a dyn Fn(Expr) -> Expr,
    /// Row start `e0`: its window's phase `ts` against the tile.
    pub dst_phase: &'a dyn Fn(Expr) -> Expr,
    /// Source row `rp` (counted a sector down) and column `c`: the element of
    /// row `rp - sector`, plus `sector * src_ld`.
    pub src_below: &'a dyn Fn(Expr, Expr) -> Expr,
}

/// The guard of a tail tile and its one move ([`Realign::tail`](super::Realign::tail)).
/// Position `tp - sector` (`tp = tile_r * side + tx`, counted a sector down so
/// that no value is negative) of destination row `td` lies in the row's window
/// from `ts` positions before the tile (`tx + ts >= sector`) and in the matrix
/// (`tp < rows + sector`); the tile's rows past the matrix hold nothing, and
/// its rows from the window's start were the row of tiles above's to write.
pub(super) fn tail_tiles(g: &Geometry, tile_r: &Expr, at: &Places<'_>) -> (Guard, Move) {
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
    let d = Expr::named("td", (at.dst_row)(c.clone()));
    let e0 = Expr::named("te0", (at.dst_start)(d.clone()));
    let ts = Expr::small("tts", (at.dst_phase)(e0.clone()));
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
            index: (at.src_below)(tp.clone(), d) - v(Var::SrcLd) * sector,
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
