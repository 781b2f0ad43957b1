//! Where a batch item starts: the one expression of the batch offset, for one
//! batch axis (`b * stride`) or for several (a permute's batch), built once and
//! used by every form's global places.

use crate::ir::expr::{Expr, Var, MAX_OUTER};
use crate::kernel::geometry::Quotients;

/// A batch item's start in `src` and `dst` (in the units `per` converts strides
/// to), and the named values the kernel declares in its batch loop to get there.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BatchBase {
    pub lets: Vec<Expr>,
    pub src: Expr,
    pub dst: Expr,
}

const QUOTIENTS: [&str; MAX_OUTER as usize] = ["bq1", "bq2", "bq3", "bq4", "bq5", "bq6"];
const MAGICS: [&str; MAX_OUTER as usize] =
    ["ext0_m", "ext1_m", "ext2_m", "ext3_m", "ext4_m", "ext5_m"];
const INDICES: [&str; MAX_OUTER as usize + 1] = ["bi0", "bi1", "bi2", "bi3", "bi4", "bi5", "bi6"];

/// The batch offsets of a kernel with `outer` outer batch axes
/// ([`crate::ir::shape::Outer`]), each stride passed through `per` (a vector
/// kernel divides it by `vec`).
///
/// With none, item `b` starts at `b * per(src_batch_stride)` (and likewise in
/// `dst`). With `n`, `b` is split into `bi0 = b % ext0`, `bq1 = b / ext0`, `bi1 = bq1
/// % ext1`, ... with the outermost index `bi_n = bq_n` bounded by the batch count,
/// and each side's start is the sum of the indices times its strides.
pub(crate) fn batch_base(outer: u8, per: impl Fn(Var) -> Expr) -> BatchBase {
    let v = Expr::var;
    let b = v(Var::Batch);
    if outer == 0 {
        return BatchBase {
            lets: vec![],
            src: b.clone() * per(Var::SrcBatchStride),
            dst: b * per(Var::DstBatchStride),
        };
    }
    let n = outer.min(MAX_OUTER);
    let mut lets = vec![];
    let mut q = b;
    let (mut src, mut dst) = (Expr::Lit(0), Expr::Lit(0));
    for k in 0..=n {
        let i = if k < n {
            Expr::named(INDICES[usize::from(k)], q.clone() % v(Var::Ext(k)))
        } else {
            q.clone()
        };
        if k < n {
            lets.push(i.clone());
            let next = Expr::named(QUOTIENTS[usize::from(k)], q / v(Var::Ext(k)));
            lets.push(next.clone());
            q = next;
        }
        let (s, d) = if k == 0 {
            (Var::SrcBatchStride, Var::DstBatchStride)
        } else {
            (Var::SrcStride(k), Var::DstStride(k))
        };
        src = src + i.clone() * per(s);
        dst = dst + i * per(d);
    }
    BatchBase { lets, src, dst }
}

/// The multipliers of the extents of batch axes `0..outer`, declared once per
/// kernel, for [`item_src`]: [`Expr::magic`] ones for [`Quotients::Narrow`],
/// [`Expr::magic_exact`] ones for [`Quotients::Items`] and [`Quotients::Wide`],
/// [`Expr::magic64`] ones for [`Quotients::Any`].
pub(crate) fn magics(outer: u8, quotients: Quotients) -> Vec<Expr> {
    (0..outer.min(MAX_OUTER))
        .map(|k| {
            let (name, ext) = (MAGICS[usize::from(k)], Expr::var(Var::Ext(k)));
            match quotients {
                Quotients::Narrow => Expr::magic(name, ext),
                Quotients::Items | Quotients::Wide => Expr::magic_exact(name, ext),
                Quotients::Any => Expr::magic64(name, ext),
            }
        })
        .collect()
}

/// Where batch item `m` (an expression a thread computes per element) starts in
/// `src`: `m * src_batch_stride` with no outer axes, else its multi-index over
/// the axes' extents (as in [`batch_base`]) by the quotients of `magics`
/// ([`magics`]: 32-bit ones are exact while `batch * extent < 2^32`, exact
/// 32-bit ones while `batch` is at most 2^31, which the fit checks, 64-bit ones
/// always).
pub(crate) fn item_src(m: Expr, magics: &[Expr]) -> Expr {
    let v = Expr::var;
    let mut src = Expr::Lit(0);
    let mut q = m;
    for (k, magic) in magics.iter().enumerate() {
        let k = k as u8;
        let next = Expr::divide(q.clone(), magic);
        let i = q - next.clone() * v(Var::Ext(k));
        let stride = if k == 0 {
            Var::SrcBatchStride
        } else {
            Var::SrcStride(k)
        };
        src = src + i * v(stride);
        q = next;
    }
    let outermost = match magics.len() {
        0 => Var::SrcBatchStride,
        n => Var::SrcStride(n as u8),
    };
    src + q * v(outermost)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::expr::Env;
    use crate::ir::shape::{Axis, Outer, Shape};

    /// The expression and the shape's own host arithmetic agree on every item.
    #[test]
    fn the_kernel_offsets_are_the_shapes() {
        let axes = [
            Axis {
                ext: 3,
                src: 1000,
                dst: 7,
            },
            Axis {
                ext: 4,
                src: 50,
                dst: 5000,
            },
            Axis {
                ext: 2,
                src: 9000,
                dst: 21,
            },
        ];
        let shape = Shape {
            outer: Outer::new(&axes).expect("three axes"),
            src_batch_stride: 10,
            dst_batch_stride: 1,
            ..Shape::batched(5 * 3 * 4 * 2, 1, 1)
        };
        let base = batch_base(3, Expr::var);
        assert!(
            base.src.c().contains("bi0 * src_batch_stride"),
            "{}",
            base.src.c()
        );
        let mut env = Env::default();
        env.set(Var::SrcBatchStride, 10);
        env.set(Var::DstBatchStride, 1);
        env.set(Var::Ext(0), 5);
        for (k, a) in axes.iter().enumerate() {
            let k = k as u8 + 1;
            env.set(Var::Ext(k), a.ext as i64);
            env.set(Var::SrcStride(k), a.src as i64);
            env.set(Var::DstStride(k), a.dst as i64);
        }
        for b in 0..shape.batch {
            env.set(Var::Batch, b as i64);
            let got = (base.src.eval(&env).unwrap(), base.dst.eval(&env).unwrap());
            let (s, d) = shape.batch_offsets(b);
            assert_eq!(got, (s as i64, d as i64), "item {b}");
        }
        let plain = batch_base(0, Expr::var);
        assert_eq!(plain.src.c(), "b * src_batch_stride");

        // A small kernel's per-element split by each level's quotients agrees
        // too, in either build.
        for q in [Quotients::Narrow, Quotients::Items, Quotients::Any] {
            let src = item_src(Expr::var(Var::Batch), &magics(3, q));
            for index32 in [false, true] {
                env.index32 = index32;
                for b in 0..shape.batch {
                    env.set(Var::Batch, b as i64);
                    assert_eq!(
                        src.eval(&env).unwrap(),
                        shape.batch_offsets(b).0 as i64,
                        "item {b}"
                    );
                }
            }
        }
    }
}
