//! Why a kernel does not run a call, or is not meant for it: a [`Refusal`]
//! names the reason and what runs the call instead.
//!
//! ```
//! use bankfree_gen::check::refusal::Refusal;
//! let r = Refusal::ThinWidth { cols: 41 };
//! assert!(r.to_string().contains("cols = 41"));
//! ```

use crate::kernel::geometry::{
    Form, INTERLEAVE_MAX_ROWS, MAX_NARROW, PLANAR_MAX_COLS, SMALL_MAX_ELEMS,
};
use crate::kernel::squat::SQUAT_MAX_ROWS;
use crate::kernel::thin::THIN_MAX_COLS;
use std::fmt;

/// Why a kernel does not run (or is not meant for) a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A transpose shape on a `copy` kernel, or a copy on a transpose kernel.
    Copy { form: Form, copy: bool },
    /// Folded tile sides on a kernel other than a scalar `tile` one (or folded
    /// rows on a `thin` one).
    FoldForm { form: Form, vec: u32 },
    /// A `thin` kernel and folded columns that are not one run in the source:
    /// column axis `axis` lies `stride` elements apart, not `run`.
    FoldRun { axis: u8, stride: u64, run: u64 },
    /// A folded side whose axis extents a kernel cannot split exactly: an extent
    /// below 2, or `side * extent` past 32 bits.
    FoldSplit {
        side: &'static str,
        n: u64,
        ext: u64,
    },
    /// A `vec > 1` kernel and a dimension, pitch or batch stride not divisible by it.
    Vec {
        name: &'static str,
        value: u64,
        vec: u32,
    },
    /// A narrow side above [`MAX_NARROW`].
    TooWide {
        form: Form,
        side: &'static str,
        n: u64,
    },
    /// The flat side of a narrow kernel not stored as one run.
    NotOneRun {
        form: Form,
        side: &'static str,
        n: u64,
        ld_name: &'static str,
        ld: u64,
        run: &'static str,
    },
    /// A skew kernel and destination rows that start on sectors already.
    Aligned { row_bytes: u64 },
    /// A small kernel and a destination that is not one dense run.
    NotDense {
        name: &'static str,
        value: u64,
        want: u64,
    },
    /// A small kernel and matrices of one row, or of more than it takes.
    NotSmall { rows: u64, elems: u64 },
    /// A small kernel and matrices the tile kernels move faster.
    TileFaster { bytes: u64 },
    /// A skew kernel wider than 32 and a source narrower than its tile.
    Narrow { cols: u64, tile: u32 },
    /// A planar kernel and a matrix of fewer blocks of rows than it has threads.
    FewRows { rows: u64, min: u64 },
    /// A `squat` or `interleave` kernel and matrices narrower than one of its
    /// tiles.
    FewCols { form: Form, cols: u64, min: u64 },
    /// A `thin` kernel with folded columns and a batch of matrices shorter
    /// than half one of its sub-tiles ([`crate::check::suit::thin_min_rows`]).
    ShortItems { rows: u64, min: u64 },
    /// A `squat` kernel and a height the strip kernel runs faster: an even one,
    /// the planner leaves to the strip kernel ([`crate::check::suit::squat_suits_height`]).
    StripHeight { rows: u64 },

    /// A tall kernel of 1- or 2-byte elements and more columns than it is
    /// faster for.
    TileWins {
        cols: u64,
        max: u64,
        elem_bytes: u32,
    },
    /// A `thin` kernel and a source of a width outside 2 to [`THIN_MAX_COLS`].
    ThinWidth { cols: u64 },
    /// A `thin` kernel that splits its column words and a source narrower
    /// than the widths it is built for (`first` and more).
    SplitWidth { cols: u64, first: u32 },
    /// A `squat` kernel and a source of a height outside 2 to
    /// [`SQUAT_MAX_ROWS`].
    SquatWidth { rows: u64 },
    /// A `realign` kernel and a shape whose sides, pitches and strides all
    /// divide by `vec`.
    VecRuns { vec: u32 },
    /// A `realign` kernel and a matrix side below `min`.
    Edges {
        side: &'static str,
        n: u64,
        min: u64,
    },
    /// A 1-element square tile wider than 32 and a matrix side below it.
    BelowTile {
        side: &'static str,
        n: u64,
        tile: u32,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Refusal::Vec { name, value, vec } => write!(
                f,
                "{name} = {value} is not a multiple of vec = {vec}; a vec = 1 kernel runs it"
            ),
            Refusal::ThinWidth { cols } => write!(
                f,
                "cols = {cols}: a thin kernel takes widths from 2 to {THIN_MAX_COLS}; a tall or tile kernel runs it"
            ),
            Refusal::SplitWidth { cols, first } => write!(
                f,
                "cols = {cols}: a thin kernel that splits its column words takes widths from {first} to {THIN_MAX_COLS}; the thin kernel runs it"
            ),
            Refusal::SquatWidth { rows } => write!(
                f,
                "rows = {rows}: a squat kernel takes heights from 2 to {SQUAT_MAX_ROWS}; a strip or tile kernel runs it"
            ),
            Refusal::TooWide { form, side, n } => write!(
                f,
                "{side} = {n}: a {form} kernel takes at most {} {side}; {}",
                match form {
                    Form::Planar => PLANAR_MAX_COLS,
                    Form::Interleave => INTERLEAVE_MAX_ROWS,
                    _ => MAX_NARROW,
                },
                match form {
                    Form::Planar => "a tall or tile kernel runs it",
                    Form::Interleave => "a squat, strip or tile kernel runs it",
                    _ => "a tile kernel runs it",
                }
            ),
            Refusal::NotOneRun {
                form,
                side,
                n,
                ld_name,
                ld,
                run,
            } => write!(
                f,
                "{ld_name} = {ld} is not {side} = {n}: a {form} kernel needs the {run} stored as one run; a tile kernel runs it"
            ),
            Refusal::NotDense { name, value, want } => write!(
                f,
                "{name} = {value} is not {want}: a small kernel writes its destination as one dense run of matrices; a tile kernel runs it"
            ),
            Refusal::NotSmall { rows, elems } => write!(
                f,
                "matrices of {rows} rows and {elems} elements: small and strip kernels take 2 rows or more, a small one at most {SMALL_MAX_ELEMS} elements; a tile kernel runs it"
            ),
            Refusal::TileFaster { bytes } => write!(
                f,
                "matrices of {bytes} bytes: a tile kernel moves matrices of {SMALL_SUITS_BYTES} bytes and more faster"
            ),
            Refusal::Copy { form, copy: true } => write!(
                f,
                "the shape is a copy (no transpose) and a {form} kernel transposes; a copy kernel runs it"
            ),
            Refusal::Copy { copy: false, .. } => write!(
                f,
                "a copy kernel does not transpose; a tile kernel runs a transpose"
            ),
            Refusal::FoldForm { form, vec } => write!(
                f,
                "folded tile sides need a scalar tile kernel (folded columns alone, a thin one too; folded rows alone, a tall one of single elements), not a {form} kernel of {vec}-element blocks"
            ),
            Refusal::FoldRun { axis, stride, run } => write!(
                f,
                "folded column axis {axis} lies {stride} elements apart in the source, not {run}: a thin kernel needs its columns stored as one run; a tile kernel runs it"
            ),
            Refusal::FoldSplit { side, n, ext } => write!(
                f,
                "{side} = {n} folded over an axis of {ext} items: a split needs extents of 2 or more and {side} x extent below 2^32"
            ),
            Refusal::Narrow { cols, tile } => write!(
                f,
                "cols = {cols} is narrower than the skew tile's {tile}: a square tile wastes less of itself"
            ),
            Refusal::TileWins { cols, max, elem_bytes } => write!(
                f,
                "cols = {cols}: above {max} columns a square or skew tile moves {elem_bytes}-byte elements faster than the tall kernel"
            ),
            Refusal::BelowTile { side, n, tile } => write!(
                f,
                "{side} = {n} is below the tile's {tile}: a 32-wide tile leaves less of itself idle"
            ),
            Refusal::FewRows { rows, min } => write!(
                f,
                "rows = {rows} is below {min}: a planar kernel's threads would idle (the small or tall kernel runs it)"
            ),
            Refusal::ShortItems { rows, min } => write!(
                f,
                "rows = {rows} is below {min}: a thin kernel's block would idle on each matrix of the batch (a gather or the tile runs it)"
            ),
            Refusal::FewCols { form, cols, min } => write!(
                f,
                "cols = {cols} is below {min}: most of {} {form} kernel's tile would idle (the strip or small kernel runs it)",
                if form == Form::Interleave { "an" } else { "a" }
            ),

            Refusal::StripHeight { rows } => write!(
                f,
                "rows = {rows}: the strip kernel runs this height faster (a squat kernel runs {SQUAT_HEIGHTS})"
            ),
            Refusal::VecRuns { vec } => write!(
                f,
                "every side, pitch and batch stride is a multiple of {vec}: a kernel of {vec} x {vec} blocks moves it faster"
            ),
            Refusal::Edges { side, n, min } => write!(
                f,
                "{side} = {n} is below {min}: most of a realign kernel's 128-byte-wide tiles would be edge tiles (a single-element or skew tile runs it faster)"
            ),
            Refusal::Aligned { row_bytes } => write!(
                f,
                "dst rows of {row_bytes} bytes start on 32-byte sectors: a tile kernel writes them whole"
            ),
        }
    }
}

/// The heights of [`crate::check::suit::squat_suits_height`], in words (refusals, the attribute's
/// docs).
pub const SQUAT_HEIGHTS: &str =
    "1-byte heights from 3 but the multiples of 4 from 24, odd 2-byte heights from 5";

/// Matrices below this many bytes go to the `small` kernel (see
/// [`crate::check::suit::unsuited`]).
pub const SMALL_SUITS_BYTES: u64 = 8 * 1024;
