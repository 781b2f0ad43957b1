//! Which kernels are proven ahead of time, and the file that records them
//! (`check/proven.in`, read by [`crate::check::verdict`]).
//!
//! ```
//! use bankfree_gen::{check::verdict::lookup, select::table::specs};
//! assert!(specs().iter().all(|s| lookup(s).is_some() || bankfree_gen::Kernel::search(*s).is_err()));
//! ```

use crate::hw::bank::Model;
use crate::kernel::geometry::{all_elem_bytes, TILES};
use crate::kernel::grid::ALL_STRATEGIES;
use crate::kernel::layout::Layout;
use crate::kernel::spec::{Strategy, TransposeSpec};
use crate::kernel::Kernel;
use crate::select::choice::{fast_variant, scalar_variant, shape_specs};
use crate::select::device::{skew_twin, GpuClass};
use std::fmt::Write;

/// Every spec the attribute builds when `block_rows` is left to it: each tile
/// side, element size and strategy of [`ALL_STRATEGIES`] (`pad(N)` takes any N
/// and stays computed), the kernels `tile = auto`
/// adds for them ([`fast_variant`], [`shape_specs`]), the skew tiles other GPU
/// classes run in their place ([`skew_twin`]) and the `thin` kernels that split
/// their column words for small calls (`TransposeSpec::with_split`). In a
/// fixed order, without repeats.
pub fn specs() -> Vec<TransposeSpec> {
    let mut out: Vec<TransposeSpec> = Vec::new();
    for e in all_elem_bytes() {
        for tile in TILES {
            for s in ALL_STRATEGIES {
                let Ok(spec) = TransposeSpec::new(tile, e, s) else {
                    continue;
                };
                let more = [Some(spec), fast_variant(&spec), scalar_variant(&spec)]
                    .into_iter()
                    .flatten();
                let shapes = shape_specs(&spec);
                let twins = shapes
                    .iter()
                    .flat_map(|x| GpuClass::ALL.map(|c| skew_twin(c, x)))
                    .flatten()
                    .chain(
                        shapes
                            .iter()
                            .filter(|x| x.geometry.thins())
                            .filter_map(|x| x.with_split().ok()),
                    )
                    .collect::<Vec<_>>();
                for x in more.chain(shapes).chain(twins) {
                    if !out.contains(&x) {
                        out.push(x);
                    }
                }
            }
        }
    }
    out
}

/// The text of `proven.in`: for each spec of [`specs`] that builds, the layout
/// [`Kernel::search`] resolves it to and the analyzer's verdict on that kernel.
/// Computed from scratch: never from the file it writes.
pub fn render() -> String {
    let mut out = String::from(
        "// Written by `bankfree-gen proven`; a test recomputes it. Do not edit.\n&[\n",
    );
    for spec in specs() {
        let Ok(k) = Kernel::search(spec) else {
            continue;
        };
        let r = k.analyze(Model::Hopper);
        let g = &spec.geometry;
        let strategy = match spec.strategy {
            Strategy::Naive => "S::Naive".to_string(),
            Strategy::None => "S::None".to_string(),
            Strategy::Pad(None) => "S::Pad(None)".to_string(),
            Strategy::Pad(Some(n)) => format!("S::Pad(Some({n}))"),
            Strategy::Xor => "S::Xor".to_string(),
            Strategy::Rotate => "S::Rotate".to_string(),
        };
        let layout = match k.layout {
            Layout::Direct => "L::Direct".to_string(),
            Layout::Pad(n) => format!("L::Pad({n})"),
            Layout::Xor(z) => format!("z({}, {}, {})", z.b, z.m, z.s),
            Layout::Rotate => "L::Rotate".to_string(),
        };
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "{}p(F::{:?}, {}, {}, {}, {}, {strategy}, {layout}, {}, {:?}){},",
            if g.split { "s(" } else { "" },
            g.form,
            g.tile,
            g.block_rows,
            g.elem_bytes,
            g.vec,
            r.conflict_free,
            r.verdict(),
            if g.split { ")" } else { "" }
        );
    }
    out.push_str("]\n");
    out
}
