//! Shared-memory layouts: how a tile's (row, col) maps to a shared index, unpadded,
//! padded, XOR-swizzled (CuTe's `Swizzle<B,M,S>`) or rotated.
//!
//! ```
//! use bankfree_gen::kernel::layout::{Layout, Swizzle};
//! use bankfree_gen::ir::expr::{Expr, Var};
//! let xor = Layout::Xor(Swizzle { b: 5, m: 0, s: 5 });
//! let (row, col) = (Expr::var(Var::Ty), Expr::var(Var::Tx));
//! assert_eq!(xor.shared_index(32, row, col).c(), "ty * 32 + (tx ^ (ty & 31))");
//! assert_eq!(Layout::Pad(1).row_stride(32), 33);
//! ```

use crate::ir::expr::Expr;
use serde::Serialize;
use std::fmt;

/// Largest `pad(n)`, in elements.
pub const MAX_PAD: u32 = 64;

/// CuTe's `Swizzle<B, M, S>` on a tile's element offsets `o = row * tile + col`:
/// `o ^ ((o >> S) & (((1 << B) - 1) << M))`, i.e. bits `[M, M+B)` of the column
/// are XORed with bits `[M+S-log2(tile), ...)` of the row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Swizzle {
    pub b: u32,
    pub m: u32,
    pub s: u32,
}

impl Swizzle {
    /// Unit `q` of a flat run under this swizzle with its `B` bits cut at run
    /// time to `mask` (`((1 << B) - 1)` or less): `q ^ (((q >> (M + S)) & mask)
    /// << M)`. The tall kernels of 1- and 2-byte elements and the `thin`
    /// kernels cut it to the width's lowest set bit less one, which keeps every
    /// unit in its row of `2^S` words and tells apart the lanes that read one
    /// offset of blocks the width apart.
    pub fn flat(self, q: Expr, mask: Expr) -> Expr {
        let key = (q.clone() >> i64::from(self.m + self.s)).and(mask);
        q.xor(key << i64::from(self.m))
    }
}

impl fmt::Display for Swizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Swizzle<{},{},{}>", self.b, self.m, self.s)
    }
}

/// A resolved shared-memory layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Layout {
    /// No shared memory (`naive`).
    Direct,
    /// `tile[row * (tile + n) + col]`; `Pad(0)` is `none`.
    Pad(u32),
    /// `tile[row * tile + swizzled(col)]`.
    Xor(Swizzle),
    /// `tile[row * tile + (col + row) % tile]`.
    Rotate,
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Layout::Direct => f.write_str("no shared memory"),
            Layout::Pad(0) => f.write_str("unpadded"),
            Layout::Pad(n) => write!(f, "padded by {n}"),
            Layout::Xor(s) => write!(f, "XOR {s}"),
            Layout::Rotate => f.write_str("rotated (col + row) % tile"),
        }
    }
}

impl Layout {
    /// Units per tile row in shared memory.
    pub fn row_stride(self, tile: u32) -> u32 {
        match self {
            Layout::Pad(n) => tile + n,
            _ => tile,
        }
    }

    /// The shared-tile index of (row, col), before the word plane.
    pub fn shared_index(self, tile: u32, row: Expr, col: Expr) -> Expr {
        let t = i64::from(tile);
        match self {
            Layout::Direct => col,
            Layout::Pad(n) => row * (t + i64::from(n)) + col,
            Layout::Xor(z) => {
                let log2 = tile.trailing_zeros();
                let shift = i64::from(z.m + z.s - log2);
                let mask = (1i64 << z.b) - 1;
                let key = (row.clone() >> shift).and(mask) << i64::from(z.m);
                row * t + col.xor(key)
            }
            Layout::Rotate => row.clone() * t + (col + row) % t,
        }
    }
}

/// XOR swizzles tried for `swizzle(xor)`, simplest first: `col ^ row` over as many
/// bits as the tile has (at most 5, one per bank), then swizzles that keep groups of
/// `2^M` columns together, then ones that use higher row bits.
pub fn swizzle_candidates(tile: u32) -> Vec<Swizzle> {
    let log2 = tile.trailing_zeros();
    let mut out = Vec::new();
    for extra in 0..=2 {
        for m in 0..=3u32.min(log2 - 1) {
            for b in (1..=(log2 - m).min(5)).rev() {
                out.push(Swizzle {
                    b,
                    m,
                    s: log2 - m + extra,
                });
            }
        }
    }
    out
}
