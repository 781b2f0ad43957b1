//! An [`Expr`] flattened for repeated evaluation: the simulator evaluates each
//! index millions of times, and a flat list of steps over a register file is
//! several times faster than walking the tree.
//!
//! ```
//! use bankfree_gen::ir::expr::{Env, Expr, Var};
//! use bankfree_gen::ir::tape::Tape;
//! let e = Expr::var(Var::Ty) * 33 + Expr::var(Var::Tx).xor(5);
//! let tape = Tape::new(&e);
//! let mut env = Env::default();
//! env.set(Var::Tx, 3);
//! env.set(Var::Ty, 2);
//! assert_eq!(tape.eval(&env), e.eval(&env));
//! ```

use super::expr::{magic32, magic64, mul_hi64, shift32, Env, EvalError, Expr, Op, Var};
use super::guard::{Guard, Less};

/// An operand of a step.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Arg {
    Lit(i64),
    Var(Var),
    /// The result of an earlier step.
    Reg(usize),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Bin(Op),
    MulHi,
    MulHi64,
    Magic64,
    Magic32,
    Shift32,
    Ctz,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Step {
    kind: Kind,
    a: Arg,
    b: Arg,
}

/// Steps beyond this many are evaluated from the tree (no allocation per call).
const MAX_STEPS: usize = 96;

/// [`Expr`] as steps in evaluation order. [`Tape::eval`] returns exactly what
/// [`Expr::eval`] returns, errors included (the same operations in the same order).
#[derive(Clone, Debug, PartialEq)]
pub struct Tape {
    steps: Vec<Step>,
    out: Arg,
    /// The expression itself, for one too long to flatten.
    long: Option<Expr>,
}

impl Tape {
    /// Flattens `e`.
    pub fn new(e: &Expr) -> Tape {
        let mut steps = Vec::new();
        let out = flatten(e, &mut steps);
        let long = (steps.len() > MAX_STEPS).then(|| e.clone());
        Tape { steps, out, long }
    }

    /// Flattens `e` with every variable but [`Var::PER_THREAD`] bound to its value
    /// in `env` ([`Expr::bind`]): for evaluating under `env` with those changed.
    pub fn per_thread(e: &Expr, env: &Env) -> Tape {
        Tape::new(&e.bind(env, &Var::PER_THREAD))
    }

    /// Whether the tape reads no variable outside `vars`: then two equal tapes
    /// give equal values under any environments that agree on `vars`.
    pub fn reads_only(&self, vars: &[Var]) -> bool {
        let inside = |a: &Arg| !matches!(a, Arg::Var(v) if !vars.contains(v));
        self.long.is_none()
            && inside(&self.out)
            && self.steps.iter().all(|s| inside(&s.a) && inside(&s.b))
    }

    /// Evaluates as [`Expr::eval`] does.
    pub fn eval(&self, env: &Env) -> Result<i64, EvalError> {
        if let Some(e) = &self.long {
            return e.eval(env);
        }
        // Most bound indices are short: a small register file is cheaper to clear.
        if self.steps.len() <= 16 {
            self.run::<16>(env)
        } else {
            self.run::<MAX_STEPS>(env)
        }
    }

    /// The steps over a register file of `N` values (`N` at least the steps).
    fn run<const N: usize>(&self, env: &Env) -> Result<i64, EvalError> {
        let mut regs = [0i64; N];
        let read = |a: Arg, regs: &[i64; N]| -> Result<i64, EvalError> {
            match a {
                Arg::Reg(r) => Ok(regs[r]),
                Arg::Lit(v) if env.index32 => Ok(v.rem_euclid(1 << 32)),
                Arg::Lit(v) => Ok(v),
                Arg::Var(v) => {
                    let x = env.get(v);
                    if env.index32 && u32::try_from(x).is_err() {
                        return Err(EvalError::NotU32 { value: x });
                    }
                    Ok(x)
                }
            }
        };
        for (i, s) in self.steps.iter().enumerate() {
            let a = read(s.a, &regs)?;
            regs[i] = match s.kind {
                Kind::Ctz => match u32::try_from(a) {
                    Ok(u) if u > 0 => i64::from(u.trailing_zeros()),
                    _ => return Err(EvalError::Ctz { value: a }),
                },
                Kind::Bin(op) => {
                    let b = read(s.b, &regs)?;
                    if env.index32 {
                        op.apply32(a, b)?
                    } else {
                        op.apply(a, b)?
                    }
                }
                Kind::MulHi => {
                    let b = read(s.b, &regs)?;
                    let u32_of =
                        |x: i64| u32::try_from(x).map_err(|_| EvalError::NotU32 { value: x });
                    let (a, b) = (u32_of(a)?, u32_of(b)?);
                    ((u64::from(a) * u64::from(b)) >> 32) as i64
                }
                Kind::MulHi64 => mul_hi64(a, read(s.b, &regs)?)?,
                Kind::Magic64 => magic64(a)?,
                Kind::Magic32 => magic32(a)?,
                Kind::Shift32 => shift32(a)?,
            };
        }
        read(self.out, &regs)
    }
}

/// Appends the steps of `e` (operands first, left to right) and returns its result.
fn flatten(e: &Expr, steps: &mut Vec<Step>) -> Arg {
    let push = |steps: &mut Vec<Step>, kind, a, b| {
        steps.push(Step { kind, a, b });
        Arg::Reg(steps.len() - 1)
    };
    match e {
        Expr::Lit(v) => Arg::Lit(*v),
        Expr::Var(v) => Arg::Var(*v),
        Expr::Let(_, d) | Expr::Small(_, d) => flatten(d, steps),
        Expr::Bin(op, a, b) => {
            let (a, b) = (flatten(a, steps), flatten(b, steps));
            push(steps, Kind::Bin(*op), a, b)
        }
        Expr::MulHi(a, b) => {
            let (a, b) = (flatten(a, steps), flatten(b, steps));
            push(steps, Kind::MulHi, a, b)
        }
        Expr::MulHi64(a, b) => {
            let (a, b) = (flatten(a, steps), flatten(b, steps));
            push(steps, Kind::MulHi64, a, b)
        }
        Expr::Magic64(a) | Expr::Magic32(a) | Expr::Shift32(a) | Expr::Ctz(a) => {
            let kind = match e {
                Expr::Magic64(_) => Kind::Magic64,
                Expr::Magic32(_) => Kind::Magic32,
                Expr::Shift32(_) => Kind::Shift32,
                _ => Kind::Ctz,
            };
            let a = flatten(a, steps);
            push(steps, kind, a, Arg::Lit(0))
        }
    }
}

/// A [`Guard`] as tapes: every check's two sides.
#[derive(Clone, Debug, PartialEq)]
pub struct GuardTape(Vec<(Tape, Tape)>);

impl GuardTape {
    /// Flattens every check of `g`.
    pub fn new(g: &Guard) -> GuardTape {
        GuardTape(
            g.0.iter()
                .map(|Less(a, b)| (Tape::new(a), Tape::new(b)))
                .collect(),
        )
    }

    /// [`Tape::per_thread`] of every check.
    pub fn per_thread(g: &Guard, env: &Env) -> GuardTape {
        GuardTape::new(&g.bind(env, &Var::PER_THREAD))
    }

    /// [`Tape::reads_only`] of every check.
    pub fn reads_only(&self, vars: &[Var]) -> bool {
        self.0
            .iter()
            .all(|(a, b)| a.reads_only(vars) && b.reads_only(vars))
    }

    /// Evaluates as [`Guard::eval`] does.
    pub fn eval(&self, env: &Env) -> Result<bool, EvalError> {
        for (a, b) in &self.0 {
            if a.eval(env)? >= b.eval(env)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: Var) -> Expr {
        Expr::var(x)
    }

    #[test]
    fn tapes_evaluate_as_trees_in_both_builds() {
        let magic = Expr::magic("m", v(Var::Cols));
        let exprs = [
            Expr::named(
                "row",
                Expr::quot(v(Var::Tile), &magic) * v(Var::SrcLd) + (v(Var::Ty) + v(Var::J) * 8),
            ) * 4
                + v(Var::Tx).xor(v(Var::Ty))
                + Expr::ctz(v(Var::Rows)) * v(Var::K),
            // Wraps in the 32-bit build, overflows in the 64-bit one.
            v(Var::SrcLd) * v(Var::SrcLd) * v(Var::SrcLd) - v(Var::Tx),
            v(Var::Rows) / (v(Var::Tx) - v(Var::Tx)),
            Expr::ctz(v(Var::Tx) - v(Var::Tx)),
            v(Var::Tx) << v(Var::Cols),
            Expr::Lit(-3) + v(Var::Ty),
            Expr::Lit(7),
            v(Var::Tile),
        ];
        for e in &exprs {
            let tape = Tape::new(e);
            for index32 in [false, true] {
                for (tile, cols, ld, tx) in [
                    (77, 13, 4099, 5),
                    (0, 40, 1 << 22, 31),
                    (1 << 33, 3, 7, 0),
                    (5, 2, -1, 2),
                ] {
                    let mut env = Env::default();
                    env.index32 = index32;
                    env.set(Var::Tile, tile);
                    env.set(Var::Cols, cols);
                    env.set(Var::SrcLd, ld);
                    env.set(Var::Rows, 24);
                    env.set(Var::Tx, tx);
                    env.set(Var::Ty, 3);
                    assert_eq!(tape.eval(&env), e.eval(&env), "{} at {env:?}", e.c());
                }
            }
        }
    }

    #[test]
    fn long_expressions_fall_back_to_the_tree() {
        let mut env = Env::default();
        env.set(Var::Tx, 1);
        env.set(Var::Ty, 2);
        // 30 steps (the larger register file) and 120 (the tree).
        for (n, long) in [(10, false), (40, true)] {
            let mut e = v(Var::Tx);
            for i in 0..n {
                e = e * 3 + v(Var::Ty).xor(i);
            }
            let tape = Tape::new(&e);
            assert_eq!(tape.long.is_some(), long);
            assert_eq!(tape.eval(&env), e.eval(&env));
        }
        let g = Guard(vec![
            Less(v(Var::Tx), Expr::Lit(2)),
            Less(v(Var::Ty), Expr::Lit(2)),
        ]);
        assert_eq!(GuardTape::new(&g).eval(&env), g.eval(&env));
    }
}
