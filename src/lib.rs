//! bankfree: bank-conflict-free tiled CUDA transposes.
//!
//! This facade re-exports the generator today; the `#[tiled_transpose]` attribute
//! and the GPU runtime arrive with their own crates.
//!
//! ```
//! use bankfree::gen::{Kernel, Strategy, TransposeSpec};
//! let k = Kernel::build(TransposeSpec::new(32, 4, Strategy::Xor)?)?;
//! assert!(k.analyze(bankfree::gen::bank::Model::Hopper).conflict_free);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use bankfree_gen as gen;
