//! A permute call, what the planner makes of it, and the plan's tile and
//! alignment.

use crate::ir::shape::{Axis, Fold, Shape};
use crate::kernel::geometry::elem_align;
use crate::select::choice::{permute_tile, permute_tile_rows};
use crate::select::widen::block_align;
use serde::Serialize;

/// A permute call: the source's extents, the permutation, optional strides (in
/// elements, each for its own tensor's axis order; row-major when absent) and the
/// element size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Permute {
    pub dims: Vec<u64>,
    pub perm: Vec<usize>,
    pub src_strides: Option<Vec<u64>>,
    pub dst_strides: Option<Vec<u64>>,
    pub elem_bytes: u32,
}

impl Permute {
    /// A permute of contiguous tensors.
    pub fn new(dims: &[u64], perm: &[usize], elem_bytes: u32) -> Permute {
        Permute {
            dims: dims.to_vec(),
            perm: perm.to_vec(),
            src_strides: None,
            dst_strides: None,
            elem_bytes,
        }
    }
}

/// What the planned call does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Nothing to move (an extent is 0).
    Empty,
    /// Blocks contiguous on both sides, copied in order.
    Copy,
    /// A batch of transposes.
    Transpose,
    /// Every destination element gathered from its source address: rows along
    /// the destination's innermost axis, one column, every other axis a batch
    /// axis, written as one dense run by a `small` kernel.
    Gather,
}

/// A planned permute: the merged axes, what runs and the call's shape.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plan {
    /// The axes after dropping and merging, in source order (outermost first):
    /// extent, source stride, destination stride.
    pub axes: Vec<Axis>,
    pub kind: Kind,
    /// The call: rows, cols, pitches and the batch axes (`outer`).
    pub shape: Shape,
    /// The element size the axes and the shape count in: the permute's, or a
    /// block of `unit` of its elements ([`crate::select::widen`]).
    pub elem_bytes: u32,
    /// The permute's elements in one of the plan's (1 unless widened).
    pub unit: u64,
}

impl Plan {
    /// The scalar tile (width, thread rows) of the plan's transposes: for a
    /// folded one by its shorter side ([`permute_tile`]), else the 32-wide one
    /// its list ends on.
    pub fn tile(&self) -> (u32, u32) {
        let s = &self.shape;
        if self.kind == Kind::Transpose && s.fold != Fold::NONE {
            permute_tile(self.elem_bytes, s.rows.min(s.cols))
        } else {
            (32, permute_tile_rows(self.elem_bytes))
        }
    }
}

impl Plan {
    /// The byte alignment both buffers need for this plan's kernels to load and
    /// store its elements: that of the permute's elements, or of the wider unit
    /// a widened plan moves ([`block_align`]: the runtime runs
    /// [`super::plan_unwidened`] otherwise).
    pub fn align(&self) -> u64 {
        if self.unit > 1 {
            u64::from(block_align(self.elem_bytes))
        } else {
            u64::from(elem_align(self.elem_bytes))
        }
    }
}
