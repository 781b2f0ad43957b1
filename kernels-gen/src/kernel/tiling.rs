//! A kernel's named values over its parameters and its tile (or chunk) count, built
//! once per geometry and shared by the kernel's moves and the launcher.

use crate::ir::expr::{Expr, Var};
use crate::ir::guard::Less;
use crate::kernel::geometry::{Form, Geometry};
use crate::kernel::interleave::{stage_mask, tile_blocks};
use crate::kernel::order::TileOrder;

/// The named values of a kernel over its parameters, and its number of tiles (or
/// chunks) per matrix: built once, used by the kernel and by the launcher.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Tiling {
    /// Declared in this order at the top of the kernel.
    pub lets: Vec<Expr>,
    /// Tiles (or chunks) per matrix: the launcher sizes the grid with it.
    pub ntiles: Expr,
    /// The tile loop's condition on `t`, true exactly for `t < ntiles` (narrow
    /// forms test `t * chunk < long`, so the kernel needs no 64-bit division).
    pub more: Less,
    /// Tile forms: rows and cols (in vectors with `vec > 1`), tiles per row and
    /// rows of tiles (named, declared only by a kernel that takes its tiles down
    /// the columns, [`crate::kernel::order::TileOrder`]).
    pub rows: Expr,
    pub cols: Expr,
    pub tiles_x: Expr,
    pub tiles_y: Expr,
    /// Narrow forms: the narrow side and the long-side entries per chunk.
    pub narrow: Expr,
    pub chunk: Expr,
    /// Narrow forms: units between two padding units in the shared chunk.
    pub period: Expr,
    /// Narrow forms: the multipliers that divide by `chunk` (by `chunk / vec` in
    /// a packed tall kernel) and `period`
    /// ([`Expr::quot`]; every quotient the kernel takes is below 2^16, the divisors
    /// below 2^13, so they are exact).
    pub chunk_m: Expr,
    pub period_m: Expr,
    /// Narrow forms: the lowest set bit of the narrow side.
    pub low: Expr,
    /// Small form: elements per matrix and the multipliers that divide by it and
    /// by `rows` (exact: [`crate::kernel::geometry::SMALL_MAX_ELEMS`]); strip
    /// form: the matrix's elements and the multiplier of `rows`; copy form: the
    /// vectors of one batch item.
    pub mat: Expr,
    pub mat_m: Expr,
    pub rows_m: Expr,
}

impl Tiling {
    /// A tiling of `lets`, `ntiles` and `more` over the whole matrix (`rows x
    /// cols` elements); each form sets the fields it uses on top, the rest stay 0.
    fn new(lets: Vec<Expr>, ntiles: Expr, more: Less) -> Tiling {
        let zero = Expr::Lit(0);
        Tiling {
            lets,
            ntiles,
            more,
            rows: Expr::var(Var::Rows),
            cols: Expr::var(Var::Cols),
            tiles_x: zero.clone(),
            tiles_y: zero.clone(),
            narrow: zero.clone(),
            chunk: zero.clone(),
            period: zero.clone(),
            chunk_m: zero.clone(),
            period_m: zero.clone(),
            low: zero.clone(),
            mat: zero.clone(),
            mat_m: zero.clone(),
            rows_m: zero,
        }
    }
}

impl Tiling {
    /// The row and column of tiles (`tile_r`, `tile_c`, named) that the tile
    /// index names when the blocks take the tiles in `order`.
    pub(crate) fn tile_at(&self, order: TileOrder) -> (Expr, Expr) {
        let t = Expr::var(Var::Tile);
        let (r, c) = match order {
            TileOrder::Rows => (t.clone() / self.tiles_x.clone(), t % self.tiles_x.clone()),
            TileOrder::Columns => (t.clone() % self.tiles_y.clone(), t / self.tiles_y.clone()),
        };
        (Expr::named("tile_r", r), Expr::named("tile_c", c))
    }
}

/// The named values and tile count of a kernel of geometry `g`.
pub(crate) fn tiling(g: &Geometry) -> Tiling {
    let v = Expr::var;
    // With vec > 1 rows and cols count vectors: a tile is `tile` of them.
    let t = i64::from(g.tile);
    let vec = i64::from(g.vec);
    match g.form {
        Form::Tile | Form::Skew => {
            let (rows, cols) = if vec > 1 {
                (
                    Expr::named("rows_v", v(Var::Rows) / vec),
                    Expr::named("cols_v", v(Var::Cols) / vec),
                )
            } else {
                (v(Var::Rows), v(Var::Cols))
            };
            // A skew tile's windows start up to `sector - 1` rows early, and the
            // tile is `skew_rows` source rows deep.
            let (extra, deep) = if g.form == Form::Skew {
                (i64::from(g.sector_elems()) - 1, i64::from(g.skew_rows()))
            } else {
                (0, t)
            };
            let tiles_x = Expr::named("tiles_x", (cols.clone() + (t - 1)) / t);
            let tiles_y = (rows.clone() + (extra + deep - 1)) / deep;
            let ntiles = Expr::named("ntiles", tiles_x.clone() * tiles_y.clone());
            let mut lets = if vec > 1 {
                vec![rows.clone(), cols.clone()]
            } else {
                vec![]
            };
            lets.extend([tiles_x.clone(), ntiles.clone()]);
            Tiling {
                rows,
                cols,
                tiles_x,
                tiles_y: Expr::named("tiles_y", tiles_y),
                ..Tiling::new(lets, ntiles.clone(), Less(v(Var::Tile), ntiles))
            }
        }
        Form::Wordvec => {
            // Square tiles of `tile` elements (`vec` counts a vector's words).
            let tiles_x = Expr::named("tiles_x", (v(Var::Cols) + (t - 1)) / t);
            let tiles_y = (v(Var::Rows) + (t - 1)) / t;
            let ntiles = Expr::named("ntiles", tiles_x.clone() * tiles_y.clone());
            let lets = vec![tiles_x.clone(), ntiles.clone()];
            Tiling {
                tiles_x,
                tiles_y: Expr::named("tiles_y", tiles_y),
                ..Tiling::new(lets, ntiles.clone(), Less(v(Var::Tile), ntiles))
            }
        }
        Form::Realign => {
            // Square tiles of `tile * vec` elements; each destination row's windows
            // start on a sector, up to `sector - 1` positions early, so they cover
            // `rows + sector - 1`.
            let side = i64::from(g.tile_elems());
            let sector = i64::from(g.sector_elems());
            let tiles_x = Expr::named("tiles_x", (v(Var::Cols) + (side - 1)) / side);
            let tiles_y = Expr::named("tiles_y", (v(Var::Rows) + (sector - 1) + (side - 1)) / side);
            let ntiles = Expr::named("ntiles", tiles_x.clone() * tiles_y.clone());
            let lets = vec![tiles_x.clone(), tiles_y.clone(), ntiles.clone()];
            Tiling {
                tiles_x,
                tiles_y,
                ..Tiling::new(lets, ntiles.clone(), Less(v(Var::Tile), ntiles))
            }
        }
        Form::Thin => {
            // Runs of `vec * 248` rows per sub-tile; each destination row's
            // words start up to `vec - 1` positions early, so they cover `rows +
            // vec - 1`.
            let run = g.thin_run();
            let ntiles = Expr::named(
                "ntiles",
                (v(Var::Rows) + (i64::from(g.vec) - 1) + run.clone() - 1) / run.clone(),
            );
            Tiling::new(
                vec![run, ntiles.clone()],
                ntiles.clone(),
                Less(v(Var::Tile), ntiles),
            )
        }
        Form::Squat => {
            // Runs of 248 blocks of `vec` columns, and the block past the last
            // (its first destination word holds the last block's tail).
            let run = i64::from(crate::kernel::geometry::SQUAT_BLOCKS) * i64::from(g.vec);
            let ntiles = Expr::named(
                "ntiles",
                (v(Var::Cols) + (run + i64::from(g.vec) - 1)) / run,
            );
            Tiling::new(
                vec![ntiles.clone()],
                ntiles.clone(),
                Less(v(Var::Tile), ntiles),
            )
        }
        Form::Strip => {
            // Matrices whose destination is one run of `rows * cols` elements,
            // covered from the vector boundary before it (up to `vec - 1` more).
            let total = Expr::named("total", v(Var::Rows) * v(Var::Cols));
            let span = if g.vec > 1 {
                total.clone() + i64::from(g.vec - 1)
            } else {
                total.clone()
            };
            gathered(g, span, total, Expr::Lit(0))
        }
        Form::Copy | Form::Planar => {
            // Each batch item is `rows` runs of `cv` vectors (`total` of them); a
            // planar one is `bv` blocks of `vec` rows.
            let (mut lets, cols, total) = if g.form == Form::Planar {
                let bv = Expr::named("bv", v(Var::Rows) / vec);
                (vec![], v(Var::Cols), bv)
            } else {
                let cv = Expr::small(
                    "cv",
                    if vec > 1 {
                        v(Var::Cols) / vec
                    } else {
                        v(Var::Cols)
                    },
                );
                let total = Expr::named("total", v(Var::Rows) * cv.clone());
                (vec![cv.clone()], cv, total)
            };
            let chunk = i64::from(g.copy_chunk());
            let ntiles = Expr::named("ntiles", (total.clone() + (chunk - 1)) / chunk);
            lets.extend([total.clone(), ntiles.clone()]);
            let more = Less(v(Var::Tile) * chunk, total.clone());
            Tiling {
                cols,
                chunk: Expr::Lit(chunk),
                mat: total,
                ..Tiling::new(lets, ntiles, more)
            }
        }
        Form::Interleave => {
            // Each batch item is `bv` blocks of `vec` columns; a tile is
            // `tile_blocks`, `bpt` of them per thread ([`tile_blocks`]).
            let bv = Expr::named("bv", v(Var::Cols) / vec);
            let (bpt, chunk) = tile_blocks(g);
            let ntiles = Expr::named("ntiles", (bv.clone() + chunk.clone() - 1) / chunk.clone());
            let more = Less(v(Var::Tile) * chunk.clone(), bv.clone());
            let lets = vec![bv.clone(), bpt, chunk.clone(), ntiles.clone(), stage_mask()];
            Tiling {
                chunk,
                mat: bv,
                ..Tiling::new(lets, ntiles, more)
            }
        }
        Form::Small => {
            // The batch is one flat run of `batch * mat` elements on both sides
            // (of their words, for word arrays gathered by words).
            let mat = Expr::small("mat", v(Var::Rows) * v(Var::Cols));
            let mat_m = Expr::magic("mat_m", mat.clone());
            let run = v(Var::Batches) * mat.clone();
            let run = if g.gathers_words() {
                run * i64::from(g.elem_words())
            } else {
                run
            };
            gathered(g, run, mat, mat_m)
        }
        Form::Tall | Form::Wide => {
            let (narrow_var, long) = if g.form == Form::Tall {
                (Var::Cols, Var::Rows)
            } else {
                (Var::Rows, Var::Cols)
            };
            let narrow = Expr::small("narrow", v(narrow_var));
            // Whole warps per narrow row: a multiple of 32 (of 32 words in a
            // packed chunk, which also holds `shift` more rows).
            let shift = i64::from(g.word_shift());
            let per_warp = 32 * i64::from(g.vec);
            let chunk = Expr::small(
                "chunk",
                (Expr::Lit(i64::from(g.chunk_elems())) / narrow.clone() - shift) / per_warp
                    * per_warp,
            );
            // A packed kernel's windows shift back by up to `shift - 1` rows, so its
            // chunks cover `long + shift - 1` positions.
            let span = v(long) + (shift - 1).max(0);
            let ntiles = Expr::named("ntiles", (span.clone() + chunk.clone() - 1) / chunk.clone());
            // One unit of padding every lcm(bank row, narrow) units: stride-`narrow`
            // accesses then meet every bank once (the analyzer checks each width).
            let w = i64::from(g.bank_row_units());
            let lowest_bit = Expr::small("low", narrow.clone().lowest_bit());
            let period = Expr::small(
                "period",
                Expr::Lit(w)
                    * (narrow.clone() >> Expr::ctz(narrow.clone()))
                    * ((lowest_bit.clone() + (w - 1)) / w),
            );
            // A packed kernel's strided side divides by the words per row instead.
            let chunk_m = Expr::magic("chunk_m", chunk.clone() / i64::from(g.vec));
            let period_m = Expr::magic("period_m", period.clone());
            let lets = vec![
                narrow.clone(),
                chunk.clone(),
                lowest_bit.clone(),
                period.clone(),
                chunk_m.clone(),
                period_m.clone(),
            ];
            let more = Less(v(Var::Tile) * chunk.clone(), span);
            Tiling {
                low: lowest_bit,
                period,
                chunk_m,
                period_m,
                narrow,
                chunk,
                ..Tiling::new(lets, ntiles, more)
            }
        }
    }
}

/// The tiling of a gathering form: a flat destination run of `total` elements cut
/// into chunks of `small_chunk`; `mat` (declared first) and `mat_m` as the form
/// uses them (`mat_m` declared unless it is a literal), and the multiplier of
/// `rows`.
fn gathered(g: &Geometry, total: Expr, mat: Expr, mat_m: Expr) -> Tiling {
    let v = Expr::var;
    let chunk = i64::from(g.small_chunk());
    let ntiles = Expr::named("ntiles", (total.clone() + (chunk - 1)) / chunk);
    let rows_m = Expr::magic("rows_m", v(Var::Rows));
    let mut lets = vec![mat.clone()];
    if !matches!(mat_m, Expr::Lit(_)) {
        lets.push(mat_m.clone());
    }
    lets.push(rows_m.clone());
    Tiling {
        chunk: Expr::Lit(chunk),
        mat,
        mat_m,
        rows_m,
        ..Tiling::new(lets, ntiles, Less(v(Var::Tile) * chunk, total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::expr::Env;
    use crate::kernel::geometry::SMALL_MAX_ELEMS;
    use crate::kernel::grid::{grid, ALL_STRATEGIES};

    /// The narrow kernels divide by `chunk` and `period` with magic multipliers
    /// (`Expr::quot`), exact while `n * d < 2^32`: for every tall and wide spec and
    /// every narrow side, the largest dividend (the thread's flat index, which bounds
    /// the shared index too) times the divisor stays below that, and each divisor is
    /// >= 2.
    #[test]
    fn narrow_quotients_stay_where_magic_division_is_exact() {
        let mut checked = 0;
        for spec in grid(&ALL_STRATEGIES)
            .into_iter()
            .filter(|s| matches!(s.geometry.form, Form::Tall | Form::Wide))
        {
            let g = spec.geometry;
            let t = tiling(&g);
            let flat = i64::from(g.threads()) * i64::from(g.chunk_elems() / g.threads());
            for n in 1..=32 {
                let mut env = Env::default();
                env.set(Var::Rows, n);
                env.set(Var::Cols, n);
                for d in [&t.chunk, &t.period] {
                    let d = d.eval(&env).expect("divisor evaluates");
                    assert!(d >= 2, "{spec:?} at {n}: divisor {d}");
                    assert!(flat * d < 1 << 32, "{spec:?} at {n}: {flat} x {d}");
                }
                checked += 1;
            }
        }
        assert!(checked >= 60 * 32, "only {checked} checked");
    }

    /// A small kernel divides a position inside its tile (below the matrix size
    /// plus the chunk, with the vector's last element) by the matrix size, and the
    /// remainder by `rows`: for every small spec and the largest matrix it takes,
    /// dividend times divisor stays below 2^32, where `Expr::quot` is exact.
    #[test]
    fn small_quotients_stay_where_magic_division_is_exact() {
        let mut checked = 0;
        for spec in grid(&ALL_STRATEGIES)
            .into_iter()
            .filter(|s| s.geometry.form == Form::Small)
        {
            let g = spec.geometry;
            let largest = i64::try_from(SMALL_MAX_ELEMS).expect("small");
            let dividend = largest + i64::from(g.small_chunk());
            assert!(dividend * largest < 1 << 32, "{spec:?}");
            // `rows` divides a position inside one matrix.
            assert!(largest * largest < 1 << 32, "{spec:?}");
            checked += 1;
        }
        assert!(checked >= 18, "only {checked} small specs");
    }
}
