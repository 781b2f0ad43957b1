//! Partial evaluation: the simulator binds the variables that stay fixed for a
//! whole tile (its index, the batch, the call's parameters) once, and evaluates
//! the rest per thread and word.
//!
//! ```
//! use bankfree_gen::ir::expr::{Env, Expr, Var};
//! let idx = Expr::var(Var::Tile) * 1024 + Expr::var(Var::SrcLd) * Expr::var(Var::Ty) + Expr::var(Var::Tx);
//! let mut env = Env::default();
//! env.set(Var::Tile, 3);
//! env.set(Var::SrcLd, 100);
//! let bound = idx.bind(&env, &[Var::Tx, Var::Ty]);
//! assert_eq!(bound.c(), "3072 + 100 * ty + tx");
//! env.set(Var::Tx, 5);
//! env.set(Var::Ty, 2);
//! assert_eq!(bound.eval(&env), idx.eval(&env));
//! ```

use std::sync::Arc;

use super::expr::{Env, Expr, Var};
use super::guard::{Guard, Less};

impl Expr {
    /// `self` with every sub-expression that mentions none of `free` replaced by
    /// its value under `env`. Evaluating the result under any `env'` that agrees
    /// with `env` outside `free` gives what evaluating `self` gives, errors
    /// included: a sub-expression whose evaluation fails is kept as it is, so the
    /// error comes where it would have come. Names are dropped (the result is for
    /// evaluation, not for rendering).
    pub fn bind(&self, env: &Env, free: &[Var]) -> Expr {
        let constant = |e: Expr| match e.eval(env) {
            Ok(v) => Expr::Lit(v),
            Err(_) => e,
        };
        let lit = |e: &Expr| matches!(e, Expr::Lit(_));
        // An operation on literals is a literal (where it evaluates).
        let fold = |e: Expr, folded: bool| if folded { constant(e) } else { e };
        match self {
            Expr::Lit(_) => self.clone(),
            Expr::Var(v) if free.contains(v) => self.clone(),
            Expr::Var(_) => constant(self.clone()),
            Expr::Let(_, d) | Expr::Small(_, d) => d.bind(env, free),
            Expr::Bin(op, a, b) => {
                let (a, b) = (a.bind(env, free), b.bind(env, free));
                let folded = lit(&a) && lit(&b);
                fold(Expr::Bin(*op, Arc::new(a), Arc::new(b)), folded)
            }
            Expr::MulHi(a, b) => {
                let (a, b) = (a.bind(env, free), b.bind(env, free));
                let folded = lit(&a) && lit(&b);
                fold(Expr::MulHi(Arc::new(a), Arc::new(b)), folded)
            }
            Expr::MulHi64(a, b) => {
                let (a, b) = (a.bind(env, free), b.bind(env, free));
                let folded = lit(&a) && lit(&b);
                fold(Expr::MulHi64(Arc::new(a), Arc::new(b)), folded)
            }
            // Kept as an operation: a 64-bit value, which a literal would lose
            // in the 32-bit build's arithmetic.
            Expr::Magic64(d) => Expr::Magic64(Arc::new(d.bind(env, free))),
            Expr::Ctz(a) | Expr::Magic32(a) | Expr::Shift32(a) => {
                let a = Arc::new(a.bind(env, free));
                let folded = lit(&a);
                let e = match self {
                    Expr::Ctz(_) => Expr::Ctz(a),
                    Expr::Magic32(_) => Expr::Magic32(a),
                    _ => Expr::Shift32(a),
                };
                fold(e, folded)
            }
        }
    }
}

impl Guard {
    /// [`Expr::bind`] of every check.
    pub fn bind(&self, env: &Env, free: &[Var]) -> Guard {
        Guard(
            self.0
                .iter()
                .map(|Less(a, b)| Less(a.bind(env, free), b.bind(env, free)))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::expr::EvalError;

    fn v(x: Var) -> Expr {
        Expr::var(x)
    }

    #[test]
    fn bound_expressions_evaluate_as_the_originals() {
        let magic = Expr::magic("m", v(Var::Cols));
        let e = Expr::named(
            "row",
            Expr::quot(v(Var::Tile), &magic) * v(Var::SrcLd) + (v(Var::Ty) + v(Var::J) * 8),
        ) * 4
            + v(Var::Tx).xor(v(Var::Ty))
            + Expr::ctz(v(Var::Rows)) * v(Var::K);
        for index32 in [false, true] {
            let mut env = Env::default();
            env.index32 = index32;
            env.set(Var::Tile, 77);
            env.set(Var::Cols, 13);
            env.set(Var::SrcLd, 4099);
            env.set(Var::Rows, 24);
            let bound = e.bind(&env, &[Var::Tx, Var::Ty, Var::J, Var::K]);
            assert!(matches!(bound, Expr::Bin(..)), "{bound:?}");
            for (tx, ty, j, k) in [(0, 0, 0, 0), (31, 7, 3, 2), (5, 1, 2, 1)] {
                env.set(Var::Tx, tx);
                env.set(Var::Ty, ty);
                env.set(Var::J, j);
                env.set(Var::K, k);
                assert_eq!(bound.eval(&env), e.eval(&env));
            }
        }
    }

    #[test]
    fn a_failing_part_fails_where_it_did() {
        // cols = 0: the division fails; binding keeps it, so evaluation still fails.
        let e = v(Var::Tx) + v(Var::Rows) / v(Var::Cols);
        let mut env = Env::default();
        env.set(Var::Rows, 5);
        let bound = e.bind(&env, &[Var::Tx]);
        assert_eq!(bound.eval(&env), Err(EvalError::DivisionByZero));
        // Free variables stay variables, even where their value is known.
        assert_eq!(v(Var::Tx).bind(&env, &[Var::Tx]), v(Var::Tx));
        let g = Guard(vec![Less(v(Var::Tx), v(Var::Rows) * 2)]);
        assert_eq!(
            g.bind(&env, &[Var::Tx]),
            Guard(vec![Less(v(Var::Tx), Expr::Lit(10))])
        );
    }
}
