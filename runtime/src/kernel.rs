//! What the runtime needs to know of one generated kernel.

use bankfree_gen::check::index32::{INDEX64_DEFINE, INDEX64_SUFFIX};
use bankfree_gen::{emit, Geometry, Kernel};
use std::borrow::Cow;

/// A generated kernel: its CUDA C and the launch facts the glue needs. The
/// `#[tiled_transpose]` attribute writes these as `static`s at compile time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSource {
    /// The `extern "C"` entry point.
    pub entry: Cow<'static, str>,
    /// The CUDA C, as `bankfree-gen` emitted it.
    pub source: Cow<'static, str>,
    /// What one block moves and how: the launcher sizes the grid and checks the
    /// shape with it.
    pub geometry: Geometry,
    pub shared_bytes: u32,
    /// Whether this is the source's 64-bit build ([`KernelSource::index64`]); the
    /// launcher runs the 32-bit build where it provably computes the same
    /// ([`bankfree_gen::check::index32`]) and this one otherwise.
    pub index64: bool,
}

impl KernelSource {
    /// The 64-bit build of this kernel: the same source compiled with
    /// `BANKFREE_INDEX64` defined, entry point `<entry>_i64`.
    pub fn index64(&self) -> KernelSource {
        if self.index64 {
            return self.clone();
        }
        KernelSource {
            entry: format!("{}{INDEX64_SUFFIX}", self.entry).into(),
            source: format!("#define {INDEX64_DEFINE}\n{}", self.source).into(),
            index64: true,
            ..self.clone()
        }
    }

    /// From a kernel built at run time.
    pub fn from_kernel(k: &Kernel) -> KernelSource {
        KernelSource {
            entry: k.entry_name().into(),
            source: emit(k).into(),
            geometry: k.spec.geometry,
            shared_bytes: k.shared_bytes() as u32,
            index64: false,
        }
    }
}
