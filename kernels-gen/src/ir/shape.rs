//! The shape of one transpose call: batch, rows, columns and pitches, with the
//! buffer sizes they require (checked arithmetic: nothing overflows silently).
//!
//! `src` holds `batch` matrices of `rows x cols` elements: element `(b, r, c)` is at
//! `b * src_batch_stride + r * src_ld + c`. `dst` receives `cols x rows`: element
//! `(b, c, r)` is at `b * dst_batch_stride + c * dst_ld + r`. All in elements.
//!
//! ```
//! use bankfree_gen::Shape;
//! let s = Shape::new(3, 5);
//! assert_eq!((s.src_elems().unwrap(), s.dst_elems().unwrap()), (15, 15));
//! let pitched = Shape { src_ld: 8, ..Shape::new(3, 5) };
//! assert_eq!(pitched.src_elems().unwrap(), 2 * 8 + 5);
//! ```

use serde::Serialize;

/// The kernel's scalar parameters after `src` and `dst`, in order (all of the
/// kernel's index type, in elements): the values of [`Shape::scalars`].
pub(crate) const SCALAR_PARAMS: [&str; 7] = [
    "batch",
    "rows",
    "cols",
    "src_ld",
    "dst_ld",
    "src_batch_stride",
    "dst_batch_stride",
];

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
        }
    }

    /// The kernel's scalar parameters, in the order of [`SCALAR_PARAMS`].
    pub fn scalars(&self) -> [u64; 7] {
        [
            self.batch,
            self.rows,
            self.cols,
            self.src_ld,
            self.dst_ld,
            self.src_batch_stride,
            self.dst_batch_stride,
        ]
    }

    /// Whether there is nothing to move (the launcher does not launch).
    pub fn is_empty(&self) -> bool {
        self.batch == 0 || self.rows == 0 || self.cols == 0
    }

    /// Checks pitches and strides.
    pub fn validate(&self) -> Result<(), ShapeError> {
        if self.is_empty() {
            return Ok(());
        }
        self.extent(
            "src",
            self.rows,
            self.cols,
            self.src_ld,
            self.src_batch_stride,
        )?;
        self.extent(
            "dst",
            self.cols,
            self.rows,
            self.dst_ld,
            self.dst_batch_stride,
        )?;
        Ok(())
    }

    /// Elements `src` must hold (0 for an empty shape).
    pub fn src_elems(&self) -> Result<u64, ShapeError> {
        self.validate()?;
        self.extent(
            "src",
            self.rows,
            self.cols,
            self.src_ld,
            self.src_batch_stride,
        )
    }

    /// Elements `dst` must hold (0 for an empty shape).
    pub fn dst_elems(&self) -> Result<u64, ShapeError> {
        self.validate()?;
        self.extent(
            "dst",
            self.cols,
            self.rows,
            self.dst_ld,
            self.dst_batch_stride,
        )
    }

    /// Checks that buffers of `src_len` and `dst_len` elements are large enough.
    pub fn check_buffers(&self, src_len: u64, dst_len: u64) -> Result<(), ShapeError> {
        for (which, have, need) in [
            ("src", src_len, self.src_elems()?),
            ("dst", dst_len, self.dst_elems()?),
        ] {
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

    /// `(batch - 1) * stride + (nrows - 1) * ld + ncols`, validated.
    fn extent(
        &self,
        which: &'static str,
        nrows: u64,
        ncols: u64,
        ld: u64,
        stride: u64,
    ) -> Result<u64, ShapeError> {
        if self.is_empty() {
            return Ok(0);
        }
        if ld < ncols {
            return Err(ShapeError::Ld {
                which,
                ld,
                min: ncols,
            });
        }
        let overflow = ShapeError::Overflow {
            which,
            batch: self.batch,
            rows: self.rows,
            cols: self.cols,
        };
        let matrix = (nrows - 1)
            .checked_mul(ld)
            .and_then(|x| x.checked_add(ncols))
            .ok_or(overflow.clone())?;
        if self.batch > 1 && stride < matrix {
            return Err(ShapeError::BatchStride {
                which,
                stride,
                min: matrix,
            });
        }
        let total = (self.batch - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(matrix))
            .ok_or(overflow)?;
        // Kernel index math is 64-bit signed in the model: keep every extent below 2^62.
        if total >= 1 << 62 {
            return Err(ShapeError::Overflow {
                which,
                batch: self.batch,
                rows: self.rows,
                cols: self.cols,
            });
        }
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_needs_nothing() {
        for s in [Shape::new(0, 5), Shape::new(5, 0), Shape::batched(0, 3, 3)] {
            assert!(s.is_empty());
            assert_eq!(s.src_elems(), Ok(0));
            assert_eq!(s.check_buffers(0, 0), Ok(()));
        }
    }

    #[test]
    fn pitches_and_batches() {
        let s = Shape {
            src_ld: 10,
            dst_ld: 4,
            src_batch_stride: 40,
            dst_batch_stride: 30,
            ..Shape::batched(2, 3, 7)
        };
        assert_eq!(s.src_elems(), Ok(40 + 2 * 10 + 7));
        assert_eq!(s.dst_elems(), Ok(30 + 6 * 4 + 3));
        let bad = Shape { src_ld: 6, ..s };
        assert_eq!(
            bad.validate(),
            Err(ShapeError::Ld {
                which: "src",
                ld: 6,
                min: 7
            })
        );
        let overlap = Shape {
            dst_batch_stride: 20,
            ..s
        };
        assert!(matches!(
            overlap.validate(),
            Err(ShapeError::BatchStride { which: "dst", .. })
        ));
    }

    #[test]
    fn overflow_is_an_error() {
        let s = Shape::new(u64::MAX, u64::MAX);
        assert!(matches!(s.validate(), Err(ShapeError::Overflow { .. })));
        let s = Shape::batched(u64::MAX, 2, 2);
        assert!(matches!(s.src_elems(), Err(ShapeError::Overflow { .. })));
    }

    #[test]
    fn small_buffers_are_named() {
        let e = Shape::new(4, 4).check_buffers(16, 15).unwrap_err();
        assert!(e.to_string().starts_with("dst holds 15 elements"), "{e}");
    }
}
