//! Which kernel to run by default: the generator's choices, from measurements.
//!
//! A kernel moving `vec x vec` blocks needs dimensions, pitches and strides divisible
//! by `vec` and aligned pointers, so a caller lists it first and a `vec = 1` spec
//! after it (the runtime's `transpose_first` takes the first that can run a call).
//! The attribute does this when `tile` and `block_rows` are left to it.
//!
//! ```
//! use bankfree_gen::{select::choice::fast_variant, Strategy, TransposeSpec};
//! let spec = TransposeSpec::new(32, 1, Strategy::Pad(None))?;
//! let fast = fast_variant(&spec).expect("1-byte elements have a measured variant").geometry;
//! assert_eq!((fast.tile, fast.block_rows, fast.vec), (32, 16, 4)); // 128 x 128 bytes
//! assert!(fast_variant(&TransposeSpec::new(32, 8, Strategy::Xor)?).is_none());
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

use crate::kernel::geometry::{default_block_rows, Form};
use crate::kernel::spec::{SpecError, Strategy, TransposeSpec};
use crate::kernel::Kernel;

/// One measured default: for `elem_bytes` and `strategy`, a kernel of
/// `tile x block_rows` threads moving `vec x vec` blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Default {
    pub elem_bytes: u32,
    pub strategy: Strategy,
    pub tile: u32,
    pub block_rows: u32,
    pub vec: u32,
}

const fn d(elem_bytes: u32, strategy: Strategy, tile: u32, block_rows: u32, vec: u32) -> Default {
    Default {
        elem_bytes,
        strategy,
        tile,
        block_rows,
        vec,
    }
}

/// The fastest variant per element size and strategy on the H100 (sm_90), from
/// `bench --sweep` on 8192 x 8192 (docs/design.md); ratios to a same-bytes
/// `cudaMemcpy`, against the tile-32, 32 x 8 kernel with one element per step in
/// brackets: 1-byte 0.94-0.95 [0.36], 2-byte 0.96-0.97 [0.64], 4-byte 0.97 [0.89],
/// 12-byte 0.94 [0.93], 16-byte 0.98 [0.97]. 8-byte elements are fastest as they
/// are (0.975-0.984), so they have no entry. 1-byte kernels use 32 x 16 threads:
/// pad 0.951 against 0.939 for 32 x 8, swizzle 0.924 against 0.913 for 16 x 8.
pub const HOPPER_DEFAULTS: [Default; 10] = [
    d(1, Strategy::Pad(None), 32, 16, 4),
    d(1, Strategy::Xor, 32, 16, 4),
    d(2, Strategy::Pad(None), 32, 8, 4),
    d(2, Strategy::Xor, 32, 8, 4),
    d(4, Strategy::Pad(None), 32, 16, 2),
    d(4, Strategy::Xor, 32, 16, 2),
    d(12, Strategy::Pad(None), 64, 8, 1),
    d(12, Strategy::Xor, 64, 8, 1),
    d(16, Strategy::Pad(None), 16, 16, 1),
    d(16, Strategy::Xor, 16, 16, 1),
];

/// The 1-element kernels `tile = auto` runs where no vector kernel can, in place of
/// the attribute's tile-32, 32 x 8 one, per element size and strategy: on 4097 x
/// 4095 u8 (sides and pitches not multiples of 4) the 64-tile with 4 thread rows
/// (16 rows per thread) runs at 0.613 of memcpy padded and 0.585 swizzled, the
/// 32 x 8 one at 0.495 and 0.505 (H100, `bench --sweep --case 4097x4095`); the
/// 32 x 2 one, also 16 rows per thread, at 0.589 and 0.508 (2026-11-25).
pub const HOPPER_SCALAR_DEFAULTS: [Default; 2] = [
    d(1, Strategy::Pad(None), 64, 4, 1),
    d(1, Strategy::Xor, 64, 4, 1),
];

/// Thread rows of the 32-wide scalar tile of a permute's transposes (the one its
/// folded tile sides run on, and the last of its other lists), per element size:
/// more rows per thread (so more loads in flight) for the narrow elements.
/// Against 32 x 8 threads, geometric means over the folded transposes of
/// `--example permute -- --random 12 --seed S`, S = 8..27 (H100): 1-byte x1.39
/// with 32 x 2 (x1.28 with 32 x 4, 15 cases, each faster), 2-byte x1.21 with
/// 32 x 4 (x1.02 with 32 x 2, 16 cases), while 4-byte (x0.998 with 32 x 4, 22
/// cases) and 8-byte (x0.999, 20 cases) keep 32 x 8. The unfolded ones that
/// run it: 5 of 6 faster (x1.10 to x1.43), `[38043,2,7,63] [3,2,1,0]` u8 x0.92.
pub fn permute_tile_rows(elem_bytes: u32) -> u32 {
    permute_tile(elem_bytes, u64::MAX).1
}

/// The most items on a side of a folded permute transpose that a 16-wide
/// tile takes in place of the 32-wide one ([`permute_tile`]).
pub const PERMUTE_TILE16_MAX_SIDE: u64 = 16;

/// The scalar tile of a folded permute transpose of `elem_bytes`-byte
/// elements whose shorter side has `side` items: its width and thread rows.
/// A side of at most [`PERMUTE_TILE16_MAX_SIDE`] leaves more than half of a
/// 32-wide tile idle, and a 16-wide one (16 x 4 threads, 16 x 2 for 1- and
/// 2-byte elements) ran such transposes faster on both GPUs (`probe` of each
/// plan's tiles, one call per GPU, 2026-11-27; H100 / H200, of memcpy):
/// `[6,66,27,5,12,13] [1,5,2,3,4,0]` f32 (9720 x 13) 0.99 against 0.60 / 0.75
/// against 0.45, `[16,52428,10] [2,1,0]` f32 (16 x 524280) 0.94 against 0.74
/// / 0.90 against 0.58, `[33,5,2,25,28,16] [5,3,0,2,1,4]` f64 (140 x 16) 1.05
/// against 0.94 / 1.09 against 0.77, `[6,2,127100,11] [3,1,2,0]` f16 (1525200
/// x 11) 0.43 against 0.26 / 0.32 against 0.19, `[9,7310,17,15] [3,1,2,0]`
/// f16 0.40 against 0.25 (H200), `[5,279620,2,12] [3,1,2,0]` u8 0.19 against
/// 0.12 (H200). From 17 items the 32-wide tile runs as fast or faster:
/// `[46,23,14,7,4,20] [1,3,2,5,0,4]` f32 (184 x 20) 0.75 against 0.76 (H100),
/// `[2,123361,17] [2,1,0]` f64 (246722 x 17) 0.80 against 0.72 (H200).
pub fn permute_tile(elem_bytes: u32, side: u64) -> (u32, u32) {
    let small = elem_bytes <= 2;
    if side <= PERMUTE_TILE16_MAX_SIDE {
        return (16, if small { 2 } else { 4 });
    }
    (
        32,
        match elem_bytes {
            1 => 2,
            2 => 4,
            _ => 8,
        },
    )
}

/// The measured 1-element kernel of `spec`'s element size and strategy
/// ([`HOPPER_SCALAR_DEFAULTS`]), where there is one.
pub fn scalar_variant(spec: &TransposeSpec) -> Option<TransposeSpec> {
    if spec.geometry.form != Form::Tile {
        return None;
    }
    measured(&HOPPER_SCALAR_DEFAULTS, spec)
}

/// The measured variant of `spec`'s element size and strategy, where there is one:
/// for the conflict-free searches `pad` and `swizzle(xor)`. Other strategies
/// (`none`, `pad(N)`, `rotate`) are taken as asked for.
pub fn fast_variant(spec: &TransposeSpec) -> Option<TransposeSpec> {
    measured(&HOPPER_DEFAULTS, spec)
}

/// The entry of `table` for a `vec = 1` spec's element size and strategy, as a spec.
fn measured(table: &[Default], spec: &TransposeSpec) -> Option<TransposeSpec> {
    if spec.geometry.vec != 1 {
        return None;
    }
    let d = table
        .iter()
        .find(|d| d.elem_bytes == spec.geometry.elem_bytes && d.strategy == spec.strategy)?;
    TransposeSpec::new(d.tile, spec.geometry.elem_bytes, spec.strategy)
        .and_then(|s| s.with_block_rows(d.block_rows))
        .and_then(|s| s.with_vec(d.vec))
        .ok()
}

/// [`fast_variant`] built and proven conflict-free (hopper model), ready to list
/// before `spec`'s own kernel.
pub fn fast_kernel(spec: &TransposeSpec) -> Option<Kernel> {
    let k = Kernel::build(fast_variant(spec)?).ok()?;
    k.verdict().conflict_free.then_some(k)
}

/// Tile side of the default `skew` kernels (x 8 threads). On 8191 x 8193 f32 (H100)
/// the 64 x 71 tile runs at 0.934 of memcpy, the 32 x 71 one at 0.928 and the
/// 64 x 135 one at 0.927; f64: 0.933, 0.919 and 0.885. For 2- and 12-byte
/// elements ([`skew_tile`]) the 32-wide tile is the faster: 2-byte 4095 x 4097 at
/// 0.865 against 0.834 (`bench --sweep --case 4095x4097`); 12-byte 1973 x 821 at
/// 0.854 against 0.775, 301 x 15013 at 0.830 against 0.817.
pub const SKEW_TILE: u32 = 64;

/// Tile side of the default `skew` kernel for `elem_bytes`: [`SKEW_TILE`], or 32
/// for 2-, 12- and 16-byte elements (16-byte, `bench --sweep` one call per GPU:
/// 5003 x 3001 at 0.948 of memcpy against 0.929 for the 64-wide tile and 2711 x
/// 4099 at 0.956 against 0.927 on the H100, 0.917 against 0.859 and 0.928
/// against 0.867 on the H200).
pub fn skew_tile(elem_bytes: u32) -> u32 {
    if matches!(elem_bytes, 2 | 12 | 16) {
        32
    } else {
        SKEW_TILE
    }
}

/// Thread rows of the default `skew` kernel for `elem_bytes`: 8, or 16 for 12-byte
/// elements, whose 32 x 71 tile moves each element as three words: `bench --sweep`
/// ran 2711 x 1224 at 0.929 of memcpy with 16 rows against 0.872 with 8 and 5003
/// x 3001 at 0.904 against 0.846 on the H100, 0.820 against 0.793 and 0.818
/// against 0.767 on the H200 (one call each, 2026-11-25).
pub fn skew_block_rows(elem_bytes: u32) -> u32 {
    if elem_bytes == 12 {
        16
    } else {
        default_block_rows(skew_tile(elem_bytes))
    }
}

/// The default `skew` kernel's spec for `elem_bytes`: [`skew_tile`] wide, with
/// [`skew_block_rows`] thread rows, padded (a skew tile is padded whatever the
/// strategy).
pub fn skew_spec(elem_bytes: u32) -> Result<TransposeSpec, SpecError> {
    TransposeSpec::new(skew_tile(elem_bytes), elem_bytes, Strategy::Pad(None))
        .and_then(|s| s.with_form(Form::Skew))
        .and_then(|s| s.with_block_rows(skew_block_rows(elem_bytes)))
}

/// The kernels for shape classes the square tiles serve badly, for `spec`'s element
/// size and strategy (`pad` and `swizzle(xor)`, like [`fast_variant`]), built and
/// proven conflict-free: small (batches of matrices below 8 KB whose destination is one dense run) and, for 1-
/// and 2-byte elements, strip (at most 32 rows, the destination one run), both
/// gathered without shared memory (`naive` whatever the strategy), and planar (at
/// most 8 columns, transposed in registers); tall (at most 32 columns), wide (at
/// most 32 rows), realign (large 1- and 2-byte matrices no vec kernel takes),
/// wordvec (elements of several 4-, 8- or 16-byte units, 12 to 64 bytes, whose
/// rows start on 16 bytes), then skew (destination rows that do not start on 32-byte
/// sectors; every destination for 12-byte elements). Tall, wide and skew pad, whatever the strategy: a flat
/// chunk has no rows to swizzle, and the padded skew tile was measured faster
/// than the swizzled one; realign swizzles.
/// Each is listed before the square-tile kernels; the runtime runs one only on the
/// shapes it suits.
pub fn shape_kernels(spec: &TransposeSpec) -> Vec<Kernel> {
    shape_specs(spec)
        .into_iter()
        .filter_map(|s| Kernel::build(s).ok())
        .filter(|k| k.verdict().conflict_free)
        .collect()
}

/// The specs of [`shape_kernels`], before they are built.
pub fn shape_specs(spec: &TransposeSpec) -> Vec<TransposeSpec> {
    if spec.geometry.vec != 1 || !matches!(spec.strategy, Strategy::Pad(None) | Strategy::Xor) {
        return Vec::new();
    }
    let e = spec.geometry.elem_bytes;
    // Tall kernels of 1- and 2-byte elements move words and swizzle their chunk
    // (no padding keeps their shifted gathers conflict-free).
    let narrow = |form| {
        let strategy = if form == Form::Tall && e < 4 {
            Strategy::Xor
        } else {
            Strategy::Pad(None)
        };
        TransposeSpec::new(32, e, strategy).and_then(|s| s.with_form(form))
    };
    // Strips for 1- and 2-byte elements, which no wide kernel takes: 8 x 1072190
    // u8 runs at 1.04 of memcpy (the square tile: 0.22), 2 x 13153002 u8 at 0.77
    // (0.04), 14 x 1031667 2-byte at 0.86 (0.44). From 4 bytes on the wide kernel
    // is as fast or faster (21 x 635750 f32: 0.996 against 0.88; 19 x 50799
    // 12-byte: 1.08 against 0.86; H100, `bench --random 8 --seed 3
    // --alternatives`).
    let strip = (e <= 2).then(|| TransposeSpec::strip(e));
    // Squat before the strips, on matrices of at least one of its tiles'
    // columns: its lanes read whole words of the source rows and transpose them
    // in registers where the strip kernel gathers every element
    // (docs/design.md has the figures).
    let squat = (e <= 2).then(|| TransposeSpec::squat(e));
    // Interleave before the squat kernel, where the source rows start on 16
    // bytes: its lanes read whole 16-byte vectors where the squat kernel
    // reads words and realigns them (docs/design.md has the figures).
    let interleave = (e <= 2).then(|| TransposeSpec::interleave(e));
    // Planar before the tall kernels of 1- and 2-byte elements, whose gathers from
    // shared memory take a load per element (docs/design.md has the figures).
    let planar = (e <= 2).then(|| TransposeSpec::planar(e));
    // Thin before the tall kernels of 1- and 2-byte elements too: it reads each
    // shared word once per block of rows where they gather every element.
    let thin = (e <= 2).then(|| TransposeSpec::thin(e));
    // Realign for large 1- and 2-byte matrices no vec kernel takes (a side,
    // pitch or stride off 4, or a pointer off its vector; `suit::realign_min_sides`
    // has the figures of its smallest sides). 2-byte ones against the skew tile
    // (H100, `bench --case 4097` and `--random 3 --seed 13` and `21`, one call,
    // with one word stored a lane): 4095 x 4097 0.975 of memcpy against 0.866,
    // 5884 x 4781 0.936 against 0.816, 2559 x 8954 0.931 against 0.825, 5008 x
    // 1658 0.890 against 0.824; 1874 x 2699 0.968 against 1.002.
    let realign = (e <= 2).then(|| TransposeSpec::realign(e));
    // Padded for both strategies: on 8191 x 8193 f32 the padded skew tile runs at
    // 0.82 of memcpy and the XOR one at 0.74 (H100, tile 32 x 39).
    // No 1-byte skew kernel: a sector is 32 of them, so the tile reads half again as
    // many rows as it writes (the 64 x 8 one runs at 0.44 of memcpy on aligned
    // 8192 x 8192 u8, the tile-32 kernel at 0.48; H100, `bench --sweep`).
    let skew = (e > 1).then(|| skew_spec(e));
    // Wordvec before the skew tile for elements of an odd number of words (or
    // of 8-byte units) whose rows start on 16 bytes: it moves each row as
    // 16-byte vectors where the skew and square tiles move a word per access.
    // H200, `bench --shape`, one call, against the same binary pinned to the
    // H100 class (the skew tile): 12-byte 8192 x 8192 0.943 of memcpy against
    // 0.900, 1024 x 16384 0.966 against 0.874, 64 x 262144 0.955 against
    // 0.737; CuPy over the emitted kernels against the square tile they ran
    // before: 20-byte 4096 x 4096 0.899 against 0.659, 28-byte 0.849 against
    // 0.449, 60-byte 2048 x 2048 0.744 against 0.205 (docs/design.md has the
    // rest).
    let wordvec = TransposeSpec::wordvec(e).ok();
    [
        TransposeSpec::small(e).ok(),
        interleave.and_then(Result::ok),
        squat.and_then(Result::ok),
        strip.and_then(Result::ok),
        planar.and_then(Result::ok),
        thin.and_then(Result::ok),
        narrow(Form::Tall).ok(),
        narrow(Form::Wide).ok(),
        realign.and_then(Result::ok),
        wordvec,
        skew.and_then(Result::ok),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// What `tile = auto` runs for the kernel `k` of the attribute's spec, in the order
/// the runtime tries them: [`shape_kernels`], then [`fast_kernel`], then the
/// measured 1-element variant ([`scalar_variant`], for matrices at least as wide
/// and deep as its tile), then `k` itself, which runs every shape (left out when
/// the fast kernel is a `vec = 1` kernel, which does too).
pub fn auto_kernels(k: &Kernel) -> Vec<Kernel> {
    let mut out = shape_kernels(&k.spec);
    if let Some(f) = fast_kernel(&k.spec) {
        let runs_every_shape = f.spec.geometry.vec == 1;
        out.push(f);
        if runs_every_shape {
            return out;
        }
    }
    out.extend(
        scalar_variant(&k.spec)
            .and_then(|s| Kernel::build(s).ok())
            .filter(|s| s.verdict().conflict_free),
    );
    out.push(k.clone());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::cuda::emit;

    fn spec(tile: u32, elem_bytes: u32, strategy: Strategy) -> TransposeSpec {
        TransposeSpec::new(tile, elem_bytes, strategy).expect("valid spec")
    }

    #[test]
    fn the_measured_defaults_but_word_arrays_stage_their_loads() {
        for (e, want) in [
            (1, true),
            (2, true),
            (4, true),
            (8, true),
            (12, false),
            (16, false),
        ] {
            for s in [Strategy::Pad(None), Strategy::Xor] {
                let k = fast_kernel(&spec(32, e, s)).unwrap_or_else(|| {
                    Kernel::build(spec(32, e, s)).expect("the plain kernel builds")
                });
                assert_eq!(emit(&k).contains(" stage["), want, "{e}-byte {s:?}");
            }
        }
    }

    #[test]
    fn the_12_byte_skew_tile_suits_aligned_destinations_too() {
        use crate::check::suit::{skew_everywhere, unsuited};
        use crate::ir::shape::Shape;
        let aligned = Shape::new(8192, 8192);
        for e in [2, 4, 8, 12, 16] {
            let g = skew_spec(e).expect("default skew spec").geometry;
            assert_eq!(skew_everywhere(&g), e == 12, "{e}-byte");
            assert_eq!(unsuited(&g, &aligned).is_none(), e == 12, "{e}-byte");
            assert!(unsuited(&g, &Shape::new(8191, 8193)).is_none(), "{e}-byte");
        }
        // The 12-byte list runs the wordvec kernel on rows that start on 16
        // bytes, and the skew tile before the 64-tile on the others.
        let k = Kernel::build(spec(32, 12, Strategy::Pad(None))).expect("builds");
        let list = auto_kernels(&k);
        let first = |shape: &Shape| {
            list.iter()
                .find(|x| unsuited(&x.spec().geometry, shape).is_none())
                .expect("a kernel suits")
                .spec()
                .geometry
                .form
        };
        assert_eq!(first(&aligned), Form::Wordvec);
        assert_eq!(first(&Shape::new(8190, 8190)), Form::Skew);
        assert_eq!(first(&Shape::new(8191, 8193)), Form::Skew);
    }

    #[test]
    fn odd_word_elements_list_the_wordvec_kernel_before_the_skew_tile() {
        for e in [12, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64] {
            let forms: Vec<Form> = shape_specs(&spec(32, e, Strategy::Xor))
                .iter()
                .map(|s| s.geometry.form)
                .collect();
            let at = forms.iter().position(|f| *f == Form::Wordvec);
            assert!(at.is_some(), "{e}-byte: {forms:?}");
            let skew = forms.iter().position(|f| *f == Form::Skew);
            assert!(skew.is_none_or(|s| Some(s) > at), "{e}-byte: {forms:?}");
        }
        for e in [1, 2, 4, 8, 16] {
            let specs = shape_specs(&spec(32, e, Strategy::Pad(None)));
            assert!(
                specs.iter().all(|s| s.geometry.form != Form::Wordvec),
                "{e}-byte"
            );
        }
    }

    #[test]
    fn a_staged_move_loads_everything_before_its_first_store() {
        let src = emit(&fast_kernel(&spec(32, 1, Strategy::Xor)).expect("1-byte default"));
        let last_load = src.rfind("] = src[").expect("a load");
        let first_store = src.find("] = stage[").expect("a shared store");
        assert!(last_load < first_store, "{src}");
    }
}
