//! The moves of the `realign` form ([`Form::Realign`](crate::Form::Realign)),
//! built once as expressions, and the two register steps of its data path that
//! the emitter prints and the simulator runs: the byte permutations that
//! transpose a block of rows into column words ([`network`]) and the funnel
//! shifts that realign a column's words to its destination row
//! ([`Realign::shift`]).
//!
//! A tile is `tile * vec` source rows and columns (`vec = 4 / elem_bytes`
//! elements to a word), and its shared tile also holds the sector of source rows
//! above it (`sector = 32 / elem_bytes` rows, 8 blocks of `vec`). Lane `l = tx & 7` of band `band = (tx >> 3) + 4 * ty` (40 bands of 8
//! lanes, 32 x 10 threads) reads columns `c0 .. c0 + 16 / elem_bytes` of the
//! `vec` rows of block `band`: source rows `vec * band - sector ..` of the tile.
//! It loads every row's two aligned 16-byte vectors before it uses any, realigns
//! them, transposes the block into its columns' words and stores them: word
//! `band` of each column in shared memory.
//!
//! A warp then writes 4 destination rows of the tile at once, 8 lanes to a
//! row. Each row's window starts on a 32-byte sector of that row: `ts`
//! positions before the tile's first position (`ts` < `sector`). The row's
//! lane `tx % 8` funnel-shifts words `b1 ..= b1 + 4` of the column (`b1 = 4 *
//! (tx % 8) + 7 - ts / vec`) by `ts % vec` elements into the 16 bytes it
//! stores, so that each store covers whole sectors and no sector is left half
//! written for another tile to finish.
//!
//! Those five words lie at 8 lanes' distance from one another in a column's
//! groups of 4, and the 4 rows' windows start at any phase: the shared index
//! rotates each column's words within their group of 4 by its window's phase
//! and its place among the 4 (`rotated`), so that the 4 rows' reads of a word
//! fall in 4 different banks of each group. The store of the words, which
//! knows the column, computes the same rotation.
//!
//! The tiles cover `rows + sector - 1` rows, so a matrix whose last rows end
//! just past a multiple of the tile (or just before one) leaves a last row of
//! tiles with at most 32 positions of each destination row to write: the rest
//! of its windows lie past the matrix. Such a *tail* tile ([`Realign::tail`])
//! moves them element by element, straight from the source to the
//! destination, with no shared tile: lane `tx` takes position `tile_r * tile -
//! sector + tx` of destination rows `ty, ty + block_rows, ..` of the tile,
//! each from where its window starts (`ts` positions before the tile) to the
//! matrix's last row.
//!
//! ```
//! use bankfree_gen::{emit, Kernel, TransposeSpec};
//! let k = Kernel::build(TransposeSpec::realign(2)?)?;
//! assert!(k.verdict().conflict_free);
//! assert!(emit(&k).contains("__funnelshift_rc(cw[0], cw[1], sh)"));
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

use crate::ir::expr::{Expr, Var};
use crate::ir::guard::{Guard, Less};
use crate::kernel::batch::BatchBase;
use crate::kernel::geometry::{Geometry, REALIGN_PITCH};
use crate::kernel::layout::{Layout, Swizzle};
use crate::kernel::moves::{Mem, Move, Pack, Place};
use crate::kernel::order::TileOrder;
use crate::kernel::tiling::Tiling;

mod network;
mod tail;

pub use network::{network, network_regs, Perm};
pub use tail::TAIL_SPAN;
use tail::{tail_tiles, Places};

/// The swizzle of a `realign` kernel's shared tile: word `w` of column `c` at
/// `c * 64 + (w ^ (((c / cols_per_lane) & 7) << 2))`, after the rotation of `w`
/// within its group of 4 (`realign_moves`' `rotated`: by `c`, plus the
/// column's window phase in words). A warp's stores of one column index hold
/// the 8 lanes of a band (`c / cols_per_lane` = `l`) and its 4 bands (`w` =
/// `band`, bits 0 and 1 within the warp, which the rotation only permutes): the
/// key moves each lane's word to bits 2 to 4, so the 32 stores hit 32 banks. Its
/// loads read word `4 * lane + i + 7 - phase` of 4 columns, one to each 8
/// lanes: the key permutes the 8 lanes' groups, and the rotation puts the 4
/// columns' words at `(i + c) % 4` in theirs.
pub(crate) fn realign_swizzle(g: &Geometry) -> Swizzle {
    Swizzle {
        b: 3,
        m: 2,
        s: 4 + g.realign_cols().trailing_zeros(),
    }
}

/// Columns a warp of a `realign` kernel writes at once: one to each 8 lanes.
pub const WRITE_COLS: i64 = 4;

/// 32-bit words a lane of a `realign` kernel stores at once: one 16-byte vector
/// of its column's window.
pub const STORE_WORDS: i64 = 4;

/// The blocks of a `realign` kernel that its launch bounds ask to keep on an SM
/// at once, per index build: the most at which it spills on none of sm_75,
/// sm_80 and sm_90. 1-byte elements: 4 in the 32-bit build (48 registers on
/// sm_80 and sm_90, where it would take 64 and 3 blocks unbounded), 3 in the
/// 64-bit one (at 4 it spilled 28 bytes on sm_80). 2-byte elements: 6 in the
/// 32-bit build (32 registers), 3 in the 64-bit one (60 to 62 registers; at 4
/// it spilled 36 bytes on sm_90 along the rows once tail tiles came first, at
/// 5 and 6 16 bytes on sm_80 and sm_90). sm_75 holds 3 blocks of 320 threads
/// whatever the bound.
pub fn realign_min_blocks(elem_bytes: u32, index64: bool) -> u32 {
    match (elem_bytes, index64) {
        (1, false) => 4,
        (1, true) => 3,
        (_, false) => 6,
        (_, true) => 3,
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
    /// `sh`: the funnel shift (`__funnelshift_rc(cw[i], cw[i + 1], sh)`, of the
    /// column's words `b1 + i` and `b1 + i + 1`) that makes word `i` of the
    /// lane's 16 bytes: the last `ts % vec` elements of word `b1 + i`, then the
    /// first of the next (`8 * elem_bytes * (vec - ts % vec)` bits; all of the
    /// next where `ts % vec = 0`).
    pub shift: Expr,
    /// The shared indices of words `b1 + 1 ..= b1 + 4` (the write move's
    /// `from` is word `b1`): the lane's 16 bytes are funnel-shifted from these
    /// five.
    pub next: Vec<Expr>,
    /// Destination element `Var::K` of a 16-byte vector stored element by
    /// element lies in the matrix.
    pub part: Guard,
    /// Its index.
    pub part_to: Expr,
    /// How many of the write move's lets its guard reads (declared before it;
    /// the rest inside it).
    pub guard_lets: usize,
    /// The whole tile lies far enough inside the matrix that every guard above
    /// and the write move's bounds hold for every thread: the kernel then runs
    /// the tile by a body without them (the simulator fails a tile where this
    /// holds and another guard does not). Tile rows `1 ..` whose `side` rows
    /// end before the last row, tile columns whose `side` columns are all in
    /// the matrix.
    pub interior: Guard,
    /// What remains of the write move's guard in an interior tile: the steps
    /// past the tile's last group of 4 destination rows where `block_rows` does
    /// not divide the groups.
    pub steps: Guard,
    /// A tile of the last row whose destination rows hold at most [`TAIL_SPAN`]
    /// positions of it, counted from a sector before the tile (tile rows `1
    /// ..` with `rows <= tile_r * side + TAIL_SPAN - sector`): the kernel moves
    /// them by [`Realign::tail_move`] instead of the tile's two moves.
    pub tail: Guard,
    /// A tail tile's elements, source to destination: lane `tx` at position
    /// `tile_r * side - sector + tx` of destination row `ty + block_rows *
    /// Var::J` of the tile, where that lies in its window and in the matrix.
    pub tail_move: Move,
}

/// The tile lets, the two moves and the rest of a `realign` kernel whose blocks
/// take its tiles in `order`.
pub(crate) fn realign_moves(
    g: &Geometry,
    layout: Layout,
    t: &Tiling,
    batch: &BatchBase,
    order: TileOrder,
) -> (Vec<Expr>, Vec<Move>, Realign) {
    let v = Expr::var;
    let vec = i64::from(g.vec);
    let cpl = i64::from(g.realign_cols());
    let side = i64::from(g.tile_elems());
    let sector = i64::from(g.sector_elems());
    // Along the rows, a 1-byte kernel takes its last row of tiles first: those
    // are edge tiles, which check every row, vector and store, and run last
    // they left the grid a tail (CuPy over the emitted kernels captured in a
    // graph, one call, against taking the rows in order: H100 2115 x 7581 0.97
    // of memcpy against 0.87, 4097 x 4095 1.00 against 0.92, 19731 x 1336 1.05
    // against 0.99; H200 2115 x 7581 0.98 against 0.86, 4097 x 4095 1.00
    // against 0.92). A 2-byte kernel keeps the order: matrices of 1024 rows and
    // more ran within 0.01 either way on the H100 and 0.02 slower so on the
    // H200, where only short ones such as 193 x 50001 gained (0.80 against
    // 0.76). Down the columns every column of tiles has its edge tiles at both
    // ends, so none gathers at the grid's end.
    let (tile_r, tile_c) = match order {
        TileOrder::Rows => {
            let row = v(Var::Tile) / t.tiles_x.clone();
            let r = if g.elem_bytes == 1 {
                (row + t.tiles_y.clone() - 1) % t.tiles_y.clone()
            } else {
                row
            };
            (r, v(Var::Tile) % t.tiles_x.clone())
        }
        TileOrder::Columns => (
            v(Var::Tile) % t.tiles_y.clone(),
            v(Var::Tile) / t.tiles_y.clone(),
        ),
    };
    let (tile_r, tile_c) = (Expr::named("tile_r", tile_r), Expr::named("tile_c", tile_c));
    let tile_lets = vec![tile_r.clone(), tile_c.clone()];
    // Why these imply every guard: rows `rp` run from `tile_r * side >= side`
    // (above `sector - 1`, and a row past the matrix's first, so `x - ph` is
    // in it) to `(tile_r + 1) * side + sector - 1`, which is below `rows +
    // sector - 1` (so the two vectors of the row before the last end in the
    // matrix); columns `c0 .. c0 + cpl` and destination rows `d` are below
    // `cols`.
    let interior = Guard(vec![
        Less(Expr::Lit(0), tile_r.clone()),
        Less((tile_r.clone() + 1) * side, v(Var::Rows)),
        Less(tile_c.clone() * side + (side - 1), v(Var::Cols)),
    ]);
    let l = Expr::small("l", v(Var::Tx).and(7));
    let band = Expr::small("band", (v(Var::Tx) >> 3) + v(Var::Ty) * 4);
    let c0 = Expr::named("c0", tile_c.clone() * side + l.clone() * cpl);
    let shared = |c: Expr, w: Expr| layout.shared_index(REALIGN_PITCH, c, w);
    let lv = i64::from(g.vec.trailing_zeros());
    // Column `c` of the tile is destination row `d`, starting at element `e0`,
    // whose window starts `ts` positions before the tile: each written once,
    // used by the write and by the store that places the column's words.
    let dst_row = |c: Expr| tile_c.clone() * side + c;
    let dst_start = |d: Expr| batch.dst.clone() + d * v(Var::DstLd);
    let dst_phase = |e0: Expr| (e0 + v(Var::DstOff) + tile_r.clone() * side).and(sector - 1);
    // Source element (`rp - sector`, `c`), its row counted a sector down (the
    // read side's rows, which start a sector above the tile).
    let src_below = |rp: Expr, c: Expr| batch.src.clone() + rp * v(Var::SrcLd) + c;
    let places = Places {
        dst_row: &dst_row,
        dst_start: &dst_start,
        dst_phase: &dst_phase,
        src_below: &src_below,
    };
    let (tail, tail_move) = tail_tiles(g, &tile_r, &places);
    // Word `w` of column `c` rotated within its group of 4 by the column's
    // window phase and its place among the 4 columns a warp writes at once
    // (see [`realign_swizzle`]).
    let rotated = |w: Expr, c: Expr, ts: Expr| {
        let rot = c + (ts >> lv) + (WRITE_COLS - (sector / vec - 1) % WRITE_COLS);
        w.clone() - w.clone().and(3) + (w + rot).and(3)
    };

    // The read side: row `Var::Row` of block `band` (the first `sector / vec`
    // blocks lie above the tile), counted a sector of rows down so that no value
    // is negative.
    let row = Expr::named(
        "rp",
        tile_r.clone() * side + band.clone() * vec + v(Var::Row),
    );
    let inside = Guard(vec![
        Less(Expr::Lit(sector - 1), row.clone()),
        Less(row.clone(), v(Var::Rows) + sector),
    ]);
    let ld = v(Var::SrcLd);
    let shifted = src_below(row.clone(), c0.clone()); // x + sector rows
    let at = Expr::named("x", shifted.clone() - ld.clone() * sector);
    let phase = Expr::small("ph", (at.clone() + v(Var::SrcOff)).and(cpl - 1));
    // x - ph >= the matrix's first element, and x - ph + 2 vectors <= its end.
    let end = batch.src.clone() + (v(Var::Rows) + (sector - 1)) * ld.clone() + v(Var::Cols);
    let fast = Guard(vec![
        Less(
            batch.src.clone() + ld * sector + phase.clone(),
            shifted.clone() + 1,
        ),
        Less(shifted + 2 * cpl, end + phase.clone() + 1),
    ]);
    let first = at.clone() - phase.clone();
    let col = Guard(vec![Less(c0.clone() + v(Var::K), v(Var::Cols))]);
    let elem = at.clone() + v(Var::K);
    let store = Move {
        lets: vec![],
        guard: Guard(vec![]),
        from: Place {
            mem: Mem::Src,
            index: first.clone(),
        },
        to: Place {
            mem: Mem::Shared,
            index: {
                let c = l.clone() * cpl + v(Var::K);
                let ts = dst_phase(dst_start(dst_row(c.clone())));
                shared(c.clone(), rotated(band.clone(), c, ts))
            },
        },
        transpose: true,
        iters: 1,
        pack: None,
    };

    // The write side: warp `ty` writes the destination rows of column group
    // `gq = ty + block_rows * j`, 4 columns `c = 4 * gq + tx / 8` at once; lane
    // `tx % 8` stores 16 bytes of its row's window (positions `pe - sector ..`,
    // the window starting `ts` positions before the tile on a sector).
    let rows_per = i64::from(g.block_rows);
    let groups = side / WRITE_COLS;
    let gq = Expr::small("gq", v(Var::Ty) + v(Var::J) * rows_per);
    let c = Expr::small("c", gq.clone() * WRITE_COLS + (v(Var::Tx) >> 3));
    let d = Expr::named("d", dst_row(c.clone()));
    let e0 = Expr::named("e0", dst_start(d.clone()));
    let ts = Expr::small("ts", dst_phase(e0.clone()));
    let lane8 = v(Var::Tx).and(7);
    let b1 = Expr::small(
        "b1",
        lane8.clone() * STORE_WORDS + (sector / vec - 1) - (ts.clone() >> lv),
    );
    let eb = i64::from(g.elem_bytes);
    let shift = Expr::small("sh", (Expr::Lit(vec) - ts.clone().and(vec - 1)) * (8 * eb));
    let pe = Expr::named(
        "pe",
        tile_r * side + sector - ts.clone() + lane8 * (STORE_WORDS * vec),
    );
    let rows_in = |first: Expr, last: Expr| {
        Guard(vec![
            Less(Expr::Lit(sector - 1), pe.clone() + first),
            Less(pe.clone() + last, v(Var::Rows) + sector),
        ])
    };
    let steps = Guard(if groups % rows_per != 0 {
        vec![Less(gq.clone(), Expr::Lit(groups))]
    } else {
        vec![]
    });
    let mut guard = steps.0.clone();
    guard.push(Less(d.clone(), v(Var::Cols)));
    let word = |i: i64| shared(c.clone(), rotated(b1.clone() + i, c.clone(), ts.clone()));
    let write = Move {
        lets: vec![
            gq,
            c.clone(),
            d,
            e0.clone(),
            ts.clone(),
            b1.clone(),
            shift.clone(),
            pe.clone(),
        ],
        guard: Guard(guard),
        from: Place {
            mem: Mem::Shared,
            index: word(0),
        },
        to: Place {
            mem: Mem::Dst,
            index: e0.clone() + pe.clone() - sector,
        },
        transpose: false,
        iters: ((groups + rows_per - 1) / rows_per) as u32,
        pack: Some(Pack {
            full: rows_in(Expr::Lit(0), Expr::Lit(STORE_WORDS * vec - 1)),
            load: false,
            whole: true,
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
        shift,
        next: (1..=STORE_WORDS).map(word).collect(),
        part: rows_in(v(Var::K), v(Var::K)),
        part_to: e0 + pe - sector + v(Var::K),
        guard_lets: 3, // `gq`, `c` and `d`
        interior,
        steps,
        tail,
        tail_move,
    };
    (tile_lets, vec![store, write], realign)
}
