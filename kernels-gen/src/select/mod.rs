//! Selection: which kernels a call runs by default, from measurements, and which
//! of them are proven ahead of time.

pub mod choice;
pub mod device;
pub mod dist;
#[cfg(test)]
mod extremes;
pub mod gather;
pub mod permute;
pub mod split;
pub mod table;
pub mod tile16;
pub mod widen;
