//! Checks over built kernels: the bank analysis, the layout search that needs it,
//! the CPU simulator, the 32-bit index proof and whether a kernel fits a call.

pub mod analysis;
pub mod fit;
pub mod index32;
pub mod resolve;
pub mod sim;
