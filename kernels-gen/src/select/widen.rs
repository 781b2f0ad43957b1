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
//! Blocks of 16 bytes or less widen into whatever plan their elements get.
//! Longer ones are whole vectors already, which the copy kernel moves as such;
//! they widen only where the widened plan runs the `wordvec` kernel
//! ([`widens_past_vector`]), and the planner keeps the copy otherwise.
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
//! // Blocks of 5 f32 (20 bytes) widen where the wordvec kernel takes the
//! // transpose of them; its rows start on 16 bytes, so pointers need 16 too.
//! let w = plan(&Permute::new(&[2048, 2048, 5], &[1, 0, 2], 4))?;
//! assert_eq!((w.kind, w.elem_bytes, w.unit, w.align()), (Kind::Transpose, 20, 5, 16));
//! // Not where a pitch of 2047 such elements leaves rows off 16 bytes.
//! assert_eq!(plan(&Permute::new(&[2049, 2047, 5], &[1, 0, 2], 4))?.unit, 1);
//! # Ok::<(), bankfree_gen::select::permute::PermuteError>(())
//! ```

use crate::ir::shape::Axis;
use crate::kernel::geometry::{elem_align, elem_bytes_ok};
use crate::kernel::unit::wordvec_unit;

/// The widest block the planner takes as one element into any plan: the element
/// sizes whose tiles the benchmark measures (2, 4, 8, 12 and 16 bytes). From 16
/// bytes on a block is a whole vector, which the copy kernel moves as such.
pub const WIDEN_MAX_BYTES: u32 = 16;

/// Whether a block of `bytes` (more than [`WIDEN_MAX_BYTES`]) of `elem_bytes`-byte
/// elements may widen: the `wordvec` kernel moves elements of its size (`w`
/// units of 4, 8 or 16 bytes), and ran faster than the unwidened plan for it.
/// That is `w` up to 5 or up to 28 bytes (20, 24, 28, 32, 40, 48 and 64 bytes),
/// and every wordvec size for blocks of 1- and 2-byte elements, whose unwidened
/// copies move 1 or 2 bytes a step. H200, `--example permute -- --shape ...`
/// with tiles down the columns (rows: the H100 class's order), against the
/// unwidened plan in the same call (torch's permute after it):
///
/// | block | transposed matrix | wordvec (rows) | unwidened | torch |
/// |---|---|---|---|---|
/// | 5 f32 | 4096 x 4096 | 0.955 (0.898) | 0.604 | 0.518 |
/// | 3 f64 | 4096 x 4096 | 0.970 (0.925) | 0.742 | 0.719 |
/// | 7 f32 | 2048 x 2048 | 0.891 (0.866) | 0.757 | 0.566 |
/// | 5 f64 | 2048 x 2048 | 0.955 (0.925) | 0.832 | 0.734 |
/// | 10 u16, 20 u8 | 2048 x 4096 | 0.964, 0.964 (0.919, 0.918) | 0.450, 0.275 | 0.367, 0.222 |
/// | 18 u16, 36 u8 | 1000 x 3000 | 0.714, 0.714 (0.696, 0.706) | 0.644, 0.475 | 0.424, 0.252 |
/// | 30 u16, 60 u8 | 2048 x 2048 | 0.781, 0.782 | 0.638, 0.487 | 0.373, 0.222 |
/// | 4, 8 f64 | 4096 x 4096, 2048 x 2048 | 0.909, 0.913 | 0.778, 0.814 | 0.720, 0.841 |
/// | 9, 11, 13 f32 | 2048 x 2048 | 0.701, 0.731, 0.762 | 0.789, 0.797, 0.856 | 0.55 to 0.57 |
/// | 7 f64, 15 f32 | 2048 x 2048 | 0.805, 0.781 | 0.881, 0.848 | 0.752, 0.575 |
///
/// Where a pointer is off 16 bytes (the kernel's rows) the unwidened plan runs
/// ([`block_align`]).
pub fn widens_past_vector(bytes: u32, elem_bytes: u32) -> bool {
    wordvec_unit(bytes).is_some_and(|(_, w)| w <= 5 || bytes <= 28 || elem_bytes <= 2)
}

/// The alignment both pointers need for a plan widened to `bytes`-byte elements:
/// the element's own ([`elem_align`]), or 16 bytes past [`WIDEN_MAX_BYTES`],
/// where only the wordvec kernel, whose rows start on 16 bytes, is wanted.
pub fn block_align(bytes: u32) -> u32 {
    if bytes > WIDEN_MAX_BYTES {
        16
    } else {
        elem_align(bytes)
    }
}

/// The axes, element size and unit of the widened permute of merged `axes` of
/// `elem_bytes`-byte elements, if it widens: an axis innermost on both sides
/// (the permute plans as a copy) spanning a supported element size of at most
/// [`WIDEN_MAX_BYTES`], or one [`widens_past_vector`] takes, every other axis's
/// strides whole blocks of it, and at least one other axis. (The planner then
/// keeps a block past [`WIDEN_MAX_BYTES`] only where the wordvec kernel runs it.)
pub fn widened(axes: &[Axis], elem_bytes: u32) -> Option<(Vec<Axis>, u32, u64)> {
    let inner = axes.iter().position(|a| a.src == 1 && a.dst == 1)?;
    let unit = axes[inner].ext;
    let bytes = u32::try_from(unit).ok()?.checked_mul(elem_bytes)?;
    let fits = bytes <= WIDEN_MAX_BYTES || widens_past_vector(bytes, elem_bytes);
    if !fits || !elem_bytes_ok(bytes) || axes.len() < 2 {
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
    fn blocks_past_a_vector_widen_for_the_wordvec_sizes_measured_faster() {
        let yes = |bytes, e| widens_past_vector(bytes, e);
        // Up to 5 units, or up to 28 bytes, whatever the permute's elements.
        for (bytes, e) in [(20, 4), (24, 8), (24, 4), (28, 4), (40, 8), (20, 1)] {
            assert!(yes(bytes, e), "{bytes} of {e}");
        }
        // Longer ones only of 1- and 2-byte elements.
        for bytes in [36, 44, 52, 56, 60] {
            assert!(!yes(bytes, 4) && yes(bytes, 2) && yes(bytes, 1), "{bytes}");
        }
        // Blocks of 16-byte units (2 to 4 of them) of any element.
        for bytes in [32, 48, 64] {
            assert!(yes(bytes, 8) && yes(bytes, 4), "{bytes}");
        }
        // Sizes the wordvec kernel does not move.
        for bytes in [17, 18, 68] {
            assert!(!yes(bytes, 1) && !yes(bytes, 2), "{bytes}");
        }
        assert_eq!(
            [12, 16, 20, 40].map(block_align),
            [4, 16, 16, 16],
            "past 16 bytes: the wordvec kernel's rows"
        );
    }

    #[test]
    fn only_short_blocks_whose_strides_are_whole_blocks_widen() {
        // [a, b, 2] f16 -> [b, a, 2]: 4-byte blocks.
        let axes = [axis(510, 32896, 2), axis(16448, 2, 1020), axis(2, 1, 1)];
        let (wide, bytes, unit) = widened(&axes, 2).expect("widens");
        assert_eq!((bytes, unit), (4, 2));
        assert_eq!(wide, vec![axis(510, 16448, 1), axis(16448, 1, 510)]);
        // Blocks of 68 bytes; of 3 bytes (of 12 they widen); a stride off the
        // block; one axis; no axis innermost on both sides.
        assert!(widened(&axes, 34).is_none());
        let three = [axis(510, 49344, 3), axis(16448, 3, 1530), axis(3, 1, 1)];
        assert!(widened(&three, 1).is_none());
        assert!(widened(&three, 4).is_some());
        let odd = [axis(510, 32897, 2), axis(16448, 2, 1020), axis(2, 1, 1)];
        assert!(widened(&odd, 2).is_none());
        assert!(widened(&[axis(7, 1, 1)], 2).is_none());
        assert!(widened(&[axis(7, 1, 9), axis(9, 7, 1)], 2).is_none());
    }
}
