//! The shape of one transpose call: batch, rows, columns and pitches, with the
//! buffer sizes they require (checked arithmetic: nothing overflows silently).
//!
//! `src` holds `batch` matrices of `rows x cols` elements: element `(b, r, c)` is at
//! `b * src_batch_stride + r * src_ld + c`. `dst` receives `cols x rows`: element
//! `(b, c, r)` is at `b * dst_batch_stride + c * dst_ld + r`. All in elements.
//!
//! A batch may also run over several axes (a permute's batch): [`Outer`] lists the
//! axes beyond the first, and `b` is then a multi-index.
//!
//! ```
//! use bankfree_gen::Shape;
//! let s = Shape::new(3, 5);
//! assert_eq!((s.src_elems().unwrap(), s.dst_elems().unwrap()), (15, 15));
//! let pitched = Shape { src_ld: 8, ..Shape::new(3, 5) };
//! assert_eq!(pitched.src_elems().unwrap(), 2 * 8 + 5);
//! ```

pub use crate::ir::axes::{Axes, Axis, Chain, Fold, Outer};
use crate::ir::expr::{Var, MAX_FOLD, MAX_OUTER};
use serde::Serialize;

/// The kernel's scalar parameters after `src` and `dst`, in order (all of the
/// kernel's index type, in elements): the values of [`Shape::scalars`].
pub const SCALAR_PARAMS: [&str; 7] = [
    "batch",
    "rows",
    "cols",
    "src_ld",
    "dst_ld",
    "src_batch_stride",
    "dst_batch_stride",
];

/// The parameters a kernel with `outer` outer batch axes takes after
/// [`SCALAR_PARAMS`], in order: the extents of axes `0..outer`, then the source
/// strides of axes `1..=outer`, then the destination ones (their values are the
/// tail of [`Shape::params`]).
pub fn outer_params(outer: u8) -> impl Iterator<Item = Var> {
    let n = outer.min(MAX_OUTER);
    (0..n)
        .map(Var::Ext)
        .chain((1..=n).map(Var::SrcStride))
        .chain((1..=n).map(Var::DstStride))
}

/// The parameters a kernel whose tile sides fold `rows` and `cols` more axes
/// ([`Fold`]) takes after [`outer_params`], in order: the row axes' extents
/// `0..rows`, their source strides `1..=rows`, their destination strides, then
/// the same for the column axes.
pub fn fold_params(rows: u8, cols: u8) -> impl Iterator<Item = Var> {
    let (r, c) = (rows.min(MAX_FOLD), cols.min(MAX_FOLD));
    (0..r)
        .map(Var::RowExt)
        .chain((1..=r).map(Var::RowSrc))
        .chain((1..=r).map(Var::RowDst))
        .chain((0..c).map(Var::ColExt))
        .chain((1..=c).map(Var::ColSrc))
        .chain((1..=c).map(Var::ColDst))
}

/// The most parameters after `src` and `dst` a kernel takes.
pub const MAX_PARAMS: usize = SCALAR_PARAMS.len() + 3 * MAX_OUTER as usize + 6 * MAX_FOLD as usize;

/// Launch-time sizes, in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Shape {
    pub batch: u64,
    pub rows: u64,
    pub cols: u64,
    /// Source row pitch (>= `cols`).
    pub src_ld: u64,
    /// Destination row pitch (>= `rows`).
    pub dst_ld: u64,
    /// Elements between source matrices (>= `rows * src_ld` when `batch > 1`).
    pub src_batch_stride: u64,
    /// Elements between destination matrices (>= `cols * dst_ld` when `batch > 1`).
    pub dst_batch_stride: u64,
    /// Batch axes beyond the first (none for a plain batch).
    pub outer: Outer,
    /// No transpose: the destination keeps the source's order (a permute's
    /// strided copy), element `(b, r, c)` at `b * dst_batch_stride + r * dst_ld +
    /// c` (`dst_ld >= cols`). Only `copy` kernels run such a shape.
    pub copy: bool,
    /// Tile sides that run over several axes (a permute's short inner axes);
    /// none for a plain matrix.
    pub fold: Fold,
}

/// A shape that cannot be launched.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("{which}_ld = {ld} is smaller than a {which} row ({min} elements); pass a leading dimension >= {min}")]
    Ld {
        which: &'static str,
        ld: u64,
        min: u64,
    },
    #[error("{which} batch stride {stride} is smaller than one {which} matrix ({min} elements): matrices would overlap; pass a stride >= {min}")]
    BatchStride {
        which: &'static str,
        stride: u64,
        min: u64,
    },
    #[error("the {which} extent overflows 64 bits (batch {batch}, rows {rows}, cols {cols}); check the sizes")]
    Overflow {
        which: &'static str,
        batch: u64,
        rows: u64,
        cols: u64,
    },
    #[error("{which}'s batch axes overlap: an axis of {ext} items {stride} elements apart lands inside the {span} elements the smaller axes span; pass strides of a layout without overlap")]
    Overlap {
        which: &'static str,
        ext: u64,
        stride: u64,
        span: u64,
    },
    #[error("rows {rows} and cols {cols} are not whole numbers of their folded axes' items, or the shape is a copy (a copy folds no side); pass each side as the product of its axes' extents")]
    FoldSides { rows: u64, cols: u64 },
    #[error("batch {batch} is not a whole number of the outer batch axes' {items} items; pass batch = the product of every batch axis's extent")]
    OuterBatch { batch: u64, items: u64 },
    #[error("{which} holds {have} elements but batch {batch} x {rows} x {cols} with these pitches needs {need}; pass a larger buffer or smaller sizes")]
    TooSmall {
        which: &'static str,
        have: u64,
        need: u64,
        batch: u64,
        rows: u64,
        cols: u64,
    },
}

impl Shape {
    /// One dense `rows x cols` matrix.
    pub fn new(rows: u64, cols: u64) -> Shape {
        Shape::batched(1, rows, cols)
    }

    /// `batch` dense matrices, back to back.
    pub fn batched(batch: u64, rows: u64, cols: u64) -> Shape {
        Shape {
            batch,
            rows,
            cols,
            src_ld: cols,
            dst_ld: rows,
            src_batch_stride: rows.saturating_mul(cols),
            dst_batch_stride: rows.saturating_mul(cols),
            outer: Outer::NONE,
            copy: false,
            fold: Fold::NONE,
        }
    }

    /// Items of batch axis 0: `batch` without outer axes, else `batch` over the
    /// outer axes' items.
    pub fn inner_batch(&self) -> u64 {
        self.batch.checked_div(self.outer.items()).unwrap_or(0)
    }

    /// Where batch item `b` starts in `src` and `dst`, in elements (saturating;
    /// exact for every item of a validated shape).
    pub fn batch_offsets(&self, b: u64) -> (u64, u64) {
        self.outer
            .offsets(self.batch, b, self.src_batch_stride, self.dst_batch_stride)
    }

    /// The kernel's scalar parameters, in the order of [`SCALAR_PARAMS`].
    pub fn scalars(&self) -> [u64; 7] {
        let (src_batch_stride, dst_batch_stride) = self.passed_batch_strides();
        [
            self.batch,
            self.rows,
            self.cols,
            self.src_ld,
            self.dst_ld,
            src_batch_stride,
            dst_batch_stride,
        ]
    }

    /// The batch strides a kernel is passed: 0 for a batch of one, whose item
    /// index is always 0, so that a matrix whose rows lie far apart (a box's
    /// rows step between source planes) does not need the 64-bit build for a
    /// stride it never steps.
    pub fn passed_batch_strides(&self) -> (u64, u64) {
        if self.batch <= 1 {
            (0, 0)
        } else {
            (self.src_batch_stride, self.dst_batch_stride)
        }
    }

    /// Every parameter a kernel with this shape's outer axes takes after `src` and
    /// `dst`, in order: the values of [`SCALAR_PARAMS`] then of [`outer_params`]; the
    /// first `.1` entries are used (no allocation: the launcher calls this per launch).
    pub fn params(&self) -> ([u64; MAX_PARAMS], usize) {
        let mut out = [0u64; MAX_PARAMS];
        out[..SCALAR_PARAMS.len()].copy_from_slice(&self.scalars());
        let mut n = SCALAR_PARAMS.len();
        for v in outer_params(self.outer.n) {
            out[n] = self.outer_value(v);
            n += 1;
        }
        for v in fold_params(self.fold.rows.n, self.fold.cols.n) {
            out[n] = self.fold_value(v);
            n += 1;
        }
        (out, n)
    }

    /// The value of a folded side's parameter (0 for other variables).
    pub fn fold_value(&self, v: Var) -> u64 {
        let axis = |c: &Chain, k: u8| {
            c.axes()
                .get(usize::from(k).wrapping_sub(1))
                .copied()
                .unwrap_or_default()
        };
        let (r, c) = (&self.fold.rows, &self.fold.cols);
        let first = |c: &Chain, m: u64| m.checked_div(c.items()).unwrap_or(0);
        match v {
            Var::RowExt(0) => first(r, self.rows),
            Var::ColExt(0) => first(c, self.cols),
            Var::RowExt(k) => axis(r, k).ext,
            Var::ColExt(k) => axis(c, k).ext,
            Var::RowSrc(k) => axis(r, k).src,
            Var::RowDst(k) => axis(r, k).dst,
            Var::ColSrc(k) => axis(c, k).src,
            Var::ColDst(k) => axis(c, k).dst,
            _ => 0,
        }
    }

    /// Where element `(r, c)` of batch item `b` is in `src`, in elements
    /// (saturating; exact for a validated shape).
    pub fn src_index(&self, b: u64, r: u64, c: u64) -> u64 {
        let rs = self.fold.rows.offsets(self.rows, r, self.src_ld, 1).0;
        let cs = self.fold.cols.offsets(self.cols, c, 1, self.dst_ld).0;
        self.batch_offsets(b)
            .0
            .saturating_add(rs)
            .saturating_add(cs)
    }

    /// The value of an outer axis's parameter (0 for other variables).
    pub fn outer_value(&self, v: Var) -> u64 {
        let axis = |k: u8| {
            self.outer
                .axes()
                .get(usize::from(k).wrapping_sub(1))
                .copied()
                .unwrap_or_default()
        };
        match v {
            Var::Ext(0) => self.inner_batch(),
            Var::Ext(k) => axis(k).ext,
            Var::SrcStride(k) => axis(k).src,
            Var::DstStride(k) => axis(k).dst,
            _ => 0,
        }
    }

    /// The length in elements where the call moves one contiguous run of the
    /// source to the same run of the destination, element `i` to element `i`: a
    /// transpose with a side of one item and unit pitches (`R x 1` into `1 x R`),
    /// or a dense copy. Such a call is a plain memory copy.
    ///
    /// ```
    /// use bankfree_gen::Shape;
    /// assert_eq!(Shape::batched(3, 1000, 1).dense_run(), Some(3000));
    /// assert_eq!(Shape::new(1, 1000).dense_run(), Some(1000));
    /// assert_eq!(Shape::new(2, 1000).dense_run(), None);
    /// assert_eq!(Shape { src_ld: 2, ..Shape::new(1000, 1) }.dense_run(), None);
    /// ```
    pub fn dense_run(&self) -> Option<u64> {
        // Checked on every launch: a transpose with both sides longer than one
        // item, or a fold, leaves at once and nothing is allocated.
        let thin = self.rows == 1 || self.cols == 1 || self.copy;
        if !thin || self.fold.counts() != [0, 0] || self.is_empty() {
            return None;
        }
        // Every axis as (extent, source stride, destination stride).
        let (row_dst, col_dst) = if self.copy {
            (self.dst_ld, 1)
        } else {
            (1, self.dst_ld)
        };
        let mut all = [(0u64, 0u64, 0u64); 3 + MAX_OUTER as usize];
        all[0] = (
            self.inner_batch(),
            self.src_batch_stride,
            self.dst_batch_stride,
        );
        all[1] = (self.rows, self.src_ld, row_dst);
        all[2] = (self.cols, 1, col_dst);
        for (slot, a) in all[3..].iter_mut().zip(self.outer.axes()) {
            *slot = (a.ext, a.src, a.dst);
        }
        // Axes of one item (and the unused slots, of none) go last.
        all.sort_by_key(|a| (a.0 <= 1, a.1));
        let axes = all.iter().take_while(|a| a.0 > 1).copied();
        let mut span = 1u64;
        for (ext, src, dst) in axes {
            if src != span || dst != span {
                return None;
            }
            span = span.checked_mul(ext)?;
        }
        Some(span)
    }

    /// Whether there is nothing to move (the launcher does not launch).
    pub fn is_empty(&self) -> bool {
        self.batch == 0 || self.rows == 0 || self.cols == 0
    }

    /// The destination matrix's rows and columns: `cols x rows`, or `rows x cols`
    /// for a copy.
    pub fn dst_sides(&self) -> (u64, u64) {
        if self.copy {
            (self.rows, self.cols)
        } else {
            (self.cols, self.rows)
        }
    }

    /// Where element `(r, c)` of batch item `b` lands in `dst`, in elements
    /// (saturating; exact for a validated shape).
    pub fn dst_index(&self, b: u64, r: u64, c: u64) -> u64 {
        let base = self.batch_offsets(b).1;
        if self.copy {
            return base
                .saturating_add(r.saturating_mul(self.dst_ld))
                .saturating_add(c);
        }
        let rd = self.fold.rows.offsets(self.rows, r, self.src_ld, 1).1;
        let cd = self.fold.cols.offsets(self.cols, c, 1, self.dst_ld).1;
        base.saturating_add(rd).saturating_add(cd)
    }

    /// Checks pitches and strides.
    pub fn validate(&self) -> Result<(), ShapeError> {
        self.src_extent()?;
        self.dst_extent()?;
        Ok(())
    }

    /// Elements `src` must hold (0 for an empty shape).
    pub fn src_elems(&self) -> Result<u64, ShapeError> {
        self.validate()?;
        self.src_extent()
    }

    /// Elements `dst` must hold (0 for an empty shape).
    pub fn dst_elems(&self) -> Result<u64, ShapeError> {
        self.validate()?;
        self.dst_extent()
    }

    fn src_extent(&self) -> Result<u64, ShapeError> {
        self.extent(
            "src",
            self.rows,
            self.cols,
            self.src_ld,
            self.src_batch_stride,
        )
    }

    fn dst_extent(&self) -> Result<u64, ShapeError> {
        let (nrows, ncols) = self.dst_sides();
        self.extent("dst", nrows, ncols, self.dst_ld, self.dst_batch_stride)
    }

    /// Checks that buffers of `src_len` and `dst_len` elements are large enough.
    pub fn check_buffers(&self, src_len: u64, dst_len: u64) -> Result<(), ShapeError> {
        // Each extent once (the launcher checks on every call): `validate` is these two.
        let need_src = self.src_extent()?;
        let need_dst = self.dst_extent()?;
        for (which, have, need) in [("src", src_len, need_src), ("dst", dst_len, need_dst)] {
            if have < need {
                return Err(ShapeError::TooSmall {
                    which,
                    have,
                    need,
                    batch: self.batch,
                    rows: self.rows,
                    cols: self.cols,
                });
            }
        }
        Ok(())
    }
}
