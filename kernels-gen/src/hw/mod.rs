//! Hardware models: how a warp's shared-memory access splits into bank wavefronts,
//! and how many blocks an SM keeps resident.

pub mod bank;
pub mod occupancy;
