//! `bankfree-gen`: tiled-transpose kernels as data, rendered to CUDA C, simulated on
//! the CPU and proven free of shared-memory bank conflicts. No GPU needed.
//!
//! # Layers
//! Each folder is a layer; a module uses only its own layer and the ones below it
//! (a unit test reads every `use crate::...` and fails otherwise):
//!
//! | layer | modules | what |
//! |---|---|---|
//! | `memo` | | one process-wide memo |
//! | [`ir`] | `expr`, `parse`, `shape` | index expressions, their parser, a call's shape |
//! | [`hw`] | `bank`, `occupancy` | the bank and occupancy models |
//! | [`kernel`] | `geometry`, `layout`, `spec`, `moves`, `launch`, ... | building a kernel for a spec and a layout |
//! | [`check`] | `analysis`, `resolve`, `sim`, `index32`, `fit` | the bank analysis, the layout search, the simulator, the 32-bit proof, fit |
//! | [`render`] | `cuda`, `writer`, `svg` | CUDA C and bank-map pictures |
//! | [`select`] | `choice` | the measured defaults |
//!
//! # One source of truth per index
//! Every address the kernel touches is one [`ir::expr::Expr`], built once when a
//! [`Kernel`] is assembled from its spec and layout (its fields are read-only
//! outside this crate). The same value is
//! * printed as C by [`emit`] ([`ir::expr::Expr::c`]),
//! * evaluated by the simulator [`check::sim::run`] for every thread of every block,
//! * evaluated by the analyzer [`check::analysis::analyze`] for every lane of every
//!   warp.
//!
//! Only the loop nest around the accesses (batch, tile, `j`, `k`) is written in
//! both the emitter and the simulator, from the same spec constants.
//!
//! # Example
//! ```
//! use bankfree_gen::{check::sim, emit, Kernel, Model, Shape, Strategy, TransposeSpec};
//! let spec = TransposeSpec::new(32, 4, Strategy::Pad(None))?;
//! let kernel = Kernel::build(spec)?;                  // pad resolved to 1 by the analyzer
//! assert!(kernel.analyze(Model::Hopper).conflict_free);
//! let cuda_c = emit(&kernel);                          // what NVRTC compiles
//! assert!(cuda_c.contains("tile[(ty + j * 8) * 33 + tx]"));
//!
//! // The simulator runs the same expressions over host bytes.
//! let shape = Shape::new(31, 33);
//! let src: Vec<u8> = (0..31 * 33 * 4).map(|i| i as u8).collect();
//! let mut dst = vec![0u8; src.len()];
//! sim::run(&kernel, &shape, &src, &mut dst, None)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The bank models
//! [`Model::Hopper`] is what ncu counted on an H100 (32 banks x 4 bytes; up to
//! 4-byte accesses per warp with same-word lanes free, 8-byte per half-warp, 16-byte
//! per quarter-warp). [`Model::Legacy16`] is CUDA 1.x's 16 banks and half-warps,
//! for the classic worked examples.

pub mod memo;

pub mod ir;

pub mod hw;

pub mod kernel;

pub mod check;

pub mod render;

pub mod select;

#[cfg(test)]
mod layering;

pub use check::fit::Refusal;
pub use hw::bank::Model;
pub use ir::shape::{Shape, ShapeError};
pub use kernel::geometry::{Form, Geometry, ELEM_SIZES};
pub use kernel::spec::{SpecError, Strategy, TransposeSpec};
pub use kernel::Kernel;
pub use render::cuda::emit;
