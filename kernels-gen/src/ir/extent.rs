//! What a shape's buffers must hold: the extent of one side, checked without
//! overflow, with outer batch axes and folded sides laid out without overlap.

use crate::ir::axes::{Axis, Fold};
use crate::ir::expr::{Var, MAX_FOLD, MAX_OUTER};
use crate::ir::shape::{Shape, ShapeError};

impl Shape {
    /// `(batch - 1) * stride + (nrows - 1) * ld + ncols`, validated.
    pub(crate) fn extent(
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
        if self.outer.n > 0 || self.fold != Fold::NONE {
            return self.outer_extent(which, nrows, ncols, ld);
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
        // Matrices may interleave (a permute's batch axis between its two tile
        // axes) as long as no two elements share a place.
        let interleaved = || self.outer_extent(which, nrows, ncols, ld).is_ok();
        if self.batch > 1 && stride < matrix && !interleaved() {
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

    /// [`Shape::extent`] with outer batch axes: every axis, the matrix's two
    /// included, sorted by stride, must start past what the smaller ones span (a
    /// layout without overlap; axes may interleave).
    fn outer_extent(
        &self,
        which: &'static str,
        nrows: u64,
        ncols: u64,
        ld: u64,
    ) -> Result<u64, ShapeError> {
        let items = self.outer.items();
        if items == 0 || !self.batch.is_multiple_of(items) {
            return Err(ShapeError::OuterBatch {
                batch: self.batch,
                items,
            });
        }
        let src = which == "src";
        let first = if src {
            self.src_batch_stride
        } else {
            self.dst_batch_stride
        };
        // (extent, stride) of every axis, on the stack: the launcher checks per call.
        let mut all = [(0u64, 0u64); 3 + 2 * MAX_FOLD as usize + MAX_OUTER as usize];
        let mut n = 0;
        let mut push = |a: (u64, u64)| {
            all[n] = a;
            n += 1;
        };
        push((self.inner_batch(), first));
        let side = |x: &Axis| (x.ext, if src { x.src } else { x.dst });
        if self.fold == Fold::NONE {
            push((ncols, 1));
            push((nrows, ld));
        } else {
            // Axis 0 of each side, then their further axes.
            let (r, c) = (&self.fold.rows, &self.fold.cols);
            let e = |v| self.fold_value(v);
            let (r0, c0) = if src {
                ((e(Var::RowExt(0)), self.src_ld), (e(Var::ColExt(0)), 1))
            } else {
                ((e(Var::RowExt(0)), 1), (e(Var::ColExt(0)), self.dst_ld))
            };
            if self.copy
                || r0.0.saturating_mul(r.items()) != self.rows
                || c0.0.saturating_mul(c.items()) != self.cols
            {
                return Err(ShapeError::FoldSides {
                    rows: self.rows,
                    cols: self.cols,
                });
            }
            push(r0);
            push(c0);
            r.axes().iter().chain(c.axes()).for_each(|a| push(side(a)));
        }
        self.outer.axes().iter().for_each(|a| push(side(a)));
        let axes = &mut all[..n];
        axes.sort_by_key(|&(ext, stride)| (ext <= 1, stride));
        let used = axes.iter().take_while(|&&(ext, _)| ext > 1).count();
        let overflow = ShapeError::Overflow {
            which,
            batch: self.batch,
            rows: self.rows,
            cols: self.cols,
        };
        let mut span = 1u64;
        for &(ext, stride) in &axes[..used] {
            if stride < span {
                return Err(ShapeError::Overlap {
                    which,
                    ext,
                    stride,
                    span,
                });
            }
            span = (ext - 1)
                .checked_mul(stride)
                .and_then(|x| x.checked_add(span))
                .ok_or(overflow.clone())?;
        }
        if span >= 1 << 62 {
            return Err(overflow);
        }
        Ok(span)
    }
}
