//! Permutes that keep a short innermost axis in place, planned on wider
//! elements.
//!
//! Where one axis is innermost on both sides, a permute moves whole blocks of
//! it; a copy kernel moves each block as vectors, from wherever the other axes
//! put it. Short blocks leave most of each source sector to other blocks that
//! the copy reaches much later, or not whole vectors to store. Taking each
//! block as one element of `ext * elem_bytes` bytes turns the rest into a
//! permute of those elements, which the planner runs as a transpose (or a
//! gather) that reads and writes whole sectors.
//!
//! ```
//! use bankfree_gen::select::permute::{plan, plan_unwidened, Kind, Permute};
//! // [a, b, 2] -> [b, a, 2] of f16: blocks of 4 bytes, a transpose of u32s.
//! let p = Permute::new(&[510, 16448, 2], &[1, 0, 2], 2);
//! let w = plan(&p)?;
//! assert_eq!((w.kind, w.elem_bytes, w.unit), (Kind::Transpose, 4, 2));
//! assert_eq!((w.shape.rows, w.shape.cols), (510, 16448));
//! // Where a pointer is off 4 bytes the runtime runs the plain plan instead.
//! assert_eq!(plan_unwidened(&p)?.elem_bytes, 2);
//! // Blocks of 256 bytes stay a copy.
//! assert_eq!(plan(&Permute::new(&[4, 2048, 128], &[1, 0, 2], 2))?.kind, Kind::Copy);
//! # Ok::<(), bankfree_gen::select::permute::PermuteError>(())
//! ```

use crate::ir::shape::Axis;
use crate::kernel::geometry::elem_bytes_ok;

/// The widest block the planner takes as one element: the element sizes whose
/// tiles the benchmark measures (2, 4, 8, 12 and 16 bytes). From 16 bytes on a
/// block is a whole vector, which the copy kernel moves as such.
pub const WIDEN_MAX_BYTES: u32 = 16;

/// The axes, element size and unit of the widened permute of merged `axes` of
/// `elem_bytes`-byte elements, if it widens: an axis innermost on both sides
/// (the permute plans as a copy) spanning a supported element size of at most
/// [`WIDEN_MAX_BYTES`], every other axis's strides whole blocks of it, and at
/// least one other axis.
pub fn widened(axes: &[Axis], elem_bytes: u32) -> Option<(Vec<Axis>, u32, u64)> {
    let inner = axes.iter().position(|a| a.src == 1 && a.dst == 1)?;
    let unit = axes[inner].ext;
    let bytes = u32::try_from(unit).ok()?.checked_mul(elem_bytes)?;
    if bytes > WIDEN_MAX_BYTES || !elem_bytes_ok(bytes) || axes.len() < 2 {
        return None;
    }
    let rest = axes.iter().enumerate().filter(|&(i, _)| i != inner);
    if rest
        .clone()
        .any(|(_, a)| a.src % unit != 0 || a.dst % unit != 0)
    {
        return None;
    }
    let wide = rest
        .map(|(_, a)| Axis {
            ext: a.ext,
            src: a.src / unit,
            dst: a.dst / unit,
        })
        .collect();
    Some((wide, bytes, unit))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(ext: u64, src: u64, dst: u64) -> Axis {
        Axis { ext, src, dst }
    }

    #[test]
    fn only_short_blocks_whose_strides_are_whole_blocks_widen() {
        // [a, b, 2] f16 -> [b, a, 2]: 4-byte blocks.
        let axes = [axis(510, 32896, 2), axis(16448, 2, 1020), axis(2, 1, 1)];
        let (wide, bytes, unit) = widened(&axes, 2).expect("widens");
        assert_eq!((bytes, unit), (4, 2));
        assert_eq!(wide, vec![axis(510, 16448, 1), axis(16448, 1, 510)]);
        // Blocks of 32 bytes; of 3 bytes (of 12 they widen); a stride off the
        // block; one axis; no axis innermost on both sides.
        assert!(widened(&axes, 16).is_none());
        let three = [axis(510, 49344, 3), axis(16448, 3, 1530), axis(3, 1, 1)];
        assert!(widened(&three, 1).is_none());
        assert!(widened(&three, 4).is_some());
        let odd = [axis(510, 32897, 2), axis(16448, 2, 1020), axis(2, 1, 1)];
        assert!(widened(&odd, 2).is_none());
        assert!(widened(&[axis(7, 1, 1)], 2).is_none());
        assert!(widened(&[axis(7, 1, 9), axis(9, 7, 1)], 2).is_none());
    }
}
