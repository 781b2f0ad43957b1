//! What the simulator and every test compare with: a plain CPU transpose of
//! any shape and element size, and the register transpose of a block of
//! vectors that the vector kernels perform.
//!
//! ```
//! use bankfree_gen::{check::reference::reference, Shape};
//! let (src, mut dst) = ((0u8..6).collect::<Vec<_>>(), vec![0u8; 6]);
//! reference(&Shape::new(2, 3), 1, &src, &mut dst).unwrap();
//! assert_eq!(dst, [0, 3, 1, 4, 2, 5]);
//! ```

use crate::ir::shape::{Shape, ShapeError};

/// The register transpose of a block of `n = regs.len()` vectors of `per`
/// elements of `elem` bytes, read as `per` rows of `n` elements (row-major):
/// element `c` of row `i` becomes element `i` of vector `c`. With `per == n` (a
/// `vec x vec` block) that is element `c` of vector `i`.
pub fn transpose_block(regs: &[[u8; 16]], elem: usize, per: usize) -> Vec<[u8; 16]> {
    let n = regs.len();
    let mut out = vec![[0u8; 16]; n];
    for (c, o) in out.iter_mut().enumerate() {
        for i in 0..per {
            let (v, e) = ((i * n + c) / per, (i * n + c) % per);
            o[i * elem..(i + 1) * elem].copy_from_slice(&regs[v][e * elem..(e + 1) * elem]);
        }
    }
    out
}

/// The inverse of [`transpose_block`], the register step of an `interleave`
/// kernel: `n = regs.len()` vectors of `per` elements, one row's each, become
/// the block read as one run of `per` positions of `n` elements: element `i` of
/// vector `c` becomes element `i * n + c` of the run.
///
/// ```
/// use bankfree_gen::check::reference::{interleave_block, transpose_block};
/// let rows = [[0u8; 16], [1u8; 16], [2u8; 16]];
/// let run = interleave_block(&rows, 1, 16);
/// assert_eq!(&run[0][..6], &[0, 1, 2, 0, 1, 2]);
/// assert_eq!(transpose_block(&run, 1, 16), rows);
/// ```
pub fn interleave_block(regs: &[[u8; 16]], elem: usize, per: usize) -> Vec<[u8; 16]> {
    let n = regs.len();
    let mut out = vec![[0u8; 16]; n];
    for (c, row) in regs.iter().enumerate() {
        for i in 0..per {
            let (v, e) = ((i * n + c) / per, (i * n + c) % per);
            out[v][e * elem..(e + 1) * elem].copy_from_slice(&row[i * elem..(i + 1) * elem]);
        }
    }
    out
}

/// A plain CPU transpose (the reference the tests and examples compare with):
/// elements of `dst` outside the destination matrix are left as they are.
pub fn transpose_elems<T: Copy>(shape: &Shape, src: &[T], dst: &mut [T]) -> Result<(), ShapeError> {
    shape.check_buffers(src.len() as u64, dst.len() as u64)?;
    if shape.is_empty() {
        return Ok(());
    }
    for b in 0..shape.batch {
        for r in 0..shape.rows {
            for c in 0..shape.cols {
                let s = shape.src_index(b, r, c) as usize;
                let d = shape.dst_index(b, r, c) as usize;
                dst[d] = src[s];
            }
        }
    }
    Ok(())
}

/// [`transpose_elems`] over byte buffers of `elem_bytes`-byte elements.
pub fn reference(
    shape: &Shape,
    elem_bytes: usize,
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), ShapeError> {
    fn by<const N: usize>(shape: &Shape, src: &[u8], dst: &mut [u8]) -> Result<(), ShapeError> {
        let (s, _) = src.as_chunks::<N>();
        let (d, _) = dst.as_chunks_mut::<N>();
        transpose_elems(shape, s, d)
    }
    match elem_bytes {
        1 => by::<1>(shape, src, dst),
        2 => by::<2>(shape, src, dst),
        4 => by::<4>(shape, src, dst),
        8 => by::<8>(shape, src, dst),
        16 => by::<16>(shape, src, dst),
        e => {
            // Other sizes: whole elements as byte ranges.
            let e = e.max(1);
            shape.check_buffers((src.len() / e) as u64, (dst.len() / e) as u64)?;
            let idx: Vec<usize> = (0..src.len() / e).collect();
            let mut out: Vec<usize> = (0..dst.len() / e).map(|_| usize::MAX).collect();
            transpose_elems(shape, &idx, &mut out)?;
            for (d, s) in out.iter().enumerate().filter(|(_, s)| **s != usize::MAX) {
                dst[d * e..(d + 1) * e].copy_from_slice(&src[s * e..(s + 1) * e]);
            }
            Ok(())
        }
    }
}
