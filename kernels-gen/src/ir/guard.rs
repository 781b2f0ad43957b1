//! Bounds guards: conjunctions of `a < b` over [`Expr`]s, rendered to CUDA C
//! and evaluated in Rust like the expressions they compare.
//!
//! ```
//! use bankfree_gen::ir::expr::{Env, Expr, Var};
//! use bankfree_gen::ir::guard::{Guard, Less};
//! let g = Guard(vec![Less(Expr::var(Var::Tx), Expr::Lit(4))]);
//! assert_eq!(g.c(), "tx < 4");
//! let mut env = Env::default();
//! env.set(Var::Tx, 5);
//! assert!(!g.eval(&env).unwrap());
//! // A bitwise side keeps its parentheses: `x & 3 < 1` would be `x & (3 < 1)`.
//! let low = Guard(vec![Less(Expr::var(Var::Tx).and(3), Expr::Lit(1))]);
//! assert_eq!(low.c(), "(tx & 3) < 1");
//! ```

use crate::ir::expr::{Env, EvalError, Expr, Var};

/// `a < b`, the only comparison a kernel needs (bounds guards).
#[derive(Clone, Debug, PartialEq)]
pub struct Less(pub Expr, pub Expr);

impl Less {
    /// Renders as a C condition. A side whose outer operator is bitwise is
    /// parenthesized: C's `<` binds tighter than `&`, `^` and `|`.
    pub fn c(&self) -> String {
        let side = |e: &Expr| match e {
            Expr::Bin(op, ..) if op.bitwise() => format!("({})", e.c()),
            _ => e.c(),
        };
        format!("{} < {}", side(&self.0), side(&self.1))
    }

    /// Evaluates the comparison.
    pub fn eval(&self, env: &Env) -> Result<bool, EvalError> {
        Ok(self.0.eval(env)? < self.1.eval(env)?)
    }

    /// Whether either side mentions `v`.
    pub fn uses(&self, v: Var) -> bool {
        self.0.uses(v) || self.1.uses(v)
    }
}

/// A conjunction of bounds checks guarding one global access.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Guard(pub Vec<Less>);

impl Guard {
    /// Renders as a C condition (`1` when empty).
    pub fn c(&self) -> String {
        if self.0.is_empty() {
            return "1".into();
        }
        let parts: Vec<String> = self.0.iter().map(Less::c).collect();
        parts.join(" && ")
    }

    /// Whether any check mentions `v`.
    pub fn uses(&self, v: Var) -> bool {
        self.0.iter().any(|l| l.uses(v))
    }

    /// Evaluates the guard.
    pub fn eval(&self, env: &Env) -> Result<bool, EvalError> {
        for less in &self.0 {
            if !less.eval(env)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}
