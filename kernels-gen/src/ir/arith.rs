//! The arithmetic under [`Expr`](crate::ir::expr::Expr): its binary operators in
//! checked 64-bit and in the 32-bit build's wrapping arithmetic ([`Op`]), the
//! high-half multiplies and multipliers its quotients use, and why an evaluation
//! fails ([`EvalError`]).

/// A binary operator, with C's meaning on non-negative integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

impl Op {
    /// C precedence (higher binds tighter).
    pub fn precedence(self) -> u8 {
        match self {
            Op::Mul | Op::Div | Op::Rem => 10,
            Op::Add | Op::Sub => 9,
            Op::Shl | Op::Shr => 8,
            Op::And => 7,
            Op::Xor => 6,
            Op::Or => 5,
        }
    }

    /// The C token.
    pub fn token(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::Rem => "%",
            Op::And => "&",
            Op::Or => "|",
            Op::Xor => "^",
            Op::Shl => "<<",
            Op::Shr => ">>",
        }
    }

    /// Whether this is `& | ^ << >>`.
    pub fn bitwise(self) -> bool {
        matches!(self, Op::And | Op::Or | Op::Xor | Op::Shl | Op::Shr)
    }

    /// Whether `a op (b op c) == (a op b) op c`.
    pub fn associative(self) -> bool {
        matches!(self, Op::Add | Op::Mul | Op::And | Op::Or | Op::Xor)
    }

    /// Applies the operator as 32-bit unsigned C arithmetic does, to two values
    /// below 2^32: `+ - * <<` wrap modulo 2^32; shifts of 32 or more (undefined in
    /// C) and division by zero are errors.
    pub fn apply32(self, a: i64, b: i64) -> Result<i64, EvalError> {
        const M: u64 = 0xFFFF_FFFF;
        let (x, y) = (a as u64 & M, b as u64 & M);
        let r = match self {
            Op::Add => x.wrapping_add(y),
            Op::Sub => x.wrapping_sub(y),
            Op::Mul => x.wrapping_mul(y),
            Op::Div | Op::Rem if y == 0 => return Err(EvalError::DivisionByZero),
            Op::Div => x / y,
            Op::Rem => x % y,
            Op::And => x & y,
            Op::Or => x | y,
            Op::Xor => x ^ y,
            Op::Shl | Op::Shr if y >= 32 => return Err(EvalError::BadShift { amount: b }),
            Op::Shl => x << y,
            Op::Shr => x >> y,
        };
        Ok((r & M) as i64)
    }

    /// Applies the operator with overflow, division and shift checks.
    pub fn apply(self, a: i64, b: i64) -> Result<i64, EvalError> {
        let r = match self {
            Op::Add => a.checked_add(b),
            Op::Sub => a.checked_sub(b),
            Op::Mul => a.checked_mul(b),
            Op::Div | Op::Rem if b == 0 => return Err(EvalError::DivisionByZero),
            Op::Div => a.checked_div(b),
            Op::Rem => a.checked_rem(b),
            Op::And => Some(a & b),
            Op::Or => Some(a | b),
            Op::Xor => Some(a ^ b),
            Op::Shl | Op::Shr if !(0..63).contains(&b) => {
                return Err(EvalError::BadShift { amount: b })
            }
            Op::Shl => a.checked_mul(1i64 << b),
            Op::Shr => Some(a >> b),
        };
        r.ok_or(EvalError::Overflow {
            op: self.token(),
            a,
            b,
        })
    }
}

/// Why an expression could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    #[error("integer overflow in `{a} {op} {b}` (values must fit in a signed 64-bit integer)")]
    Overflow { op: &'static str, a: i64, b: i64 },
    #[error("division or remainder by zero")]
    DivisionByZero,
    #[error("shift by {amount}: shift amounts must be 0 to 62")]
    BadShift { amount: i64 },
    #[error(
        "{value} does not fit in 32 bits (`__umulhi` operands and the 32-bit build's values must)"
    )]
    NotU32 { value: i64 },
    #[error("trailing zeros of {value}: the value must be 1 to 2^32 - 1")]
    Ctz { value: i64 },
    #[error("`__umul64hi` of {value}: its operand must not be negative")]
    Negative { value: i64 },
    #[error("64-bit division multiplier of {value}: the divisor must be 2 or more")]
    Magic64 { value: i64 },
    #[error("exact 32-bit division by {value}: the divisor must be 1 to 2^31")]
    Divisor { value: i64 },
}

/// `__umul64hi(a, b)` of a non-negative `a` and a multiplier `b` read as the
/// 64-bit unsigned value its bits hold ([`magic64`]).
pub(crate) fn mul_hi64(a: i64, b: i64) -> Result<i64, EvalError> {
    let a = u64::try_from(a).map_err(|_| EvalError::Negative { value: a })?;
    Ok(((u128::from(a) * u128::from(b as u64)) >> 64) as i64)
}

/// `ceil(2^64 / d)` for `d >= 2`, as the bits of a 64-bit unsigned value (2^63,
/// for `d = 2`, reads as a negative `i64`; only [`mul_hi64`] consumes it).
pub(crate) fn magic64(d: i64) -> Result<i64, EvalError> {
    match u64::try_from(d) {
        Ok(d) if d >= 2 => Ok((u64::MAX / d + 1) as i64),
        _ => Err(EvalError::Magic64 { value: d }),
    }
}

/// `ceil(log2(d))` for a divisor `d` from 1 to 2^31
/// ([`Expr::Shift32`](crate::ir::expr::Expr::Shift32)).
pub(crate) fn shift32(d: i64) -> Result<i64, EvalError> {
    match u32::try_from(d) {
        Ok(d) if (1..=1 << 31).contains(&d) => Ok(i64::from(32 - (d - 1).leading_zeros())),
        _ => Err(EvalError::Divisor { value: d }),
    }
}

/// The multiplier of [`Expr::quot_exact`](crate::ir::expr::Expr::quot_exact)
/// for a divisor `d` from 1 to 2^31
/// ([`Expr::Magic32`](crate::ir::expr::Expr::Magic32)): `floor(2^32 * (2^s -
/// d) / d) + 1`, below 2^32.
pub(crate) fn magic32(d: i64) -> Result<i64, EvalError> {
    let s = shift32(d)?;
    let d = d as u64;
    Ok(((1u64 << 32) * ((1u64 << s) - d) / d + 1) as i64)
}
