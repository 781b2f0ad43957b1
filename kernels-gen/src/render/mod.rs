//! Rendering: a kernel as CUDA C (through an indenting writer), and bank maps as
//! SVG pictures.

mod body;
pub mod cuda;
mod header;
mod interleave;
mod realign;
mod squat;
pub mod svg;
mod thin;
pub mod writer;
