//! The kernel as data: every address it uses, built once from a spec.
//!
//! A [`Kernel`] is a list of [`Move`]s separated by `__syncthreads()`: the shared
//! strategies have two (global source -> shared tile, shared tile -> global
//! destination), `naive` has one (source -> destination). Each move is a guard and
//! two [`Place`]s whose indices are [`Expr`]s. The emitter prints them, the
//! simulator runs them and the analyzer evaluates their shared indices for every
//! lane; none of them has an address formula of its own.
//!
//! The loops around the moves are fixed and shared by all three: a grid-stride
//! loop over batches (`blockIdx.y`), a grid-stride loop over tiles (`blockIdx.x`,
//! so there is no 65,535 limit on any side), the unrolled loop `j` over the
//! `tile / block_rows` rows each thread moves, and for word-array elements the
//! loop `k` over their 32-bit words.
//!
//! ```
//! use bankfree_gen::{kernel::{Kernel, Layout}, spec::{Strategy, TransposeSpec}};
//! let k = Kernel::build(TransposeSpec::new(32, 4, Strategy::Pad(None)).unwrap()).unwrap();
//! assert_eq!(k.layout, Layout::Pad(1)); // computed by the analyzer, not assumed
//! assert_eq!(k.shared_bytes(), 32 * 33 * 4);
//! ```

use crate::analysis::{self, Report};
use crate::bank::Model;
use crate::expr::{Expr, Guard, Less};
use crate::form::{narrow_moves, Form};
use crate::spec::{SpecError, Strategy, TransposeSpec, Unit, MAX_PAD};
use crate::tile::tile_moves;
use serde::Serialize;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, OnceLock};

/// Largest shared memory one block may use on any supported GPU (sm_90: 227 KB).
pub const MAX_SHARED_BYTES: u64 = 227 * 1024;
/// Static `__shared__` arrays are limited to 48 KB; larger tiles use dynamic shared
/// memory and need the launcher to raise the function's limit.
pub const STATIC_SHARED_LIMIT: u64 = 48 * 1024;

/// CuTe's `Swizzle<B, M, S>` on a tile's element offsets `o = row * tile + col`:
/// `o ^ ((o >> S) & (((1 << B) - 1) << M))`, i.e. bits `[M, M+B)` of the column
/// are XORed with bits `[M+S-log2(tile), ...)` of the row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Swizzle {
    pub b: u32,
    pub m: u32,
    pub s: u32,
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

/// Which memory a [`Place`] is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mem {
    Src,
    Dst,
    Shared,
}

impl Mem {
    /// The C array name.
    pub fn c_name(self) -> &'static str {
        match self {
            Mem::Src => "src",
            Mem::Dst => "dst",
            Mem::Shared => "tile",
        }
    }
}

/// One array element: `mem[index]`, the index in units.
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    pub mem: Mem,
    pub index: Expr,
}

impl Place {
    /// `mem[index]` in C.
    pub fn c(&self) -> String {
        format!("{}[{}]", self.mem.c_name(), self.index.c())
    }
}

/// `if (guard) to = from;`, run for every thread, `j` and `k`.
#[derive(Clone, Debug, PartialEq)]
pub struct Move {
    /// Named values declared inside the `j` loop, in order.
    pub lets: Vec<Expr>,
    pub guard: Guard,
    pub from: Place,
    pub to: Place,
    /// Read all `words` units first, transpose the `vec x vec` block they hold in
    /// registers (unit `a`'s element `c` becomes unit `c`'s element `a`), then write.
    pub transpose: bool,
    /// Trips of the `j` loop (`Var::J` runs over `0..iters`).
    pub iters: u32,
}

/// A spec with its strategy resolved and every address built.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub spec: TransposeSpec,
    pub layout: Layout,
    pub unit: Unit,
    /// Units per thread step: 1, the 32-bit words of a word-array element, or the
    /// `vec` rows of a block (`Var::K` runs over them).
    pub words: u32,
    /// Rows of the shared tile (for the narrow forms, of the chunk seen as rows of
    /// `tile` units).
    pub shared_rows: u32,
    /// Named values over the kernel parameters (`tiles_x`, `ntiles`).
    pub kernel_lets: Vec<Expr>,
    /// Named values per tile (`tile_r`, `tile_c`).
    pub tile_lets: Vec<Expr>,
    /// Tiles per matrix (the launcher's grid).
    pub ntiles: Expr,
    /// The tile loop's condition (`t < ntiles`, or its division-free equivalent).
    pub more: Less,
    /// The moves, with a barrier between consecutive ones.
    pub moves: Vec<Move>,
}

impl Kernel {
    /// Resolves the strategy (asking the analyzer where it must search) and builds
    /// the kernel.
    pub fn build(spec: TransposeSpec) -> Result<Kernel, SpecError> {
        spec.validate()?;
        let candidates: Vec<Layout> = match spec.strategy {
            Strategy::Naive => vec![Layout::Direct],
            Strategy::None => vec![Layout::Pad(0)],
            Strategy::Pad(Some(n)) => vec![Layout::Pad(n)],
            Strategy::Rotate => vec![Layout::Rotate],
            Strategy::Pad(None) => (0..=MAX_PAD).map(Layout::Pad).collect(),
            Strategy::Xor => swizzle_candidates(spec.tile)
                .into_iter()
                .map(Layout::Xor)
                .collect(),
        };
        let searching = candidates.len() > 1;
        let mut smallest_too_large: Option<u64> = None;
        for layout in candidates {
            let k = Kernel::with_layout(spec, layout);
            let bytes = k.shared_bytes();
            if bytes > MAX_SHARED_BYTES {
                smallest_too_large = Some(smallest_too_large.map_or(bytes, |b| b.min(bytes)));
                continue;
            }
            if !searching || k.analyze(Model::Hopper).conflict_free {
                return Ok(k);
            }
        }
        let (tile, elem_bytes, block_rows) = (spec.tile, spec.elem_bytes, spec.block_rows);
        // Paddings grow with n: once one is too large, the rest are too.
        Err(match (smallest_too_large, spec.strategy) {
            (Some(bytes), _) => SpecError::SharedTooLarge {
                bytes,
                max: MAX_SHARED_BYTES,
            },
            (None, Strategy::Xor) => SpecError::NoSwizzle {
                tile,
                elem_bytes,
                block_rows,
            },
            _ => SpecError::NoPad {
                tile,
                elem_bytes,
                block_rows,
            },
        })
    }

    /// Builds the kernel for an explicit layout (no search, no size check).
    pub fn with_layout(spec: TransposeSpec, layout: Layout) -> Kernel {
        let (unit, words) = spec.unit();
        let geometry = spec.geometry();
        let tiling = geometry.tiling();
        let (tile_lets, moves) = match spec.form {
            Form::Tall | Form::Wide => narrow_moves(&spec, layout, &tiling, words),
            Form::Tile | Form::Skew => tile_moves(&spec, layout, &tiling, words),
        };
        Kernel {
            spec,
            layout,
            unit,
            words,
            shared_rows: geometry.shared_rows(),
            kernel_lets: tiling.lets,
            tile_lets,
            ntiles: tiling.ntiles,
            more: tiling.more,
            moves,
        }
    }

    /// Shared memory per block, in bytes.
    pub fn shared_bytes(&self) -> u64 {
        self.spec.geometry().shared_units(self.layout)
            * u64::from(self.words)
            * u64::from(self.unit.bytes())
    }

    /// Units in the shared array.
    pub fn shared_units(&self) -> u64 {
        self.shared_bytes() / u64::from(self.unit.bytes())
    }

    /// One line for people: tile, threads, element size, strategy and its
    /// resolution, shared memory.
    pub fn describe(&self) -> String {
        let s = &self.spec;
        let vec = if s.vec > 1 {
            format!(
                ", {v} x {v} blocks per thread step as {b}-byte vectors",
                v = s.vec,
                b = s.vec_bytes()
            )
        } else {
            String::new()
        };
        let g = s.geometry();
        let what = match s.form {
            Form::Tile => format!("tile {}", s.tile_elems()),
            Form::Skew => format!(
                "skew tile {} x {} (writes start on 32-byte sectors; {} extra source rows)",
                s.tile,
                g.skew_rows(),
                g.sector_elems() - 1
            ),
            Form::Tall | Form::Wide => format!(
                "{} chunks of {} elements (narrow side up to {})",
                s.form,
                g.chunk_elems(),
                crate::form::MAX_NARROW
            ),
        };
        format!(
            "{what} ({} x {} threads), {}-byte elements{vec}, strategy {} -> {}, {} bytes of shared memory per block",
            s.tile,
            s.block_rows,
            s.elem_bytes,
            s.strategy,
            self.layout,
            self.shared_bytes()
        )
    }

    /// The bank analysis of every shared instruction. A kernel is a function of its
    /// spec and layout, so each (spec, layout, model) is analyzed once per process
    /// (the attribute asks for the same kernels many times in one crate).
    pub fn analyze(&self, model: Model) -> Report {
        type Memo = Mutex<HashMap<(TransposeSpec, Layout, Model), Report>>;
        static MEMO: OnceLock<Memo> = OnceLock::new();
        let key = (self.spec, self.layout, model);
        let memo = MEMO.get_or_init(Memo::default);
        if let Some(r) = memo.lock().map(|m| m.get(&key).cloned()).ok().flatten() {
            return r;
        }
        let r = analysis::analyze(self, model);
        if let Ok(mut m) = memo.lock() {
            m.insert(key, r.clone());
        }
        r
    }

    /// The `extern "C"` entry point's name, derived from the spec.
    pub fn entry_name(&self) -> String {
        let s = &self.spec;
        let strat = match self.layout {
            Layout::Direct => "naive".to_string(),
            Layout::Pad(0) if s.strategy == Strategy::None => "none".to_string(),
            Layout::Pad(n) => format!("pad{n}"),
            Layout::Xor(z) => format!("xor{}{}{}", z.b, z.m, z.s),
            Layout::Rotate => "rotate".to_string(),
        };
        let vec = if s.vec > 1 {
            format!("_v{}", s.vec)
        } else {
            String::new()
        };
        let form = if s.form == Form::Tile {
            String::new()
        } else {
            format!("_{}", s.form)
        };
        format!(
            "bankfree_transpose_t{}_r{}_e{}{vec}_{}{form}",
            s.tile, s.block_rows, s.elem_bytes, strat
        )
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
