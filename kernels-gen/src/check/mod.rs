//! Checks over built kernels: the bank analysis, the layout search that needs it,
//! the CPU simulator, the 32-bit index proof, whether a kernel fits a call, and the
//! verdicts proven ahead of time.

pub mod analysis;
mod bound;
pub mod fit;
pub mod index32;
mod instruction;
mod memory;
#[cfg(test)]
mod mutants;
pub mod realign;
pub mod reference;
pub mod refusal;
pub mod resolve;
pub mod sim;
pub(crate) mod squat;
pub mod suit;
pub(crate) mod thin;
pub mod verdict;
pub mod walk;
