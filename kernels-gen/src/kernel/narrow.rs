//! The moves of the narrow forms (`tall` and `wide`), built once as expressions: a
//! chunk of the narrow matrix through shared memory, its flat side as one run.

use crate::ir::expr::{Expr, Var};
use crate::ir::guard::{Guard, Less};
use crate::kernel::batch::BatchBase;
use crate::kernel::fold::{split, Side};
use crate::kernel::geometry::{Form, Geometry};
use crate::kernel::layout::{Layout, Swizzle};
use crate::kernel::moves::{Mem, Move, Pack, Place};
use crate::kernel::tiling::Tiling;

/// The two moves of a tall or wide kernel: the flat side as one run, the strided side
/// by narrow row, both through the chunk `q` in shared memory (`q = long * narrow +
/// narrow index`, viewed as rows of `tile` units by `layout`).
///
/// A tall kernel whose rows fold (`row_magics`, [`crate::kernel::fold`]) reads
/// the chunk's rows one by one: unit `f` of the chunk is column `f % narrow` of
/// row `l0 + f / narrow`, at that row's source offset, and each destination
/// row's position `l0 + p` lies at its destination offset. The shared indices
/// are the unfolded kernel's, so its bank proof holds as it is.
pub(crate) fn narrow_moves(
    g: &Geometry,
    layout: Layout,
    t: &Tiling,
    words: u32,
    batch: &BatchBase,
    row_magics: &[Expr],
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
    let global = |mem: Mem, base: &Expr, i: Expr| Place {
        mem,
        index: {
            let e = base.clone() + i;
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
                &batch.src,
                Mem::Dst,
                Var::DstLd,
                &batch.dst,
            )
        } else {
            (
                Var::Cols,
                Var::DstLd,
                Mem::Dst,
                &batch.dst,
                Mem::Src,
                Var::SrcLd,
                &batch.src,
            )
        };
    // The flat run: `ld == narrow` (checked by `fits`), so the chunk is contiguous;
    // with folded rows, each row at its own offset.
    let folded = g.form == Form::Tall && !row_magics.is_empty();
    let narrow_m = Expr::magic("narrow_m", narrow.clone());
    let (flat_lets, flat_at) = if folded {
        let row = Expr::small("fr", Expr::quot(f.clone(), &narrow_m));
        let col = Expr::small("fc", f.clone() - row.clone() * narrow.clone());
        let rs = split(l0.clone() + row.clone(), Side::Rows, row_magics, 0);
        let lets = [vec![f.clone(), row, col.clone()], rs.lets].concat();
        (lets, rs.src + col)
    } else {
        (vec![f.clone()], l0.clone() * v(flat_ld) + f.clone())
    };
    let flat = global(flat_mem, flat_stride, flat_at);
    let flat_guard = Guard(vec![
        in_chunk.clone(),
        Less(
            l0.clone() * narrow.clone() + f.clone(),
            v(long) * narrow.clone(),
        ),
    ]);
    let (strided_lets, strided_at) = if folded {
        let rw = split(l0.clone() + p.clone(), Side::Rows, row_magics, 1);
        let lets = [vec![f.clone(), o.clone(), p.clone()], rw.lets].concat();
        (lets, o.clone() * v(strided_ld) + rw.dst)
    } else {
        (
            vec![f.clone(), o.clone(), p.clone()],
            o.clone() * v(strided_ld) + l0.clone() + p.clone(),
        )
    };
    let strided = global(strided_mem, strided_stride, strided_at);
    let strided_guard = Guard(vec![in_chunk, Less(l0.clone() + p.clone(), v(long))]);
    let flat_move = |to_shared: bool| Move {
        lets: flat_lets.clone(),
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
        lets: strided_lets.clone(),
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
    let tile_lets = if folded { vec![narrow_m, l0] } else { vec![l0] };
    (tile_lets, moves)
}

/// The layout of a packed tall kernel's chunk with `swizzle`: CuTe's
/// `Swizzle<5, M, 5>` on its units (`2^M` of them make a 32-bit word), its `B`
/// bits cut at run time to the narrow side's power of two (`low - 1`). Word `w`
/// becomes `w ^ ((w >> 5) & (low - 1))`: a warp's 32 words of the flat run stay in
/// one bank row, and the gathers, which read words `c + n * lane` for any offset
/// `c`, meet 32 banks for every width `n` (odd widths need no swizzle; for `n = 2^a
/// m` the lanes that share a bank differ in their `w >> 5` by multiples of the odd
/// `m`, whose low `a` bits then tell them apart). A padding cannot do this: the
/// windows' shifts move the gathers across its gaps.
pub(crate) fn packed_swizzle(g: &Geometry) -> Swizzle {
    Swizzle {
        b: 5,
        m: g.vec.trailing_zeros(),
        s: 5,
    }
}

/// The two moves of a tall kernel of 1- or 2-byte elements (`vec` of them make a
/// 32-bit word), both in words.
///
/// The chunk holds source rows `l0 - vec .. l0 + chunk`, read as the aligned words
/// of one flat run (`src_ld == cols`, an aligned pointer and batch stride: the
/// run's words start on words). Destination row `o` of the chunk is the window
/// `l0 - s .. l0 + chunk - s`, where `s` is how far the row's position `l0` lies
/// past a word boundary (`(o * dst_ld + b * dst_batch_stride + dst_off) % vec`):
/// each thread gathers `vec` elements of the window from the chunk and stores them
/// as one aligned word, or element by element at the matrix's ends. Windows of
/// consecutive chunks meet exactly (`chunk` is a multiple of `vec`), so the
/// chunks cover `rows + vec - 1` positions.
pub(crate) fn packed_tall_moves(
    g: &Geometry,
    layout: Layout,
    t: &Tiling,
    batch: &BatchBase,
) -> (Vec<Expr>, Vec<Move>) {
    let v = Expr::var;
    let vec = i64::from(g.vec);
    let shift = i64::from(g.word_shift());
    let threads = i64::from(g.threads());
    let iters = g.chunk_elems() / g.vec / g.threads();
    // The chunk's words `w` (units `q`) XOR-swizzled as `w ^ ((w >> 5) & (low -
    // 1))` ([`packed_swizzle`]), or unswizzled (`none`).
    let shared = |q: Expr| Place {
        mem: Mem::Shared,
        index: match layout {
            Layout::Xor(z) => z.flat(q, t.low.clone() - 1),
            _ => q,
        },
    };
    let (narrow, chunk) = (t.narrow.clone(), t.chunk.clone());
    let l0 = Expr::named("l0", v(Var::Tile) * chunk.clone());
    let f = Expr::small(
        "f",
        v(Var::Ty) * i64::from(g.tile) + v(Var::Tx) + v(Var::J) * threads,
    );
    let k = v(Var::K);

    // The flat run: word `f` of the chunk, `vec` elements from `l0 - shift` rows.
    let flat_len = (chunk.clone() + shift) * narrow.clone();
    let at = l0.clone() * narrow.clone() + f.clone() * vec; // + shift rows
    let total = (v(Var::Rows) + shift) * narrow.clone();
    let before = narrow.clone() * shift - 1;
    // Units `first..=last` of the word inside the chunk and the matrix: unit `k`
    // for the element-by-element path, the whole word for the vector one.
    let flat_inside = |first: Expr, last: Expr| {
        Guard(vec![
            Less(f.clone() * vec + last.clone(), flat_len.clone()),
            Less(before.clone(), at.clone() + first),
            Less(at.clone() + last, total.clone()),
        ])
    };
    let flat_move = Move {
        lets: vec![f.clone()],
        guard: flat_inside(k.clone(), k.clone()),
        from: Place {
            mem: Mem::Src,
            index: batch.src.clone() + at.clone() + k.clone() - narrow.clone() * shift,
        },
        to: shared(f.clone() * vec + k.clone()),
        transpose: false,
        iters,
        pack: Some(Pack {
            full: flat_inside(Expr::Lit(0), Expr::Lit(vec - 1)),
            load: true,
            whole: true,
        }),
    };

    // The strided side: word `i` of destination row `o`'s window.
    let per_row = chunk / vec;
    let o = Expr::small("o", Expr::quot(f.clone(), &t.chunk_m));
    let p = Expr::small("p", (f.clone() - o.clone() * per_row.clone()) * vec);
    let s = Expr::small(
        "s",
        (o.clone() * v(Var::DstLd) + batch.dst.clone() + v(Var::DstOff)).and(Expr::Lit(vec - 1)),
    );
    let in_chunk = Less(f.clone(), per_row * narrow.clone());
    let pos = l0.clone() + p.clone(); // + s: the window's start is `pos - s`
                                      // Units `first..=last` of the word inside the chunk and the matrix's row.
    let row_inside = |first: Expr, last: Expr| {
        Guard(vec![
            in_chunk.clone(),
            Less(s.clone(), pos.clone() + first + 1),
            Less(pos.clone() + last, v(Var::Rows) + s.clone()),
        ])
    };
    let strided_move = Move {
        lets: vec![f, o.clone(), p.clone(), s.clone()],
        guard: row_inside(k.clone(), k.clone()),
        from: shared((p + k.clone() + shift - s.clone()) * narrow + o.clone()),
        to: Place {
            mem: Mem::Dst,
            index: batch.dst.clone() + o * v(Var::DstLd) + pos.clone() + k - s.clone(),
        },
        transpose: false,
        iters,
        pack: Some(Pack {
            full: row_inside(Expr::Lit(0), Expr::Lit(vec - 1)),
            load: false,
            whole: true,
        }),
    };
    (vec![l0], vec![flat_move, strided_move])
}
