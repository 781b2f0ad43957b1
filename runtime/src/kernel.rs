//! What the runtime needs to know of one generated kernel.

use bankfree_gen::emit::emit;
use bankfree_gen::form::{Form, Geometry};
use bankfree_gen::width::{INDEX64_DEFINE, INDEX64_SUFFIX};
use bankfree_gen::{Kernel, Shape};
use std::borrow::Cow;

/// A generated kernel: its CUDA C and the launch facts the glue needs. The
/// `#[tiled_transpose]` attribute writes these as `static`s at compile time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSource {
    /// The `extern "C"` entry point.
    pub entry: Cow<'static, str>,
    /// The CUDA C, as `bankfree-gen` emitted it.
    pub source: Cow<'static, str>,
    pub tile: u32,
    pub block_rows: u32,
    pub elem_bytes: u32,
    pub shared_bytes: u32,
    /// Side of the element block a thread moves per step (1: single elements).
    pub vec: u32,
    /// What one block moves: square tiles, skewed tiles or narrow chunks.
    pub form: Form,
    /// Whether this is the source's 64-bit build ([`KernelSource::index64`]); the
    /// launcher runs the 32-bit build where it provably computes the same
    /// ([`Geometry::index32`]) and this one otherwise.
    pub index64: bool,
}

impl KernelSource {
    /// What the launcher needs to size the grid and check a shape.
    pub fn geometry(&self) -> Geometry {
        Geometry {
            form: self.form,
            tile: self.tile,
            block_rows: self.block_rows,
            elem_bytes: self.elem_bytes,
            vec: self.vec,
        }
    }

    /// Whether this kernel can run `shape` (with `vec > 1` every dimension, pitch
    /// and batch stride must divide by `vec`; a tall or wide kernel needs a narrow
    /// side of at most 32 stored as one run); `Err` names what does not.
    pub fn fits(&self, shape: &Shape) -> Result<(), String> {
        self.geometry().fits(shape)
    }

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
            tile: k.spec.tile,
            block_rows: k.spec.block_rows,
            elem_bytes: k.spec.elem_bytes,
            shared_bytes: k.shared_bytes() as u32,
            vec: k.spec.vec,
            form: k.spec.form,
            index64: false,
        }
    }
}
