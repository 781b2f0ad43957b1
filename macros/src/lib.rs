//! `bankfree-macros`: the `#[tiled_transpose]` attribute.
//!
//! This crate is a shell until its issue lands: it will parse the attribute, validate
//! it, ask `bankfree-gen` for the kernel and its bank-conflict verdict, and expand to
//! launch glue. It exports nothing yet.
