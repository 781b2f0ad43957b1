//! Why a permute cannot be planned.
//!
//! ```
//! use bankfree_gen::select::permute::{plan, Permute, PermuteError};
//! let bad = plan(&Permute::new(&[4, 5], &[0, 0], 4));
//! assert!(matches!(bad, Err(PermuteError::NotPermutation { .. })));
//! ```

use crate::ir::shape::ShapeError;
use crate::kernel::geometry::ELEM_SIZES;
use crate::kernel::spec::SpecError;

/// The highest rank a permute takes.
pub const MAX_RANK: usize = 8;

/// Why a permute cannot be planned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PermuteError {
    #[error("rank {rank}: a permute takes 1 to {MAX_RANK} axes")]
    Rank { rank: usize },
    #[error(
        "perm {perm:?} has {perm_len} entries but dims has {dims_len}; give one entry per axis"
    )]
    Length {
        perm: Vec<usize>,
        perm_len: usize,
        dims_len: usize,
    },
    #[error("`perm` {perm:?} is not a permutation of 0..{rank}: every axis 0 to {last} must appear exactly once", last = rank.saturating_sub(1))]
    NotPermutation { perm: Vec<usize>, rank: usize },
    #[error("{which}_strides has {len} entries for {rank} axes; give one stride per axis")]
    Strides {
        which: &'static str,
        len: usize,
        rank: usize,
    },
    #[error("element size {elem_bytes} bytes: supported are {ELEM_SIZES}")]
    ElemBytes { elem_bytes: u32 },
    #[error("{which}_strides {strides:?} put two elements of dims {dims:?} in one place; pass strides of a layout without overlap")]
    Overlap {
        which: &'static str,
        strides: Vec<u64>,
        dims: Vec<u64>,
    },
    #[error(transparent)]
    Shape(#[from] ShapeError),
    #[error("the {what} overflows 64 bits; check dims and strides")]
    Overflow { what: &'static str },
    #[error(transparent)]
    Spec(#[from] SpecError),
}
