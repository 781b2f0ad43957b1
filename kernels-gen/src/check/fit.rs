//! Whether a kernel can run a call, and whether its form is meant for it: checked
//! without allocating (the runtime asks on every launch), with a [`Refusal`] that
//! names the reason only when one is shown.
//!
//! ```
//! use bankfree_gen::{check::fit::refusal, Form, Geometry, Shape};
//! let g = Geometry { form: Form::Tall, tile: 32, block_rows: 8, elem_bytes: 4, vec: 1 };
//! assert_eq!(refusal(&g, &Shape::new(1 << 22, 3)), None);
//! let r = refusal(&g, &Shape::new(1 << 22, 33)).expect("33 columns are too many");
//! assert_eq!(r.to_string(), "cols = 33: a tall kernel takes at most 32 cols; a tile kernel runs it");
//! ```

use crate::ir::expr::Var;
use crate::ir::shape::{outer_params, Fold, Shape};
use crate::kernel::geometry::{
    Form, Geometry, Quotients, COPY_MAX_COLS, MAX_NARROW, PLANAR_MAX_COLS, SMALL_MAX_ELEMS,
};
use crate::kernel::squat::{SQUAT_BLOCKS, SQUAT_MAX_ROWS};
use crate::kernel::thin::THIN_MAX_COLS;
use std::fmt;

/// Why a kernel does not run (or is not meant for) a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A transpose shape on a `copy` kernel, or a copy on a transpose kernel.
    Copy { form: Form, copy: bool },
    /// Folded tile sides on a kernel other than a scalar `tile` one (or folded
    /// rows on a `thin` one).
    FoldForm { form: Form, vec: u32 },
    /// A `thin` kernel and folded columns that are not one run in the source:
    /// column axis `axis` lies `stride` elements apart, not `run`.
    FoldRun { axis: u8, stride: u64, run: u64 },
    /// A folded side whose axis extents a kernel cannot split exactly: an extent
    /// below 2, or `side * extent` past 32 bits.
    FoldSplit {
        side: &'static str,
        n: u64,
        ext: u64,
    },
    /// A `vec > 1` kernel and a dimension, pitch or batch stride not divisible by it.
    Vec {
        name: &'static str,
        value: u64,
        vec: u32,
    },
    /// A narrow side above [`MAX_NARROW`].
    TooWide {
        form: Form,
        side: &'static str,
        n: u64,
    },
    /// The flat side of a narrow kernel not stored as one run.
    NotOneRun {
        form: Form,
        side: &'static str,
        n: u64,
        ld_name: &'static str,
        ld: u64,
        run: &'static str,
    },
    /// A skew kernel and destination rows that start on sectors already.
    Aligned { row_bytes: u64 },
    /// A small kernel and a destination that is not one dense run.
    NotDense {
        name: &'static str,
        value: u64,
        want: u64,
    },
    /// A small kernel and matrices of one row, or of more than it takes.
    NotSmall { rows: u64, elems: u64 },
    /// A small kernel and matrices the tile kernels move faster.
    TileFaster { bytes: u64 },
    /// A skew kernel wider than 32 and a source narrower than its tile.
    Narrow { cols: u64, tile: u32 },
    /// A planar kernel and a matrix of fewer blocks of rows than it has threads.
    FewRows { rows: u64, min: u64 },
    /// A `squat` kernel and matrices narrower than one of its tiles.
    FewCols { cols: u64, min: u64 },
    /// A `squat` kernel and a height the strip kernel runs faster: an even one,
    /// the planner leaves to the strip kernel ([`squat_suits_height`]).
    StripHeight { rows: u64 },
    /// A tall kernel of 1- or 2-byte elements and more columns than it is
    /// faster for.
    TileWins {
        cols: u64,
        max: u64,
        elem_bytes: u32,
    },
    /// A `thin` kernel and a source of a width outside 2 to [`THIN_MAX_COLS`].
    ThinWidth { cols: u64 },
    /// A `squat` kernel and a source of a height outside 2 to
    /// [`SQUAT_MAX_ROWS`].
    SquatWidth { rows: u64 },
    /// A `realign` kernel and a shape whose sides, pitches and strides all
    /// divide by `vec`.
    VecRuns { vec: u32 },
    /// A `realign` kernel and a matrix side below `min`.
    Edges {
        side: &'static str,
        n: u64,
        min: u64,
    },
    /// A 1-element square tile wider than 32 and a matrix side below it.
    BelowTile {
        side: &'static str,
        n: u64,
        tile: u32,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Refusal::Vec { name, value, vec } => write!(
                f,
                "{name} = {value} is not a multiple of vec = {vec}; a vec = 1 kernel runs it"
            ),
            Refusal::ThinWidth { cols } => write!(
                f,
                "cols = {cols}: a thin kernel takes widths from 2 to {THIN_MAX_COLS}; a tall or tile kernel runs it"
            ),
            Refusal::SquatWidth { rows } => write!(
                f,
                "rows = {rows}: a squat kernel takes heights from 2 to {SQUAT_MAX_ROWS}; a strip or tile kernel runs it"
            ),
            Refusal::TooWide { form, side, n } => write!(
                f,
                "{side} = {n}: a {form} kernel takes at most {} {side}; {}",
                if form == Form::Planar { PLANAR_MAX_COLS } else { MAX_NARROW },
                if form == Form::Planar { "a tall or tile kernel runs it" } else { "a tile kernel runs it" }
            ),
            Refusal::NotOneRun {
                form,
                side,
                n,
                ld_name,
                ld,
                run,
            } => write!(
                f,
                "{ld_name} = {ld} is not {side} = {n}: a {form} kernel needs the {run} stored as one run; a tile kernel runs it"
            ),
            Refusal::NotDense { name, value, want } => write!(
                f,
                "{name} = {value} is not {want}: a small kernel writes its destination as one dense run of matrices; a tile kernel runs it"
            ),
            Refusal::NotSmall { rows, elems } => write!(
                f,
                "matrices of {rows} rows and {elems} elements: small and strip kernels take 2 rows or more, a small one at most {SMALL_MAX_ELEMS} elements; a tile kernel runs it"
            ),
            Refusal::TileFaster { bytes } => write!(
                f,
                "matrices of {bytes} bytes: a tile kernel moves matrices of {SMALL_SUITS_BYTES} bytes and more faster"
            ),
            Refusal::Copy { form, copy: true } => write!(
                f,
                "the shape is a copy (no transpose) and a {form} kernel transposes; a copy kernel runs it"
            ),
            Refusal::Copy { copy: false, .. } => write!(
                f,
                "a copy kernel does not transpose; a tile kernel runs a transpose"
            ),
            Refusal::FoldForm { form, vec } => write!(
                f,
                "folded tile sides need a scalar tile kernel, not a {form} kernel of {vec}-element blocks"
            ),
            Refusal::FoldRun { axis, stride, run } => write!(
                f,
                "folded column axis {axis} lies {stride} elements apart in the source, not {run}: a thin kernel needs its columns stored as one run; a tile kernel runs it"
            ),
            Refusal::FoldSplit { side, n, ext } => write!(
                f,
                "{side} = {n} folded over an axis of {ext} items: a split needs extents of 2 or more and {side} x extent below 2^32"
            ),
            Refusal::Narrow { cols, tile } => write!(
                f,
                "cols = {cols} is narrower than the skew tile's {tile}: a square tile wastes less of itself"
            ),
            Refusal::TileWins { cols, max, elem_bytes } => write!(
                f,
                "cols = {cols}: above {max} columns a square or skew tile moves {elem_bytes}-byte elements faster than the tall kernel"
            ),
            Refusal::BelowTile { side, n, tile } => write!(
                f,
                "{side} = {n} is below the tile's {tile}: a 32-wide tile leaves less of itself idle"
            ),
            Refusal::FewRows { rows, min } => write!(
                f,
                "rows = {rows} is below {min}: a planar kernel's threads would idle (the small or tall kernel runs it)"
            ),
            Refusal::FewCols { cols, min } => write!(
                f,
                "cols = {cols} is below {min}: most of a squat kernel's tile would idle (the strip or small kernel runs it)"
            ),
            Refusal::StripHeight { rows } => write!(
                f,
                "rows = {rows}: the strip kernel runs this height faster (a squat kernel runs {SQUAT_HEIGHTS})"
            ),
            Refusal::VecRuns { vec } => write!(
                f,
                "every side, pitch and batch stride is a multiple of {vec}: a kernel of {vec} x {vec} blocks moves it faster"
            ),
            Refusal::Edges { side, n, min } => write!(
                f,
                "{side} = {n} is below {min}: most of a realign kernel's 128-byte-wide tiles would be edge tiles (a single-element or skew tile runs it faster)"
            ),
            Refusal::Aligned { row_bytes } => write!(
                f,
                "dst rows of {row_bytes} bytes start on 32-byte sectors: a tile kernel writes them whole"
            ),
        }
    }
}

/// Why a kernel moving `vec x vec` blocks cannot run `shape`, if it cannot: every
/// dimension, pitch and (with more than one matrix) batch stride must divide by `vec`.
pub fn vec_refusal(vec: u32, shape: &Shape) -> Option<Refusal> {
    if vec <= 1 {
        return None;
    }
    let fields = [
        ("rows", shape.rows),
        ("cols", shape.cols),
        ("src_ld", shape.src_ld),
        ("dst_ld", shape.dst_ld),
        ("src_batch_stride", shape.src_batch_stride),
        ("dst_batch_stride", shape.dst_batch_stride),
    ];
    fields
        .into_iter()
        .filter(|(name, _)| !(name.ends_with("batch_stride") && shape.batch <= 1))
        .chain(outer_strides(shape))
        .find(|(_, value)| !value.is_multiple_of(u64::from(vec)))
        .map(|(name, value)| Refusal::Vec { name, value, vec })
}

/// The strides of the outer batch axes with more than one item, named.
fn outer_strides(shape: &Shape) -> impl Iterator<Item = (&'static str, u64)> + '_ {
    outer_params(shape.outer.n)
        .filter(|&v| match v {
            Var::SrcStride(k) | Var::DstStride(k) => shape.outer_value(Var::Ext(k)) > 1,
            _ => false,
        })
        .map(|v| (v.c_name(), shape.outer_value(v)))
}

/// Why a kernel of this geometry cannot run `shape`, if it cannot (a `small`
/// kernel with 32-bit quotients: [`kernel_refusal`] takes any).
pub fn refusal(g: &Geometry, shape: &Shape) -> Option<Refusal> {
    kernel_refusal(g, Quotients::Narrow, shape)
}

/// Why a kernel of this geometry cannot run `shape`, if it cannot, with the
/// wider quotients `quotients` names ([`crate::Kernel::with_quotients`]).
pub fn kernel_refusal(g: &Geometry, quotients: Quotients, shape: &Shape) -> Option<Refusal> {
    if shape.copy != (g.form == Form::Copy) {
        return Some(Refusal::Copy {
            form: g.form,
            copy: shape.copy,
        });
    }
    if g.form == Form::Copy {
        let cv = shape.cols / u64::from(g.vec.max(1));
        if cv >= COPY_MAX_COLS {
            return Some(Refusal::TooWide {
                form: g.form,
                side: "cols",
                n: shape.cols,
            });
        }
        // Rows need not divide by the vector: rows move whole.
        return vec_refusal(g.vec, &Shape { rows: 0, ..*shape });
    }
    if shape.fold != Fold::NONE {
        if let Some(r) = fold_refusal(g, shape) {
            return Some(r);
        }
    }
    if g.form == Form::Small {
        return small_refusal(shape, quotients);
    }
    if g.form == Form::Planar {
        return planar_refusal(g, shape);
    }
    if g.realigns() {
        return None; // any shape, pitch, stride and pointer
    }
    if g.thins() {
        return thin_refusal(g, shape);
    }
    if g.squats() {
        return squat_refusal(g, shape);
    }
    let form = g.form;
    if form == Form::Strip {
        if shape.rows < 2 {
            return Some(Refusal::NotSmall {
                rows: shape.rows,
                elems: shape.rows.saturating_mul(shape.cols),
            });
        }
    } else if g.packs() {
        // A packed tall kernel's flat run must start on a word in every matrix.
        let v = u64::from(g.vec);
        if shape.batch > 1 && !shape.src_batch_stride.is_multiple_of(v) {
            return Some(Refusal::Vec {
                name: "src_batch_stride",
                value: shape.src_batch_stride,
                vec: g.vec,
            });
        }
        let mut src_strides = outer_strides(shape).filter(|(name, _)| name.starts_with("src"));
        if let Some((name, value)) = src_strides.find(|(_, value)| !value.is_multiple_of(v)) {
            return Some(Refusal::Vec {
                name,
                value,
                vec: g.vec,
            });
        }
    } else if let Some(r) = vec_refusal(g.vec, shape) {
        return Some(r);
    }
    let narrow = |side, n: u64, ld_name, ld: u64, run| {
        if n > MAX_NARROW {
            Some(Refusal::TooWide { form, side, n })
        } else if ld != n {
            Some(Refusal::NotOneRun {
                form,
                side,
                n,
                ld_name,
                ld,
                run,
            })
        } else {
            None
        }
    };
    match form {
        Form::Tile
        | Form::Skew
        | Form::Small
        | Form::Copy
        | Form::Planar
        | Form::Realign
        | Form::Thin
        | Form::Squat => None,
        Form::Tall => narrow("cols", shape.cols, "src_ld", shape.src_ld, "source rows"),
        Form::Wide | Form::Strip => narrow(
            "rows",
            shape.rows,
            "dst_ld",
            shape.dst_ld,
            "destination rows",
        ),
    }
}

/// Why a `thin` kernel cannot run `shape`, if it cannot: a width from 2 to
/// [`THIN_MAX_COLS`] stored as one run (any rows, destination pitch, batch
/// strides and pointers).
fn thin_refusal(g: &Geometry, shape: &Shape) -> Option<Refusal> {
    let cols = shape.cols;
    if !(2..=THIN_MAX_COLS).contains(&cols) {
        return Some(Refusal::ThinWidth { cols });
    }
    (shape.src_ld != cols).then_some(Refusal::NotOneRun {
        form: g.form,
        side: "cols",
        n: cols,
        ld_name: "src_ld",
        ld: shape.src_ld,
        run: "source rows",
    })
}

/// Why a `squat` kernel cannot run `shape`, if it cannot: a height from 2 to
/// [`SQUAT_MAX_ROWS`] whose destination rows are one run (any columns, source
/// pitch, batch strides and pointers).
fn squat_refusal(g: &Geometry, shape: &Shape) -> Option<Refusal> {
    let rows = shape.rows;
    if !(2..=u64::from(SQUAT_MAX_ROWS)).contains(&rows) {
        return Some(Refusal::SquatWidth { rows });
    }
    (shape.dst_ld != rows).then_some(Refusal::NotOneRun {
        form: g.form,
        side: "rows",
        n: rows,
        ld_name: "dst_ld",
        ld: shape.dst_ld,
        run: "destination rows",
    })
}

/// Why a `planar` kernel cannot run `shape`, if it cannot: at most
/// [`PLANAR_MAX_COLS`] columns stored as one run, and every block of `vec` rows
/// and every destination row a whole number of 16-byte vectors (rows, `dst_ld`
/// and every batch stride divisible by `vec`).
fn planar_refusal(g: &Geometry, shape: &Shape) -> Option<Refusal> {
    let form = g.form;
    if shape.cols > PLANAR_MAX_COLS {
        return Some(Refusal::TooWide {
            form,
            side: "cols",
            n: shape.cols,
        });
    }
    if shape.src_ld != shape.cols {
        return Some(Refusal::NotOneRun {
            form,
            side: "cols",
            n: shape.cols,
            ld_name: "src_ld",
            ld: shape.src_ld,
            run: "source rows",
        });
    }
    // A block of `vec` rows of `cols` elements is `cols` whole vectors.
    vec_refusal(
        g.vec,
        &Shape {
            cols: 0,
            src_ld: 0,
            ..*shape
        },
    )
}

/// Why a kernel cannot run a shape with folded sides, if it cannot: it must be a
/// scalar `tile` kernel, or a `thin` one whose rows do not fold and whose column
/// axes continue each other in the source (the row one run), and each side's
/// divisions (by the extents of all but its outermost axis, as
/// [`crate::ir::expr::Expr::quot`]) exact for every index a tile reaches (below
/// the side plus two tiles).
fn fold_refusal(g: &Geometry, shape: &Shape) -> Option<Refusal> {
    let folds = match g.form {
        Form::Tile => g.vec == 1,
        Form::Thin => shape.fold.rows.n == 0,
        _ => false,
    };
    if !folds {
        return Some(Refusal::FoldForm {
            form: g.form,
            vec: g.vec,
        });
    }
    if g.form == Form::Thin {
        let mut run = 1u64;
        for k in 1..=shape.fold.cols.n {
            run = run.saturating_mul(shape.fold_value(Var::ColExt(k - 1)));
            let stride = shape.fold_value(Var::ColSrc(k));
            if stride != run {
                return Some(Refusal::FoldRun {
                    axis: k,
                    stride,
                    run,
                });
            }
        }
    }
    let reach = 2 * u64::from(g.tile);
    let sides = [
        (
            "rows",
            shape.rows,
            shape.fold.rows.n,
            Var::RowExt as fn(u8) -> Var,
        ),
        ("cols", shape.cols, shape.fold.cols.n, Var::ColExt),
    ];
    sides.into_iter().find_map(|(side, n, folds, ext)| {
        (0..folds).find_map(|k| {
            let e = shape.fold_value(ext(k));
            let exact = n
                .checked_add(reach)
                .and_then(|x| x.checked_mul(e))
                .is_some_and(|x| x < 1 << 32);
            (e < 2 || !exact).then_some(Refusal::FoldSplit { side, n, ext: e })
        })
    })
}

/// Why a `small` kernel cannot run `shape`, if it cannot: matrices of 2 rows or
/// more and at most [`SMALL_MAX_ELEMS`] elements, the destination one dense run
/// (each matrix dense, the matrices back to back over every batch axis); the
/// source any layout. Outer batch axes need extents of 2 or more and `batch x
/// extent` below 2^32, where a thread's plain 32-bit quotients find its items
/// exactly (with exact ones a batch of at most [`Quotients::max_batch`] items,
/// with 64-bit ones any batch).
fn small_refusal(shape: &Shape, quotients: Quotients) -> Option<Refusal> {
    let elems = shape.rows.saturating_mul(shape.cols);
    if shape.rows < 2 || elems > quotients.max_elems() {
        return Some(Refusal::NotSmall {
            rows: shape.rows,
            elems,
        });
    }
    if shape.dst_ld != shape.rows {
        return Some(Refusal::NotDense {
            name: "dst_ld",
            value: shape.dst_ld,
            want: shape.rows,
        });
    }
    // Axis 0 (the batch stride's), then the outer axes (`dst_stride1`, ...).
    let axes = shape.outer.axes();
    let exts: Vec<u64> = std::iter::once(shape.inner_batch())
        .chain(axes.iter().map(|a| a.ext))
        .collect();
    let strides = std::iter::once(("dst_batch_stride", shape.dst_batch_stride)).chain(
        (1..)
            .zip(axes)
            .map(|(k, a)| (Var::DstStride(k).c_name(), a.dst)),
    );
    let mut want = elems;
    for (&ext, (name, value)) in exts.iter().zip(strides) {
        if ext > 1 && value != want {
            return Some(Refusal::NotDense { name, value, want });
        }
        want = want.saturating_mul(ext);
    }
    // The kernel divides by every extent but the outermost.
    let divisors = &exts[..usize::from(shape.outer.n)];
    let exact = |ext: u64| match quotients {
        Quotients::Narrow => shape.batch.checked_mul(ext).is_some_and(|x| x < 1 << 32),
        q => shape.batch <= q.max_batch(),
    };
    if let Some(&ext) = divisors.iter().find(|&&ext| ext < 2 || !exact(ext)) {
        return Some(Refusal::FoldSplit {
            side: "batch",
            n: shape.batch,
            ext,
        });
    }
    None
}

/// The heights of [`squat_suits_height`], in words (refusals, the attribute's
/// docs).
pub const SQUAT_HEIGHTS: &str =
    "1-byte heights from 3 but the multiples of 4 from 24, odd 2-byte heights from 5";

/// Whether the planner runs a `squat` kernel on `rows` rows of
/// `elem_bytes`-byte elements (the strip kernel runs the other heights): every
/// 1-byte height from 3 but the multiples of 4 from 24, and the odd 2-byte
/// heights from 5. On the H100 (`bench --alternatives`, 12 and 40 MB of each
/// height, one call, squat / strip): 1-byte 3 rows 1.039 / 1.094 and 0.967 /
/// 0.923, 6 rows 1.052 / 1.096 and 0.987 / 0.915, 10 rows 1.039 / 1.034 and
/// 1.003 / 0.892, 16 rows 1.011 / 1.005 and 0.975 / 0.839, 22 rows 0.822 /
/// 0.874 and 0.907 / 0.824, 26 rows 0.910 / 0.812 and 0.905 / 0.815, 30 rows
/// 0.873 / 0.590 and 0.789 / 0.774; but 24, 28 and 32 rows 0.967 / 1.068 and
/// 0.850 / 0.903, 0.873 / 0.993 and 0.816 / 0.859, 0.914 / 0.998 and 0.749 /
/// 0.822. 2-byte 5 rows 1.199 / 1.149 and 1.017 / 0.933 (odd heights from 7
/// ran 0.94 to 1.03 against 0.71 to 0.89 from 21 rows); 3 rows 1.034 / 1.181
/// and 0.935 / 0.973, and every even height from 4 to 32 ran faster or alike
/// on the strip kernel (20 rows 0.856 / 1.133 and 0.882 / 0.953).
pub fn squat_suits_height(elem_bytes: u32, rows: u64) -> bool {
    // `SQUAT_HEIGHTS` says this in words.
    match elem_bytes {
        1 => rows >= 3 && !(rows >= 24 && rows.is_multiple_of(4)),
        _ => rows >= 5 && !rows.is_multiple_of(2),
    }
}

/// Matrices below this many bytes go to the `small` kernel (see [`unsuited`]).
pub const SMALL_SUITS_BYTES: u64 = 8 * 1024;

/// Whether a `skew` tile also suits destinations whose rows start on 32-byte
/// sectors: the 32 x 16-thread one of 12-byte elements (the planner's default),
/// whose 71 rows of three words outran the 64-tile of 64 x 8 threads on every
/// aligned shape measured (CuPy, CUDA events over rotating source copies, the
/// kernels as emitted, one call per GPU, 2026-11-25; H200 / H100): 8192 x 8192
/// 0.889 against 0.865 / 0.936 against 0.940, 4096 x 8192 0.894 against 0.857
/// / 0.934 against 0.930, 16384 x 1024 0.874 against 0.830 / 0.927 against
/// 0.911, 8 x 2048 x 2048 0.896 against 0.852 / 0.951 against 0.935, 3000 x
/// 5000 0.823 against 0.793 / 0.915 against 0.880, 64 x 512 x 512 0.897
/// against 0.844 / 0.972 against 0.938. (This layer cannot ask
/// `select::choice::skew_spec(12)`; a test there keeps the two equal.)
pub fn skew_everywhere(g: &Geometry) -> bool {
    g.form == Form::Skew && g.elem_bytes == 12 && g.tile == 32 && g.block_rows == 16
}

/// The planner's rule for the `realign` form: shapes no vec kernel takes
/// ([`REALIGN_VEC`]; the runtime also runs it where a pointer keeps them off),
/// rows and columns at least [`realign_min_sides`].
fn realign_unsuited(elem_bytes: u32, shape: &Shape) -> Option<Refusal> {
    let (min_rows, min_cols) = realign_min_sides(elem_bytes);
    let short = [
        ("rows", shape.rows, min_rows),
        ("cols", shape.cols, min_cols),
    ]
    .into_iter()
    .find(|&(_, n, min)| n < min);
    if let Some((side, n, min)) = short {
        return Some(Refusal::Edges { side, n, min });
    }
    vec_refusal(REALIGN_VEC, shape)
        .is_none()
        .then_some(Refusal::VecRuns { vec: REALIGN_VEC })
}

/// The fewest rows and columns the planner runs a `realign` kernel on.
///
/// 1-byte elements: rows from 512, columns from 33 (past what the thin and
/// tall kernels take), against the 64-tile of single bytes (or the 32-tile,
/// below 64 columns). H100, `bench -- --shape ... --alternatives` (32 to 40
/// MB, one call, 2026-11-27): 1000001 x 38 0.49 of memcpy against 0.32,
/// 1290323 x 33 0.44 against 0.28, 600001 x 67 0.60 against 0.42, 310001 x
/// 129 0.65 against 0.49, 120001 x 333 0.81 against 0.49, 80001 x 511 0.85
/// against 0.51, batches of 1025 x 130 0.60 against 0.49 and of 600 x 101
/// 0.64 against 0.54 (8 MB: 125001 x 67 0.79 against 0.58, 16383 x 511 1.03
/// against 0.83). Fewer rows than 512 stay the tile's, where the two measured
/// either way (8 MB: 101 x 83001 0.47 against 0.67, 129 x 64999 0.56 against
/// 0.62, 333 x 25001 0.73 against 0.72; 32 MB: 333 x 120001 0.56 against
/// 0.34). 2-byte elements: both from 1024, against the skew tile: 364 x 17384
/// 0.92 against 1.00, 493 x 16259 0.867 against 0.865, 8193 x 511 1.06
/// against 1.11, 5401 x 777 1.02 against 1.05; from 1024 on it is the faster
/// (figures in `select::choice::shape_specs`).
pub fn realign_min_sides(elem_bytes: u32) -> (u64, u64) {
    if elem_bytes == 1 {
        (512, MAX_NARROW + 1)
    } else {
        (1024, 1024)
    }
}

/// Whether every destination row of `shape` (of `e`-byte elements) starts on a
/// 32-byte sector where the first one does: its pitch, batch stride and outer
/// strides whole sectors (`n * e` modulo 32 without the product, which may not
/// fit 64 bits).
fn dst_on_sectors(e: u64, shape: &Shape) -> bool {
    let aligned = |n: u64| ((n % 32) * e).is_multiple_of(32);
    aligned(shape.dst_ld)
        && (shape.batch <= 1 || aligned(shape.dst_batch_stride))
        && outer_strides(shape).all(|(name, s)| !name.starts_with("dst") || aligned(s))
}

/// The narrowest sources a `thin` kernel leaves to the vec kernels where they
/// take the call (every side, pitch and stride a multiple of [`REALIGN_VEC`],
/// the pointers on its vector) and no skew tile comes first (2-byte
/// destination rows on sectors): 40 columns of 1-byte elements, 32 of 2-byte
/// ones. `bench -- --shape ... --alternatives` (40 MB, one call per GPU,
/// 2026-11-27), thin against the vec kernel, H100 / H200: 1-byte 28 columns
/// 0.94 / 0.85 of memcpy against 0.71 / 0.54, 32 0.80 / 0.68 against 0.72 /
/// 0.54, 36 0.82 / 0.70 against 0.82 / 0.64, 40 0.76 / 0.61 against 0.81 /
/// 0.62; 2-byte 28 0.97 / 0.89 against 0.96 / 0.84, 32 0.84 / 0.73 against
/// 0.94 / 0.83, 36 0.87 / 0.76 against 0.99 / 0.91, 40 0.83 / 0.71 against
/// 0.98 / 0.89. Narrower sources leave most of a vec tile idle (1-byte 12
/// columns: 0.98 against 0.36 on the H100). The skew tile, which comes before
/// the vec kernels in the list, ran 582540 x 36 2-byte (rows off their
/// sectors) at 0.48 on the H200, where thin ran 0.76.
pub fn thin_vec_cols(elem_bytes: u32) -> u64 {
    if elem_bytes == 1 {
        40
    } else {
        32
    }
}

/// The block side of the 1- and 2-byte vec kernels the planner runs first
/// ([`crate::select::choice::HOPPER_DEFAULTS`]): a `realign` kernel leaves them
/// the shapes whose sides, pitches and strides divide by it (on aligned 8192 x
/// 8192 u8 it ran at 0.61 to 0.70 of memcpy, the vec kernel at 0.94).
pub const REALIGN_VEC: u32 = 4;

/// The planner's rule for the `small` form (`bench --random 1 --ladder
/// --alternatives`, H100, 32 MB batches): it beats the tile kernels on matrices
/// below [`SMALL_SUITS_BYTES`] (f32 12 x 40: 1.02 of memcpy against 0.47; 12-byte
/// 16 x 16: 0.86 against 0.74; 16-byte 8 x 8: 0.97 against 0.56) and loses above
/// it (f32 32 x 32: 0.92 against 0.99; 8-byte 24 x 57: 1.00 against 1.08;
/// 2-byte 64 x 64: 0.88 against 0.96), except for 1-byte elements whose sides are
/// not multiples of 4, which no vector tile kernel runs (63 x 61: 0.82 against
/// 0.60), up to the largest matrices it takes.
fn small_unsuited(e: u64, shape: &Shape) -> Option<Refusal> {
    // Matrices of one column: a permute's gather, which no tile runs.
    if shape.cols == 1 {
        return None;
    }
    let bytes = shape.rows * shape.cols * e; // `refusal` bounded rows * cols
    let unaligned_bytes = e == 1 && !(shape.rows.is_multiple_of(4) && shape.cols.is_multiple_of(4));
    (bytes >= SMALL_SUITS_BYTES && !unaligned_bytes).then_some(Refusal::TileFaster { bytes })
}

/// Why `shape` is not what this form is for, if it is not (the runtime's
/// `transpose_first` skips kernels whose form does not suit a call): `skew`
/// suits destinations whose rows (or matrices) do not start on 32-byte sectors
/// (every destination, for the 12-byte one: [`skew_everywhere`]),
/// the narrow forms the shapes they fit, `small` batches of matrices below
/// [`SMALL_SUITS_BYTES`] (and of unaligned 1-byte ones), `realign` large
/// matrices no vec kernel takes ([`realign_unsuited`]), `tile` every shape
/// (but a 1-element tile above 32, matrices at least that wide and deep).
pub fn unsuited(g: &Geometry, shape: &Shape) -> Option<Refusal> {
    kernel_unsuited(g, Quotients::Narrow, shape)
}

/// Whether a kernel suits a call over buffers at byte addresses `(src, dst)`:
/// [`kernel_unsuited`] finds nothing, or the pointers undo what it found: a
/// `skew` tile also suits a destination that starts inside a sector, and a
/// `realign` kernel the vec kernels' shapes where a pointer keeps them off
/// (not on a whole vector of [`REALIGN_VEC`] elements).
pub fn kernel_suits_at(
    g: &Geometry,
    quotients: Quotients,
    shape: &Shape,
    (src, dst): (u64, u64),
) -> bool {
    match kernel_unsuited(g, quotients, shape) {
        None => true,
        Some(_) if g.form == Form::Skew => !dst.is_multiple_of(32),
        Some(Refusal::VecRuns { vec }) => {
            let bytes = u64::from(vec * g.elem_bytes);
            !src.is_multiple_of(bytes) || !dst.is_multiple_of(bytes)
        }
        Some(_) => false,
    }
}

/// [`unsuited`] for a kernel with the wider quotients `quotients` names.
pub fn kernel_unsuited(g: &Geometry, quotients: Quotients, shape: &Shape) -> Option<Refusal> {
    if let Some(r) = kernel_refusal(g, quotients, shape) {
        return Some(r);
    }
    let e = u64::from(g.elem_bytes);
    if g.form == Form::Small {
        return small_unsuited(e, shape);
    }
    if g.realigns() {
        return realign_unsuited(g.elem_bytes, shape);
    }
    // A wide thin source the vec kernels take, where no skew tile takes it
    // first (2-byte destination rows off their sectors).
    let vec_next =
        vec_refusal(REALIGN_VEC, shape).is_none() && (e == 1 || dst_on_sectors(e, shape));
    if g.thins() && shape.cols >= thin_vec_cols(g.elem_bytes) && vec_next {
        return Some(Refusal::VecRuns { vec: REALIGN_VEC });
    }
    // A planar block's threads each take a block of `vec` rows per step: a
    // matrix of fewer blocks than a block has threads leaves some idle (the
    // small kernel runs such batches).
    if g.form == Form::Planar && shape.rows / u64::from(g.vec) < u64::from(g.threads()) {
        return Some(Refusal::FewRows {
            rows: shape.rows,
            min: u64::from(g.vec) * u64::from(g.threads()),
        });
    }
    // A squat tile covers `248 * vec` columns: narrower matrices leave most of
    // its lanes idle (the strip kernel gathers them). Of the heights, the
    // squat kernel takes those of `squat_suits_height`.
    let squat_cols = u64::from(SQUAT_BLOCKS) * u64::from(g.vec);
    if g.squats() && shape.cols < squat_cols {
        return Some(Refusal::FewCols {
            cols: shape.cols,
            min: squat_cols,
        });
    }
    if g.squats() && !squat_suits_height(g.elem_bytes, shape.rows) {
        return Some(Refusal::StripHeight { rows: shape.rows });
    }
    let skew_not_needed = g.form == Form::Skew && !skew_everywhere(g) && dst_on_sectors(e, shape);
    if skew_not_needed {
        return Some(Refusal::Aligned {
            row_bytes: shape.dst_ld.saturating_mul(e),
        });
    }
    // A 1-element square tile above 32 on a matrix with a side below it leaves
    // most of itself idle: on 857079 x 21 u8 the 64-tile with 4 thread rows ran
    // at 0.29 of memcpy, the 32-tile at 0.34 (H100, `bench --random 8 --seed 4`).
    if g.form == Form::Tile && g.vec == 1 && g.tile > 32 {
        let tile = u64::from(g.tile);
        let below = [("rows", shape.rows), ("cols", shape.cols)]
            .into_iter()
            .find(|&(_, n)| n < tile);
        if let Some((side, n)) = below {
            return Some(Refusal::BelowTile {
                side,
                n,
                tile: g.tile,
            });
        }
    }
    if g.packs() && g.form == Form::Tall {
        let max = packed_tall_max_cols(g.elem_bytes);
        if shape.cols > max {
            return Some(Refusal::TileWins {
                cols: shape.cols,
                max,
                elem_bytes: g.elem_bytes,
            });
        }
    }
    // A skew tile wider than 32 on a narrower source leaves most of it idle: on
    // 774979 x 31 2-byte elements the 64-wide skew tile ran at 0.54 of memcpy, the
    // 32-wide square tile at 0.66; the 32-wide skew tile runs it at 0.88, and
    // 435405 x 24 at 0.74 (the square tile 0.65; H100, `bench --random 8 --seed 1
    // --alternatives`).
    (g.form == Form::Skew && g.tile > 32 && shape.cols < u64::from(g.tile)).then_some(
        Refusal::Narrow {
            cols: shape.cols,
            tile: g.tile,
        },
    )
}

/// The most columns for which a tall kernel of 1- or 2-byte elements beats the
/// square and skew tiles. The tall kernel's speed does not depend on the width
/// (0.55-0.61 of memcpy), a 32-wide tile's grows with it; H100, 32 MB matrices of
/// every width from 2 to 32: 2-byte 0.59 against 0.54 at 17 columns, 0.58
/// against 0.60 at 20; 1-byte 0.55 against 0.50 at 31, 0.51 against 0.53 at 32.
pub fn packed_tall_max_cols(elem_bytes: u32) -> u64 {
    if elem_bytes == 1 {
        31
    } else {
        17
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(form: Form, tile: u32, elem_bytes: u32, vec: u32) -> Geometry {
        Geometry {
            form,
            tile,
            block_rows: 8,
            elem_bytes,
            vec,
        }
    }

    #[test]
    fn packed_tall_kernels_suit_the_widths_they_win() {
        for (e, max) in [(1u32, 31u64), (2, 17)] {
            let tall = g(Form::Tall, 32, e, 4 / e);
            assert_eq!(unsuited(&tall, &Shape::new(100_001, max)), None);
            assert_eq!(
                unsuited(&tall, &Shape::new(100_001, max + 1)),
                Some(Refusal::TileWins {
                    cols: max + 1,
                    max,
                    elem_bytes: e
                })
            );
        }
        // 4-byte tall kernels take every width up to 32.
        assert_eq!(
            unsuited(&g(Form::Tall, 32, 4, 1), &Shape::new(100_001, 32)),
            None
        );
    }

    #[test]
    fn only_skew_tiles_wider_than_32_skip_narrow_sources() {
        let odd = Shape::new(435_405, 24);
        assert_eq!(unsuited(&g(Form::Skew, 32, 2, 1), &odd), None);
        assert_eq!(
            unsuited(&g(Form::Skew, 64, 4, 1), &odd),
            Some(Refusal::Narrow { cols: 24, tile: 64 })
        );
    }
}
