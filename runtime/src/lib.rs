//! `bankfree-runtime`: finds CUDA and NVRTC, compiles what `bankfree-gen` emits,
//! caches the binaries and launches them.
//!
//! This crate is a shell until its issue lands: it exports nothing yet.
