//! bankfree: bank-conflict-free tiled CUDA transposes.
//!
//! * [`gen`] (`bankfree-gen`) builds kernels from a spec, proves their shared-memory
//!   accesses conflict-free and simulates them on the CPU;
//! * [`runtime`] (`bankfree-runtime`) compiles them with NVRTC for the GPU at hand,
//!   caches them in memory and on disk, and launches them;
//! * `cudarc` is re-exported so users get the matching version.
//!
//! The `#[tiled_transpose]` attribute (`bankfree-macros`) is not written yet; until
//! then, build a kernel and launch it through the runtime:
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
pub use bankfree_runtime as runtime;
pub use bankfree_runtime::{Error, Result};
pub use cudarc;
