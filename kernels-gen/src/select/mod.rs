//! Selection: which kernels a call runs by default, from measurements.

pub mod choice;
