//! How a `small` kernel divides: which of its per-element divisions are plain
//! 32-bit, exact 32-bit or 64-bit quotients, and the matrix and batch sizes each
//! choice takes.
//!
//! ```
//! use bankfree_gen::kernel::quotients::{Quotients, SMALL_MAX_ELEMS};
//! assert_eq!(Quotients::Narrow.max_elems(), SMALL_MAX_ELEMS);
//! assert!(Quotients::Any.max_elems() > Quotients::Wide.max_elems());
//! ```

/// Most elements per matrix a `small` kernel takes: it divides positions below
/// `SMALL_MAX_ELEMS + chunk` by the matrix size with 32-bit magic multipliers,
/// exact while their product stays below 2^32 (a test checks every form's bound).
pub const SMALL_MAX_ELEMS: u64 = 1 << 14;

/// Which of a `small` kernel's per-element divisions are exact 32-bit
/// ([`crate::ir::expr::Expr::quot_exact`]) or 64-bit quotients
/// ([`crate::ir::expr::Expr::quot64`]) rather than plain 32-bit ones
/// ([`crate::Kernel::with_quotients`]); other forms divide per tile or batch
/// item only and are always [`Quotients::Narrow`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Quotients {
    /// All 32-bit: batches whose `batch x extent` stays below 2^32 for every
    /// extent it divides by, matrices of at most [`SMALL_MAX_ELEMS`] elements.
    #[default]
    Narrow,
    /// The batch items' exact 32-bit (batches of up to [`SMALL_ITEMS_MAX_BATCH`]
    /// items); matrices as [`Quotients::Narrow`].
    Items,
    /// The batch items' and the matrix positions' exact 32-bit: batches as
    /// [`Quotients::Items`], matrices of up to [`SMALL_EXACT_MAX_ELEMS`] elements.
    Wide,
    /// The batch items' and the matrix positions' 64-bit: any batch, matrices
    /// of up to [`SMALL_WIDE_MAX_ELEMS`] elements.
    Any,
}

impl Quotients {
    /// Most elements per matrix a `small` kernel with these quotients takes.
    pub fn max_elems(self) -> u64 {
        match self {
            Quotients::Wide => SMALL_EXACT_MAX_ELEMS,
            Quotients::Any => SMALL_WIDE_MAX_ELEMS,
            _ => SMALL_MAX_ELEMS,
        }
    }

    /// Most batch items a `small` kernel with these quotients takes.
    pub fn max_batch(self) -> u64 {
        match self {
            Quotients::Items | Quotients::Wide => SMALL_ITEMS_MAX_BATCH,
            _ => u64::MAX,
        }
    }

    /// Which quotients are wider than plain 32-bit ones, in words for a kernel's
    /// description ("" for none).
    pub fn describe(self) -> &'static str {
        match self {
            Quotients::Narrow => "",
            Quotients::Items => "its batch items by exact 32-bit quotients",
            Quotients::Wide => "by exact 32-bit quotients",
            Quotients::Any => "by 64-bit quotients",
        }
    }
}

/// Most batch items a `small` kernel with exact 32-bit item quotients
/// ([`Quotients::Items`], [`Quotients::Wide`]) takes: an item index and its
/// quotient's high half then sum below 2^32 in either build.
pub const SMALL_ITEMS_MAX_BATCH: u64 = 1 << 31;

/// Most elements per matrix a `small` kernel with exact 32-bit matrix quotients
/// ([`Quotients::Wide`]) takes: its positions in a matrix plus a chunk (at most
/// 16384 elements) stay below 2^31, as [`crate::ir::expr::Expr::quot_exact`]
/// needs.
pub const SMALL_EXACT_MAX_ELEMS: u64 = (1 << 31) - (1 << 14);

/// Most elements per matrix a `small` kernel with 64-bit matrix quotients
/// ([`Quotients::Any`]) takes: its positions in a matrix plus a chunk stay
/// below 2^32.
pub const SMALL_WIDE_MAX_ELEMS: u64 = 1 << 31;
