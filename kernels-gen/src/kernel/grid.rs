//! The grid: every spec the generator offers, for the CLI's `grid`, the tests and
//! the NVRTC compile check.
//!
//! ```
//! use bankfree_gen::kernel::grid::{grid, ALL_STRATEGIES};
//! let specs = grid(&ALL_STRATEGIES);
//! assert!(specs.len() > 2000);
//! assert!(specs.iter().all(|s| s.validate().is_ok()));
//! ```

use crate::kernel::geometry::{
    all_elem_bytes, allowed_block_rows, allowed_vecs, Form, Geometry, TILES,
};
use crate::kernel::spec::{Strategy, TransposeSpec};

/// One of each strategy (with `pad` resolved by the analyzer).
pub const ALL_STRATEGIES: [Strategy; 5] = [
    Strategy::Naive,
    Strategy::None,
    Strategy::Pad(None),
    Strategy::Xor,
    Strategy::Rotate,
];

/// Every spec of the grid: each tile, each `block_rows` it allows, each element
/// size, each `vec` it allows and each of `strategies`, then the skew, tall and wide
/// forms (valid specs only; building may still refuse some).
pub fn grid(strategies: &[Strategy]) -> Vec<TransposeSpec> {
    let mut out = Vec::new();
    for tile in TILES {
        for block_rows in allowed_block_rows(tile) {
            for elem_bytes in all_elem_bytes() {
                for &strategy in strategies {
                    for vec in allowed_vecs(elem_bytes) {
                        if vec > 1 && strategy == Strategy::Naive {
                            continue;
                        }
                        out.push(TransposeSpec {
                            geometry: Geometry {
                                form: Form::Tile,
                                tile,
                                block_rows,
                                elem_bytes,
                                vec,
                                split: false,
                            },
                            strategy,
                        });
                    }
                }
            }
        }
    }
    // The other forms at the tiles they are used with: skew at 32 and 64, the narrow
    // and small forms at 32 (32 x 8 threads), every element size they take.
    for (form, tiles) in [
        (Form::Skew, &[32, 64][..]),
        (Form::Tall, &[32]),
        (Form::Wide, &[32]),
        (Form::Small, &[32]),
        (Form::Strip, &[32]),
        (Form::Planar, &[32]),
        (Form::Interleave, &[32]),
        (Form::Realign, &[32]),
        (Form::Thin, &[32]),
        (Form::Squat, &[32]),
        (Form::Wordvec, &[32]),
    ] {
        for &tile in tiles {
            for elem_bytes in all_elem_bytes() {
                for &strategy in strategies {
                    if let Ok(spec) = TransposeSpec::new(tile, elem_bytes, strategy)
                        .and_then(|s| s.with_form(form))
                    {
                        out.push(spec);
                        // A thin kernel's twin for small calls.
                        out.extend(spec.with_split().ok());
                    }
                }
            }
        }
    }
    out
}
