//! bankfree: bank-conflict-free tiled CUDA transposes.
//!
//! * [`gen`] (`bankfree-gen`) builds kernels from a spec, proves their shared-memory
//!   accesses conflict-free and simulates them on the CPU;
//! * [`runtime`] (`bankfree-runtime`) compiles them with NVRTC for the GPU at hand,
//!   caches them in memory and on disk, and launches them;
//! * `cudarc` is re-exported so users get the matching version.
//!
//! Without the attribute, build a kernel and launch it through the runtime:
//!
//! ```no_run
//! use bankfree::gen::{Kernel, Shape, Strategy, TransposeSpec};
//! use bankfree::runtime::{transpose, KernelSource};
//! let kernel = KernelSource::from_kernel(&Kernel::build(TransposeSpec::new(32, 4, Strategy::Xor)?)?);
//! let stream = bankfree::cudarc::driver::CudaContext::new(0)?.default_stream();
//! let src = stream.clone_htod(&vec![1.0f32; 64 * 48])?;
//! let mut dst = stream.alloc_zeros::<f32>(64 * 48)?;
//! transpose(&kernel, &src, &mut dst, &Shape::new(64, 48), None)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use bankfree_gen as gen;
pub use bankfree_macros::tiled_transpose;
pub use bankfree_runtime as runtime;
pub use bankfree_runtime::{autotune, Error, Result, Tuning};
pub use cudarc;
pub use half;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

/// Element types a transpose may move: plain old data of a size `bankfree-gen`
/// supports (1, 2, 4, 8, 16 bytes, or another multiple of 4 up to 64).
///
/// A transpose copies elements byte for byte, so any `Copy` type with no
/// references and no invariant on its bytes qualifies:
///
/// ```
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Rgb { r: f32, g: f32, b: f32 }
/// // SAFETY: three f32s, `repr(C)`, no padding, valid for any bytes.
/// unsafe impl bankfree::Element for Rgb {}
/// ```
///
/// # Safety
/// Implementors must be valid for any bit pattern copied from another value of the
/// type (no pointers, references or niches), and `repr(C)` or primitive.
#[allow(unsafe_code)] // a marker the user promises with `unsafe impl`
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
