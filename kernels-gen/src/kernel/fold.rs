//! Folded tile sides: a tile row or column index that runs over several axes (a
//! permute's short inner axes joined), split into its multi-index once and
//! turned into one offset per buffer ([`crate::ir::shape::Chain`]).

use crate::ir::expr::{Expr, Var, MAX_FOLD};
use crate::kernel::geometry::{Form, Geometry};

/// Whether a kernel of geometry `g` folds `rows` more row axes and `cols`
/// more column axes (each at most [`MAX_FOLD`]): a scalar `tile` kernel both
/// sides, a `thin` one its columns, a `tall` one of single elements (not one
/// that packs words) its rows.
pub(crate) fn folds(g: &Geometry, rows: u8, cols: u8) -> bool {
    let form = match g.form {
        Form::Tile => g.vec == 1,
        Form::Thin => rows == 0,
        Form::Tall => !g.packs() && cols == 0,
        _ => false,
    };
    form && rows <= MAX_FOLD && cols <= MAX_FOLD
}

/// Which side of the tile an index runs along.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    /// Source rows: axis 0 `src_ld` apart in `src`, 1 apart in `dst`.
    Rows,
    /// Source columns: axis 0 1 apart in `src`, `dst_ld` apart in `dst`.
    Cols,
}

/// An index's offsets in `src` and `dst`, and the named values that get there.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Split {
    pub lets: Vec<Expr>,
    pub src: Expr,
    pub dst: Expr,
}

/// Names of the values a split declares: for each of the two moves of a tile
/// (0 reads, 1 writes) and each side, the indices `i0, i1, i2` and quotients.
const NAMES: [[[&str; 2 * MAX_FOLD as usize + 1]; 2]; 2] = [
    [
        ["r_i0", "r_q1", "r_i1", "r_q2", "r_i2"],
        ["c_i0", "c_q1", "c_i1", "c_q2", "c_i2"],
    ],
    [
        ["wr_i0", "wr_q1", "wr_i1", "wr_q2", "wr_i2"],
        ["wc_i0", "wc_q1", "wc_i1", "wc_q2", "wc_i2"],
    ],
];

const MAGIC_NAMES: [[&str; MAX_FOLD as usize]; 2] = [["row_m0", "row_m1"], ["col_m0", "col_m1"]];

/// A side's parameter of axis `k`.
type AxisVar = fn(u8) -> Var;

/// A side's extent, source-stride and destination-stride parameters.
fn vars(side: Side) -> (AxisVar, AxisVar, AxisVar) {
    match side {
        Side::Rows => (Var::RowExt, Var::RowSrc, Var::RowDst),
        Side::Cols => (Var::ColExt, Var::ColSrc, Var::ColDst),
    }
}

/// The division multipliers ([`Expr::magic`]) of a side's `n` extents the kernel
/// computes once: a split divides by each extent with one `__umulhi`, exact
/// because the fit keeps `side * extent` below 2^32 and every extent at 2 or more.
pub(crate) fn magics(side: Side, n: u8) -> Vec<Expr> {
    let ext = vars(side).0;
    (0..n.min(MAX_FOLD))
        .map(|k| {
            Expr::magic(
                MAGIC_NAMES[usize::from(side == Side::Cols)][usize::from(k)],
                Expr::var(ext(k)),
            )
        })
        .collect()
}

/// Offsets of `x`, an index along `side` that runs over `magics.len()` further
/// axes ([`magics`]), named for move `mv` (0 or 1). With none no value is
/// declared: `x * src_ld` and `x` for rows, `x` and `x * dst_ld` for columns, as
/// an unfolded tile computes.
pub(crate) fn split(x: Expr, side: Side, magics: &[Expr], mv: usize) -> Split {
    let v = Expr::var;
    let (src0, dst0) = match side {
        Side::Rows => (v(Var::SrcLd), Expr::Lit(1)),
        Side::Cols => (Expr::Lit(1), v(Var::DstLd)),
    };
    if magics.is_empty() {
        return Split {
            lets: vec![],
            src: x.clone() * src0,
            dst: x * dst0,
        };
    }
    let names = NAMES[mv.min(1)][usize::from(side == Side::Cols)];
    let (ext, src_k, dst_k) = vars(side);
    let mut lets = vec![];
    let mut q = x;
    let (mut src, mut dst) = (Expr::Lit(0), Expr::Lit(0));
    let n = magics.len().min(usize::from(MAX_FOLD));
    for k in 0..=n {
        let i = if k < n {
            let next = Expr::small(names[2 * k + 1], Expr::quot(q.clone(), &magics[k]));
            let i = Expr::small(names[2 * k], q - next.clone() * v(ext(k as u8)));
            lets.extend([next.clone(), i.clone()]);
            q = next;
            i
        } else {
            q.clone()
        };
        let (s, d) = if k == 0 {
            (src0.clone(), dst0.clone())
        } else {
            (v(src_k(k as u8)), v(dst_k(k as u8)))
        };
        src = src + i.clone() * s;
        dst = dst + i * d;
    }
    Split { lets, src, dst }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::expr::Env;
    use crate::ir::shape::{Axis, Chain, Fold, Shape};

    /// The kernel's split and the shape's host arithmetic agree on every item of
    /// both sides.
    #[test]
    fn the_kernel_offsets_are_the_shapes() {
        let rows = Chain::new(&[
            Axis {
                ext: 3,
                src: 1000,
                dst: 20,
            },
            Axis {
                ext: 2,
                src: 7,
                dst: 300,
            },
        ])
        .expect("two axes");
        let cols = Chain::new(&[Axis {
            ext: 4,
            src: 90,
            dst: 5000,
        }])
        .expect("one axis");
        let shape = Shape {
            src_ld: 11,
            dst_ld: 3,
            fold: Fold { rows, cols },
            ..Shape::new(5 * 3 * 2, 6 * 4)
        };
        let mut env = Env::default();
        for v in crate::ir::shape::fold_params(2, 1).chain([Var::SrcLd, Var::DstLd]) {
            env.set(v, shape.fold_value(v) as i64);
        }
        env.set(Var::SrcLd, 11);
        env.set(Var::DstLd, 3);
        let r = split(Expr::var(Var::Tx), Side::Rows, &magics(Side::Rows, 2), 0);
        let c = split(Expr::var(Var::Ty), Side::Cols, &magics(Side::Cols, 1), 1);
        for row in 0..shape.rows {
            for col in 0..shape.cols {
                env.set(Var::Tx, row as i64);
                env.set(Var::Ty, col as i64);
                let s = r.src.eval(&env).unwrap() + c.src.eval(&env).unwrap();
                let d = r.dst.eval(&env).unwrap() + c.dst.eval(&env).unwrap();
                assert_eq!(s as u64, shape.src_index(0, row, col), "({row}, {col})");
                assert_eq!(d as u64, shape.dst_index(0, row, col), "({row}, {col})");
            }
        }
        let plain = split(Expr::var(Var::Tx), Side::Rows, &[], 0);
        assert_eq!(plain.src.c(), "tx * src_ld");
    }
}
