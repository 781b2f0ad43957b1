//! Axes a shape runs over beyond its own: a batch's further axes ([`Outer`])
//! and a tile side's ([`Chain`], both sides together a [`Fold`]), each axis an
//! extent and its strides in the source and the destination.
//!
//! ```
//! use bankfree_gen::ir::axes::{Axis, Outer};
//! let o = Outer::new(&[Axis { ext: 2, src: 60, dst: 60 }, Axis { ext: 3, src: 7, dst: 9 }]).unwrap();
//! assert_eq!((o.axes().len(), o.items()), (2, 6));
//! ```

use crate::ir::expr::{MAX_FOLD, MAX_OUTER};
use serde::Serialize;

/// More axes along a tile side, innermost first: `axes[..n]` are axes `1..=n`
/// beyond the side's own axis 0.
///
/// A folded side of `m` items (`rows` or `cols`) is the multi-index `i0 = x %
/// e0`, `i1 = x / e0 % ext_1`, ... of the item `x`, with `e0 = m / (ext_1 * ... *
/// ext_n)`. Axis 0 of the rows is `src_ld` apart in `src` and 1 apart in `dst`;
/// axis 0 of the columns 1 apart in `src` and `dst_ld` apart in `dst`; axis `k`
/// is `axes[k - 1].src` and `.dst` apart.
pub type Chain = Axes<{ MAX_FOLD as usize }>;

/// The tile sides' further axes ([`Chain`]).
///
/// ```
/// use bankfree_gen::{ir::shape::{Axis, Chain, Fold}, Shape};
/// // Rows over two axes: 4 items 1 apart in dst (10 in src), then 3 items 4 apart
/// // in dst (100 in src).
/// let rows = Chain::new(&[Axis { ext: 3, src: 100, dst: 4 }]).unwrap();
/// let s = Shape { src_ld: 10, fold: Fold { rows, cols: Chain::NONE }, ..Shape::new(12, 5) };
/// assert_eq!(s.src_index(0, 6, 2), 2 * 10 + 1 * 100 + 2);
/// assert_eq!(s.src_elems().unwrap(), 3 * 10 + 2 * 100 + 5);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Fold {
    pub rows: Chain,
    pub cols: Chain,
}

impl Fold {
    /// Plain sides.
    pub const NONE: Fold = Fold {
        rows: Chain::NONE,
        cols: Chain::NONE,
    };

    /// The further axes of the rows and of the columns.
    pub fn counts(&self) -> [u8; 2] {
        [self.rows.n, self.cols.n]
    }
}

/// One batch axis: `ext` items, `src` and `dst` elements apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Axis {
    pub ext: u64,
    pub src: u64,
    pub dst: u64,
}

/// Up to `N` axes, innermost first: `axes[..n]` are in use. A shape's further
/// batch axes ([`Outer`]) and a tile side's further axes ([`Chain`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Axes<const N: usize> {
    pub n: u8,
    #[serde(serialize_with = "as_seq")]
    pub axes: [Axis; N],
}

/// Arrays of any length as a JSON list (serde derives fixed lengths only).
fn as_seq<S: serde::Serializer, const N: usize>(a: &[Axis; N], s: S) -> Result<S::Ok, S::Error> {
    a.as_slice().serialize(s)
}

impl<const N: usize> Default for Axes<N> {
    fn default() -> Self {
        Self::NONE
    }
}

impl<const N: usize> Axes<N> {
    /// No axes.
    pub const NONE: Axes<N> = Axes {
        n: 0,
        axes: [Axis {
            ext: 0,
            src: 0,
            dst: 0,
        }; N],
    };

    /// The axes `axes` (innermost first), or `None` beyond `N`.
    pub fn new(axes: &[Axis]) -> Option<Axes<N>> {
        let mut o = Self::NONE;
        o.axes.get_mut(..axes.len())?.copy_from_slice(axes);
        o.n = u8::try_from(axes.len()).ok()?;
        Some(o)
    }

    /// The axes in use.
    pub fn axes(&self) -> &[Axis] {
        &self.axes[..usize::from(self.n).min(N)]
    }

    /// Items of the axes together (saturating).
    pub fn items(&self) -> u64 {
        self.axes()
            .iter()
            .fold(1u64, |p, a| p.saturating_mul(a.ext))
    }

    /// Item `x` of `m` items over axis 0 (`(src0, dst0)` apart, of `m / items()`
    /// items) and these axes: its offsets in `src` and `dst` (saturating).
    pub(crate) fn offsets(&self, m: u64, x: u64, src0: u64, dst0: u64) -> (u64, u64) {
        let e0 = m.checked_div(self.items()).unwrap_or(0).max(1);
        let i0 = if self.n == 0 { x } else { x % e0 };
        let (mut s, mut d) = (i0.saturating_mul(src0), i0.saturating_mul(dst0));
        let mut q = x / e0;
        let axes = self.axes();
        for (k, a) in axes.iter().enumerate() {
            let i = if k + 1 < axes.len() {
                q % a.ext.max(1)
            } else {
                q
            };
            q /= a.ext.max(1);
            s = s.saturating_add(i.saturating_mul(a.src));
            d = d.saturating_add(i.saturating_mul(a.dst));
        }
        (s, d)
    }
}

/// Batch axes beyond the first, innermost first: `axes[..n]` are axes `1..=n`.
///
/// With outer axes, `batch` counts every item. Axis 0 has `e0 = batch / (ext_1 *
/// ... * ext_n)` items (`src_batch_stride` and `dst_batch_stride` apart), and item
/// `b` is the multi-index `i0 = b % e0`, `i1 = b / e0 % ext_1`, ..., starting at
/// `i0 * src_batch_stride + i1 * axes[0].src + ...` in `src` (and likewise in `dst`).
///
/// ```
/// use bankfree_gen::{ir::shape::{Axis, Outer}, Shape};
/// // 2 x 3 matrices of 4 x 5: axis 0 (3 items) 20 apart, axis 1 (2 items) 60 apart.
/// let s = Shape { outer: Outer::new(&[Axis { ext: 2, src: 60, dst: 60 }]).unwrap(),
///                 src_batch_stride: 20, dst_batch_stride: 20, ..Shape::batched(6, 4, 5) };
/// assert_eq!(s.batch_offsets(4), (20 + 60, 20 + 60));
/// assert_eq!(s.src_elems().unwrap(), 120);
/// ```
pub type Outer = Axes<{ MAX_OUTER as usize }>;
