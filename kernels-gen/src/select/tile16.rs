//! Where a folded permute transpose on the 16-wide tile keeps its tiles
//! though the gather rules ([`crate::select::gather`]) would gather it.
//!
//! The gather rules count a tile's fill on 32-wide tiles, as they were
//! measured; a folded transpose whose shorter side has at most 16 items runs
//! the 16-wide tile ([`permute_tile`]), which that side fills further. Where
//! the gather would also fetch its source sectors several times over, that
//! tile runs faster for elements of 4, 8 and 16 bytes.
//!
//! ```
//! use bankfree_gen::select::permute::{plan_tiles, Permute};
//! use bankfree_gen::select::tile16::tile16_keeps;
//! // [5592, 25, 3, 2, 10] -> [3, 25, 10, 5592, 2]: 11184 x 10, rows folded.
//! let tiles = plan_tiles(&Permute::new(&[5592, 25, 3, 2, 10], &[2, 1, 4, 0, 3], 4))?;
//! assert!(tile16_keeps(&tiles.shape, 4, 0.125, false)); // an eighth of each sector gathered
//! assert!(!tile16_keeps(&tiles.shape, 4, 1.0, false)); // the gather uses its sectors whole
//! assert!(!tile16_keeps(&tiles.shape, 4, 0.125, true)); // 10 items: the tall kernel's
//! assert!(!tile16_keeps(&tiles.shape, 1, 0.125, false)); // 1-byte 16-wide tiles lose
//! # Ok::<(), bankfree_gen::select::permute::PermuteError>(())
//! ```

use crate::ir::shape::{Fold, Shape};
use crate::select::choice::permute_tile;

/// The fewest items on the shorter side, and the most of each source sector a
/// gather uses ([`crate::select::gather::sector_use`]), for which a folded
/// transpose of `elem_bytes`-byte elements keeps its 16-wide tiles: 10 items
/// and a quarter for 4-byte elements, 8 items and three quarters for 8- and
/// 16-byte ones; `None` for the other sizes. 1-byte 16-wide tiles (16 bytes a
/// row) lost to the gather on 16 of the 17 plans that counting fill on them
/// changed, and 2-byte ones under this rule on 2 of 5, by more than they
/// gained on the other 3 (0.64 -> 0.38 of memcpy on `[12,13,13443,8]
/// [1,3,2,0]` f16); 12-byte and wider elements were not measured.
///
/// Measured on an H200 (`--example permute -- --shape ...`, the build before
/// and the build with the rule, one call each, 2026-11-29) over every plan
/// the rule changes among the random permutes of `permute --plans --random
/// 12`: seeds 8 to 400, where the thresholds were read off, and seeds 401 to
/// 800 as a check:
///
/// | seeds | plans | faster | slower | within 3% | below torch before / after |
/// |---|---|---|---|---|---|
/// | 8 to 400 | 37 | 34 | 1 | 2 | 12 / 0 |
/// | 401 to 800 | 37 | 33 | 2 | 2 | 15 / 0 |
///
/// For example `[5592,25,3,2,10] [2,1,4,0,3]` f32 (11184 x 10, an eighth of
/// each sector) ran at 0.31 of memcpy gathered and 0.61 as tiles (torch
/// 0.45), `[466033,3,3] [2,1,0]` f64 at 0.46 and 0.95 (torch 0.52),
/// `[43690,8,4,3] [3,2,0,1]` f64 at 0.44 and 1.17. The slower ones:
/// `[1191,10,11,4,4,2] [0,5,2,4,3,1]` f64 1.04 -> 0.93, `[299,20,10,14,2,5]
/// [0,5,1,3,4,2]` f32 0.76 -> 0.60, `[9,330,11,16,4,2] [3,2,5,1,4,0]` f64
/// 0.91 -> 0.85. (The tall kernel's boxes of 10 columns, `[a, J, 10]
/// [2,1,0]` f32, also ran slower as tiles, 0.70 -> 0.62, which the second
/// threshold below keeps on the tall kernel; the table counts that form.)
/// Where the gather used its sectors whole, or the side was shorter, it ran
/// as fast as the tiles or faster (`[2,4,524288] [2,1,0]` f64 0.97 gathered, 0.83 as tiles;
/// `[2570,8,4,51,2] [2,4,0,3,1]` f32, 8 x 102, 0.96 and 0.46).
///
/// Where the planner would run the `tall` kernel in place of the gather
/// (`tall`, `permute::tall_plan`), 4-byte elements keep the 16-wide tile from
/// [`TALL_TILE16_MIN_SIDE`] items; 8- and 16-byte ones as above.
pub fn tile16_min_side(elem_bytes: u32, tall: bool) -> Option<(u64, f64)> {
    match elem_bytes {
        4 => Some((if tall { TALL_TILE16_MIN_SIDE } else { 10 }, 0.25)),
        8 | 16 => Some((8, 0.75)),
        _ => None,
    }
}

/// The fewest items on the shorter side for which a folded transpose of
/// 4-byte elements that the `tall` kernel would run keeps its 16-wide tiles.
/// H200, `--example permute -- --shape ...`, the tall kernel's build and this
/// one in one call (2026-11-29), boxes of 32 MB: 10 items ran at 0.62 as
/// tiles against 0.68 on the tall kernel (`[2,419430,10] [2,1,0]`,
/// `[5,167772,10] [2,1,0]`, `[8,5,20971,10] [0,3,2,1]`); 11 at 0.64 against
/// 0.53 (`[2,3,12710,10,11] [4,2,0,1,3]`, 60 x 11) and 0.67 both ways
/// (`[4,53,3597,11] [1,3,2,0]`); 12 at 0.73 against 0.67 to 0.68
/// (`[3,233016,12] [2,1,0]`, `[5,139810,12] [2,1,0]`, `[4,3,58254,12]
/// [0,3,2,1]`) and 0.61 against 0.64 (`[5,5,2,140000,12] [4,0,2,3,1]`).
/// 8-byte boxes ran faster as tiles from 8 items (`[3,116508,12] [2,1,0]`
/// f64 1.10 against 0.85). The 4-byte crossover is not settled: in a later
/// call the same day, this build ran the 12-column boxes at 0.67 to 0.68 as
/// tiles, and boxes of 14 and 16 columns, which every build runs as the same
/// tiles, at 0.74 to 0.76 where the first call had 0.74 to 0.83; between
/// calls these boxes move as much as the two kernels differ (the 8-byte ones
/// held: 1.10 and 0.90).
pub const TALL_TILE16_MIN_SIDE: u64 = 11;

/// Whether a folded transpose `shape` of `elem_bytes`-byte elements, whose
/// gather would use `used` of each source sector, keeps its 16-wide tiles
/// ([`tile16_min_side`]; `tall` where the tall kernel would run it).
pub fn tile16_keeps(shape: &Shape, elem_bytes: u32, used: f64, tall: bool) -> bool {
    let side = shape.rows.min(shape.cols);
    shape.fold != Fold::NONE
        && permute_tile(elem_bytes, side).0 == 16
        && tile16_min_side(elem_bytes, tall).is_some_and(|(min, most)| side >= min && used <= most)
}
