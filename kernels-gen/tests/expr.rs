//! The index model's expressions: rendering with minimal parentheses, folding,
//! checked evaluation, the exact quotients by magic multipliers and named lets.

use bankfree_gen::ir::expr::*;
use std::sync::Arc;

#[test]
fn a_uniform_shift_is_a_sum_with_a_fixed_step() {
    let (k, tx, ld) = (v(Var::K), v(Var::Tx), v(Var::SrcLd));
    let fixed = [Var::Tx];
    // tx * 33 + k * 1056 and its named and shifted forms shift uniformly.
    assert!((tx.clone() * 33 + k.clone() * 1056).shifts_uniformly(Var::K, &fixed));
    assert!((Expr::named("plane", k.clone() * ld.clone()) + tx.clone())
        .shifts_uniformly(Var::K, &fixed));
    assert!(((k.clone() << 5) + tx.clone()).shifts_uniformly(Var::K, &fixed));
    assert!(tx.clone().shifts_uniformly(Var::K, &fixed)); // no k at all
                                                          // A step that depends on the lane, or k under a non-linear operator, does not.
    assert!(!(k.clone() * tx.clone()).shifts_uniformly(Var::K, &fixed));
    assert!(!(tx.clone().xor(k.clone())).shifts_uniformly(Var::K, &fixed));
    assert!(!((k.clone() + tx.clone()) % 32).shifts_uniformly(Var::K, &fixed));
    assert!(!(k.clone() * k).shifts_uniformly(Var::K, &fixed));
}

fn v(x: Var) -> Expr {
    Expr::var(x)
}

#[test]
fn renders_with_minimal_parentheses() {
    let e = (v(Var::Tx) + 1) * 33;
    assert_eq!(e.c(), "(tx + 1) * 33");
    let e = v(Var::Tx) - (v(Var::Ty) - 1);
    assert_eq!(e.c(), "tx - (ty - 1)");
    let e = v(Var::Tx) * (v(Var::Ty) / 2);
    assert_eq!(e.c(), "tx * (ty / 2)");
    let e = (v(Var::Tx) + v(Var::Ty)) + (v(Var::J) + 1);
    assert_eq!(e.c(), "tx + ty + j + 1");
    let e = v(Var::Tx) * 32 + v(Var::Ty).xor(v(Var::Tx));
    assert_eq!(e.c(), "tx * 32 + (ty ^ tx)");
    let e = v(Var::Tx).xor(v(Var::Ty).and(7) << 2);
    assert_eq!(e.c(), "tx ^ ((ty & 7) << 2)");
    // `^` binds looser than `<<` in C: the render must say what eval computes.
    let mut env = Env::default();
    env.set(Var::Tx, 5);
    env.set(Var::Ty, 3);
    assert_eq!(e.eval(&env), Ok(5 ^ (3 << 2)));
}

#[test]
fn folds_constants_and_identities() {
    let zero = Expr::Lit(0);
    let one = Expr::Lit(1);
    assert_eq!((v(Var::J) * zero + v(Var::Tx)).c(), "tx");
    assert_eq!((Expr::Lit(3) * 4 + 1).c(), "13");
    assert_eq!((v(Var::Tx) * one.clone() % one).c(), "0");
}

#[test]
fn checked_evaluation() {
    let env = Env::default();
    let e = Expr::Lit(i64::MAX) + 1;
    assert!(matches!(e.eval(&env), Err(EvalError::Overflow { .. })));
    let e = Expr::var(Var::Tx) / 0;
    assert_eq!(e.eval(&env), Err(EvalError::DivisionByZero));
    let e = Expr::var(Var::Tx) << 64;
    assert_eq!(e.eval(&env), Err(EvalError::BadShift { amount: 64 }));
}

#[test]
fn quotients_by_magic_multipliers_are_exact_below_the_bound() {
    for d in [2i64, 3, 7, 31, 32, 96, 992, 1344, 4096] {
        let m = Expr::magic("m", Expr::Lit(d));
        let q = Expr::quot(Expr::var(Var::Tx), &m);
        assert_eq!(q.c(), "__umulhi(tx, m)");

        let mut env = Env::default();
        // Every n below 2^32 / d is exact; spot-check the ends and a stride.
        let top = (1i64 << 32) / d - 1;
        for n in (0..5000).chain((0..top).step_by(7919)).chain([top]) {
            env.set(Var::Tx, n);
            assert_eq!(q.eval(&env), Ok(n / d), "{n} / {d}");
        }
    }
    let z = Expr::var(Var::Tx) >> Expr::ctz(Expr::var(Var::Tx));
    assert_eq!(z.c(), "tx >> (__ffs(tx) - 1)");
    let mut env = Env::default();
    for (x, odd) in [(1, 1), (12, 3), (32, 1), (24, 3), (7, 7)] {
        env.set(Var::Tx, x);
        assert_eq!(z.eval(&env), Ok(odd));
    }
    env.set(Var::Tx, 0);
    assert_eq!(z.eval(&env), Err(EvalError::Ctz { value: 0 }));
    // In C the multiplier is 32-bit arithmetic: the literal is `unsigned`.
    let m = Expr::magic("m", Expr::var(Var::Ty));
    assert_eq!(m.definition().c(), "4294967295u / ty + 1");
    // A divisor of 1 has no 32-bit multiplier: evaluation says so.
    let q = Expr::quot(Expr::var(Var::Tx), &Expr::magic("m", Expr::Lit(1)));
    assert_eq!(
        q.eval(&Env::default()),
        Err(EvalError::NotU32 { value: 1 << 32 })
    );
}

#[test]
fn exact_quotients_hold_for_every_numerator_below_2_31() {
    let m = Expr::magic_exact("m", Expr::var(Var::Ty));
    let q = Expr::divide(Expr::var(Var::Tx), &m);
    assert_eq!(q.c(), "(__umulhi(tx, m) + tx) >> (32 - __clz(ty - 1))");
    // A compound divisor stays whole in the multiplier's C.
    let sum = Expr::Magic32(Arc::new(Expr::var(Var::Tx) + Expr::var(Var::Ty)));
    assert_eq!(
        sum.c(),
        "(unsigned)(0x100000000ull * ((1ull << (32 - __clz((tx + ty) - 1))) - (tx + ty)) / (tx + ty) + 1)"
    );
    // Divisors where `quot` fails first (large ones, powers of two and their
    // neighbours), numerators at the ends of their range and the multiples'
    // edges, in both builds' arithmetic.
    let top = (1i64 << 31) - 1;
    for d in [
        1i64,
        2,
        3,
        5,
        7,
        641,
        65537,
        149130,
        6700417,
        1 << 20,
        (1 << 20) + 1,
    ]
    .into_iter()
    .chain([(1 << 30) - 1, 1 << 30, top, 1 << 31])
    {
        let mut env = Env::default();
        env.set(Var::Ty, d);
        let edges = (1..64).flat_map(|k| {
            let x = top / 64 * k / d * d;
            [x - 1, x, x + 1]
        });
        for n in (0..300).chain(edges).chain(top - 300..=top) {
            env.set(Var::Tx, n.max(0));
            for index32 in [false, true] {
                env.index32 = index32;
                assert_eq!(q.eval(&env), Ok(n.max(0) / d), "{n} / {d}");
            }
        }
    }
    let mut env = Env::default();
    env.set(Var::Ty, 0);
    assert_eq!(m.eval(&env), Err(EvalError::Divisor { value: 0 }));
}

#[test]
fn lets_render_as_names_and_evaluate_as_definitions() {
    let r = Expr::named("row", v(Var::Ty) + 8);
    let e = r * 33;
    assert_eq!(e.c(), "row * 33");
    let mut env = Env::default();
    env.set(Var::Ty, 1);
    assert_eq!(e.eval(&env), Ok(297));
}
