//! Which part of the matrices one block moves: square tiles, tiles whose writes
//! start on 32-byte sectors, or chunks of a narrow matrix.
//!
//! * [`Form::Tile`]: a square tile per block (any shape).
//! * [`Form::Skew`]: a tile of `tile` source columns and at least 64 source rows
//!   ([`Geometry::skew_rows`]) whose window in each destination row is shifted (by
//!   up to a sector's elements) so that its writes start on a 32-byte sector.
//!   Destinations whose rows are not a multiple of 32 bytes long (8191 x 8193 f32)
//!   otherwise write two partial sectors per warp, which cost the H100 half its
//!   speed; the block reads `sector - 1` extra source rows for it.
//! * [`Form::Tall`]: sources of at most 32 columns stored as one run (`src_ld ==
//!   cols`): a block reads a chunk of whole rows as one flat run and writes its
//!   columns as `cols` runs.
//! * [`Form::Wide`]: sources of at most 32 rows whose destination is one run
//!   (`dst_ld == rows`): the mirror image.
//!
//! The narrow forms keep a chunk of `chunk` source rows (columns) flat in shared
//! memory, viewed as rows of `tile` units for the layout (padding or swizzle), and
//! size `chunk` at run time from the narrow side so every block moves about 16 KB.
//!
//! ```
//! use bankfree_gen::{form::Form, Shape, Strategy, TransposeSpec};
//! let spec = TransposeSpec::new(32, 4, Strategy::Pad(None)).unwrap().with_form(Form::Tall).unwrap();
//! assert!(spec.geometry().fits(&Shape::new(1 << 22, 3)).is_ok());
//! assert!(spec.geometry().fits(&Shape::new(1 << 22, 33)).is_err());
//! ```

use crate::expr::{Expr, Guard, Less, Var};
use crate::kernel::{Layout, Mem, Move, Place};
use crate::spec::{SpecError, TransposeSpec};
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// What one block moves (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    Tile,
    Skew,
    Tall,
    Wide,
}

/// Every form.
pub const FORMS: [Form; 4] = [Form::Tile, Form::Skew, Form::Tall, Form::Wide];

/// The widest narrow side a tall or wide kernel takes.
pub const MAX_NARROW: u64 = 32;

/// Bytes of source a narrow kernel's block moves per chunk (at least 1024 elements).
pub const CHUNK_BYTES: u32 = 16 * 1024;

impl fmt::Display for Form {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Form::Tile => "tile",
            Form::Skew => "skew",
            Form::Tall => "tall",
            Form::Wide => "wide",
        })
    }
}

impl FromStr for Form {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Form, SpecError> {
        FORMS
            .into_iter()
            .find(|f| f.to_string() == s.trim())
            .ok_or_else(|| SpecError::Form {
                value: s.into(),
                why: "expected tile, skew, tall or wide".into(),
            })
    }
}

/// What the launcher needs of a kernel to size its grid and check a shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Geometry {
    pub form: Form,
    pub tile: u32,
    pub block_rows: u32,
    pub elem_bytes: u32,
    pub vec: u32,
}

/// The named values of a kernel over its parameters, and its number of tiles (or
/// chunks) per matrix: built once, used by the kernel and by the launcher.
#[derive(Clone, Debug, PartialEq)]
pub struct Tiling {
    /// Declared in this order at the top of the kernel.
    pub lets: Vec<Expr>,
    /// Tiles (or chunks) per matrix: the launcher sizes the grid with it.
    pub ntiles: Expr,
    /// The tile loop's condition on `t`, true exactly for `t < ntiles` (narrow
    /// forms test `t * chunk < long`, so the kernel needs no 64-bit division).
    pub more: Less,
    /// Tile forms: rows and cols (in vectors with `vec > 1`) and tiles per row.
    pub rows: Expr,
    pub cols: Expr,
    pub tiles_x: Expr,
    /// Narrow forms: the narrow side and the long-side entries per chunk.
    pub narrow: Expr,
    pub chunk: Expr,
    /// Narrow forms: units between two padding units in the shared chunk.
    pub period: Expr,
    /// Narrow forms: the multipliers that divide by `chunk` and `period`
    /// ([`Expr::quot`]; every quotient the kernel takes is below 2^16, the divisors
    /// below 2^13, so they are exact).
    pub chunk_m: Expr,
    pub period_m: Expr,
}

impl Geometry {
    /// Threads per block.
    pub fn threads(&self) -> u32 {
        self.tile * self.block_rows
    }

    /// Elements per 32-byte sector (a `skew` window's alignment).
    pub fn sector_elems(&self) -> u32 {
        (32 / self.elem_bytes).max(1)
    }

    /// Elements a narrow kernel's shared chunk holds: about [`CHUNK_BYTES`], at least
    /// 1024, a multiple of the block's threads.
    pub fn chunk_elems(&self) -> u32 {
        let want = (CHUNK_BYTES / self.elem_bytes).max(1024);
        want.div_ceil(self.threads()) * self.threads()
    }

    /// Destination elements of one skew tile's windows per destination row: `tile`
    /// times [`Geometry::skew_depth`].
    pub fn skew_rows(&self) -> u32 {
        self.tile * self.skew_depth()
    }

    /// Windows of `tile` destination elements a skew tile writes per destination row:
    /// enough for 64 (two for tile 32). Each tile reads `sector - 1` source rows more
    /// than it writes, so a deeper tile wastes less: on 8191 x 8193 f32 (H100, 32 x 8
    /// threads, interleaved timing, docs/perf.md v6) 32 x 39 source rows ran at 0.84
    /// of memcpy, 32 x 71 at 0.93 and 32 x 135 at 0.92.
    ///
    /// ```
    /// use bankfree_gen::{form::Form, Strategy, TransposeSpec};
    /// let skew = |tile| TransposeSpec::new(tile, 4, Strategy::Pad(None))
    ///     .and_then(|s| s.with_form(Form::Skew)).unwrap().geometry();
    /// // f32: a sector is 8 elements, so a tile reads 7 rows more than it writes.
    /// assert_eq!((skew(32).skew_depth(), skew(32).skew_rows(), skew(32).shared_rows()), (2, 64, 71));
    /// assert_eq!((skew(64).skew_depth(), skew(64).skew_rows(), skew(64).shared_rows()), (1, 64, 71));
    /// ```
    pub fn skew_depth(&self) -> u32 {
        (64 / self.tile).max(1)
    }

    /// Rows of the shared tile (tile forms).
    pub fn shared_rows(&self) -> u32 {
        match self.form {
            Form::Skew => self.skew_rows() + self.sector_elems() - 1,
            _ => self.tile,
        }
    }

    /// Bytes of one shared-memory access (an element, a word of a word array or a
    /// vector).
    pub fn unit_bytes(&self) -> u32 {
        match self.elem_bytes * self.vec {
            b @ (1 | 2 | 4 | 8 | 16) => b,
            _ => 4,
        }
    }

    /// Units of one bank row (128 bytes): a narrow chunk's padding period is this
    /// times the odd part of the narrow side.
    pub fn bank_row_units(&self) -> u32 {
        128 / self.unit_bytes()
    }

    /// Units of one shared plane with `layout` (a word-array element has one plane
    /// per word).
    pub fn shared_units(&self, layout: Layout) -> u64 {
        match (self.form, layout) {
            (_, Layout::Direct) => 0,
            (Form::Tall | Form::Wide, Layout::Pad(n)) => {
                let e = u64::from(self.chunk_elems());
                e + e / u64::from(self.bank_row_units()) * u64::from(n)
            }
            (Form::Tall | Form::Wide, _) => u64::from(self.chunk_elems()),
            (_, l) => u64::from(self.shared_rows()) * u64::from(l.row_stride(self.tile)),
        }
    }

    /// The kernel's named values and tile count.
    pub fn tiling(&self) -> Tiling {
        let v = Expr::var;
        // With vec > 1 rows and cols count vectors: a tile is `tile` of them.
        let t = i64::from(self.tile);
        let vec = i64::from(self.vec);
        match self.form {
            Form::Tile | Form::Skew => {
                let (rows, cols) = if vec > 1 {
                    (
                        Expr::named("rows_v", v(Var::Rows) / vec),
                        Expr::named("cols_v", v(Var::Cols) / vec),
                    )
                } else {
                    (v(Var::Rows), v(Var::Cols))
                };
                // A skew tile's windows start up to `sector - 1` rows early, and the
                // tile is `skew_rows` source rows deep.
                let (extra, deep) = if self.form == Form::Skew {
                    (
                        i64::from(self.sector_elems()) - 1,
                        i64::from(self.skew_rows()),
                    )
                } else {
                    (0, t)
                };
                let tiles_x = Expr::named("tiles_x", (cols.clone() + (t - 1)) / t);
                let tiles_y = (rows.clone() + (extra + deep - 1)) / deep;
                let ntiles = Expr::named("ntiles", tiles_x.clone() * tiles_y);
                let mut lets = if vec > 1 {
                    vec![rows.clone(), cols.clone()]
                } else {
                    vec![]
                };
                lets.extend([tiles_x.clone(), ntiles.clone()]);
                Tiling {
                    lets,
                    more: Less(v(Var::Tile), ntiles.clone()),
                    ntiles,
                    rows,
                    cols,
                    tiles_x,
                    narrow: Expr::Lit(0),
                    chunk: Expr::Lit(0),
                    period: Expr::Lit(0),
                    chunk_m: Expr::Lit(0),
                    period_m: Expr::Lit(0),
                }
            }
            Form::Tall | Form::Wide => {
                let (narrow_var, long) = if self.form == Form::Tall {
                    (Var::Cols, Var::Rows)
                } else {
                    (Var::Rows, Var::Cols)
                };
                let narrow = Expr::small("narrow", v(narrow_var));
                // Whole warps per narrow row: a multiple of 32.
                let chunk = Expr::small(
                    "chunk",
                    Expr::Lit(i64::from(self.chunk_elems())) / narrow.clone() / 32 * 32,
                );
                let ntiles = Expr::named("ntiles", (v(long) + chunk.clone() - 1) / chunk.clone());
                // One unit of padding every lcm(bank row, narrow) units: stride-`narrow`
                // accesses then meet every bank once (the analyzer checks each width).
                let w = i64::from(self.bank_row_units());
                let lowest_bit =
                    Expr::small("low", narrow.clone().and(Expr::Lit(0) - narrow.clone()));
                let period = Expr::small(
                    "period",
                    Expr::Lit(w)
                        * (narrow.clone() >> Expr::ctz(narrow.clone()))
                        * ((lowest_bit.clone() + (w - 1)) / w),
                );
                let chunk_m = Expr::magic("chunk_m", chunk.clone());
                let period_m = Expr::magic("period_m", period.clone());
                Tiling {
                    lets: vec![
                        narrow.clone(),
                        chunk.clone(),
                        lowest_bit,
                        period.clone(),
                        chunk_m.clone(),
                        period_m.clone(),
                    ],
                    more: Less(v(Var::Tile) * chunk.clone(), v(long)),
                    period,
                    chunk_m,
                    period_m,
                    ntiles,
                    rows: v(Var::Rows),
                    cols: v(Var::Cols),
                    tiles_x: Expr::Lit(0),
                    narrow,
                    chunk,
                }
            }
        }
    }
}

/// The two moves of a tall or wide kernel: the flat side as one run, the strided side
/// by narrow row, both through the chunk `q` in shared memory (`q = long * narrow +
/// narrow index`, viewed as rows of `tile` units by `layout`).
pub(crate) fn narrow_moves(
    spec: &TransposeSpec,
    layout: Layout,
    t: &Tiling,
    words: u32,
) -> (Vec<Expr>, Vec<Move>) {
    let v = Expr::var;
    let g = spec.geometry();
    let tile = i64::from(spec.tile);
    let threads = i64::from(spec.threads());
    debug_assert!(
        matches!(layout, Layout::Pad(_)),
        "narrow forms pad their chunk"
    );
    let iters = g.chunk_elems() / spec.threads();
    let words_i = i64::from(words);
    let plane = g.shared_units(layout) as i64;
    let pad = match layout {
        Layout::Pad(n) => i64::from(n),
        _ => 0,
    };
    let shared = |q: Expr| Place {
        mem: Mem::Shared,
        index: {
            let i = q.clone() + Expr::quot(q, &t.period_m) * pad;
            if words > 1 {
                v(Var::K) * plane + i
            } else {
                i
            }
        },
    };
    let global = |mem: Mem, batch_stride: Var, i: Expr| Place {
        mem,
        index: {
            let e = v(Var::Batch) * v(batch_stride) + i;
            if words > 1 {
                e * words_i + v(Var::K)
            } else {
                e
            }
        },
    };
    let (narrow, chunk) = (t.narrow.clone(), t.chunk.clone());
    let l0 = Expr::named("l0", v(Var::Tile) * chunk.clone());
    let f = Expr::small("f", v(Var::Ty) * tile + v(Var::Tx) + v(Var::J) * threads);
    let in_chunk = Less(f.clone(), chunk.clone() * narrow.clone());
    // Narrow index `o` and long index `p` of the strided side's thread.
    let o = Expr::small("o", Expr::quot(f.clone(), &t.chunk_m));
    let p = Expr::small("p", f.clone() - o.clone() * chunk.clone());
    let q = p.clone() * narrow.clone() + o.clone();
    let (long, flat_ld, flat_mem, flat_stride, strided_mem, strided_ld, strided_stride) =
        if spec.form == Form::Tall {
            (
                Var::Rows,
                Var::SrcLd,
                Mem::Src,
                Var::SrcBatchStride,
                Mem::Dst,
                Var::DstLd,
                Var::DstBatchStride,
            )
        } else {
            (
                Var::Cols,
                Var::DstLd,
                Mem::Dst,
                Var::DstBatchStride,
                Mem::Src,
                Var::SrcLd,
                Var::SrcBatchStride,
            )
        };
    // The flat run: `ld == narrow` (checked by `fits`), so the chunk is contiguous.
    let flat = global(flat_mem, flat_stride, l0.clone() * v(flat_ld) + f.clone());
    let flat_guard = Guard(vec![
        in_chunk.clone(),
        Less(
            l0.clone() * narrow.clone() + f.clone(),
            v(long) * narrow.clone(),
        ),
    ]);
    let strided = global(
        strided_mem,
        strided_stride,
        o.clone() * v(strided_ld) + l0.clone() + p.clone(),
    );
    let strided_guard = Guard(vec![in_chunk, Less(l0.clone() + p.clone(), v(long))]);
    let flat_move = |to_shared: bool| Move {
        lets: vec![f.clone()],
        guard: flat_guard.clone(),
        from: if to_shared {
            flat.clone()
        } else {
            shared(f.clone())
        },
        to: if to_shared {
            shared(f.clone())
        } else {
            flat.clone()
        },
        transpose: false,
        iters,
    };
    let strided_move = |to_shared: bool| Move {
        lets: vec![f.clone(), o.clone(), p.clone()],
        guard: strided_guard.clone(),
        from: if to_shared {
            strided.clone()
        } else {
            shared(q.clone())
        },
        to: if to_shared {
            shared(q.clone())
        } else {
            strided.clone()
        },
        transpose: false,
        iters,
    };
    let moves = if spec.form == Form::Tall {
        vec![flat_move(true), strided_move(false)]
    } else {
        vec![strided_move(true), flat_move(false)]
    };
    (vec![l0], moves)
}
