//! The index IR: expressions over the kernel's variables (printed as C, evaluated
//! in 64- or 32-bit arithmetic), their parser, and the shape of a call.

pub mod arith;
pub mod axes;
pub mod bind;
pub mod expr;
mod extent;
pub mod guard;
pub mod parse;
pub mod shape;
pub mod tape;
pub mod var;
