//! The moves of the `realign` form ([`Form::Realign`](crate::Form::Realign)),
//! built once as expressions, and the two register steps of its data path that
//! the emitter prints and the simulator runs: the byte permutations that
//! transpose a block of rows into column words ([`network`]) and the funnel
//! shift that realigns a column's words to its destination row
//! ([`Realign::shift`]).
//!
//! A tile is `tile * vec` source rows and columns (`vec = 4 / elem_bytes`
//! elements to a word). Lane `l = tx & 7` of band `band = (tx >> 3) + 4 * ty`
//! reads columns `c0 .. c0 + 16 / elem_bytes` of the rows of its blocks: block
//! `w` of the tile is source rows `vec * (w - 1) ..` of it (block 0 lies above
//! the tile). Column `c` of block `w`, funnel-shifted with the same column of
//! block `w - 1` by the destination row's phase `ts`, is word `w - 1` of that
//! column's window in shared memory: destination positions `vec * (w - 1) - ts ..`
//! of the tile. The warp that then writes destination row `c` stores word `tx`
//! of it, whole where it lies inside the matrix.
//!
//! ```
//! use bankfree_gen::{emit, Kernel, TransposeSpec};
//! let k = Kernel::build(TransposeSpec::realign(2)?)?;
//! assert!(k.verdict().conflict_free);
//! assert!(emit(&k).contains("__funnelshift_rc(prev[k], cur[k]"));
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

use crate::ir::expr::{Expr, Guard, Less, Var};
use crate::kernel::batch::BatchBase;
use crate::kernel::geometry::Geometry;
use crate::kernel::layout::{Layout, Swizzle};
use crate::kernel::moves::{Mem, Move, Pack, Place};
use crate::kernel::tiling::Tiling;

/// The swizzle of a `realign` kernel's shared tile: word `w` of column `c` at
/// `c * 32 + (w ^ (((c / cols_per_lane) & 7) << 2))`. A warp's stores of one
/// column index hold the 8 lanes of a band (`c / cols_per_lane` = `l`) and its
/// 4 bands (`w` = `band`, bits 0 and 1 within the warp): the key moves each
/// lane's word to bits 2 to 4, so the 32 stores hit 32 banks. Its loads read
/// one column's 32 words, which the key only permutes.
pub(crate) fn realign_swizzle(g: &Geometry) -> Swizzle {
    Swizzle {
        b: 3,
        m: 2,
        s: 3 + g.realign_cols().trailing_zeros(),
    }
}

/// The expressions of a `realign` kernel beyond its two moves (which hold its
/// shared store and load, and its destination store).
#[derive(Clone, Debug, PartialEq)]
pub struct Realign {
    /// Per thread: the lane in its band, the band and its first column `c0`.
    pub lane: Vec<Expr>,
    /// `rp`: the source row (plus `vec`) of row `Var::Row` of block `Var::J`.
    pub row: Expr,
    /// That row lies in the matrix.
    pub inside: Guard,
    /// `x`: the source element of column `c0` of that row.
    pub at: Expr,
    /// `ph`: elements from the 16-byte boundary below `x` to `x`.
    pub phase: Expr,
    /// Both 16-byte vectors around the row's 16 bytes lie in the matrix's span.
    pub fast: Guard,
    /// The two vectors' first elements: `x - ph` and `x - ph + 16 / elem_bytes`.
    pub vecs: [Expr; 2],
    /// Column `c0 + Var::K` lies in the matrix (the element-by-element path).
    pub col: Guard,
    /// Its element: `x + Var::K`.
    pub elem: Expr,
    /// `ts`: column `c0 + Var::K`'s destination row's position past a word.
    pub dst_phase: Expr,
    /// `sh`: the funnel shift (`__funnelshift_rc(prev, cur, sh)`) that makes
    /// that column's word of its destination row: the last `ts` elements of
    /// the block above, then the first of this one (`8 * (4 - ts *
    /// elem_bytes)` bits).
    pub shift: Expr,
    /// Destination element `Var::K` of a word stored element by element lies in
    /// the matrix.
    pub part: Guard,
    /// Its index.
    pub part_to: Expr,
    /// How many of the write move's lets its guard reads (declared before it;
    /// the rest inside it).
    pub guard_lets: usize,
}

/// One `__byte_perm(r[a], r[b], sel)` into `r[out]` of the register transpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Perm {
    pub out: usize,
    pub a: usize,
    pub b: usize,
    pub sel: u32,
}

const fn perm(out: usize, a: usize, b: usize, sel: u32) -> Perm {
    Perm { out, a, b, sel }
}

/// The register transpose of one 32-bit word position `q` of a block of `vec`
/// rows: registers `0..vec` hold the rows' words (row `k`'s word `q`: its
/// columns `vec * q ..`), and the last `vec` registers end up holding the
/// columns' words (column `vec * q + m`'s word: its `vec` rows).
pub fn network(vec: u32) -> &'static [Perm] {
    const FOUR: [Perm; 8] = [
        perm(4, 0, 1, 0x5140),
        perm(5, 0, 1, 0x7362),
        perm(6, 2, 3, 0x5140),
        perm(7, 2, 3, 0x7362),
        perm(8, 4, 6, 0x5410),
        perm(9, 4, 6, 0x7632),
        perm(10, 5, 7, 0x5410),
        perm(11, 5, 7, 0x7632),
    ];
    const TWO: [Perm; 2] = [perm(2, 0, 1, 0x5410), perm(3, 0, 1, 0x7632)];
    if vec == 4 {
        &FOUR
    } else {
        &TWO
    }
}

/// Registers [`network`] uses: its inputs, temporaries and outputs.
pub fn network_regs(vec: u32) -> usize {
    network(vec).iter().map(|p| p.out + 1).max().unwrap_or(0)
}

/// The tile lets, the two moves and the rest of a `realign` kernel.
pub(crate) fn realign_moves(
    g: &Geometry,
    layout: Layout,
    t: &Tiling,
    batch: &BatchBase,
) -> (Vec<Expr>, Vec<Move>, Realign) {
    let v = Expr::var;
    let vec = i64::from(g.vec);
    let cpl = i64::from(g.realign_cols());
    let side = i64::from(g.tile_elems());
    let tile_r = Expr::named("tile_r", v(Var::Tile) / t.tiles_x.clone());
    let tile_c = Expr::named("tile_c", v(Var::Tile) % t.tiles_x.clone());
    let tile_lets = vec![tile_r.clone(), tile_c.clone()];
    let l = Expr::small("l", v(Var::Tx).and(7));
    let band = Expr::small("band", (v(Var::Tx) >> 3) + v(Var::Ty) * 4);
    let c0 = Expr::named("c0", tile_c.clone() * side + l.clone() * cpl);
    let blocks = i64::from(g.realign_blocks());
    let word = band.clone() * blocks + v(Var::J);
    let shared = |c: Expr, w: Expr| Place {
        mem: Mem::Shared,
        index: layout.shared_index(g.tile, c, w),
    };

    // The read side: row `Var::Row` of block `Var::J` (block 0 is the one above
    // the tile), counted `vec` rows down so that no value is negative.
    let row = Expr::named(
        "rp",
        tile_r.clone() * side + word.clone() * vec + v(Var::Row),
    );
    let inside = Guard(vec![
        Less(Expr::Lit(vec - 1), row.clone()),
        Less(row.clone(), v(Var::Rows) + vec),
    ]);
    let ld = v(Var::SrcLd);
    let shifted = batch.src.clone() + row.clone() * ld.clone() + c0.clone(); // x + vec rows
    let at = Expr::named("x", shifted.clone() - ld.clone() * vec);
    let phase = Expr::small("ph", (at.clone() + v(Var::SrcOff)).and(cpl - 1));
    // x - ph >= the matrix's first element, and x - ph + 2 vectors <= its end.
    let end = batch.src.clone() + (v(Var::Rows) + (vec - 1)) * ld.clone() + v(Var::Cols);
    let fast = Guard(vec![
        Less(
            batch.src.clone() + ld * vec + phase.clone(),
            shifted.clone() + 1,
        ),
        Less(shifted + 2 * cpl, end + phase.clone() + 1),
    ]);
    let first = at.clone() - phase.clone();
    let col = Guard(vec![Less(c0.clone() + v(Var::K), v(Var::Cols))]);
    let elem = at.clone() + v(Var::K);
    let dst_ld = v(Var::DstLd);
    let dst_phase = Expr::small(
        "ts",
        (batch.dst.clone() + (c0.clone() + v(Var::K)) * dst_ld.clone() + v(Var::DstOff))
            .and(vec - 1),
    );
    let eb = i64::from(g.elem_bytes);
    let shift = Expr::small("sh", (Expr::Lit(4) - dst_phase.clone() * eb) * 8);
    let store = Move {
        lets: vec![],
        guard: Guard(vec![Less(Expr::Lit(0), v(Var::J))]),
        from: Place {
            mem: Mem::Src,
            index: first.clone(),
        },
        to: shared(l.clone() * cpl + v(Var::K), word - 1),
        transpose: true,
        iters: g.realign_blocks() + 1,
        pack: None,
    };

    // The write side: warp `ty` writes destination rows `ty + 8 j` of the tile,
    // lane `tx` word `tx` of the row's window (positions `pe - vec ..`).
    let c = Expr::small("c", v(Var::Ty) + v(Var::J) * i64::from(g.block_rows));
    let d = Expr::named("d", tile_c * side + c.clone());
    let e0 = Expr::named("e0", batch.dst.clone() + d.clone() * dst_ld);
    let te = Expr::small("te", (e0.clone() + v(Var::DstOff)).and(vec - 1));
    let pe = Expr::named("pe", tile_r * side + (v(Var::Tx) + 1) * vec - te.clone());
    let rows_in = |first: Expr, last: Expr| {
        Guard(vec![
            Less(Expr::Lit(vec - 1), pe.clone() + first),
            Less(pe.clone() + last, v(Var::Rows) + vec),
        ])
    };
    let write = Move {
        lets: vec![c.clone(), d.clone(), e0.clone(), te, pe.clone()],
        guard: Guard(vec![Less(d, v(Var::Cols))]),
        from: shared(c, v(Var::Tx)),
        to: Place {
            mem: Mem::Dst,
            index: e0.clone() + pe.clone() - vec,
        },
        transpose: false,
        iters: g.tile_elems() / g.block_rows,
        pack: Some(Pack {
            full: rows_in(Expr::Lit(0), Expr::Lit(vec - 1)),
            load: false,
        }),
    };
    let realign = Realign {
        lane: vec![l, band, c0],
        row,
        inside,
        at,
        phase,
        fast,
        vecs: [first.clone(), first + cpl],
        col,
        elem,
        dst_phase,
        shift,
        part: rows_in(v(Var::K), v(Var::K)),
        part_to: e0 + pe - vec + v(Var::K),
        guard_lets: 2, // `c` and `d`
    };
    (tile_lets, vec![store, write], realign)
}
