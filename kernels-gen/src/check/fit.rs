//! Whether a kernel can run a call: checked without allocating (the runtime asks
//! on every launch), with a [`Refusal`] that names the reason only when one is
//! shown. Whether its form is also meant for the call is [`crate::check::suit`].
//!
//! ```
//! use bankfree_gen::{check::fit::refusal, Form, Geometry, Shape};
//! let g = Geometry { form: Form::Tall, tile: 32, block_rows: 8, elem_bytes: 4, vec: 1, split: false };
//! assert_eq!(refusal(&g, &Shape::new(1 << 22, 3)), None);
//! let r = refusal(&g, &Shape::new(1 << 22, 33)).expect("33 columns are too many");
//! assert_eq!(r.to_string(), "cols = 33: a tall kernel takes at most 32 cols; a tile kernel runs it");
//! ```

pub use crate::check::refusal::Refusal;
use crate::ir::expr::Var;
use crate::ir::shape::{outer_params, Fold, Shape};
use crate::kernel::fold::{self, Side};
use crate::kernel::geometry::{
    Form, Geometry, Quotients, COPY_MAX_COLS, INTERLEAVE_MAX_ROWS, MAX_NARROW, PLANAR_MAX_COLS,
};
use crate::kernel::squat::SQUAT_MAX_ROWS;
use crate::kernel::thin::{widths_of, THIN_MAX_COLS};

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
pub(crate) fn outer_strides(shape: &Shape) -> impl Iterator<Item = (&'static str, u64)> + '_ {
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
    if g.form == Form::Interleave {
        return interleave_refusal(g, shape);
    }
    if g.realigns() {
        return None; // any shape, pitch, stride and pointer
    }
    if g.wordvecs() {
        // Any rows and columns: every row's run of words starts on 16 bytes.
        return vec_refusal(
            g.vec,
            &Shape {
                rows: 0,
                cols: 0,
                ..*shape
            },
        );
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
        | Form::Interleave
        | Form::Realign
        | Form::Thin
        | Form::Squat
        | Form::Wordvec => None,
        // A folded tall kernel finds each row's source offset by the split of its
        // rows (a box's rows step between runs), so only its width matters.
        Form::Tall if shape.fold.rows.n > 0 => {
            (shape.cols > MAX_NARROW).then_some(Refusal::TooWide {
                form,
                side: "cols",
                n: shape.cols,
            })
        }
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
    let first = *widths_of(g).start();
    if cols < u64::from(first) {
        return Some(Refusal::SplitWidth { cols, first });
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
    narrow_run_refusal(g, shape, Side::Cols, PLANAR_MAX_COLS)
}

/// Why an `interleave` kernel cannot run `shape`, if it cannot: at most
/// [`INTERLEAVE_MAX_ROWS`] rows whose destination is one run, and every block
/// of `vec` columns a whole 16-byte vector of each source row and of the
/// destination (cols, `src_ld` and every batch stride divisible by `vec`).
fn interleave_refusal(g: &Geometry, shape: &Shape) -> Option<Refusal> {
    narrow_run_refusal(g, shape, Side::Rows, INTERLEAVE_MAX_ROWS)
}

/// Why a kernel of 16-byte vectors whose narrow `side` (a `planar` kernel's
/// columns, an `interleave` kernel's rows) is at most `max` and stored as
/// one run (the source's rows for `Cols`, the destination's for `Rows`) cannot
/// run `shape`: the other side, its pitch and the batch strides must be whole
/// vectors.
fn narrow_run_refusal(g: &Geometry, shape: &Shape, side: Side, max: u64) -> Option<Refusal> {
    let form = g.form;
    let (name, n, ld_name, ld, run) = match side {
        Side::Cols => ("cols", shape.cols, "src_ld", shape.src_ld, "source rows"),
        Side::Rows => (
            "rows",
            shape.rows,
            "dst_ld",
            shape.dst_ld,
            "destination rows",
        ),
    };
    if n > max {
        return Some(Refusal::TooWide {
            form,
            side: name,
            n,
        });
    }
    if ld != n {
        return Some(Refusal::NotOneRun {
            form,
            side: name,
            n,
            ld_name,
            ld,
            run,
        });
    }
    // The narrow side and its pitch need not divide by the vector: a block of
    // `vec` positions of the other side is `n` whole vectors.
    let other = match side {
        Side::Cols => Shape {
            cols: 0,
            src_ld: 0,
            ..*shape
        },
        Side::Rows => Shape {
            rows: 0,
            dst_ld: 0,
            ..*shape
        },
    };
    vec_refusal(g.vec, &other)
}

/// Why a kernel cannot run a shape with folded sides, if it cannot: it must be a
/// scalar `tile` kernel, a `thin` one whose rows do not fold and whose column
/// axes continue each other in the source (the row one run), or a `tall` one of
/// single elements whose columns (2 or more) do not fold, and each side's
/// divisions (by the extents of all but its outermost axis, as
/// [`crate::ir::expr::Expr::quot`]) exact for every index a tile reaches (below
/// the side plus two tiles, or a tall kernel's chunk).
fn fold_refusal(g: &Geometry, shape: &Shape) -> Option<Refusal> {
    if !fold::folds(g, shape.fold.rows.n, shape.fold.cols.n) {
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
    // A folded tall kernel divides its chunk's flat index by the width.
    if g.form == Form::Tall && shape.cols < 2 {
        return Some(Refusal::FoldSplit {
            side: "cols",
            n: shape.cols,
            ext: shape.cols,
        });
    }
    // A tile reaches two tiles past its side, a tall chunk a chunk of rows.
    let reach = if g.form == Form::Tall {
        u64::from(g.chunk_elems())
    } else {
        2 * u64::from(g.tile)
    };
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
