//! An indenting writer for C: `write!` into it at the current depth, open and close
//! blocks, and every error is a `fmt::Result` (never dropped).
//!
//! ```
//! use bankfree_gen::render::writer::CWriter;
//! use std::fmt::Write;
//! let mut w = CWriter::default();
//! w.block(format_args!("if (x)"), |w| writeln!(w, "y = 1;"))?;
//! assert_eq!(w.into_string(), "if (x) {\n    y = 1;\n}\n");
//! # Ok::<(), std::fmt::Error>(())
//! ```

use crate::ir::expr::Expr;
use std::fmt::{self, Write};

/// Four spaces per level.
const INDENT: &str = "    ";

/// C source being written: text goes in at the current depth; empty lines stay
/// empty.
#[derive(Debug, Default)]
pub struct CWriter {
    out: String,
    depth: usize,
    at_line_start: bool,
}

impl CWriter {
    /// One level deeper.
    pub fn indent(&mut self) {
        self.depth += 1;
    }

    /// One level shallower.
    pub fn dedent(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// `head {`, then `body` one level deeper, then `}`.
    pub fn block(
        &mut self,
        head: fmt::Arguments<'_>,
        body: impl FnOnce(&mut Self) -> fmt::Result,
    ) -> fmt::Result {
        write!(self, "{head} ")?;
        self.scope(body)
    }

    /// `{`, then `body` one level deeper, then `}`: a scope of its own.
    pub fn scope(&mut self, body: impl FnOnce(&mut Self) -> fmt::Result) -> fmt::Result {
        writeln!(self, "{{")?;
        self.indent();
        body(self)?;
        self.dedent();
        writeln!(self, "}}")
    }

    /// `const type name = definition;` for a named value (nothing for others):
    /// `bf_index` for [`Expr::Let`], `unsigned` for [`Expr::Small`], `unsigned
    /// long long` for a 64-bit multiplier ([`Expr::magic64`]) in either build.
    pub fn decl(&mut self, index_type: &str, e: &Expr) -> fmt::Result {
        let (ty, name, def) = match e {
            Expr::Let(name, def) if matches!(**def, Expr::Magic64(_)) => {
                ("unsigned long long", name, def)
            }
            Expr::Let(name, def) => (index_type, name, def),
            Expr::Small(name, def) => ("unsigned", name, def),
            _ => return Ok(()),
        };
        writeln!(self, "const {ty} {name} = {};", def.c())
    }

    /// The text written.
    pub fn into_string(self) -> String {
        self.out
    }
}

impl Write for CWriter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for (i, line) in s.split('\n').enumerate() {
            if i > 0 {
                self.out.push('\n');
                self.at_line_start = true;
            }
            if line.is_empty() {
                continue;
            }
            if self.at_line_start || self.out.is_empty() {
                for _ in 0..self.depth {
                    self.out.push_str(INDENT);
                }
                self.at_line_start = false;
            }
            self.out.push_str(line);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_indented_once_and_empty_lines_stay_empty() {
        let mut w = CWriter::default();
        w.indent();
        write!(w, "a")
            .and_then(|()| write!(w, "b\n\nc\n"))
            .expect("writes");
        w.dedent();
        w.dedent();
        writeln!(w, "d").expect("writes");
        assert_eq!(w.into_string(), "    ab\n\n    c\nd\n");
    }
}
