//! The moves of the gathering forms (`small` and `strip`), built once as
//! expressions: a chunk of the flat destination run, each thread gathering `vec`
//! consecutive destination elements from the source and storing them as one
//! vector, or (a `small` kernel's chunk taken down its columns, [`TileOrder`])
//! `vec` elements 32 positions apart, each stored alone.

use crate::ir::expr::{Expr, Var};
use crate::ir::guard::{Guard, Less};
use crate::kernel::batch::{item_src, BatchBase};
use crate::kernel::geometry::{Geometry, Quotients, SMALL_ITERS};
use crate::kernel::moves::{Mem, Move, Pack, Place};
use crate::kernel::order::TileOrder;
use crate::kernel::tiling::Tiling;

/// The tile lets and the one move of a `small` kernel.
///
/// Destination position `p` (flat over the batch) is element `(r, c)` of matrix
/// `m`, with `p = m * mat + c * rows + r`; it comes from source position
/// `start(m) + r * src_ld + c`, where `start(m)` is `m * src_batch_stride` or,
/// with outer batch axes, the multi-index of `m` over them ([`item_src`], with
/// the extents' multipliers `magics`). A tile starts at `base = t * chunk`, in
/// matrix `m0 = base / mat` at offset `off0` (one division per tile); inside it
/// the thread's positions are small, so `m` and `c` come from magic divisions:
/// plain 32-bit ones, or with `wide` ([`WideMagics`]) exact or 64-bit ones.
/// Word arrays ([`Geometry::gathers_words`]) count positions in words: the tile
/// starts `rem` words into element `e0 = base / words`, and each of a thread's
/// words is word `x % words` of element `e0 + x / words` (`x = rem + f + k`);
/// the vector is stored whole only where `dst` starts on one. Down the columns
/// (`order`; vectors of single elements only), a warp's `32 * vec` positions
/// are its lanes' units column by column: unit `k` of lane `l` is position `32 *
/// k + l` of the warp's, and each unit is stored alone.
pub(crate) fn small_moves(
    g: &Geometry,
    t: &Tiling,
    words: u32,
    magics: &[Expr],
    wide: Option<&WideMagics>,
    order: TileOrder,
) -> (Vec<Expr>, Vec<Move>) {
    let v = Expr::var;
    let vec = i64::from(g.vec);
    let base = Expr::named("base", v(Var::Tile) * i64::from(g.small_chunk()));
    // Positions between a thread's units.
    let step = order.small_step(g);
    // Element `k` of the vector (with `vec > 1`, `Var::K` runs over them; a word
    // array's `Var::K` runs over its words instead).
    let (f, lane_k) = order.small_units(g);
    // Word arrays gathered by words: positions count words, `w` to an element;
    // the tile starts `rem` words into element `e0`.
    let w = i64::from(g.elem_words());
    let (first_elem, mut lets, thread) = if g.gathers_words() {
        let e0 = Expr::named("e0", base.clone() / w);
        let rem = Expr::small("rem", base.clone() - e0.clone() * w);
        let x = rem.clone() + f.clone() + lane_k.clone();
        let q = x.clone() / w;
        (
            e0.clone(),
            vec![base.clone(), e0, rem],
            Some((q.clone(), x - q * w)),
        )
    } else {
        (base.clone(), vec![base.clone()], None)
    };
    let m0 = Expr::named("m0", first_elem.clone() / t.mat.clone());
    let off0 = Expr::small("off0", first_elem - m0.clone() * t.mat.clone());
    lets.extend([m0.clone(), off0.clone()]);
    let local = match &thread {
        Some((q, _)) => off0.clone() + q.clone(),
        None => off0.clone() + f.clone() + lane_k.clone(),
    };
    let (mat_m, rows_m) = match wide {
        Some(w) => (&w.mat, &w.rows),
        None => (&t.mat_m, &t.rows_m),
    };
    let dm = Expr::divide(local.clone(), mat_m);
    let within = local - dm.clone() * t.mat.clone();
    let c = Expr::divide(within.clone(), rows_m);
    let r = within - c.clone() * v(Var::Rows);
    let mut src_elem = item_src(m0 + dm, magics) + r * v(Var::SrcLd) + c;
    let pos = base.clone() + f.clone() + lane_k;
    let mut total = v(Var::Batches) * t.mat.clone();
    if let Some((_, word)) = thread {
        src_elem = src_elem * w + word;
        total = total * w;
    }
    let run = Run {
        first: base + f.clone(),
        pos: pos.clone(),
        start: Expr::Lit(0),
        total,
    };
    let mut mv = gather(g, words, f, &run, src_elem, pos, step);
    if g.gathers_words() {
        // Whole vectors only where `dst` starts on one (`dst_off` counts its
        // words here); elsewhere every word is stored alone.
        let ph = Expr::small("ph", v(Var::DstOff).and(vec - 1));
        lets.push(ph.clone());
        if let Some(p) = mv.pack.as_mut() {
            p.full.0.push(Less(ph, Expr::Lit(1)));
        }
    }
    (lets, vec![mv])
}

/// The multipliers of the matrix size and of `rows` of a `small` kernel whose
/// matrices exceed the plain quotients' 16384 elements: exact 32-bit ones
/// ([`Expr::magic_exact`]) for [`Quotients::Wide`], whose positions in a matrix
/// plus a chunk stay below 2^31, 64-bit ones ([`Expr::magic64`]) for
/// [`Quotients::Any`] (see [`Quotients::max_elems`]).
pub(crate) struct WideMagics {
    pub mat: Expr,
    pub rows: Expr,
}

impl WideMagics {
    pub(crate) fn new(t: &Tiling, quotients: Quotients) -> Option<WideMagics> {
        let (mat, rows) = (t.mat.clone(), Expr::var(Var::Rows));
        match quotients {
            Quotients::Wide => Some(WideMagics {
                mat: Expr::magic_exact("mat_x", mat),
                rows: Expr::magic_exact("rows_x", rows),
            }),
            Quotients::Any => Some(WideMagics {
                mat: Expr::magic64("mat_w", mat),
                rows: Expr::magic64("rows_w", rows),
            }),
            Quotients::Narrow | Quotients::Items => None,
        }
    }
}

/// The tile lets and the one move of a `strip` kernel.
///
/// Position `p` of a batch item's destination run (of `cols * rows`) is element
/// `(r, c)` with `p = c * rows + r`, read from `start.src + r * src_ld + c` and
/// written to `start.dst + p` (`start`: the item's [`BatchBase`]). The tiles
/// cover the run's vectors as they lie in memory: position `q` of the tiles is
/// `p = q - ph`, where `ph` is how far the run starts past a vector boundary
/// (`(start.dst + dst_off) % vec`), so every whole vector is stored at once
/// whatever the batch strides and the pointer. A tile starts at `base = t *
/// chunk`, in column `c0 = base / rows` at row `r0` (one division per tile);
/// inside it the positions are small, so the column comes from a 32-bit magic
/// division (of a position `vec` columns on, which the phase cannot take below
/// 0).
pub(crate) fn strip_moves(
    g: &Geometry,
    t: &Tiling,
    words: u32,
    start: &BatchBase,
) -> (Vec<Expr>, Vec<Move>) {
    let v = Expr::var;
    let vec = i64::from(g.vec);
    let base = Expr::named("base", v(Var::Tile) * i64::from(g.small_chunk()));
    let c0 = Expr::named("c0", base.clone() / v(Var::Rows));
    let r0 = Expr::small("r0", base.clone() - c0.clone() * v(Var::Rows));
    let mut lets = vec![base.clone(), c0.clone(), r0.clone()];
    let ph = if vec > 1 {
        let ph = Expr::small("ph", (start.dst.clone() + v(Var::DstOff)).and(vec - 1));
        lets.push(ph.clone());
        ph
    } else {
        Expr::Lit(0)
    };
    let (f, lane_k) = TileOrder::Rows.small_units(g);
    let local = r0 + f.clone() + lane_k.clone() + v(Var::Rows) * vec - ph.clone();
    let dc = Expr::quot(local.clone(), &t.rows_m);
    let r = local - dc.clone() * v(Var::Rows);
    let src_elem = start.src.clone() + r * v(Var::SrcLd) + c0 + dc - vec;
    let q = base + f.clone();
    let run = Run {
        first: q.clone(),
        pos: q.clone() + lane_k.clone(),
        total: t.mat.clone() + ph.clone(),
        start: ph.clone(),
    };
    let dst_elem = start.dst.clone() + q + lane_k - ph;
    (lets, vec![gather(g, words, f, &run, src_elem, dst_elem, 1)])
}

/// Where a thread's units lie among the positions a gathering kernel's tiles
/// cover: its vector's first position, its unit's position, and where the
/// destination run starts and ends (`start <= pos < total`).
struct Run {
    first: Expr,
    pos: Expr,
    start: Expr,
    total: Expr,
}

impl Run {
    /// Positions `first..=last` inside the run.
    fn inside(&self, first: Expr, last: Expr) -> Guard {
        let mut g = Vec::new();
        if self.start != Expr::Lit(0) {
            g.push(Less(self.start.clone(), first + 1));
        }
        g.push(Less(last, self.total.clone()));
        Guard(g)
    }
}

/// The gathering move: `dst_elem` from `src_elem` (`Var::K` over the vector's
/// elements, `step` positions apart, or a word array's words), stored as one
/// vector where the whole vector lies inside the run (each element alone where
/// `step > 1`), else element by element where each lies inside it.
fn gather(
    g: &Geometry,
    words: u32,
    f: Expr,
    run: &Run,
    src_elem: Expr,
    dst_elem: Expr,
    step: i64,
) -> Move {
    let vec = i64::from(g.vec);
    let words_i = i64::from(words);
    let place = |mem, e: Expr| Place {
        mem,
        index: if vec == 1 && words > 1 {
            e * words_i + Expr::var(Var::K)
        } else {
            e
        },
    };
    Move {
        lets: vec![f],
        // Per unit: element `k` is inside the run (a vector at the run's end may be
        // partly outside; a word array's words share their element's check).
        guard: run.inside(run.pos.clone(), run.pos.clone()),
        from: place(Mem::Src, src_elem),
        to: place(Mem::Dst, dst_elem),
        transpose: false,
        iters: SMALL_ITERS,
        pack: (vec > 1).then(|| Pack {
            full: run.inside(run.first.clone(), run.first.clone() + (vec - 1) * step),
            load: false,
            whole: step == 1,
        }),
    }
}
