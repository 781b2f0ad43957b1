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
//! ```
//! use bankfree_gen::{kernel::order::TileOrder, Kernel, Strategy, TransposeSpec};
//! let k = Kernel::build(TransposeSpec::new(32, 4, Strategy::Xor)?)?;
//! let down = k.with_order(TileOrder::Columns)?;
//! assert_eq!(down.entry_name(), "bankfree_transpose_t32_r8_e4_xor505_tc");
//! assert!(bankfree_gen::emit(&down).contains("tile_c = t / tiles_y"));
//! assert!(Kernel::build(TransposeSpec::small(4)?)?.with_order(TileOrder::Columns).is_err());
//! assert_eq!("columns".parse::<TileOrder>(), Ok(TileOrder::Columns));
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

use crate::kernel::geometry::Form;
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
    /// tiles (`tile`, `skew`, `realign`) [`TileOrder::Columns`].
    pub fn fits(self, form: Form) -> bool {
        self == TileOrder::Rows || matches!(form, Form::Tile | Form::Skew | Form::Realign)
    }

    /// Appended to the entry point's name.
    pub fn suffix(self) -> &'static str {
        match self {
            TileOrder::Rows => "",
            TileOrder::Columns => "_tc",
        }
    }

    /// In words, for the kernel's header and descriptions.
    pub fn describe(self) -> &'static str {
        match self {
            TileOrder::Rows => "along the rows of tiles",
            TileOrder::Columns => "down the columns of tiles",
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
