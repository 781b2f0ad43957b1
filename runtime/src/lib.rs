//! `bankfree-runtime`: finds CUDA and NVRTC, compiles what `bankfree-gen` emits for
//! the GPU at hand, caches the binaries in memory and on disk, and launches them.
//!
//! Nothing here panics when the driver or NVRTC is missing: those are
//! [`Error::DriverNotFound`] and [`Error::NvrtcNotFound`], whose messages say what
//! was searched and how to install the missing piece.
//!
//! ```no_run
//! use bankfree_gen::{Kernel, Shape, Strategy, TransposeSpec};
//! use bankfree_runtime::{transpose, KernelSource};
//! use cudarc::driver::CudaContext;
//!
//! bankfree_runtime::probe()?;                                 // driver, GPU and NVRTC, or an error
//! let kernel = KernelSource::from_kernel(&Kernel::build(TransposeSpec::new(32, 4, Strategy::Xor)?)?);
//! let stream = CudaContext::new(0).map_err(|e| e.to_string())?.default_stream();
//! let src = stream.clone_htod(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).map_err(|e| e.to_string())?;
//! let mut dst = stream.alloc_zeros::<f32>(6).map_err(|e| e.to_string())?;
//! transpose(&kernel, &src, &mut dst, &Shape::new(2, 3), None)?; // dst = 3 x 2
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Caches
//! * In memory: per CUDA context and kernel; many threads asking at once compile once.
//! * On disk: `BANKFREE_CACHE_DIR` or the user's cache folder (`$XDG_CACHE_HOME/bankfree`),
//!   off with `BANKFREE_CACHE=off`; read only when the folder is this user's and
//!   nobody else can write it; see [`disk`].
//! * [`stats`] counts compiles, disk hits and memory hits.
//! * [`autotune`] keeps each call class's fastest kernel in the same folder
//!   (`tune/`); see [`tune`].

pub mod compiler;
pub mod disk;
pub mod error;
pub mod kernel;
pub mod tune;

mod buffer;
mod cache;
pub mod device;
mod discover;
#[cfg(feature = "nccl")]
pub mod dist;
#[allow(unsafe_code)]
mod ffi;
mod gathered;
mod launch;
mod permute;

pub use buffer::{DstArg, SrcArg};
pub use cache::{binary, stats, Stats};
pub use discover::candidate_dirs as nvrtc_search_dirs;
pub use error::{Error, Result};
pub use gathered::{transpose_auto, transpose_gathered};
pub use kernel::KernelSource;
pub use launch::{transpose, transpose_first};
pub use permute::{permute, permute_with, PermuteOptions};
pub use tune::{autotune, Tuning};

/// What this machine offers.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    pub device: String,
    /// `(major, minor)` compute capability of GPU 0.
    pub compute_capability: (i32, i32),
    pub nvrtc: (i32, i32),
    /// The measured class GPU 0's defaults are picked for ([`device`]).
    pub gpu_class: bankfree_gen::select::device::GpuClass,
    /// Peak DRAM bandwidth per SM of GPU 0 in GB/s, where the driver reports it.
    pub bandwidth_per_sm: Option<f64>,
    /// Whether kernels launch on GPU 0 as programmatic dependents of the kernel
    /// before them ([`device::programmatic`]).
    pub programmatic: bool,
}

/// Checks for the driver, GPU 0 and NVRTC, in that order, without panicking.
pub fn probe() -> Result<Probe> {
    discover::driver()?;
    let ctx = cudarc::driver::CudaContext::new(0).map_err(|e| {
        let no_device = matches!(
            e.0,
            cudarc::driver::sys::CUresult::CUDA_ERROR_NO_DEVICE
                | cudarc::driver::sys::CUresult::CUDA_ERROR_INVALID_DEVICE
        );
        if no_device {
            Error::NoDevice {
                detail: format!("{:?}", e.0),
            }
        } else {
            Error::cuda(e, "opening GPU 0")
        }
    })?;
    let device = ctx
        .name()
        .map_err(|e| Error::cuda(e, "reading the device name"))?;
    let compute_capability = ctx
        .compute_capability()
        .map_err(|e| Error::cuda(e, "reading the compute capability"))?;
    let nvrtc = compiler::nvrtc_version()?;
    Ok(Probe {
        device,
        compute_capability,
        nvrtc,
        gpu_class: device::class(&ctx),
        bandwidth_per_sm: device::bandwidth_per_sm(&ctx),
        programmatic: device::programmatic(&ctx),
    })
}
