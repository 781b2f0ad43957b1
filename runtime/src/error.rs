//! The runtime's errors: each names what went wrong and how to fix it.

use bankfree_gen::{Refusal, ShapeError, SpecError};
use std::fmt;

/// Everything the runtime can fail with.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// No NVIDIA driver library could be loaded.
    #[error("no NVIDIA driver found: none of {searched} could be loaded by the dynamic loader. \
             Install the NVIDIA driver (it provides libcuda.so.1), or add its folder to LD_LIBRARY_PATH")]
    DriverNotFound { searched: String },

    /// No NVRTC library could be loaded.
    #[error(
        "NVRTC (the CUDA runtime compiler) not found; searched: {searched}. \
             Install the CUDA toolkit, or `pip install nvidia-cuda-nvrtc`, \
             or point BANKFREE_NVRTC at libnvrtc.so.N"
    )]
    NvrtcNotFound { searched: String },

    /// The driver is there but reports no CUDA device.
    #[error("the NVIDIA driver reports no CUDA device ({detail}); check `nvidia-smi` and CUDA_VISIBLE_DEVICES")]
    NoDevice { detail: String },

    /// A CUDA driver call failed; `code` is the `CUresult`.
    #[error("CUDA error {code} ({name}) in {during}")]
    Cuda {
        code: i32,
        name: String,
        during: &'static str,
    },

    /// NVRTC failed to compile a kernel.
    #[error("NVRTC could not compile `{entry}` (options {options:?}): {reason}\n--- log ---\n{log}\n--- source ---\n{source_code}")]
    Compile {
        entry: String,
        reason: String,
        options: Vec<String>,
        log: String,
        source_code: String,
    },

    /// The shape or the buffers do not fit.
    #[error(transparent)]
    Shape(#[from] ShapeError),

    /// A permute the planner refuses.
    #[error(transparent)]
    Permute(#[from] bankfree_gen::select::permute::PermuteError),

    /// A kernel description the generator refuses to build.
    #[error("the kernel cannot be built: {0}")]
    Spec(#[from] SpecError),

    /// The element type does not match the kernel.
    #[error("the kernel `{entry}` moves {kernel_bytes}-byte elements but the buffers hold {rust_bytes}-byte elements; \
             use a kernel built for this element type")]
    ElementSize {
        entry: String,
        kernel_bytes: u32,
        rust_bytes: usize,
    },

    /// The destination lives on another device or context than the kernel launch.
    #[error("{what}; pass buffers and stream of one CUDA context")]
    Context { what: String },

    /// A `vec > 1`, tall or wide kernel cannot run this shape or these pointers.
    #[error(
        "`{entry}` (vec = {vec}) cannot run this call: {why}; `transpose_first` with a \
             vec = 1 tile kernel listed last always finds one that can (the attribute does this)"
    )]
    Unfit { entry: String, vec: u32, why: Unfit },

    /// `transpose_first` was given an empty list.
    #[error("no kernel was given: pass at least one kernel, a vec = 1 tile kernel last (it runs every shape)")]
    NoKernels,

    /// NCCL (for [`dist`](crate::dist)) could not be loaded.
    #[error(
        "NCCL not found: none of {searched} could be loaded by the dynamic loader{found}. \
         Install it (`pip install nvidia-nccl-cu13`, or the system's libnccl2 package) and add \
         its folder to LD_LIBRARY_PATH; cudarc loads it as libnccl.so, so where the folder holds \
         only libnccl.so.2, add a link `libnccl.so -> libnccl.so.2` beside it"
    )]
    NcclNotFound { searched: String, found: String },

    /// An NCCL call failed; `code` is the `ncclResult_t`.
    #[error("NCCL error {code} ({name}) in {during}")]
    Nccl {
        code: i32,
        name: String,
        during: &'static str,
    },

    /// A distributed layout the plan cannot take.
    #[error(transparent)]
    Dist(#[from] bankfree_gen::select::dist::DistError),

    /// The communicators, buffers or layout of a distributed transpose disagree
    /// (on this process, or between ranks: then every rank returns this error).
    #[error("distributed transpose: {detail}")]
    DistMismatch { detail: String },

    /// The kernel needs more shared memory than this device allows per block.
    #[error(
        "`{entry}` needs {needed} bytes of shared memory per block but {device} allows {allowed}; \
             use a smaller tile or `strategy = swizzle`"
    )]
    SharedMemory {
        entry: String,
        needed: u32,
        allowed: u32,
        device: String,
    },
}

impl Error {
    /// A driver error, keeping its code.
    pub(crate) fn cuda(e: cudarc::driver::DriverError, during: &'static str) -> Error {
        Error::Cuda {
            code: e.0 as i32,
            name: format!("{:?}", e.0),
            during,
        }
    }
}

/// A driver error from a cudarc call (allocating, copying, synchronizing), so that a
/// function returning [`Result`] can use `?` on cudarc's calls.
impl From<cudarc::driver::DriverError> for Error {
    fn from(e: cudarc::driver::DriverError) -> Error {
        Error::cuda(e, "a CUDA driver call")
    }
}

/// Why a kernel cannot run a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unfit {
    /// The shape: a dimension not divisible by `vec`, a narrow side too wide...
    Shape(Refusal),
    /// A pointer its vectors need aligned is not.
    Pointer { what: &'static str, bytes: u64 },
    /// A pointer a widened permute's element needs aligned is not (the permute
    /// then runs on its own elements).
    Unit { what: &'static str, bytes: u64 },
    /// The kernel takes another number of outer batch axes than the shape has.
    Outer { kernel: u8, shape: u8 },
    /// The kernel folds another number of further (row, column) axes into its
    /// tile sides than the shape.
    Fold { kernel: [u8; 2], shape: [u8; 2] },
}

impl fmt::Display for Unfit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unfit::Shape(r) => r.fmt(f),
            Unfit::Pointer { what, bytes } => write!(
                f,
                "{what} does not start {bytes}-byte aligned; a vec = 1 kernel runs it"
            ),
            Unfit::Unit { what, bytes } => write!(
                f,
                "{what} does not start {bytes}-byte aligned, which the blocks moved as one element need; the plain plan runs it"
            ),
            Unfit::Outer { kernel, shape } => write!(
                f,
                "the kernel takes {kernel} outer batch axes and the shape has {shape}; build it with `Kernel::with_outer({shape})`"
            ),
            Unfit::Fold { kernel, shape } => write!(
                f,
                "the kernel folds {kernel:?} further (row, column) axes and the shape {shape:?}; build it with `Kernel::with_fold({}, {})`",
                shape[0], shape[1]
            ),
        }
    }
}

/// `Result<T, bankfree_runtime::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;
