//! The order in which the blocks of a tile kernel take its tiles.
//!
//! Blocks run roughly in the order of their index, so the tile the `t`-th turn of
//! the tile loop moves decides which memory the GPU's resident blocks touch
//! together. Along the rows of tiles, neighbouring blocks read one band of source
//! rows and write a short piece of many destination rows; down the columns of
//! tiles, they write one band of destination rows in order. Which is faster depends
//! on the GPU's memory ([`crate::select::device`] holds the measured rule); the
//! tiles, their moves and their shared accesses are the same in both.
//!
//! A `small` kernel's chunk has no rows of tiles but a grid of positions per
//! warp: 32 lanes of `vec` destination positions each. Along its rows (the
//! default) lane `l` gathers positions `l * vec ..` and stores them as one
//! vector; down its columns, unit `k` of lane `l` is position `32 * k + l`, so
//! each of the warp's loads and stores covers 32 consecutive destination
//! positions, stored unit by unit. A permute's gathers run the second
//! ([`crate::select::permute::plan_kernels`]).
//!
//! ```
//! use bankfree_gen::{kernel::order::TileOrder, Kernel, Strategy, TransposeSpec};
//! let k = Kernel::build(TransposeSpec::new(32, 4, Strategy::Xor)?)?;
//! let down = k.with_order(TileOrder::Columns)?;
//! assert_eq!(down.entry_name(), "bankfree_transpose_t32_r8_e4_xor505_tc");
//! assert!(bankfree_gen::emit(&down).contains("tile_c = t / tiles_y"));
//! let small = Kernel::build(TransposeSpec::small(4)?)?.with_order(TileOrder::Columns)?;
//! assert!(bankfree_gen::emit(&small).contains("f + k * 32"));
//! assert!(Kernel::build(TransposeSpec::copy(4, 4)?)?.with_order(TileOrder::Columns).is_err());
//! assert_eq!("columns".parse::<TileOrder>(), Ok(TileOrder::Columns));
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

use crate::ir::expr::{Expr, Var};
use crate::kernel::geometry::{Form, Geometry};
use std::fmt;
use std::str::FromStr;

/// Which tile a tile kernel's tile index `t` names, over `tiles_x x tiles_y`
/// tiles per matrix.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TileOrder {
    /// Along the rows of tiles: `tile_r = t / tiles_x`, `tile_c = t % tiles_x`.
    #[default]
    Rows,
    /// Down the columns of tiles: `tile_r = t % tiles_y`, `tile_c = t / tiles_y`,
    /// so consecutive tiles write consecutive pieces of the same destination rows.
    Columns,
}

impl TileOrder {
    /// Both orders, the default first.
    pub const ALL: [TileOrder; 2] = [TileOrder::Rows, TileOrder::Columns];

    /// Whether kernels of `form` take their tiles in this order: every form takes
    /// [`TileOrder::Rows`] (the others have no rows of tiles), only the square
    /// tiles (`tile`, `skew`, `realign`, `wordvec`) and the `small` kernel's
    /// chunk [`TileOrder::Columns`].
    pub fn fits(self, form: Form) -> bool {
        self == TileOrder::Rows
            || matches!(
                form,
                Form::Tile | Form::Skew | Form::Realign | Form::Wordvec | Form::Small
            )
    }

    /// Whether a kernel of geometry `g` takes its tiles in this order: as
    /// [`TileOrder::fits`] its form, but a `small` kernel's chunk has columns
    /// only with vectors of single elements (not single elements, not word
    /// arrays' words).
    pub fn takes(self, g: &Geometry) -> bool {
        self.fits(g.form)
            && (self == TileOrder::Rows
                || g.form != Form::Small
                || (g.vec > 1 && !g.gathers_words()))
    }

    /// Appended to the entry point's name.
    pub fn suffix(self) -> &'static str {
        match self {
            TileOrder::Rows => "",
            TileOrder::Columns => "_tc",
        }
    }

    /// Where a thread's units lie in its block's chunk of a `small` kernel of
    /// geometry `g` taken in this order: the thread's first position (of thread
    /// `Var::Tx`, `Var::Ty` in turn `Var::J`) and unit `Var::K`'s offset from
    /// it. Along the rows a thread's `vec` units are consecutive; down the
    /// columns (where the order [`takes`](TileOrder::takes) `g`) they are `tile`
    /// (32) positions apart, lane by lane. The `small` and `strip` kernels'
    /// moves both read their positions from here.
    pub fn small_units(self, g: &Geometry) -> (Expr, Expr) {
        let v = Expr::var;
        let (tile, vec, threads) = (i64::from(g.tile), i64::from(g.vec), i64::from(g.threads()));
        let step = self.small_step(g);
        let first = if step > 1 {
            (v(Var::Ty) * tile + v(Var::J) * threads) * vec + v(Var::Tx)
        } else {
            (v(Var::Ty) * tile + v(Var::Tx) + v(Var::J) * threads) * vec
        };
        let unit = if vec > 1 {
            v(Var::K) * step
        } else {
            Expr::Lit(0)
        };
        (Expr::small("f", first), unit)
    }

    /// Positions between a thread's units in a `small` kernel of geometry
    /// `g` taken in this order ([`TileOrder::small_units`]): `tile` down the
    /// columns, 1 along the rows.
    pub fn small_step(self, g: &Geometry) -> i64 {
        if self == TileOrder::Columns && self.takes(g) {
            i64::from(g.tile)
        } else {
            1
        }
    }

    /// In words, for the header and description of a kernel of `form`.
    pub fn describe(self, form: Form) -> &'static str {
        match (self, form) {
            (TileOrder::Rows, Form::Small) => "along the rows of each warp's chunk",
            (TileOrder::Columns, Form::Small) => "down the columns of each warp's chunk",
            (TileOrder::Rows, _) => "along the rows of tiles",
            (TileOrder::Columns, _) => "down the columns of tiles",
        }
    }
}

impl fmt::Display for TileOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TileOrder::Rows => "rows",
            TileOrder::Columns => "columns",
        })
    }
}

impl FromStr for TileOrder {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TileOrder::ALL
            .into_iter()
            .find(|o| o.to_string() == s.trim())
            .ok_or_else(|| format!("unknown order `{s}`: rows or columns"))
    }
}
