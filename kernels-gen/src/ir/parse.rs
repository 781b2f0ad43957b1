//! Parses access patterns typed by people: `lane*33`, `(lane&1)*16 + lane/2`.
//!
//! The grammar is C's integer expressions over the one variable `lane`: decimal or
//! `0x` hexadecimal literals, unary `-`, parentheses and the binary operators
//! `* / % + - << >> & ^ |` with C's precedence. The result is an [`Expr`], the same
//! type the kernels are built from, so a pattern typed here is analyzed exactly
//! like a generated access.
//!
//! ```
//! use bankfree_gen::ir::{expr::{Env, Var}, parse::parse_index};
//! let e = parse_index("(lane&1)*16 + lane/2").unwrap();
//! let mut env = Env::default();
//! env.set(Var::Lane, 3);
//! assert_eq!(e.eval(&env).unwrap(), 17);
//! ```

use crate::ir::expr::{Expr, Op, Var};

/// Longest accepted expression, in bytes.
pub const MAX_LEN: usize = 1000;
/// Deepest accepted nesting of parentheses and unary minus.
pub const MAX_DEPTH: usize = 64;

/// Why a pattern did not parse; `at` is a byte offset into the input.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("the expression is empty: give each lane's element index, for example `lane*33`")]
    Empty,
    #[error("the expression is {len} bytes long; at most {MAX_LEN} are accepted")]
    TooLong { len: usize },
    #[error("at byte {at}: unexpected `{found}`; expected {expected}")]
    Unexpected {
        at: usize,
        found: String,
        expected: &'static str,
    },
    #[error("at byte {at}: unknown name `{name}`; the only variable is `lane` (0 to 31)")]
    UnknownName { at: usize, name: String },
    #[error("at byte {at}: the number `{text}` does not fit in a signed 64-bit integer")]
    BadNumber { at: usize, text: String },
    #[error("at byte {at}: nesting deeper than {MAX_DEPTH} levels")]
    TooDeep { at: usize },
    #[error("at byte {at}: unbalanced parentheses: `(` is never closed")]
    Unclosed { at: usize },
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(i64),
    Lane,
    Op(Op),
    Minus,
    Open,
    Close,
}

fn lex(src: &str) -> Result<Vec<(usize, Tok)>, ParseError> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
                i += 1;
            }
            let text = &src[start..i];
            let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
                Some(hex) => i64::from_str_radix(hex, 16),
                None => text.parse::<i64>(),
            };
            let n = parsed.map_err(|_| ParseError::BadNumber {
                at: start,
                text: text.into(),
            })?;
            out.push((start, Tok::Num(n)));
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let name = &src[start..i];
            if name != "lane" {
                return Err(ParseError::UnknownName {
                    at: start,
                    name: name.into(),
                });
            }
            out.push((start, Tok::Lane));
            continue;
        }
        let two = src.get(i..i + 2);
        let (tok, len) = match (c, two) {
            (_, Some("<<")) => (Tok::Op(Op::Shl), 2),
            (_, Some(">>")) => (Tok::Op(Op::Shr), 2),
            (b'+', _) => (Tok::Op(Op::Add), 1),
            (b'-', _) => (Tok::Minus, 1),
            (b'*', _) => (Tok::Op(Op::Mul), 1),
            (b'/', _) => (Tok::Op(Op::Div), 1),
            (b'%', _) => (Tok::Op(Op::Rem), 1),
            (b'&', _) => (Tok::Op(Op::And), 1),
            (b'|', _) => (Tok::Op(Op::Or), 1),
            (b'^', _) => (Tok::Op(Op::Xor), 1),
            (b'(', _) => (Tok::Open, 1),
            (b')', _) => (Tok::Close, 1),
            _ => {
                let ch = src[i..].chars().next().unwrap_or('?');
                return Err(ParseError::Unexpected {
                    at: start,
                    found: ch.to_string(),
                    expected: "a number, `lane`, an operator or a parenthesis",
                });
            }
        };
        out.push((start, tok));
        i += len;
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(usize, Tok)>,
    pos: usize,
    end: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(_, t)| t)
    }

    fn at(&self) -> usize {
        self.toks.get(self.pos).map_or(self.end, |(a, _)| *a)
    }

    fn found(&self) -> String {
        match self.peek() {
            None => "end of input".into(),
            Some(Tok::Num(n)) => n.to_string(),
            Some(Tok::Lane) => "lane".into(),
            Some(Tok::Op(op)) => op.token().into(),
            Some(Tok::Minus) => "-".into(),
            Some(Tok::Open) => "(".into(),
            Some(Tok::Close) => ")".into(),
        }
    }

    fn binop(&self) -> Option<Op> {
        match self.peek()? {
            Tok::Op(op) => Some(*op),
            Tok::Minus => Some(Op::Sub),
            _ => None,
        }
    }

    /// Precedence climbing: parses operators binding at least as tightly as `min`.
    fn expr(&mut self, min: u8, depth: usize) -> Result<Expr, ParseError> {
        let mut lhs = self.unary(depth)?;
        while let Some(op) = self.binop() {
            let p = op.precedence();
            if p < min {
                break;
            }
            self.pos += 1;
            let rhs = self.expr(p + 1, depth + 1)?;
            lhs = Expr::Bin(op, lhs.into(), rhs.into());
        }
        Ok(lhs)
    }

    fn unary(&mut self, depth: usize) -> Result<Expr, ParseError> {
        if depth > MAX_DEPTH {
            return Err(ParseError::TooDeep { at: self.at() });
        }
        let at = self.at();
        match self.peek().cloned() {
            Some(Tok::Num(n)) => {
                self.pos += 1;
                Ok(Expr::Lit(n))
            }
            Some(Tok::Lane) => {
                self.pos += 1;
                Ok(Expr::Var(Var::Lane))
            }
            Some(Tok::Minus) => {
                self.pos += 1;
                let e = self.unary(depth + 1)?;
                Ok(Expr::Bin(Op::Sub, Expr::Lit(0).into(), e.into()))
            }
            Some(Tok::Open) => {
                self.pos += 1;
                let e = self.expr(0, depth + 1)?;
                if self.peek() != Some(&Tok::Close) {
                    return match self.peek() {
                        None => Err(ParseError::Unclosed { at }),
                        Some(_) => Err(ParseError::Unexpected {
                            at: self.at(),
                            found: self.found(),
                            expected: "an operator or `)`",
                        }),
                    };
                }
                self.pos += 1;
                Ok(e)
            }
            _ => Err(ParseError::Unexpected {
                at,
                found: self.found(),
                expected: "a number, `lane` or `(`",
            }),
        }
    }
}

/// Parses an element-index expression over `lane`.
pub fn parse_index(src: &str) -> Result<Expr, ParseError> {
    if src.len() > MAX_LEN {
        return Err(ParseError::TooLong { len: src.len() });
    }
    let toks = lex(src)?;
    if toks.is_empty() {
        return Err(ParseError::Empty);
    }
    let mut p = Parser {
        toks,
        pos: 0,
        end: src.len(),
    };
    let e = p.expr(0, 0)?;
    if p.pos != p.toks.len() {
        return Err(ParseError::Unexpected {
            at: p.at(),
            found: p.found(),
            expected: "an operator or the end of the expression",
        });
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::expr::Env;
    use proptest::prelude::*;

    fn eval(src: &str, lane: i64) -> i64 {
        let mut env = Env::default();
        env.set(Var::Lane, lane);
        parse_index(src)
            .map(|e| e.eval(&env).unwrap_or(i64::MIN))
            .unwrap_or(i64::MAX)
    }

    #[test]
    fn c_precedence() {
        assert_eq!(eval("lane*33", 2), 66);
        assert_eq!(eval("(lane&1)*16 + lane/2", 5), 18);
        assert_eq!(eval("1 + 2 * 3", 0), 7);
        assert_eq!(eval("lane ^ 1 << 2", 1), 1 ^ 4);
        assert_eq!(eval("10 - 3 - 2", 0), 5);
        assert_eq!(eval("lane | 2 & 1", 4), 4);
        assert_eq!(eval("-lane + 40", 8), 32);
        assert_eq!(eval("0x20 * lane", 2), 64);
        assert_eq!(eval("lane % 4 >> 1", 3), 1);
    }

    #[test]
    fn errors_name_the_problem() {
        assert_eq!(parse_index(""), Err(ParseError::Empty));
        assert!(matches!(
            parse_index("x*2"),
            Err(ParseError::UnknownName { at: 0, .. })
        ));
        assert!(matches!(
            parse_index("(lane"),
            Err(ParseError::Unclosed { at: 0 })
        ));
        assert!(matches!(
            parse_index("lane +"),
            Err(ParseError::Unexpected { at: 6, .. })
        ));
        assert!(matches!(
            parse_index("99999999999999999999"),
            Err(ParseError::BadNumber { .. })
        ));
        assert!(matches!(
            parse_index(&"(".repeat(200)),
            Err(ParseError::TooDeep { .. })
        ));
        assert!(matches!(
            parse_index("lane $ 2"),
            Err(ParseError::Unexpected { .. })
        ));
        assert!(matches!(
            parse_index("lane 2"),
            Err(ParseError::Unexpected { .. })
        ));
    }

    proptest! {
        #[test]
        fn never_panics_on_any_text(s in "\\PC{0,80}") {
            let _ = parse_index(&s).map(|e| e.eval(&Env::default()));
        }

        #[test]
        fn never_panics_on_expression_soup(s in "[-+*/%&|^<>() 0-9lanex]{0,200}") {
            if let Ok(e) = parse_index(&s) {
                for lane in 0..32 {
                    let mut env = Env::default();
                    env.set(Var::Lane, lane);
                    let _ = e.eval(&env);
                }
            }
        }

        #[test]
        fn rendering_round_trips(s in "[-+*/%&|^() 0-9lane]{1,60}") {
            if let Ok(e) = parse_index(&s) {
                let again = parse_index(&e.c()).expect("rendered C parses");
                for lane in 0..32 {
                    let mut env = Env::default();
                    env.set(Var::Lane, lane);
                    prop_assert_eq!(e.eval(&env), again.eval(&env));
                }
            }
        }
    }
}
