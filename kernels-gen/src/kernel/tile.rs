//! The moves of the square-tile forms (`tile` and `skew`), built once as
//! expressions: the source tile into shared memory, then its transpose out.

use crate::ir::expr::{Expr, Var};
use crate::ir::guard::{Guard, Less};
use crate::kernel::batch::BatchBase;
use crate::kernel::fold::{split, Side};
use crate::kernel::geometry::{Form, Geometry};
use crate::kernel::layout::Layout;
use crate::kernel::moves::{Interior, Mem, Move, Place};
use crate::kernel::order::TileOrder;
use crate::kernel::tiling::Tiling;

/// The moves of the tile forms: source tile to shared memory, then its transpose
/// to the destination (for `skew`, by windows that start on 32-byte sectors).
/// `folds` holds the division multipliers of folded rows and columns
/// ([`crate::kernel::fold`]; scalar `tile` kernels only); `order` says which
/// tile the tile index names. A `skew` tile of 4-, 8- or 16-byte elements also
/// has its [`Interior`] body.
pub(crate) fn tile_moves(
    g: &Geometry,
    layout: Layout,
    tiling: &Tiling,
    words: u32,
    batch: &BatchBase,
    folds: &[Vec<Expr>; 2],
    order: TileOrder,
) -> (Vec<Expr>, Vec<Move>, Option<Interior>) {
    let t = i64::from(g.tile);
    let vec = i64::from(g.vec);
    let v = Expr::var;
    let iters = g.iters();
    let in_vecs = |x: Var| if vec > 1 { v(x) / vec } else { v(x) };
    let (rows, cols) = (tiling.rows.clone(), tiling.cols.clone());
    let (tile_r, tile_c) = tiling.tile_at(order);
    // Row inside the tile this thread handles in iteration j.
    let tile_row = v(Var::Ty) + v(Var::J) * i64::from(g.block_rows);
    let col = v(Var::Tx);

    // Unit index of (row, col) in a global matrix with pitch `ld`: word k of a
    // word-array element, or row k of a block, whose rows are `ld / vec` vectors
    // apart (block row r starts at element row r * vec, i.e. vector r * ld).
    let at = |base: &Expr, ld: Var, r: Expr, c: Expr| {
        let base = base.clone();
        if vec > 1 {
            base + r * v(ld) + c + v(Var::K) * in_vecs(ld)
        } else if words > 1 {
            (base + r * v(ld) + c) * i64::from(words) + v(Var::K)
        } else {
            base + r * v(ld) + c
        }
    };
    let src_at = |r: Expr, c: Expr| Place {
        mem: Mem::Src,
        index: at(&batch.src, Var::SrcLd, r, c),
    };
    let dst_at = |r: Expr, c: Expr| Place {
        mem: Mem::Dst,
        index: at(&batch.dst, Var::DstLd, r, c),
    };
    // Word-planar: word k of every element lives in plane k.
    let plane = g.shared_units(layout) as i64;
    let shared = |r: Expr, c: Expr| Place {
        mem: Mem::Shared,
        index: if words > 1 {
            v(Var::K) * plane + layout.shared_index(g.tile, r, c)
        } else {
            layout.shared_index(g.tile, r, c)
        },
    };
    let tile_lets = vec![tile_r.clone(), tile_c.clone()];
    // Destination element (out_row, out_col) (with vec > 1: block).
    let out_row = Expr::named("out_row", tile_c.clone() * t + tile_row.clone());
    let col_g = Expr::named("col", tile_c.clone() * t + col.clone());
    if g.form == Form::Skew {
        // Shared row 0 is source row `tile_r * deep - (s - 1)`: rows are counted
        // `s - 1` up (`row_s`, `out_s`) so that nothing goes below zero. The write
        // runs `depth` windows of `t` per destination row: iteration j writes row
        // `j % per` of the thread's rows in window `j / per`.
        let s = i64::from(g.sector_elems());
        let (depth, deep) = (g.skew_depth(), i64::from(g.skew_rows()));
        let per = i64::from(iters);
        let (w_row, window) = if depth > 1 {
            (
                v(Var::Ty) + v(Var::J) % per * i64::from(g.block_rows),
                v(Var::J) / per * t,
            )
        } else {
            (tile_row.clone(), Expr::Lit(0))
        };
        // The tile's first row (counted as `row_s` and `out_s` are) and column.
        let (top, left) = (tile_r.clone() * deep, tile_c.clone() * t);
        let out_row = Expr::named("out_row", left.clone() + w_row.clone());
        let row_s = Expr::named("row_s", top.clone() + tile_row.clone());
        let shift = Expr::named(
            "shift",
            (out_row.clone() * v(Var::DstLd) + v(Var::DstOff)) % s,
        );
        let in_tile = window + col.clone() + (s - 1) - shift.clone();
        let out_s = Expr::named("out_s", top.clone() + in_tile.clone());
        let in_shared = Less(tile_row.clone(), Expr::Lit(i64::from(g.shared_rows())));
        // Why these imply every bound below: a tile's shared rows `row_s` run
        // from `tile_r * deep` (above `s - 2` from the second tile row on) to
        // `tile_r * deep + deep + s - 2`, and its written positions `out_s` from
        // `tile_r * deep` (window 0, lane 0, shift `s - 1`) to the same
        // (the last window's last lane, shift 0): both below `rows + s - 1`
        // where `tile_r * deep + deep - 1 < rows`; its columns and destination
        // rows are `tile_c * t` to `tile_c * t + t - 1`.
        // Only where `Geometry::skew_interior` (elements that move as one
        // access of 4 bytes or more): the 2-byte and 12-byte (three words) skew
        // tiles ran slower with it (H200, `bench -- --shape ...`, both builds
        // in one call: 5003 x 3001 12-byte 0.833 -> 0.557 of memcpy, 150 x
        // 20001 2-byte 1.37 -> 1.26), where f32 ran faster (8191 x 8193 0.866
        // -> 0.889, 4095 x 4097 0.942 -> 0.991) and 8- and 16-byte alike
        // (0.912 -> 0.910, 0.926 -> 0.927).
        let interior = g.skew_interior().then(|| Interior {
            guard: Guard(vec![
                Less(Expr::Lit(s - 2), top.clone()),
                Less(top + (deep - 1), rows.clone()),
                Less(left + (t - 1), cols.clone()),
            ]),
            kept: vec![Guard(vec![in_shared.clone()]), Guard::default()],
        });
        let read = Move {
            lets: vec![row_s.clone(), col_g.clone()],
            guard: Guard(vec![
                in_shared,
                Less(Expr::Lit(s - 2), row_s.clone()),
                Less(row_s.clone(), rows.clone() + (s - 1)),
                Less(col_g.clone(), cols.clone()),
            ]),
            from: src_at(row_s - (s - 1), col_g),
            to: shared(tile_row.clone(), col.clone()),
            transpose: false,
            iters: g.shared_rows().div_ceil(g.block_rows),
            pack: None,
        };
        let write = Move {
            lets: vec![out_row.clone(), shift.clone(), out_s.clone()],
            guard: Guard(vec![
                Less(out_row.clone(), cols),
                Less(Expr::Lit(s - 2), out_s.clone()),
                Less(out_s.clone(), rows + (s - 1)),
            ]),
            from: shared(in_tile, w_row),
            to: dst_at(out_row, out_s - (s - 1)),
            transpose: false,
            iters: iters * depth,
            pack: None,
        };
        return (tile_lets, vec![read, write], interior);
    }
    let row_g = Expr::named("row", tile_lets[0].clone() * t + tile_row.clone());
    let out_col = Expr::named("out_col", tile_lets[0].clone() * t + col.clone());
    let in_src = Guard(vec![
        Less(row_g.clone(), rows.clone()),
        Less(col_g.clone(), cols.clone()),
    ]);
    let in_dst = Guard(vec![
        Less(out_row.clone(), cols),
        Less(out_col.clone(), rows),
    ]);
    if folds.iter().any(|f| !f.is_empty()) {
        let unit = |e: Expr| {
            if words > 1 {
                e * i64::from(words) + v(Var::K)
            } else {
                e
            }
        };
        // Source row and column of the read, then of the write (the write's row
        // along the destination is a source column).
        let (rs, cs) = (
            split(row_g.clone(), Side::Rows, &folds[0], 0),
            split(col_g.clone(), Side::Cols, &folds[1], 0),
        );
        let (rw, cw) = (
            split(out_col.clone(), Side::Rows, &folds[0], 1),
            split(out_row.clone(), Side::Cols, &folds[1], 1),
        );
        let read_lets = [vec![row_g, col_g], rs.lets, cs.lets].concat();
        let from = Place {
            mem: Mem::Src,
            index: unit(batch.src.clone() + rs.src + cs.src),
        };
        let moves = if layout == Layout::Direct {
            vec![Move {
                lets: read_lets,
                guard: in_src,
                from,
                to: Place {
                    mem: Mem::Dst,
                    index: unit(batch.dst.clone() + rs.dst + cs.dst),
                },
                transpose: false,
                iters,
                pack: None,
            }]
        } else {
            vec![
                Move {
                    lets: read_lets,
                    guard: in_src,
                    from,
                    to: shared(tile_row.clone(), col.clone()),
                    transpose: false,
                    iters,
                    pack: None,
                },
                Move {
                    lets: [vec![out_row, out_col], rw.lets, cw.lets].concat(),
                    guard: in_dst,
                    from: shared(col, tile_row),
                    to: Place {
                        mem: Mem::Dst,
                        index: unit(batch.dst.clone() + rw.dst + cw.dst),
                    },
                    transpose: false,
                    iters,
                    pack: None,
                },
            ]
        };
        return (tile_lets, moves, None);
    }
    let moves = match layout {
        Layout::Direct => vec![Move {
            lets: vec![row_g.clone(), col_g.clone()],
            guard: in_src,
            from: src_at(row_g.clone(), col_g.clone()),
            to: dst_at(col_g, row_g),
            transpose: false,
            iters,
            pack: None,
        }],
        _ => vec![
            Move {
                lets: vec![row_g.clone(), col_g.clone()],
                guard: in_src,
                from: src_at(row_g, col_g),
                to: shared(tile_row.clone(), col.clone()),
                transpose: false,
                iters,
                pack: None,
            },
            Move {
                lets: vec![out_row.clone(), out_col.clone()],
                guard: in_dst,
                from: shared(col, tile_row),
                to: dst_at(out_row, out_col),
                transpose: g.vec > 1,
                iters,
                pack: None,
            },
        ],
    };
    (tile_lets, moves, None)
}
