//! Interval bounds of an expression's exact value over one call's ranges, for
//! the proof that the 32-bit build computes what the 64-bit one does
//! ([`crate::check::index32`]): a value that enters a division, a remainder, a
//! right shift, `__umulhi`, `__ffs` or a comparison must lie in `[0, 2^32)`.

use crate::ir::expr::{Expr, Op, Var, SLOTS};

pub(crate) const U32: i128 = 1 << 32;
/// Intervals beyond this are treated as unbounded (so products cannot overflow).
const HUGE: i128 = 1 << 62;

/// An interval of exact values, or `None`: unbounded.
pub(crate) type Span = Option<(i128, i128)>;

/// A value that must be exact in 32 bits is not (or cannot be shown to be).
pub(crate) struct Wide;

pub(crate) fn span(lo: i128, hi: i128) -> Span {
    (lo >= -HUGE && hi <= HUGE).then_some((lo, hi))
}

/// The interval of a value that must be exact: within `[0, 2^32)`.
pub(crate) fn exact(s: Span) -> Result<(i128, i128), Wide> {
    match s {
        Some((lo, hi)) if lo >= 0 && hi < U32 => Ok((lo, hi)),
        _ => Err(Wide),
    }
}

/// Ranges of the variables over one call.
pub(crate) struct Ranges(pub(crate) [(i128, i128); SLOTS]);

impl Ranges {
    pub(crate) fn of(&self, v: Var) -> Span {
        Some(self.0[v.slot()])
    }
}

fn power_of_two(e: &Expr) -> Option<i128> {
    match e {
        Expr::Lit(v) if *v > 0 && (*v & (*v - 1)) == 0 => Some(i128::from(*v)),
        _ => None,
    }
}

/// `d` where `n - q * d` is the remainder of `q = __umulhi(n, magic)` or of `q =
/// n / d`.
fn remainder_divisor<'a>(n: &Expr, qd: &'a Expr) -> Option<&'a Expr> {
    let Expr::Bin(Op::Mul, q, d) = qd.definition() else {
        return None;
    };
    let same = |a: &Expr, b: &Expr| a == b || a.definition() == b.definition();
    match q.definition() {
        Expr::MulHi(m, _) | Expr::MulHi64(m, _) if same(m, n) => Some(d),
        Expr::Bin(Op::Div, m, e) if same(m, n) && same(e, d) => Some(d),
        _ => None,
    }
}

/// The interval of `e`'s exact value; `Err` where a value that must be exact
/// (see the module docs) may not be.
pub(crate) fn bound(e: &Expr, r: &Ranges) -> Result<Span, Wide> {
    Ok(match e {
        Expr::Lit(v) => span(i128::from(*v), i128::from(*v)),
        Expr::Var(v) => r.of(*v),
        Expr::Let(_, d) | Expr::Small(_, d) => bound(d, r)?,
        Expr::MulHi(a, b) => {
            let (a, b) = (exact(bound(a, r)?)?, exact(bound(b, r)?)?);
            span((a.0 * b.0) >> 32, (a.1 * b.1) >> 32)
        }
        // In either build the quotient is at most its numerator, and the
        // multiplier a 64-bit value of an exact divisor.
        Expr::MulHi64(a, b) => {
            let a = exact(bound(a, r)?)?;
            bound(b, r)?;
            span(0, a.1)
        }
        Expr::Magic64(d) => {
            exact(bound(d, r)?)?;
            None
        }
        // A 32-bit multiplier, and a shift of at most 31, of an exact divisor.
        Expr::Magic32(d) => {
            exact(bound(d, r)?)?;
            span(1, U32 - 1)
        }
        Expr::Shift32(d) => {
            exact(bound(d, r)?)?;
            span(0, 31)
        }
        Expr::Ctz(a) => match exact(bound(a, r)?)? {
            (lo, hi) if lo == hi && lo > 0 => {
                span(lo.trailing_zeros().into(), lo.trailing_zeros().into())
            }
            (lo, _) if lo > 0 => span(0, 31),
            _ => return Err(Wide),
        },
        Expr::Bin(op, a, b) => {
            let (x, y) = (bound(a, r)?, bound(b, r)?);
            // Two known values (the kernel's named values over its parameters):
            // their exact result, but the inputs of what must be exact still checked.
            if let (Some((a, a1)), Some((b, b1))) = (x, y) {
                let must_be_exact = !matches!(op, Op::Add | Op::Sub | Op::Mul | Op::And);
                let one = |v: (i128, i128)| exact(Some(v)).is_ok() || !must_be_exact;
                if a == a1 && b == b1 && one((a, a)) && one((b, b)) {
                    let (a, b) = (a as i64, b as i64);
                    return Ok(op.apply(a, b).ok().and_then(|v| span(v.into(), v.into())));
                }
            }
            match op {
                Op::Add => x.zip(y).and_then(|(x, y)| span(x.0 + y.0, x.1 + y.1)),
                // `n - quot(n, d) * d`, the remainder of a magic division (exact: see
                // `Expr::quot`), or `n - n / d * d` (the division's operands are
                // checked exact when `b` is bounded), lies in [0, d) where intervals
                // alone cannot tell.
                Op::Sub if remainder_divisor(a, b).is_some() => {
                    let d = remainder_divisor(a, b).map(|d| bound(d, r)).transpose()?;
                    match (x, d.flatten()) {
                        (Some((lo, _)), Some((_, hi))) if lo >= 0 => span(0, hi - 1),
                        _ => return Err(Wide),
                    }
                }
                Op::Sub => x.zip(y).and_then(|(x, y)| span(x.0 - y.1, x.1 - y.0)),
                Op::Mul => x.zip(y).and_then(|(x, y)| {
                    let p = [x.0 * y.0, x.0 * y.1, x.1 * y.0, x.1 * y.1];
                    span(*p.iter().min()?, *p.iter().max()?)
                }),
                Op::Shl => {
                    let (lo, hi) = exact(y)?;
                    if hi >= 32 {
                        return Err(Wide);
                    }
                    x.and_then(|x| {
                        let p = [x.0 << lo, x.0 << hi, x.1 << lo, x.1 << hi];
                        span(*p.iter().min()?, *p.iter().max()?)
                    })
                }
                // `x % 2^k` is a function of x modulo 2^32: x need only be non-negative.
                Op::Rem if power_of_two(b).is_some() => match x {
                    Some((lo, _)) if lo >= 0 => span(0, power_of_two(b).unwrap_or(1) - 1),
                    _ => return Err(Wide),
                },
                Op::Div | Op::Rem => {
                    let (x, y) = (exact(x)?, exact(y)?);
                    if y.0 < 1 {
                        return Err(Wide);
                    }
                    if *op == Op::Div {
                        span(x.0 / y.1, x.1 / y.0)
                    } else {
                        span(0, x.1.min(y.1 - 1))
                    }
                }
                Op::Shr => {
                    let (x, y) = (exact(x)?, exact(y)?);
                    if y.1 >= 32 {
                        return Err(Wide);
                    }
                    span(x.0 >> y.1, x.1 >> y.0)
                }
                // With one operand non-negative, `&` lies between 0 and it.
                Op::And => [x, y]
                    .into_iter()
                    .flatten()
                    .filter(|s| s.0 >= 0)
                    .map(|s| s.1)
                    .min()
                    .and_then(|hi| span(0, hi)),
                Op::Or | Op::Xor => match (x, y) {
                    (Some(x), Some(y)) if x.0 >= 0 && y.0 >= 0 => {
                        let top = x.1.max(y.1);
                        let bits = 128 - top.leading_zeros();
                        span(0, (1i128 << bits) - 1)
                    }
                    _ => None,
                },
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_divided_or_compared_must_be_exact() {
        let mut vals = [(0, 0); SLOTS];
        vals[Var::Rows.slot()] = (1, 1 << 33);
        let r = Ranges(vals);
        let rows = || Expr::var(Var::Rows);
        let negative = Expr::Lit(0) - rows();
        assert!(bound(&(negative.clone() + rows()), &r).is_ok());
        assert!(exact(bound(&negative, &r).unwrap_or(None)).is_err());
        assert!(bound(&(negative.clone() / 3), &r).is_err());
        assert!(bound(&(negative % 8), &r).is_err());
        assert!(bound(&(rows() % 8), &r).is_ok());
        assert!(bound(&(rows() / 8), &r).is_err());
        assert!(bound(&(rows().and(7) / 8), &r).is_ok());
        // `n - n / d * d` is the remainder, in [0, d), when the division is exact;
        // the same shape with another divisor is not.
        vals[Var::Rows.slot()] = (0, 1 << 31);
        vals[Var::Cols.slot()] = (7, 9);
        let r = Ranges(vals);
        let cols = || Expr::var(Var::Cols);
        let rem = rows() - rows() / cols() * cols();
        assert_eq!(bound(&rem, &r).ok().flatten(), Some((0, 8)));
        let named = Expr::named("q", rows() / cols());
        assert_eq!(
            bound(&(rows() - named * cols()), &r).ok().flatten(),
            Some((0, 8))
        );
        let other = rows() - rows() / cols() * (cols() + 1);
        assert!(exact(bound(&other, &r).unwrap_or(None)).is_err());
        vals[Var::Rows.slot()] = (0, 1 << 32);
        let r = Ranges(vals);
        assert!(
            bound(&rem, &r).is_err(),
            "a division of a value beyond 32 bits"
        );
    }
}
