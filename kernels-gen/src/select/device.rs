//! Defaults per GPU: the measured rule's device classes, and what differs
//! between them.
//!
//! A faster memory needs more bytes in flight per SM, and it also answers some
//! access orders better than others. The defaults of [`crate::select::choice`]
//! hold on both GPUs measured, the H100 (HBM3, 25 GB/s of peak DRAM bandwidth
//! per SM) and the H200 (HBM3e, the same 132 SMs at 37 GB/s each): on the H200
//! no other tile, thread-row count or vector width of `bench --sweep` beats them
//! by more than 0.005 of memcpy on 8192 x 8192 of 1, 2, 4, 8 and 16 bytes (the
//! 12-byte skew tile, 32 x 16 threads, by 0.024). What differs is the
//! order in which the blocks take the tiles ([`TileOrder`], [`tile_order`]) and
//! the width of the 4-byte skew tile ([`skew_tile`]); the runtime runs each
//! kernel's [`twin`] for the GPU at hand. A GPU not measured takes the
//! class whose bandwidth per SM is nearest its own ([`GpuClass::nearest`]).
//!
//! ```
//! use bankfree_gen::select::device::{tile_order, GpuClass};
//! use bankfree_gen::{kernel::order::TileOrder, Form, Geometry};
//! let g = Geometry { form: Form::Tile, tile: 32, block_rows: 16, elem_bytes: 4, vec: 2, split: false };
//! assert_eq!(GpuClass::nearest(37.2), GpuClass::H200);
//! assert_eq!(GpuClass::nearest(20.0), GpuClass::H100); // an A100 80GB: 18.6
//! assert_eq!(tile_order(GpuClass::H200, &g), TileOrder::Columns);
//! assert_eq!(tile_order(GpuClass::H100, &g), TileOrder::Rows);
//! ```

use crate::kernel::geometry::{default_block_rows, Form, Geometry};
use crate::kernel::order::TileOrder;
use crate::kernel::realign::realign_min_blocks;
use crate::kernel::spec::TransposeSpec;
use crate::kernel::Kernel;
use crate::select::choice;
use std::fmt;
use std::str::FromStr;

/// The GPUs the defaults were measured on, each standing for the GPUs whose peak
/// DRAM bandwidth per SM is nearest its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GpuClass {
    /// H100 SXM: HBM3, 3.35 TB/s over 132 SMs.
    #[default]
    H100,
    /// H200: HBM3e, 4.9 TB/s over 132 SMs.
    H200,
}

impl GpuClass {
    /// Every class, in the order of their bandwidth per SM.
    pub const ALL: [GpuClass; 2] = [GpuClass::H100, GpuClass::H200];

    /// Peak DRAM bandwidth per SM in GB/s: the memory clock, twice per cycle,
    /// times the bus width, over the SMs (what
    /// [`GpuClass::bandwidth_per_sm_of`] computes from the driver's attributes).
    pub fn bandwidth_per_sm(self) -> f64 {
        match self {
            // 2619 MHz x 2 x 5120 bits / 8 / 132.
            GpuClass::H100 => 25.4,
            // 3201 MHz x 2 x 6144 bits / 8 / 132.
            GpuClass::H200 => 37.2,
        }
    }

    /// Peak DRAM bandwidth per SM in GB/s of a GPU whose memory runs at
    /// `memory_khz` over a `bus_bits`-wide bus and has `sms` multiprocessors (the
    /// driver's attributes), or `None` where one of them is 0.
    pub fn bandwidth_per_sm_of(memory_khz: u64, bus_bits: u64, sms: u64) -> Option<f64> {
        if memory_khz == 0 || bus_bits == 0 || sms == 0 {
            return None;
        }
        Some(2.0 * memory_khz as f64 * 1e3 * bus_bits as f64 / 8.0 / sms as f64 / 1e9)
    }

    /// The class whose bandwidth per SM is nearest `gb_per_s` (by ratio).
    pub fn nearest(gb_per_s: f64) -> GpuClass {
        let far = |c: GpuClass| (gb_per_s.max(1e-3) / c.bandwidth_per_sm()).ln().abs();
        GpuClass::ALL
            .into_iter()
            .min_by(|a, b| far(*a).total_cmp(&far(*b)))
            .unwrap_or_default()
    }
}

impl fmt::Display for GpuClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GpuClass::H100 => "h100",
            GpuClass::H200 => "h200",
        })
    }
}

impl FromStr for GpuClass {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        GpuClass::ALL
            .into_iter()
            .find(|c| c.to_string().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("unknown GPU class `{s}`: h100 or h200"))
    }
}

/// The order in which a kernel of geometry `g` takes its tiles on GPUs of
/// `class`. Measured through the attribute's defaults, `bench` once with
/// `BANKFREE_GPU_CLASS=h100` (along the rows) and once with the tiles taken down
/// the columns, in one call on an H200; ratios to a same-bytes `cudaMemcpy`,
/// rows / columns (padded lists):
///
/// | case | kernel | rows | columns |
/// |---|---|---|---|
/// | 8192 x 8192 u8 | vec tile, 4 x 4 blocks | 0.905 | 0.935 |
/// | 8192 x 8192 u16 | vec tile, 4 x 4 blocks | 0.953 | 0.971 |
/// | 8192 x 8192 f32 | vec tile, 2 x 2 blocks | 0.956 | 0.981 |
/// | 8192 x 8192 f64 | tile | 0.952 | 0.987 |
/// | 8192 x 8192 16-byte | tile | 0.893 | 0.914 |
/// | 8191 x 8193 f32 | skew tile | 0.822 | 0.803 |
/// | 4097 x 4095 u8 | 1-element tile, 64 x 4 threads | 0.572 | 0.557 |
/// | 4095 x 4097 f16 | skew tile | 0.741 | 0.713 |
///
/// Tiles whose rows are whole 32-byte sectors and more (vector tiles, 8- and
/// 16-byte elements), written one band of destination rows at a time, gain on
/// the H200; the skew tiles and the 1-element tiles of narrower elements lose,
/// and 12-byte tiles lose too (0.836 against 0.807 with a probe of the 64-wide
/// tile on 8192 x 8192). On an H100 the same probe found no gain (f32 vec tile
/// 0.959 / 0.958, f64 0.966 / 0.966, 16-byte 0.974 / 0.967) and losses on other
/// shapes (4096 x 16384 f32 0.961 / 0.949). So: down the columns of tiles for
/// those tile kernels on the H200 class, along the rows everywhere else.
///
/// A `wordvec` kernel, whose rows move as 16-byte vectors, goes down the
/// columns on the H200 class too: CuPy over the emitted kernels (H200, one
/// call, 2026-11-28), rows / columns: 12-byte 8192 x 8192 0.852 / 0.907, 2048
/// x 8192 0.826 / 0.874, 100 x 100000 0.586 / 0.798; 20-byte 4096 x 4096 0.851
/// / 0.899, 1000 x 20000 0.834 / 0.922; 28-byte 4096 x 4096 0.817 / 0.849;
/// 60-byte 2048 x 2048 0.722 / 0.744.
///
/// A `skew` tile of 4-, 8- or 16-byte elements, whose interior tiles run
/// without bounds checks ([`Geometry::skew_interior`]), goes down the
/// columns on the H200 class too (before that body it ran f32 8191 x 8193 at
/// 0.822 along the rows and 0.803 down the columns, above). `bench -- --shape
/// ...` on an H200 (2026-11-29), the build before the interior body, then
/// this one along the rows and down the columns, two runs of each in one
/// call (they agreed within 0.005), ratio to memcpy:
///
/// | case | before | rows | columns |
/// |---|---|---|---|
/// | 8191 x 8193 f32 | 0.866 | 0.889 | 0.917 |
/// | 12001 x 10001 f32 | 0.854 | 0.867 | 0.883 |
/// | 1973 x 15013 f32 | 0.887 | 0.912 | 0.953 |
/// | 4095 x 4097 f32 | 0.942 | 0.991 | 0.992 |
/// | 5003 x 3001 f32 | 0.938 | 0.999 | 0.976 |
/// | 2711 x 4099 f32 | 0.990 | 1.039 | 1.026 |
/// | 8191 x 4097 f64 | 0.912 | 0.910 | 0.953 |
/// | 5003 x 3001 f64 | 0.942 | 0.932 | 0.966 |
/// | 1973 x 15013 f64 | 0.902 | 0.899 | 0.965 |
/// | 5003 x 3001 16-byte | 0.926 | 0.927 | 0.956 |
/// | 4095 x 4097 16-byte | 0.922 | 0.921 | 0.958 |
///
/// The 2-byte skew tile (small odd matrices, 6 to 12 MB) ran no faster down
/// the columns (50001 x 60: 1.45 and 1.52 along the rows, 1.28 and 1.26 down
/// them) and keeps the rows, as does the 12-byte one.
pub fn tile_order(class: GpuClass, g: &Geometry) -> TileOrder {
    let whole_sectors = g.vec > 1 || matches!(g.elem_bytes, 8 | 16);
    let tiles =
        (g.form == Form::Tile && whole_sectors) || g.form == Form::Wordvec || g.skew_interior();
    if class == GpuClass::H200 && tiles {
        TileOrder::Columns
    } else {
        TileOrder::Rows
    }
}

/// Width of the `skew` tile for `elem_bytes` on GPUs of `class`:
/// [`choice::skew_tile`], but 32 for 4-byte elements on the H200 class. There,
/// in `bench --sweep` on an H200 (one call, 2026-11-25), the 32-wide tile ran
/// 8191 x 8193 f32 at 0.850 of memcpy against 0.817 for the 64-wide one, 5003 x
/// 3001 at 0.900 against 0.867 and 1973 x 15013 at 0.873 against 0.835, where
/// an H100 ran them alike (0.929 against 0.934, 0.988 against 0.987, 0.947
/// against 0.949). 8-byte elements stay faster 64 wide on both.
pub fn skew_tile(class: GpuClass, elem_bytes: u32) -> u32 {
    if class == GpuClass::H200 && elem_bytes == 4 {
        32
    } else {
        choice::skew_tile(elem_bytes)
    }
}

/// The spec of the `skew` kernel GPUs of `class` run in place of `spec`'s, where
/// `spec` is the default skew tile ([`choice::skew_spec`]) and [`skew_tile`]
/// gives `class` another width.
pub fn skew_twin(class: GpuClass, spec: &TransposeSpec) -> Option<TransposeSpec> {
    let e = spec.geometry.elem_bytes;
    let width = skew_tile(class, e);
    if choice::skew_spec(e).ok() != Some(*spec) || width == spec.geometry.tile {
        return None;
    }
    TransposeSpec::new(width, e, spec.strategy)
        .and_then(|s| s.with_form(Form::Skew))
        .and_then(|s| s.with_block_rows(default_block_rows(width)))
        .ok()
}

/// The kernel GPUs of `class` run in place of `k`, where the measured rules
/// differ from the defaults `k` was built with: a `tile` or `wordvec` kernel in
/// the default order goes down the columns where [`tile_order`] says so, the
/// default `skew` tile ([`choice::skew_spec`]) takes the width [`skew_tile`]
/// gives (and any skew tile the order [`tile_order`] gives), and on the H100
/// class the 12-byte `wordvec` kernel gives way to the 12-byte skew tile
/// measured there (8192 x 8192 at 0.94 of memcpy; the
/// `wordvec` kernel has been measured on the H200 only). The twin takes every
/// call `k` takes: a narrower skew tile refuses none that a wider one takes,
/// and a skew tile no shape or pitch. `None`: `k` runs as it is.
///
/// ```
/// use bankfree_gen::select::{choice, device::{twin, GpuClass}};
/// use bankfree_gen::Kernel;
/// let k = Kernel::build(choice::skew_spec(4)?)?;
/// assert!(twin(GpuClass::H100, &k).is_none());
/// assert_eq!(twin(GpuClass::H200, &k).map(|t| t.spec().geometry.tile), Some(32));
/// # Ok::<(), bankfree_gen::SpecError>(())
/// ```
pub fn twin(class: GpuClass, k: &Kernel) -> Option<Kernel> {
    let g = k.spec().geometry;
    if k.order() != TileOrder::Rows {
        return None;
    }
    match g.form {
        Form::Tile | Form::Wordvec if tile_order(class, &g) == TileOrder::Columns => {
            k.with_order(TileOrder::Columns).ok()
        }
        Form::Wordvec if class == GpuClass::H100 && g.elem_bytes == 12 => {
            let built = Kernel::build(choice::skew_spec(12).ok()?).ok()?;
            let built = built.with_outer(k.outer()).ok()?;
            built.verdict().conflict_free.then_some(built)
        }
        Form::Skew => {
            let width = skew_twin(class, k.spec());
            let g = width.map_or(g, |s| s.geometry);
            let down = tile_order(class, &g) == TileOrder::Columns;
            let built = match width {
                Some(s) => Kernel::build(s).ok()?.with_outer(k.outer()).ok()?,
                None if down => k.clone(),
                None => return None,
            };
            let built = if down {
                built.with_order(TileOrder::Columns).ok()?
            } else {
                built
            };
            built.verdict().conflict_free.then_some(built)
        }
        _ => None,
    }
}

/// Tiles of each row of tiles a `realign` kernel wants its resident blocks to
/// cover at once before it takes them along the rows ([`realign_order`]).
pub const REALIGN_ROW_TILES: u64 = 8;

/// The order in which a `realign` kernel of geometry `g` (its 64-bit build if
/// `index64`) takes the tiles of a call whose matrices have `cols` columns, on
/// a GPU of `class` with `sms` SMs: a 2-byte kernel on the H200 class down
/// the columns of tiles always; otherwise down the columns where its resident
/// blocks (`sms` times [`realign_min_blocks`]) would cover fewer than
/// [`REALIGN_ROW_TILES`] tiles of each row of tiles, along the rows elsewhere.
///
/// Along the rows, the resident blocks of a matrix of many columns of tiles
/// write a piece of one tile (128 bytes) or two of each destination row at a
/// time, and its short source rows feed few tiles each; down the columns they
/// write whole destination rows in order. CuPy over the emitted kernels, both
/// orders in one call per GPU (2026-11-27, ratios to a same-bytes
/// `cudaMemcpy` captured in a graph like the kernels; tiles of a row, then the
/// tiles of each row the 528 or 792 resident blocks cover), rows / columns:
///
/// | shape | tiles across | resident per row | H100 | H200 |
/// |---|---|---|---|---|
/// | 300 x 100001 u8 | 782 | 0.7 | 0.578 / 0.775 | 0.658 / 0.730 |
/// | 1001 x 30001 u8 | 235 | 2.2 | 0.777 / 0.919 | 0.844 / 0.890 |
/// | 600 x 60001 u8 | 469 | 1.1 | 0.826 / 0.943 | 0.873 / 0.926 |
/// | 3001 x 20001 u8 | 157 | 3.4 | 1.023 / 1.058 | 1.122 / 1.148 |
/// | 4001 x 10001 u8 | 79 | 6.7 | 1.033 / 1.042 | 1.104 / 1.116 |
/// | 8191 x 8193 u8 | 65 | 8.1 | 1.070 / 1.083 | 1.150 / 1.201 |
/// | 2115 x 7581 u8 | 60 | 8.8 | 0.970 / 0.946 | 1.003 / 0.963 |
/// | 4097 x 4095 u8 | 32 | 16.5 | 0.992 / 0.980 | 1.021 / 0.993 |
/// | 19731 x 1336 u8 | 11 | 48 | 1.050 / 1.000 | 1.089 / 1.098 |
/// | 193 x 50001 2-byte | 782 | 1.0 | 0.707 / 0.899 | 0.765 / 0.847 |
/// | 1001 x 20001 2-byte | 313 | 2.5 | 0.975 / 1.075 | 1.050 / 1.138 |
/// | 3001 x 8001 2-byte | 126 | 6.3 | 1.065 / 1.117 | 1.107 / 1.178 |
/// | 4095 x 4097 2-byte | 65 | 12.2 | 1.087 / 1.095 | 1.104 / 1.151 |
/// | 8191 x 8193 2-byte | 129 | 6.1 | 1.107 / 1.123 | 1.180 / 1.211 |
/// | 13001 x 601 2-byte | 10 | 79 | 1.075 / 1.061 | 1.066 / 1.116 |
///
/// ```
/// use bankfree_gen::select::device::{realign_order, GpuClass};
/// use bankfree_gen::{kernel::order::TileOrder, TransposeSpec};
/// let g = TransposeSpec::realign(1)?.geometry;
/// assert_eq!(realign_order(GpuClass::H100, &g, false, 30001, 132), TileOrder::Columns);
/// assert_eq!(realign_order(GpuClass::H100, &g, false, 4095, 132), TileOrder::Rows);
/// let g2 = TransposeSpec::realign(2)?.geometry;
/// assert_eq!(realign_order(GpuClass::H200, &g2, false, 601, 132), TileOrder::Columns);
/// # Ok::<(), bankfree_gen::SpecError>(())
/// ```
pub fn realign_order(
    class: GpuClass,
    g: &Geometry,
    index64: bool,
    cols: u64,
    sms: u32,
) -> TileOrder {
    let across = cols.div_ceil(u64::from(g.tile_elems().max(1)));
    let resident = u64::from(sms) * u64::from(realign_min_blocks(g.elem_bytes, index64));
    let always = class == GpuClass::H200 && g.elem_bytes == 2;
    if g.realigns() && (always || across.saturating_mul(REALIGN_ROW_TILES) > resident) {
        TileOrder::Columns
    } else {
        TileOrder::Rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_driver_figures_give_the_measured_classes() {
        let h100 = GpuClass::bandwidth_per_sm_of(2_619_000, 5120, 132).expect("nonzero");
        let h200 = GpuClass::bandwidth_per_sm_of(3_201_000, 6144, 132).expect("nonzero");
        assert!(
            (h100 - GpuClass::H100.bandwidth_per_sm()).abs() < 0.1,
            "{h100}"
        );
        assert!(
            (h200 - GpuClass::H200.bandwidth_per_sm()).abs() < 0.1,
            "{h200}"
        );
        assert_eq!(GpuClass::nearest(h100), GpuClass::H100);
        assert_eq!(GpuClass::nearest(h200), GpuClass::H200);
        // Halfway by ratio is about 30.7 GB/s per SM.
        assert_eq!(GpuClass::nearest(30.0), GpuClass::H100);
        assert_eq!(GpuClass::nearest(31.5), GpuClass::H200);
        assert_eq!(GpuClass::nearest(0.0), GpuClass::H100);
        assert_eq!(GpuClass::bandwidth_per_sm_of(0, 5120, 132), None);
        assert_eq!("H200".parse::<GpuClass>(), Ok(GpuClass::H200));
        assert!("a100".parse::<GpuClass>().is_err());
    }

    #[test]
    fn vector_8_and_16_byte_and_skew_tiles_of_the_h200_class_go_down_the_columns() {
        for e in [1, 2, 4, 8, 12, 16, 32] {
            for vec in [1, 2, 4] {
                for form in [Form::Tile, Form::Skew, Form::Small, Form::Tall] {
                    let g = Geometry {
                        form,
                        tile: 32,
                        block_rows: 8,
                        elem_bytes: e,
                        vec,
                        split: false,
                    };
                    assert_eq!(tile_order(GpuClass::H100, &g), TileOrder::Rows);
                    let down = (form == Form::Tile && (vec > 1 || e == 8 || e == 16))
                        || (form == Form::Skew && matches!(e, 4 | 8 | 16));
                    assert_eq!(
                        tile_order(GpuClass::H200, &g) == TileOrder::Columns,
                        down,
                        "{e}-byte v{vec} {form}"
                    );
                    // The rule never picks an order the form cannot take.
                    assert!(tile_order(GpuClass::H200, &g).fits(form));
                }
            }
        }
    }

    #[test]
    fn realign_kernels_go_down_the_columns_where_few_tiles_of_a_row_are_resident() {
        for (e, side) in [(1u32, 128u64), (2, 64)] {
            let g = TransposeSpec::realign(e).expect("valid").geometry;
            for index64 in [false, true] {
                for sms in [1u32, 108, 132] {
                    let resident = u64::from(sms * realign_min_blocks(e, index64));
                    // The most tiles across that the resident blocks still
                    // cover `REALIGN_ROW_TILES` times.
                    let most = resident / REALIGN_ROW_TILES;
                    let order = |cols: u64| realign_order(GpuClass::H100, &g, index64, cols, sms);
                    assert_eq!(order(most * side), TileOrder::Rows, "{e}-byte {sms}");
                    assert_eq!(order(most * side + 1), TileOrder::Columns, "{e}-byte {sms}");
                    assert_eq!(order(0), TileOrder::Rows);
                    assert_eq!(order(u64::MAX), TileOrder::Columns);
                    // The H200 class takes 2-byte tiles down the columns
                    // whatever the width, 1-byte ones as the H100 class does.
                    let h200 = realign_order(GpuClass::H200, &g, index64, most * side, sms);
                    let down = if e == 2 {
                        TileOrder::Columns
                    } else {
                        TileOrder::Rows
                    };
                    assert_eq!(h200, down, "{e}-byte {sms}");
                }
            }
            // Other forms keep their order whatever the width.
            for form in [Form::Tile, Form::Skew, Form::Thin] {
                let other = Geometry { form, ..g };
                for class in GpuClass::ALL {
                    assert_eq!(
                        realign_order(class, &other, false, 1 << 30, 1),
                        TileOrder::Rows
                    );
                }
            }
        }
    }

    #[test]
    fn the_h200_class_runs_its_skew_twin_wherever_the_default_runs() {
        use crate::check::fit::kernel_refusal;
        use crate::ir::shape::Shape;
        let shapes = [
            Shape::new(8191, 8193),
            Shape::new(100, 40),
            Shape::new(5, 77),
            Shape::new(70001, 33),
            Shape::new(3, 65),
        ];
        for e in [2, 4, 8, 12, 16] {
            let k = Kernel::build(choice::skew_spec(e).expect("valid")).expect("builds");
            assert!(twin(GpuClass::H100, &k).is_none(), "{e}-byte");
            let Some(t) = twin(GpuClass::H200, &k) else {
                assert!(
                    matches!(e, 2 | 12),
                    "the {e}-byte skew tile has an H200 twin"
                );
                continue;
            };
            // 32 wide for 4-byte elements, as wide as built for 8 and 16;
            // down the columns, with the same outer axes.
            let width = if e == 4 { 32 } else { k.spec().geometry.tile };
            assert_eq!(t.spec().geometry.tile, width, "{e}-byte");
            assert_eq!(t.order(), TileOrder::Columns);
            assert_eq!(t.spec().geometry.form, Form::Skew);
            assert!(twin(GpuClass::H200, &t).is_none(), "a twin has no twin");
            assert_eq!(t.with_outer(2).map(|o| o.outer()), Ok(2));
            for shape in &shapes {
                let refused = |k: &Kernel| kernel_refusal(&k.spec().geometry, k.quotients(), shape);
                if refused(&k).is_none() {
                    assert_eq!(refused(&t), None, "{shape:?}");
                }
            }
        }
    }

    #[test]
    fn wordvec_kernels_go_down_the_columns_on_the_h200_and_give_way_to_the_12_byte_skew_tile_on_the_h100(
    ) {
        use crate::check::fit::kernel_refusal;
        use crate::ir::shape::{Axis, Outer, Shape};
        let mut outer = Shape::batched(2, 100, 40);
        outer.outer = Outer::new(&[Axis {
            ext: 3,
            src: 8000,
            dst: 8000,
        }])
        .expect("one axis");
        let shapes = [Shape::new(8192, 8192), Shape::new(100, 40), outer];
        for e in [12, 20, 24, 60] {
            let k = Kernel::build(TransposeSpec::wordvec(e).expect("valid")).expect("builds");
            let t = twin(GpuClass::H200, &k).expect("an H200 twin");
            assert_eq!(t.order(), TileOrder::Columns);
            assert_eq!(t.spec(), k.spec());
            assert!(twin(GpuClass::H200, &t).is_none(), "a twin has no twin");
            match twin(GpuClass::H100, &k) {
                None => assert_ne!(e, 12, "the 12-byte kernel has an H100 twin"),
                Some(s) => {
                    assert_eq!((e, s.spec()), (12, &choice::skew_spec(12).expect("valid")));
                    // It takes every call the wordvec kernel takes, its outer
                    // axes included.
                    let with = k.with_outer(1).expect("outer axes");
                    let s1 = twin(GpuClass::H100, &with).expect("an H100 twin");
                    assert_eq!(s1.outer(), 1);
                    for shape in &shapes {
                        let (k, s) = if shape.outer.n == 1 {
                            (&with, &s1)
                        } else {
                            (&k, &s)
                        };
                        let refused =
                            |k: &Kernel| kernel_refusal(&k.spec().geometry, k.quotients(), shape);
                        assert_eq!(refused(k), None, "{shape:?}");
                        assert_eq!(refused(s), None, "{shape:?}");
                    }
                }
            }
        }
    }
}
