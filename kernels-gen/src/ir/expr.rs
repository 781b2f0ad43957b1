//! The index model: small integer expressions that render to CUDA C and evaluate in Rust.
//!
//! Every address the generated kernel touches (global and shared) is one [`Expr`].
//! The emitter prints it with [`Expr::c`], the simulator and the bank analyzer
//! evaluate it with [`Expr::eval`]; nothing else computes an address, so the
//! analysis cannot drift from the code.
//!
//! ```
//! use bankfree_gen::ir::expr::{Env, Expr, Var};
//! let row = Expr::var(Var::Tx);
//! let idx = row * 33 + Expr::var(Var::Ty);
//! assert_eq!(idx.c(), "tx * 33 + ty");
//! let mut env = Env::default();
//! env.set(Var::Tx, 2);
//! env.set(Var::Ty, 5);
//! assert_eq!(idx.eval(&env).unwrap(), 71);
//! ```

use std::fmt;
use std::sync::Arc;

pub(crate) use crate::ir::arith::{magic32, magic64, mul_hi64, shift32};
pub use crate::ir::arith::{EvalError, Op};
pub(crate) use crate::ir::var::SLOTS;
pub use crate::ir::var::{Env, Var, MAX_FOLD, MAX_OUTER};

/// An integer expression over [`Var`]s.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A literal.
    Lit(i64),
    /// A variable.
    Var(Var),
    /// A binary operation.
    Bin(Op, Arc<Expr>, Arc<Expr>),
    /// A named sub-expression: rendered as its name (the emitter declares it),
    /// evaluated as its definition.
    Let(&'static str, Arc<Expr>),
    /// A named sub-expression whose values always fit in 32 bits: declared
    /// `unsigned`, so divisions among such values are 32-bit on the GPU.
    Small(&'static str, Arc<Expr>),
    /// The high 32 bits of the 64-bit product of two 32-bit values, `__umulhi(a, b)`;
    /// [`Expr::quot`] divides with it.
    MulHi(Arc<Expr>, Arc<Expr>),
    /// The high 64 bits of the 128-bit product of two 64-bit values,
    /// `__umul64hi(a, b)`; [`Expr::quot64`] divides with it.
    MulHi64(Arc<Expr>, Arc<Expr>),
    /// `ceil(2^64 / d)` for a `d` of 2 or more, computed in 64 bits in either
    /// index build (a named one is declared `unsigned long long`): the multiplier
    /// of [`Expr::quot64`].
    Magic64(Arc<Expr>),
    /// The trailing zero bits of a non-zero 32-bit value, `(__ffs(a) - 1)`: a shift
    /// by it divides by the value's lowest set bit without a division.
    Ctz(Arc<Expr>),
    /// The multiplier of [`Expr::quot_exact`] by a divisor `d` from 1 to 2^31:
    /// `floor(2^32 * (2^s - d) / d) + 1` with `s` = [`Expr::Shift32`] of `d`, a
    /// 32-bit value computed in 64 bits in either build.
    Magic32(Arc<Expr>),
    /// `ceil(log2(d))` of a divisor `d` from 1 to 2^31, `(32 - __clz(d - 1))`:
    /// the shift of [`Expr::quot_exact`].
    Shift32(Arc<Expr>),
}

impl Expr {
    /// A variable.
    pub fn var(v: Var) -> Expr {
        Expr::Var(v)
    }

    /// Names `def`: the C code refers to it as `name`.
    pub fn named(name: &'static str, def: Expr) -> Expr {
        Expr::Let(name, Arc::new(def))
    }

    /// Names `def`, a value below 2^32 for every launch the kernel accepts: the C
    /// code declares it `unsigned`.
    pub fn small(name: &'static str, def: Expr) -> Expr {
        Expr::Small(name, Arc::new(def))
    }

    /// The multiplier that turns a division by `d` into [`Expr::quot`]:
    /// `ceil(2^32 / d)`, named (the kernel computes it once). `d` must be 2 or more
    /// (for 1 the multiplier does not fit in 32 bits, and evaluating fails).
    pub fn magic(name: &'static str, d: Expr) -> Expr {
        Expr::small(name, Expr::Lit(0xFFFF_FFFF) / d + 1)
    }

    /// `n / d` as `__umulhi(n, magic)`, where `magic` is [`Expr::magic`] of `d`: two
    /// instructions instead of a division routine. Exact whenever `n * d < 2^32`:
    /// with `magic * d = 2^32 + e`, `0 <= e < d`, the product is
    /// `n / d + n * e / (d * 2^32)` and the error term stays below `1 / d`, too small
    /// to carry the fraction of `n / d` (at most `(d - 1) / d`) over an integer. The
    /// simulator evaluates this same expression, so it checks the quotient too.
    pub fn quot(n: Expr, magic: &Expr) -> Expr {
        Expr::MulHi(Arc::new(n), Arc::new(magic.clone()))
    }

    /// The 64-bit multiplier that turns a division by `d` into [`Expr::quot64`],
    /// named (the kernel computes it once, declared `unsigned long long`). `d`
    /// must be 2 or more.
    pub fn magic64(name: &'static str, d: Expr) -> Expr {
        Expr::named(name, Expr::Magic64(Arc::new(d)))
    }

    /// `n / d` as `__umul64hi(n, magic)`, where `magic` is [`Expr::magic64`] of
    /// `d`: exact whenever `n * d < 2^64` (the argument of [`Expr::quot`] with
    /// 2^64 for 2^32), so for every 32-bit `n` and `d` whatever their product, at
    /// a few more instructions than [`Expr::quot`].
    pub fn quot64(n: Expr, magic: &Expr) -> Expr {
        Expr::MulHi64(Arc::new(n), Arc::new(magic.clone()))
    }

    /// The multiplier that turns a division by `d` (1 to 2^31) into
    /// [`Expr::quot_exact`], named and declared `unsigned` (the kernel computes it
    /// once, in 64-bit arithmetic).
    pub fn magic_exact(name: &'static str, d: Expr) -> Expr {
        Expr::small(name, Expr::Magic32(Arc::new(d)))
    }

    /// `n / d` as `(__umulhi(n, magic) + n) >> s`, where `magic` is
    /// [`Expr::magic_exact`] of `d` and `s = ceil(log2(d))`: the round-up method
    /// (Granlund and Montgomery), exact for every `n` below 2^32 whatever `d`,
    /// where [`Expr::quot`] needs `n * d < 2^32`. With `M = magic + 2^32 =
    /// floor(2^(32+s) / d) + 1` the result is `floor(n * M / 2^(32+s))`, and `M *
    /// d` exceeds `2^(32+s)` by at most `d <= 2^s`, so the error over `n / d` is
    /// below `n / (2^32 * d)`, less than `1 / d`: too small to carry the fraction
    /// of `n / d` over an integer. The sum needs a 33rd bit for `n` of 2^31 or
    /// more, so callers keep `n` below 2^31 (the fit does); it is three 32-bit
    /// operations in either build, where [`Expr::quot64`] is a 64-bit high-half
    /// multiply.
    pub fn quot_exact(n: Expr, magic: &Expr) -> Expr {
        let Expr::Magic32(d) = magic.definition() else {
            return Expr::quot(n, magic);
        };
        let shift = Expr::Shift32(d.clone());
        (Expr::quot(n.clone(), magic) + n) >> shift
    }

    /// `n / d` by `magic`, the multiplier of `d`: [`Expr::quot64`] for an
    /// [`Expr::magic64`], [`Expr::quot_exact`] for an [`Expr::magic_exact`], else
    /// [`Expr::quot`] for an [`Expr::magic`].
    pub fn divide(n: Expr, magic: &Expr) -> Expr {
        match magic.definition() {
            Expr::Magic64(_) => Expr::quot64(n, magic),
            Expr::Magic32(_) => Expr::quot_exact(n, magic),
            _ => Expr::quot(n, magic),
        }
    }

    /// The number of trailing zero bits of `a` (a value from 1 to 2^32 - 1).
    pub fn ctz(a: Expr) -> Expr {
        Expr::Ctz(Arc::new(a))
    }

    /// The definition behind a [`Expr::Let`] or [`Expr::Small`] (or the expression itself).
    pub fn definition(&self) -> &Expr {
        match self {
            Expr::Let(_, d) | Expr::Small(_, d) => d,
            e => e,
        }
    }

    /// Builds `self op rhs`, folding constants and identities so the C stays readable.
    pub fn bin(self, op: Op, rhs: Expr) -> Expr {
        use Expr::Lit;
        match (op, &self, &rhs) {
            (_, Lit(a), Lit(b)) => match op.apply(*a, *b) {
                Ok(v) => Lit(v),
                Err(_) => Expr::Bin(op, Arc::new(self), Arc::new(rhs)),
            },
            (Op::Add | Op::Sub | Op::Or | Op::Xor | Op::Shl | Op::Shr, _, Lit(0)) => self,
            (Op::Add | Op::Or | Op::Xor, Lit(0), _) => rhs,
            (Op::Mul | Op::Div, _, Lit(1)) => self,
            (Op::Mul, Lit(1), _) => rhs,
            (Op::Mul | Op::And, _, Lit(0)) | (Op::Mul | Op::And | Op::Div | Op::Rem, Lit(0), _) => {
                Lit(0)
            }
            (Op::Rem, _, Lit(1)) => Lit(0),
            _ => Expr::Bin(op, Arc::new(self), Arc::new(rhs)),
        }
    }

    /// `self ^ rhs`.
    pub fn xor(self, rhs: impl Into<Expr>) -> Expr {
        self.bin(Op::Xor, rhs.into())
    }

    /// `self & rhs`.
    pub fn and(self, rhs: impl Into<Expr>) -> Expr {
        self.bin(Op::And, rhs.into())
    }

    /// The lowest set bit of `self`, `self & (0 - self)` (0 for 0).
    pub fn lowest_bit(self) -> Expr {
        self.clone().and(Expr::Lit(0) - self)
    }

    /// Evaluates with checked 64-bit arithmetic, or with `env.index32` as the
    /// kernel's 32-bit build does (every variable must then be below 2^32).
    pub fn eval(&self, env: &Env) -> Result<i64, EvalError> {
        match self {
            Expr::Lit(v) if env.index32 => Ok(v.rem_euclid(1 << 32)),
            Expr::Lit(v) => Ok(*v),
            Expr::Var(v) => {
                let x = env.get(*v);
                if env.index32 && u32::try_from(x).is_err() {
                    return Err(EvalError::NotU32 { value: x });
                }
                Ok(x)
            }
            Expr::Bin(op, a, b) if env.index32 => op.apply32(a.eval(env)?, b.eval(env)?),
            Expr::Bin(op, a, b) => op.apply(a.eval(env)?, b.eval(env)?),
            Expr::Let(_, d) | Expr::Small(_, d) => d.eval(env),
            Expr::MulHi(a, b) => {
                let u32_of = |x: i64| u32::try_from(x).map_err(|_| EvalError::NotU32 { value: x });
                let (a, b) = (u32_of(a.eval(env)?)?, u32_of(b.eval(env)?)?);
                Ok(((u64::from(a) * u64::from(b)) >> 32) as i64)
            }
            Expr::MulHi64(a, b) => mul_hi64(a.eval(env)?, b.eval(env)?),
            Expr::Magic64(d) => magic64(d.eval(env)?),
            Expr::Magic32(d) => magic32(d.eval(env)?),
            Expr::Shift32(d) => shift32(d.eval(env)?),
            Expr::Ctz(a) => {
                let x = a.eval(env)?;
                match u32::try_from(x) {
                    Ok(u) if u > 0 => Ok(i64::from(u.trailing_zeros())),
                    _ => Err(EvalError::Ctz { value: x }),
                }
            }
        }
    }

    /// Whether the expression mentions `v` (through named sub-expressions too).
    pub fn uses(&self, v: Var) -> bool {
        match self {
            Expr::Lit(_) => false,
            Expr::Var(x) => *x == v,
            Expr::Bin(_, a, b) => a.uses(v) || b.uses(v),
            Expr::Let(_, d) | Expr::Small(_, d) => d.uses(v),
            Expr::MulHi(a, b) | Expr::MulHi64(a, b) => a.uses(v) || b.uses(v),
            Expr::Magic64(a) | Expr::Ctz(a) | Expr::Magic32(a) | Expr::Shift32(a) => a.uses(v),
        }
    }

    /// Whether the expression is `rest + v * step` with neither `rest` nor `step`
    /// mentioning `v`, and `step` mentioning none of `fixed` either (so for a given
    /// value of the variables outside `fixed`, `v` shifts every evaluation by the
    /// same amount). Sums, products and left shifts by a `v`-free amount only: a
    /// sufficient test, not a complete one.
    pub fn shifts_uniformly(&self, v: Var, fixed: &[Var]) -> bool {
        self.step_of(v, fixed).is_some()
    }

    /// `Some(false)`: free of `v`; `Some(true)`: `rest + v * step` as above.
    fn step_of(&self, v: Var, fixed: &[Var]) -> Option<bool> {
        if !self.uses(v) {
            return Some(false);
        }
        let free = |e: &Expr| !e.uses(v) && fixed.iter().all(|&f| !e.uses(f));
        match self {
            Expr::Var(_) => Some(true),
            Expr::Let(_, d) | Expr::Small(_, d) => d.step_of(v, fixed),
            Expr::Bin(Op::Add, a, b) => Some(a.step_of(v, fixed)? | b.step_of(v, fixed)?),
            Expr::Bin(Op::Mul, a, b) if free(a) => b.step_of(v, fixed),
            Expr::Bin(Op::Mul | Op::Shl, a, b) if free(b) => a.step_of(v, fixed),
            _ => None,
        }
    }

    /// Renders as C, with the fewest parentheses C's precedence allows.
    pub fn c(&self) -> String {
        let mut s = String::new();
        self.write_c(&mut s, None, false);
        s
    }

    /// Writes C for `self` as a child of `parent` (`right` for the right operand).
    fn write_c(&self, out: &mut String, parent: Option<Op>, right: bool) {
        match self {
            Expr::Lit(v) if *v < 0 => out.push_str(&format!("({v})")),
            // Above `int` but within 32 bits: `unsigned`, so that arithmetic with
            // 32-bit values stays 32-bit (a 64-bit division is a slow routine call).
            Expr::Lit(v) if *v > i64::from(i32::MAX) && *v <= i64::from(u32::MAX) => {
                out.push_str(&format!("{v}u"))
            }
            Expr::Lit(v) => out.push_str(&v.to_string()),
            Expr::Var(v) => out.push_str(v.c_name()),
            Expr::Let(name, _) | Expr::Small(name, _) => out.push_str(name),
            Expr::MulHi(a, b) | Expr::MulHi64(a, b) => {
                out.push_str(if matches!(self, Expr::MulHi(..)) {
                    "__umulhi("
                } else {
                    "__umul64hi("
                });
                a.write_c(out, None, false);
                out.push_str(", ");
                b.write_c(out, None, false);
                out.push(')');
            }
            Expr::Magic64(d) => {
                out.push_str("(0xFFFFFFFFFFFFFFFFull / ");
                d.write_c(out, Some(Op::Div), true);
                out.push_str(" + 1)");
            }
            Expr::Magic32(d) => {
                // As a divisor's right operand: whole in each of its three uses.
                let mut operand = String::new();
                d.write_c(&mut operand, Some(Op::Div), true);
                let d = operand;
                out.push_str(&format!(
                    "(unsigned)(0x100000000ull * ((1ull << (32 - __clz({d} - 1))) - {d}) / {d} + 1)"
                ));
            }
            Expr::Shift32(d) => {
                out.push_str("(32 - __clz(");
                d.write_c(out, Some(Op::Sub), false);
                out.push_str(" - 1))");
            }
            Expr::Ctz(a) => {
                out.push_str("(__ffs(");
                a.write_c(out, None, false);
                out.push_str(") - 1)");
            }
            Expr::Bin(op, a, b) => {
                let p = op.precedence();
                // Looser children need parentheses; so does a right child of equal
                // precedence, unless it is the same associative operator.
                // Bitwise operators mixed with anything but themselves are
                // parenthesized too, as -Wparentheses would ask.
                let paren = parent.is_some_and(|q| {
                    let pq = q.precedence();
                    let mixed = (q.bitwise() || op.bitwise()) && q != *op;
                    mixed || p < pq || (right && p == pq && !(q == *op && op.associative()))
                });
                if paren {
                    out.push('(');
                }
                a.write_c(out, Some(*op), false);
                out.push(' ');
                out.push_str(op.token());
                out.push(' ');
                b.write_c(out, Some(*op), true);
                if paren {
                    out.push(')');
                }
            }
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.c())
    }
}

impl From<i64> for Expr {
    fn from(v: i64) -> Expr {
        Expr::Lit(v)
    }
}

impl From<Var> for Expr {
    fn from(v: Var) -> Expr {
        Expr::Var(v)
    }
}

macro_rules! arith {
    ($trait:ident, $method:ident, $op:expr) => {
        impl<R: Into<Expr>> std::ops::$trait<R> for Expr {
            type Output = Expr;
            fn $method(self, rhs: R) -> Expr {
                self.bin($op, rhs.into())
            }
        }
    };
}
arith!(Add, add, Op::Add);
arith!(Sub, sub, Op::Sub);
arith!(Mul, mul, Op::Mul);
arith!(Div, div, Op::Div);
arith!(Rem, rem, Op::Rem);
arith!(Shl, shl, Op::Shl);
arith!(Shr, shr, Op::Shr);
