//! bankfree: bank-conflict-free tiled CUDA transposes, proven conflict-free before
//! they run.
//!
//! Annotate a function signature and call it:
//!
//! ```no_run
//! use bankfree::prelude::*;
//!
//! /// A pixel of three floats: `derive(Element)` checks it is plain old data.
//! #[derive(Clone, Copy, Default, bankfree::Element)]
//! #[repr(C)]
//! pub struct Rgb { r: f32, g: f32, b: f32 }
//!
//! /// Transposes a `rows x cols` image into `dst` (`cols x rows`).
//! #[tiled_transpose(strategy = pad)]
//! pub fn transpose_rgb(src: &CudaSlice<Rgb>, dst: &mut CudaSlice<Rgb>,
//!                      rows: usize, cols: usize) -> bankfree::Result<()>;
//!
//! fn main() -> bankfree::Result<()> {
//!     let stream = CudaContext::new(0)?.default_stream();       // cudarc errors `?` too
//!     let src = stream.clone_htod(&vec![Rgb::default(); 1080 * 1920])?;
//!     let mut dst = stream.alloc_zeros::<Rgb>(1080 * 1920)?;
//!     transpose_rgb(&src, &mut dst, 1080, 1920)?;
//!     stream.synchronize()?;
//!     Ok(())
//! }
//! ```
//!
//! * [`tiled_transpose`] writes the kernel, proves it conflict-free at compile time
//!   and writes the launch glue; [`Element`] is what it moves (derive it).
//! * [`autotune`] times the kernels a call could run and keeps the fastest.
//! * [`gen`] (`bankfree-gen`) builds kernels from a spec, proves their
//!   shared-memory accesses conflict-free and simulates them on the CPU; [`runtime`]
//!   (`bankfree-runtime`) compiles them with NVRTC, caches and launches them: for
//!   variants of your own.
//! * [`cudarc`] and [`half`] are re-exported so your buffers and ours agree.

pub use bankfree_gen as gen;
pub use bankfree_macros::{tiled_permute, tiled_transpose, Element};
pub use bankfree_runtime as runtime;
pub use bankfree_runtime::{
    autotune, permute, permute_with, Error, PermuteOptions, Result, Tuning,
};
pub use cudarc;
pub use half;

/// The transpose of a matrix sharded by rows across GPUs, over NCCL (the `nccl`
/// feature): see [`runtime::dist`].
#[cfg(feature = "nccl")]
pub use bankfree_runtime::dist;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

// Every form of the attribute, compiled by the doc tests as a user's crate.
#[cfg(doctest)]
#[doc = include_str!("../tests/user-crate.md")]
struct UserCrate;

/// What most programs need: the attribute, [`Element`], errors, autotuning and
/// cudarc's buffer, stream and context types.
pub mod prelude {
    pub use crate::{
        autotune, permute, tiled_permute, tiled_transpose, Element, Error, Result, Tuning,
    };
    pub use cudarc::driver::{CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut};
}

/// Element types a transpose may move: plain old data of a size the generator
/// supports, one of [`gen::ELEM_SIZES`].
///
/// A transpose copies elements byte for byte. Derive it for your own structs: the
/// derive checks `#[repr(C)]` (or `#[repr(transparent)]`), that every field is an
/// `Element` and that there is no padding, and also implements cudarc's
/// `DeviceRepr` and `ValidAsZeroBits`, so the type can be allocated and copied
/// with cudarc without `unsafe`:
///
/// ```
/// #[derive(Clone, Copy, bankfree::Element)]
/// #[repr(C)]
/// struct Rgb { r: f32, g: f32, b: f32 }
///
/// #[derive(Clone, Copy, bankfree::Element)]
/// #[repr(transparent)]
/// struct Meters(f64);
/// ```
///
/// The primitive numbers, [`half::f16`], [`half::bf16`] and arrays of elements
/// are elements already.
///
/// # Safety
/// Implementors must be valid for any bit pattern copied from another value of the
/// type (no pointers, references or niches, no padding), and `repr(C)`,
/// `repr(transparent)` or primitive. `#[derive(Element)]` checks all of this.
#[allow(unsafe_code)] // a marker whose promise the derive checks
pub unsafe trait Element: Copy + 'static {}

macro_rules! elements {
    ($($t:ty),*) => { $(
        // SAFETY: primitive numeric types are valid for any bytes another value had.
        #[allow(unsafe_code)]
        unsafe impl Element for $t {}
    )* };
}
elements!(
    u8,
    i8,
    u16,
    i16,
    u32,
    i32,
    f32,
    u64,
    i64,
    f64,
    u128,
    i128,
    half::f16,
    half::bf16
);
// SAFETY: arrays of elements are elements (no padding between array items).
#[allow(unsafe_code)]
unsafe impl<T: Element, const N: usize> Element for [T; N] {}
