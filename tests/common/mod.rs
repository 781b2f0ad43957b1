//! Element types the GPU suites share: 12-, 16-, 20-, 24- and 28-byte elements
//! made of `u32` words, and any number of words ([`Words`]), with the
//! `DeviceRepr` a user's crate would write for them.
#![allow(unsafe_code)] // the `DeviceRepr` and `ValidAsZeroBits` promises below
#![allow(dead_code)] // each suite uses part of these

use bankfree::cudarc::driver::{DeviceRepr, ValidAsZeroBits};

/// A 12-byte element.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct F3(pub [u32; 3]);
// SAFETY: three u32, `repr(C)`, no padding, valid for any bytes (zero included).
unsafe impl DeviceRepr for F3 {}
// SAFETY: as above.
unsafe impl ValidAsZeroBits for F3 {}

/// A 16-byte element of four words (not a `u128`: 4-byte aligned).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct F4(pub [u32; 4]);
// SAFETY: four u32, `repr(C)`, no padding, valid for any bytes (zero included).
unsafe impl DeviceRepr for F4 {}
// SAFETY: as above.
unsafe impl ValidAsZeroBits for F4 {}

/// A 20-byte element: five words.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct F5(pub [u32; 5]);
// SAFETY: five u32, `repr(C)`, no padding, valid for any bytes (zero included).
unsafe impl DeviceRepr for F5 {}
// SAFETY: as above.
unsafe impl ValidAsZeroBits for F5 {}

/// A 24-byte element: six words (three 8-byte units, 4-byte aligned).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct F6(pub [u32; 6]);
// SAFETY: six u32, `repr(C)`, no padding, valid for any bytes (zero included).
unsafe impl DeviceRepr for F6 {}
// SAFETY: as above.
unsafe impl ValidAsZeroBits for F6 {}

/// A 28-byte element: seven words.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct F7(pub [u32; 7]);
// SAFETY: seven u32, `repr(C)`, no padding, valid for any bytes (zero included).
unsafe impl DeviceRepr for F7 {}
// SAFETY: as above.
unsafe impl ValidAsZeroBits for F7 {}

/// An element of `N` words (32, 48 and 64 bytes in the suites), 4-byte aligned.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Words<const N: usize>(pub [u32; N]);
// SAFETY: `N` u32, `repr(C)`, no padding, valid for any bytes (zero included).
unsafe impl<const N: usize> DeviceRepr for Words<N> {}
// SAFETY: as above.
unsafe impl<const N: usize> ValidAsZeroBits for Words<N> {}
