//! Hardware models: how a warp's shared-memory access splits into bank wavefronts,
//! and how many blocks an SM keeps resident.

pub mod bank;
pub mod occupancy;

/// Bytes of a global-memory sector, the unit the L1 and L2 caches fetch.
pub const SECTOR_BYTES: u64 = 32;
