//! The moves of the narrow forms (`tall` and `wide`), built once as expressions: a
//! chunk of the narrow matrix through shared memory, its flat side as one run.

use crate::ir::expr::{Expr, Guard, Less, Var};
use crate::kernel::geometry::{Form, Geometry};
use crate::kernel::layout::Layout;
use crate::kernel::moves::{Mem, Move, Place};
use crate::kernel::tiling::Tiling;

/// The two moves of a tall or wide kernel: the flat side as one run, the strided side
/// by narrow row, both through the chunk `q` in shared memory (`q = long * narrow +
/// narrow index`, viewed as rows of `tile` units by `layout`).
pub(crate) fn narrow_moves(
    g: &Geometry,
    layout: Layout,
    t: &Tiling,
    words: u32,
) -> (Vec<Expr>, Vec<Move>) {
    let v = Expr::var;
    let tile = i64::from(g.tile);
    let threads = i64::from(g.threads());
    debug_assert!(
        matches!(layout, Layout::Pad(_)),
        "narrow forms pad their chunk"
    );
    let iters = g.chunk_elems() / g.threads();
    let words_i = i64::from(words);
    let plane = g.shared_units(layout) as i64;
    let pad = match layout {
        Layout::Pad(n) => i64::from(n),
        _ => 0,
    };
    let shared = |q: Expr| Place {
        mem: Mem::Shared,
        index: {
            let i = q.clone() + Expr::quot(q, &t.period_m) * pad;
            if words > 1 {
                v(Var::K) * plane + i
            } else {
                i
            }
        },
    };
    let global = |mem: Mem, batch_stride: Var, i: Expr| Place {
        mem,
        index: {
            let e = v(Var::Batch) * v(batch_stride) + i;
            if words > 1 {
                e * words_i + v(Var::K)
            } else {
                e
            }
        },
    };
    let (narrow, chunk) = (t.narrow.clone(), t.chunk.clone());
    let l0 = Expr::named("l0", v(Var::Tile) * chunk.clone());
    let f = Expr::small("f", v(Var::Ty) * tile + v(Var::Tx) + v(Var::J) * threads);
    let in_chunk = Less(f.clone(), chunk.clone() * narrow.clone());
    // Narrow index `o` and long index `p` of the strided side's thread.
    let o = Expr::small("o", Expr::quot(f.clone(), &t.chunk_m));
    let p = Expr::small("p", f.clone() - o.clone() * chunk.clone());
    let q = p.clone() * narrow.clone() + o.clone();
    let (long, flat_ld, flat_mem, flat_stride, strided_mem, strided_ld, strided_stride) =
        if g.form == Form::Tall {
            (
                Var::Rows,
                Var::SrcLd,
                Mem::Src,
                Var::SrcBatchStride,
                Mem::Dst,
                Var::DstLd,
                Var::DstBatchStride,
            )
        } else {
            (
                Var::Cols,
                Var::DstLd,
                Mem::Dst,
                Var::DstBatchStride,
                Mem::Src,
                Var::SrcLd,
                Var::SrcBatchStride,
            )
        };
    // The flat run: `ld == narrow` (checked by `fits`), so the chunk is contiguous.
    let flat = global(flat_mem, flat_stride, l0.clone() * v(flat_ld) + f.clone());
    let flat_guard = Guard(vec![
        in_chunk.clone(),
        Less(
            l0.clone() * narrow.clone() + f.clone(),
            v(long) * narrow.clone(),
        ),
    ]);
    let strided = global(
        strided_mem,
        strided_stride,
        o.clone() * v(strided_ld) + l0.clone() + p.clone(),
    );
    let strided_guard = Guard(vec![in_chunk, Less(l0.clone() + p.clone(), v(long))]);
    let flat_move = |to_shared: bool| Move {
        lets: vec![f.clone()],
        guard: flat_guard.clone(),
        from: if to_shared {
            flat.clone()
        } else {
            shared(f.clone())
        },
        to: if to_shared {
            shared(f.clone())
        } else {
            flat.clone()
        },
        transpose: false,
        iters,
        pack: None,
    };
    let strided_move = |to_shared: bool| Move {
        lets: vec![f.clone(), o.clone(), p.clone()],
        guard: strided_guard.clone(),
        from: if to_shared {
            strided.clone()
        } else {
            shared(q.clone())
        },
        to: if to_shared {
            shared(q.clone())
        } else {
            strided.clone()
        },
        transpose: false,
        iters,
        pack: None,
    };
    let moves = if g.form == Form::Tall {
        vec![flat_move(true), strided_move(false)]
    } else {
        vec![strided_move(true), flat_move(false)]
    };
    (vec![l0], moves)
}
