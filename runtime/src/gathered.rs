//! One matrix that the permute planner gathers, run as that gather where a
//! `#[tiled_transpose]` function with `tile = auto` would otherwise run its
//! kernel list.

use crate::buffer::{DstArg, SrcArg};
use crate::error::Result;
use crate::kernel::KernelSource;
use crate::launch::{transpose_first, transpose_units, On};
use crate::permute::{planned, PermuteOptions, Planned};
use bankfree_gen::select::gather::vector_runs;
use bankfree_gen::select::permute::Kind;
use bankfree_gen::{Shape, Strategy};
use cudarc::driver::CudaStream;
use std::sync::Arc;

/// Runs a transpose of one matrix (`shape.batch` 1, any pitches; what a
/// `#[tiled_transpose]` function with `tile = auto` gets) as the gather the
/// permute planner makes of the same call, where it makes one: the destination
/// written as one dense run, each element read from its own address
/// ([`bankfree_gen::select::gather`]). `None` where the planner keeps the call
/// a transpose, the list's vector kernel takes the call
/// ([`vector_runs`]: the gather was never measured against it), or the call
/// is empty, batched, refused or its buffers too short: the caller's kernel
/// list runs it then (and reports any error in its terms).
///
/// Of plain matrices, the planner gathers those whose tiles would stay partly
/// empty or split their destination's sectors where the gather uses the
/// source's sectors well: mostly 1-byte matrices of 33 to 256 rows that the
/// list would run on a skew or 1-element tile, and 2-byte ones of 33 to 128
/// rows whose rows are not whole sectors (H100, 2026-11-27, of memcpy, gathered against the
/// attribute's list: `101 x 400001` u8 0.52 and 0.33, `40 x 1000001` u8 0.81
/// and 0.31, `200 x 200001` u8 0.58 and 0.34, `66 x 254203` f16 0.77 and
/// 0.45; torch 0.28, 0.41, 0.15 and 0.54).
pub fn transpose_gathered<T, S, D>(
    src: &S,
    dst: &mut D,
    shape: &Shape,
    stream: Option<&CudaStream>,
) -> Option<Result<()>>
where
    S: SrcArg<T> + ?Sized,
    D: DstArg<T> + ?Sized,
{
    if shape
        .check_buffers(src.len() as u64, dst.len() as u64)
        .is_err()
    {
        return None;
    }
    let elem_bytes = u32::try_from(std::mem::size_of::<T>()).ok()?;
    let planned = plain_gather(shape, elem_bytes)?;
    let call = Option::as_ref(&planned)?;
    Some(transpose_units(
        &call.kernels,
        src,
        dst,
        &call.shape,
        On::stream(stream),
        1,
    ))
}

/// What a `tile = auto` function runs: [`transpose_gathered`] where the
/// planner gathers the call, else the first of `kernels` that fits and suits
/// it ([`transpose_first`]).
pub fn transpose_auto<T, S, D>(
    kernels: &[KernelSource],
    src: &S,
    dst: &mut D,
    shape: &Shape,
    stream: Option<&CudaStream>,
) -> Result<()>
where
    S: SrcArg<T> + ?Sized,
    D: DstArg<T> + ?Sized,
{
    transpose_gathered(src, dst, shape, stream)
        .unwrap_or_else(|| transpose_first(kernels, src, dst, shape, stream))
}

/// The planned gather of a one-matrix transpose `shape` of `elem_bytes`-byte
/// elements, where the planner gathers it ([`transpose_gathered`]).
fn plain_gather(shape: &Shape, elem_bytes: u32) -> Option<Arc<Planned>> {
    let plain = shape.batch == 1
        && !shape.copy
        && shape.outer.n == 0
        && shape.fold == bankfree_gen::ir::shape::Fold::NONE
        && !shape.is_empty();
    if !plain {
        return None;
    }
    let (rows, cols) = (
        usize::try_from(shape.rows).ok()?,
        usize::try_from(shape.cols).ok()?,
    );
    let src_strides = [usize::try_from(shape.src_ld).ok()?, 1];
    let dst_strides = [usize::try_from(shape.dst_ld).ok()?, 1];
    let opts = PermuteOptions {
        src_strides: Some(&src_strides),
        dst_strides: Some(&dst_strides),
        ..PermuteOptions::default()
    };
    let planned = planned(&[rows, cols], &[1, 0], &opts, elem_bytes, Strategy::Xor).ok()?;
    let call = Option::as_ref(&planned)?;
    let gathers = call.kind == Kind::Gather && call.unit == 1;
    (gathers && !vector_runs(shape, elem_bytes)).then_some(planned.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_transpose_gathers_where_the_planner_gathers_it() {
        let wide = Shape::new(101, 400001);
        let gathered = plain_gather(&wide, 1).expect("101 x 400001 u8 gathers");
        let c = Option::as_ref(&gathered).expect("a call");
        let (shape, kernels) = (&c.shape, &c.kernels);
        assert_eq!((shape.rows, shape.cols, shape.batch), (101, 1, 400001));
        assert!(kernels
            .iter()
            .all(|k| k.geometry().form == bankfree_gen::Form::Small));
        // Any source pitch.
        let pitched = Shape {
            src_ld: 400011,
            ..wide
        };
        assert!(plain_gather(&pitched, 1).is_some());
        // Not where the planner keeps tiles, nor a destination with a pitch (the
        // gather writes one dense run), nor a batch, nor an empty call.
        assert!(plain_gather(&Shape::new(8192, 8192), 1).is_none());
        assert!(plain_gather(&Shape::new(500, 80001), 1).is_none());
        assert!(plain_gather(
            &Shape {
                dst_ld: 110,
                ..wide
            },
            1
        )
        .is_none());
        assert!(plain_gather(&Shape::batched(2, 101, 400001), 1).is_none());
        // Sides the vector kernel takes keep the list (the permute planner
        // gathers 128 x 262144 u8; the attribute runs its vec kernel).
        assert!(plain_gather(&Shape::new(128, 262144), 1).is_none());
        assert!(plain_gather(&Shape::new(0, 400001), 1).is_none());
    }
}
