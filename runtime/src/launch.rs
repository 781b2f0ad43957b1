//! The one entry point the generated glue calls.

use crate::cache;
use crate::device;
use crate::error::{Error, Result, Unfit};
use crate::ffi;
use crate::kernel::KernelSource;
use crate::tune;
use bankfree_gen::check::fit::kernel_refusal;
use bankfree_gen::check::index32;
use bankfree_gen::check::suit::kernel_suits_at;
use bankfree_gen::kernel::launch::{launch, Launch};
use bankfree_gen::kernel::order::TileOrder;
use bankfree_gen::kernel::squat::SQUAT_BLOCKS_PER_SM;
use bankfree_gen::select::device::realign_order;
use bankfree_gen::select::split::thin_split;
use bankfree_gen::select::widen::block_align;
use bankfree_gen::Shape;
use cudarc::driver::{CudaStream, LaunchConfig};
use std::sync::Arc;

use crate::buffer::{DstArg, SrcArg};

/// Transposes with the first of `kernels` that can run this call and whose form
/// suits its shape (a `vec > 1` tile kernel needs dimensions, pitches and strides
/// divisible by its `vec` and aligned pointers; a tall or wide kernel a narrow side
/// of at most 32 stored as one run, and a tall one of 1- or 2-byte elements an
/// aligned source; a skew kernel is for destinations whose rows do not start on
/// 32-byte sectors): list the most specialized first and a `vec = 1`
/// tile kernel last. Otherwise as [`transpose`]; with no kernel that fits, the last
/// one's [`Error::Unfit`].
///
/// Where [`autotune`](crate::autotune) recorded a winner for this call's class, the
/// winner runs instead; inside `autotune`, this call is the one that is tuned.
pub fn transpose_first<T, S, D>(
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
    transpose_units(kernels, src, dst, shape, On::stream(stream), 1)
}

/// Where a call launches: its stream (else `dst`'s) and, where set, at most
/// this many blocks per SM (the kernels' tile loops stride over the grid, so a
/// capped grid moves the same tiles and leaves the rest of the GPU to work queued
/// beside it).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct On<'a> {
    pub stream: Option<&'a CudaStream>,
    pub blocks_per_sm: Option<u32>,
}

impl<'a> On<'a> {
    pub fn stream(stream: Option<&'a CudaStream>) -> On<'a> {
        On {
            stream,
            blocks_per_sm: None,
        }
    }
}

/// [`transpose_first`] with kernels whose element is `unit` of `T` (a widened
/// permute's blocks): `shape` counts in them, and each kernel needs both
/// pointers on its element's alignment too ([`Unfit::Unit`] where one is not).
pub(crate) fn transpose_units<T, S, D>(
    kernels: &[KernelSource],
    src: &S,
    dst: &mut D,
    shape: &Shape,
    how: On<'_>,
    unit: u64,
) -> Result<()>
where
    S: SrcArg<T> + ?Sized,
    D: DstArg<T> + ?Sized,
{
    let mut own = None;
    let on = launch_stream(how.stream, &*dst, &mut own);
    let how = On {
        stream: Some(on),
        ..how
    };
    let Some(last) = kernels.last() else {
        return Err(Error::NoKernels);
    };
    if let [only] = kernels {
        // Nothing to choose or tune: the kernel's own checks, as `transpose`.
        return run(only, src, dst, shape, how, false, unit);
    }
    same_context(src, dst, on)?;
    // Asked once per call: each address is one `device_ptr` (events on a stream).
    let at = (src.address(on), dst.address(on));
    let fit: Vec<bool> = kernels
        .iter()
        .map(|k| why_unfit(k, at, shape, unit).is_none())
        .collect();
    let suit: Vec<bool> = kernels
        .iter()
        .map(|k| kernel_suits_at(k.geometry(), k.quotients(), shape, at))
        .collect();
    let bytes = shape
        .batch
        .saturating_mul(shape.rows)
        .saturating_mul(shape.cols)
        .saturating_mul(u64::from(last.geometry().elem_bytes));
    let class = tune::Class::new(&fit, &suit, bytes, shape.rows, shape.cols);
    let candidates: Vec<usize> = (0..kernels.len()).filter(|&i| fit[i]).collect();
    // The first kernel that fits and suits; where none suits, the last that fits
    // (a list ends with a kernel that runs every shape).
    let untuned = || {
        candidates
            .iter()
            .copied()
            .find(|&i| suit[i])
            .or_else(|| candidates.last().copied())
    };
    if tune::tuning() && candidates.len() > 1 && !shape.is_empty() {
        let ms = tune::time_all(on, candidates.len(), |c| {
            run(&kernels[candidates[c]], src, dst, shape, how, true, unit)
        })?;
        let times = candidates.iter().copied().zip(ms).collect();
        let best = tune::record(on, kernels, class, times, untuned())?;
        return run(&kernels[best], src, dst, shape, how, true, unit);
    }
    let tuned = if candidates.len() > 1 {
        tune::winner(on, kernels, class).filter(|&i| fit[i])
    } else {
        None
    };
    let chosen = tuned.or_else(untuned);
    match chosen {
        Some(i) => run(&kernels[i], src, dst, shape, how, true, unit),
        None => run(last, src, dst, shape, how, false, unit), // its Unfit error
    }
}

/// That `src` and `dst` live in `stream`'s context. Checked before anything asks a
/// buffer for its address (that records events on its stream).
fn same_context<T, S, D>(src: &S, dst: &D, stream: &CudaStream) -> Result<()>
where
    S: SrcArg<T> + ?Sized,
    D: DstArg<T> + ?Sized,
{
    let ctx = stream.context();
    for (what, other) in [("src", src.stream()), ("dst", dst.stream())] {
        if other.context().cu_ctx() != ctx.cu_ctx() {
            return Err(Error::Context {
                what: format!("{what} belongs to another CUDA context than the launch stream"),
            });
        }
    }
    Ok(())
}

/// The stream to launch on: the one given, or else `dst`'s (kept alive in `own`).
fn launch_stream<'a, T, D>(
    stream: Option<&'a CudaStream>,
    dst: &D,
    own: &'a mut Option<Arc<CudaStream>>,
) -> &'a CudaStream
where
    D: DstArg<T> + ?Sized,
{
    match stream {
        Some(s) => s,
        None => own.insert(dst.stream().clone()),
    }
}

/// Why `kernel` cannot run this call over buffers at `(src, dst)`, if it cannot
/// (nothing is formatted: the attribute's calls ask this of every kernel in their
/// list).
fn why_unfit(
    kernel: &KernelSource,
    (src, dst): (u64, u64),
    shape: &Shape,
    unit: u64,
) -> Option<Unfit> {
    let g = kernel.geometry();
    // A widened element loads as its own unit, which `T` does not align (past
    // 16 bytes, as the wordvec kernel's 16-byte rows).
    if unit > 1 {
        let bytes = u64::from(block_align(g.elem_bytes));
        for (what, at) in [("src", src), ("dst", dst)] {
            if !at.is_multiple_of(bytes) {
                return Some(Unfit::Unit { what, bytes });
            }
        }
    }
    if kernel.outer() != shape.outer.n {
        return Some(Unfit::Outer {
            kernel: kernel.outer(),
            shape: shape.outer.n,
        });
    }
    if kernel.fold() != shape.fold.counts() {
        return Some(Unfit::Fold {
            kernel: kernel.fold(),
            shape: shape.fold.counts(),
        });
    }
    if let Some(r) = kernel_refusal(g, kernel.quotients(), shape) {
        return Some(Unfit::Shape(r));
    }
    if g.realigns() || g.stages_words() {
        return None; // any pointer
    }
    let bytes = u64::from(g.vec_bytes());
    // Vector accesses: `vec` elements, or a wordvec kernel's 16 bytes (one
    // unit of its 32- to 64-byte elements too).
    let vectors = g.vec > 1 || g.wordvecs();
    // A small or strip kernel loads single elements and stores vectors.
    if vectors && !g.gathers() && !src.is_multiple_of(bytes) {
        return Some(Unfit::Pointer { what: "src", bytes });
    }
    // Strip and packed tall kernels align their stores with `dst` themselves; a
    // small kernel taking its chunk down the columns stores no vectors.
    if vectors && !dst.is_multiple_of(bytes) && !kernel.aligns_dst() {
        return Some(Unfit::Pointer { what: "dst", bytes });
    }
    None
}

/// Transposes `src` (`shape.batch` matrices of `rows x cols`, pitches and batch
/// strides in elements) into `dst` (`cols x rows` each) with `kernel`, on `stream`
/// or else `dst`'s stream.
///
/// Checks element size, pitches and buffer lengths first (overflow-checked), returns
/// `Ok` without launching for an empty shape, allocates no device memory and never
/// synchronizes, so it can be captured in a CUDA graph once a first call has
/// compiled or loaded the kernel. `src` and `dst` must not overlap.
pub fn transpose<T, S, D>(
    kernel: &KernelSource,
    src: &S,
    dst: &mut D,
    shape: &Shape,
    stream: Option<&CudaStream>,
) -> Result<()>
where
    S: SrcArg<T> + ?Sized,
    D: DstArg<T> + ?Sized,
{
    run(kernel, src, dst, shape, On::stream(stream), false, 1)
}

/// [`transpose`], skipping the fit check where the caller has just made it, of
/// kernel elements `unit` of `T` each (the shape counts in them).
fn run<T, S, D>(
    kernel: &KernelSource,
    src: &S,
    dst: &mut D,
    shape: &Shape,
    how: On<'_>,
    fit_checked: bool,
    unit: u64,
) -> Result<()>
where
    S: SrcArg<T> + ?Sized,
    D: DstArg<T> + ?Sized,
{
    let g = kernel.geometry();
    let t = std::mem::size_of::<T>();
    if unit == 0 || (t as u64).checked_mul(unit) != Some(u64::from(g.elem_bytes)) {
        return Err(Error::ElementSize {
            entry: kernel.entry().to_string(),
            kernel_bytes: g.elem_bytes,
            rust_bytes: t,
        });
    }
    // Whole kernel elements only: what the kernel may touch lies inside both.
    shape.check_buffers(src.len() as u64 / unit, dst.len() as u64 / unit)?;
    if shape.is_empty() {
        return Ok(());
    }
    let mut own = None;
    let stream = launch_stream(how.stream, &*dst, &mut own);
    same_context(src, dst, stream)?;
    let ctx = stream.context();
    if !fit_checked {
        let at = (src.address(stream), dst.address(stream));
        if let Some(why) = why_unfit(kernel, at, shape, unit) {
            return Err(Error::Unfit {
                entry: kernel.entry().to_string(),
                vec: g.vec,
                why,
            });
        }
    }
    // A call the kernel can run that moves one contiguous run to the same run
    // (`R x 1` into `1 x R`, a dense copy) is a copy of those bytes: the copy
    // engine's speed, no kernel.
    if let Some(n) = shape.dense_run() {
        let n = n.saturating_mul(unit) as usize; // within both buffers: checked above
        let from = src.view();
        let mut to = dst.view_mut();
        ffi::copy(&from.slice(..n), &mut to.slice_mut(..n), stream)
            .map_err(|e| Error::cuda(e, "the copy of a call that moves one run"))?;
        return Ok(());
    }
    // The tile order measured fastest on this GPU's class, a thin kernel's entry
    // point for this width (a squat kernel's, height), a realign kernel's tile
    // order for this call, then the 32-bit build where it provably computes every
    // index exactly and is the faster build. The twin's geometry is what the proof
    // of the 32-bit build and the grid take (a skew twin is narrower).
    let kernel = kernel.for_gpu(|| device::class(ctx));
    let kernel = g.width_of(shape).map_or(kernel, |w| kernel.for_width(w));
    // A squat kernel's blocks take several tiles each (`SQUAT_BLOCKS_PER_SM`), and
    // so do a capped call's; a realign kernel's tile order and whether a thin
    // kernel splits its column words depend on how many of their blocks the
    // GPU holds at once. No other launch asks for the SM count.
    let sms = || device::sm_count(ctx);
    let kernel = kernel.split_for(|k| {
        device::thin_split_on() && sms().is_some_and(|n| thin_split(k, shape.batch, shape.rows, n))
    });
    let index64 = kernel.is_index64() || !index32::runs(kernel.geometry(), shape);
    let kernel = kernel.in_order(|| {
        let class = device::class(ctx);
        sms().map_or(TileOrder::Rows, |n| {
            realign_order(class, kernel.geometry(), index64, shape.cols, n)
        })
    });
    let kernel = if index64 { kernel.index64() } else { kernel };
    let loaded = cache::function(ctx, kernel)?;
    let l = launch(
        kernel.geometry(),
        u64::from(kernel.shared_bytes()),
        shape.batch,
        shape.rows,
        shape.cols,
    );
    let grid_x = match kernel.geometry().squats().then(sms).flatten() {
        Some(sms) => l.grid[0].min(SQUAT_BLOCKS_PER_SM.saturating_mul(sms)),
        None => l.grid[0],
    };
    let l = Launch {
        grid: [grid_x, l.grid[1], l.grid[2]],
        ..l
    };
    let l = match how
        .blocks_per_sm
        .and_then(|per| sms().map(|n| per.saturating_mul(n)))
    {
        Some(blocks) => l.capped(blocks),
        None => l,
    };
    let cfg = LaunchConfig {
        grid_dim: (l.grid[0], l.grid[1], l.grid[2]),
        block_dim: (l.block[0], l.block[1], l.block[2]),
        shared_mem_bytes: l.dynamic_shared_bytes,
    };
    // The seven scalars, then the outer axes' (`why_unfit` checked the kernel
    // takes as many as the shape has).
    let (wide, n) = shape.params();
    // Every parameter is below 2^32 when the 32-bit build runs (`index32`).
    let narrow = wide.map(|s| s as u32);
    let scalars = if kernel.is_index64() {
        ffi::Scalars::Wide(&wide[..n])
    } else {
        ffi::Scalars::Narrow(&narrow[..n])
    };
    // On sm_90 and later the kernel launches as a programmatic dependent of the
    // one before it: it starts while that one drains and waits for it to finish
    // before its first memory access (the generated `griddepcontrol.wait`).
    let programmatic = device::programmatic(ctx);
    let (from, _read) = src.ptr(stream);
    let (to, _written) = dst.ptr_mut(stream);
    ffi::launch(stream, &loaded.func, cfg, [from, to], scalars, programmatic)
        .map_err(|e| Error::cuda(e, "the kernel launch"))
}

#[cfg(test)]
mod tests;
