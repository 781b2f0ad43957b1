//! `bankfree-gen`: tiled-transpose kernels as data, rendered to CUDA C, simulated on
//! the CPU and proven free of shared-memory bank conflicts. No GPU needed.
//!
//! # One source of truth per index
//! Every address the kernel touches is one [`expr::Expr`], built once in
//! [`kernel::Kernel::with_layout`]. The same value is
//! * printed as C by [`emit::emit`] ([`expr::Expr::c`]),
//! * evaluated by the simulator [`sim::run`] for every thread of every block,
//! * evaluated by the analyzer [`analysis::analyze`] for every lane of every warp.
//!
//! Only the loop nest around the accesses (batch, tile, `j`, `k`) is written in
//! both the emitter and the simulator, from the same spec constants.
//!
//! # Example
//! ```
//! use bankfree_gen::{bank::Model, emit::emit, kernel::Kernel, shape::Shape, sim,
//!                    spec::{Strategy, TransposeSpec}};
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
//! [`bank::Model::Hopper`] is what ncu counted on an H100 (32 banks x 4 bytes; up to
//! 4-byte accesses per warp with same-word lanes free, 8-byte per half-warp, 16-byte
//! per quarter-warp). [`bank::Model::Legacy16`] is CUDA 1.x's 16 banks and half-warps,
//! for the classic worked examples.

pub mod analysis;
pub mod bank;
mod body;
pub mod choice;
pub mod emit;
pub mod expr;
pub mod fit;
pub mod form;
pub mod kernel;
pub mod occupancy;
pub mod parse;
pub mod shape;
pub mod sim;
pub mod spec;
pub mod svg;
mod tile;
pub mod width;

pub use kernel::Kernel;
pub use shape::Shape;
pub use spec::{Strategy, TransposeSpec};
