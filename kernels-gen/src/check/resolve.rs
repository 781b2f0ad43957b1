//! Resolving a strategy to a layout: `pad` and `swizzle` search for the simplest
//! layout the analyzer proves conflict-free, so building a kernel from a spec is a
//! check, not a construction.
//!
//! ```
//! use bankfree_gen::{kernel::layout::Layout, Kernel, Model, Strategy, TransposeSpec};
//! let k = Kernel::build(TransposeSpec::new(32, 4, Strategy::Pad(None))?)?;
//! assert_eq!(k.layout(), Layout::Pad(1)); // computed by the analyzer, not assumed
//! assert!(k.analyze(Model::Hopper).conflict_free);
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

use crate::check::verdict::lookup;
use crate::hw::bank::Model;
use crate::kernel::geometry::Geometry;
use crate::kernel::launch::MAX_SHARED_BYTES;
use crate::kernel::layout::{swizzle_candidates, Layout, MAX_PAD};
use crate::kernel::narrow::packed_swizzle;
use crate::kernel::realign::realign_swizzle;
use crate::kernel::spec::{SpecError, Strategy, TransposeSpec};
use crate::kernel::Kernel;

impl Kernel {
    /// Resolves the strategy and builds the kernel: with the layout proven ahead of
    /// time where the spec is one of [`PROVEN`](crate::check::verdict::PROVEN),
    /// else by [`Kernel::search`].
    pub fn build(spec: TransposeSpec) -> Result<Kernel, SpecError> {
        spec.validate()?;
        match lookup(&spec) {
            Some(p) => Ok(Kernel::assemble(spec, p.layout)),
            None => Kernel::search(spec),
        }
    }

    /// Resolves the strategy by asking the analyzer where it must search (the
    /// simplest conflict-free layout of `pad` and `swizzle`), and builds the kernel.
    pub fn search(spec: TransposeSpec) -> Result<Kernel, SpecError> {
        spec.validate()?;
        let candidates: Vec<Layout> = match spec.strategy {
            Strategy::Naive => vec![Layout::Direct],
            Strategy::None => vec![Layout::Pad(0)],
            Strategy::Pad(Some(n)) => vec![Layout::Pad(n)],
            Strategy::Rotate => vec![Layout::Rotate],
            Strategy::Pad(None) => (0..=MAX_PAD).map(Layout::Pad).collect(),
            Strategy::Xor if spec.geometry.packs() => {
                vec![Layout::Xor(packed_swizzle(&spec.geometry))]
            }
            Strategy::Xor if spec.geometry.realigns() => {
                vec![Layout::Xor(realign_swizzle(&spec.geometry))]
            }
            Strategy::Xor => swizzle_candidates(spec.geometry.tile)
                .into_iter()
                .map(Layout::Xor)
                .collect(),
        };
        let searching = candidates.len() > 1;
        let mut smallest_too_large: Option<u64> = None;
        for layout in candidates {
            let k = Kernel::assemble(spec, layout);
            let bytes = k.shared_bytes();
            if bytes > MAX_SHARED_BYTES {
                smallest_too_large = Some(smallest_too_large.map_or(bytes, |b| b.min(bytes)));
                continue;
            }
            if !searching || k.conflict_free(Model::Hopper) {
                return Ok(k);
            }
        }
        let Geometry {
            tile,
            elem_bytes,
            block_rows,
            ..
        } = spec.geometry;
        // Paddings grow with n: once one is too large, the rest are too.
        Err(match (smallest_too_large, spec.strategy) {
            (Some(bytes), _) => SpecError::SharedTooLarge {
                bytes,
                max: MAX_SHARED_BYTES,
            },
            (None, Strategy::Xor) => SpecError::NoSwizzle {
                tile,
                elem_bytes,
                block_rows,
            },
            _ => SpecError::NoPad {
                tile,
                elem_bytes,
                block_rows,
            },
        })
    }
}
