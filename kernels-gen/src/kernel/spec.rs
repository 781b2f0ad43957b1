//! What kernel to build: a [`Geometry`] and a [`Strategy`], validated.
//!
//! ```
//! use bankfree_gen::{Strategy, TransposeSpec};
//! let spec = TransposeSpec::new(32, 4, "pad".parse()?)?;
//! assert_eq!(spec.geometry.block_rows, 8);
//! assert_eq!(spec.strategy, Strategy::Pad(None));
//! assert!(TransposeSpec::new(48, 4, Strategy::Naive).is_err());
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

use crate::kernel::geometry::{
    default_block_rows, small_vec, wordvec_unit, Form, Geometry, ELEM_SIZES, FORMS,
    REALIGN_BLOCK_ROWS, WORDVEC_BYTES,
};
use crate::kernel::layout::MAX_PAD;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// How the shared tile avoids bank conflicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// No shared memory: reads coalesced, writes strided (the classic baseline).
    Naive,
    /// A shared tile with no conflict avoidance, for comparison.
    None,
    /// `pad`: the smallest padding the analyzer proves conflict-free (`None`), or
    /// `pad(n)`: exactly `n` elements of padding per tile row.
    Pad(Option<u32>),
    /// `swizzle` / `swizzle(xor)`: an XOR swizzle, CuTe's `Swizzle<B,M,S>`.
    Xor,
    /// `swizzle(rotate)`: `tile[y][(x + y) % tile]`.
    Rotate,
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Strategy::Naive => f.write_str("naive"),
            Strategy::None => f.write_str("none"),
            Strategy::Pad(None) => f.write_str("pad"),
            Strategy::Pad(Some(n)) => write!(f, "pad({n})"),
            Strategy::Xor => f.write_str("swizzle(xor)"),
            Strategy::Rotate => f.write_str("swizzle(rotate)"),
        }
    }
}

impl FromStr for Strategy {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Strategy, SpecError> {
        let t: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        let bad = || SpecError::Strategy { value: s.into() };
        Ok(match t.as_str() {
            "naive" => Strategy::Naive,
            "none" => Strategy::None,
            "pad" => Strategy::Pad(None),
            "swizzle" | "swizzle(xor)" => Strategy::Xor,
            "swizzle(rotate)" => Strategy::Rotate,
            _ => {
                let n = t
                    .strip_prefix("pad(")
                    .and_then(|r| r.strip_suffix(')'))
                    .ok_or_else(bad)?;
                let n: u32 = n.parse().map_err(|_| bad())?;
                check_pad(n)?;
                Strategy::Pad(Some(n))
            }
        })
    }
}

impl FromStr for Form {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Form, SpecError> {
        FORMS
            .into_iter()
            .find(|f| f.to_string() == s.trim())
            .ok_or_else(|| SpecError::Form {
                value: s.into(),
                why: "expected tile, skew, tall, wide, small, strip, copy, planar, interleave, realign, thin, \
                      squat or wordvec"
                    .into(),
            })
    }
}

pub(crate) fn check_pad(n: u32) -> Result<(), SpecError> {
    if n > MAX_PAD {
        return Err(SpecError::Pad { value: n });
    }
    Ok(())
}

/// A spec field that is out of range, or a strategy no layout satisfies. Each
/// message names the field, the value and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("tile = {value}: the tile side must be 8, 16, 32 or 64 elements")]
    Tile { value: u32 },
    #[error("block_rows = {value} with tile = {tile}: block_rows must divide the tile and keep tile x block_rows <= 1024 threads; allowed here: {allowed}")]
    BlockRows {
        value: u32,
        tile: u32,
        allowed: String,
    },
    #[error(
        "element size {value} bytes: supported are {ELEM_SIZES} (12 for a float3, for example)"
    )]
    ElemBytes { value: u32 },
    #[error("strategy `{value}`: expected naive, none, pad, pad(N), swizzle, swizzle(xor) or swizzle(rotate)")]
    Strategy { value: String },
    #[error("pad({value}): padding must be 0 to {MAX_PAD} elements per tile row")]
    Pad { value: u32 },
    #[error("the tile needs {bytes} bytes of shared memory per block, more than the {max} bytes any supported GPU allows; use a smaller tile (for `pad`, `strategy = swizzle` needs no padding and so less)")]
    SharedTooLarge { bytes: u64, max: u64 },
    #[error("no padding of 0 to {MAX_PAD} elements makes tile {tile} with {elem_bytes}-byte elements and {block_rows} thread rows conflict-free; use `strategy = swizzle` or another block_rows")]
    NoPad {
        tile: u32,
        elem_bytes: u32,
        block_rows: u32,
    },
    #[error("vec = {value} with {elem_bytes}-byte elements: {why}")]
    Vec {
        value: u32,
        elem_bytes: u32,
        why: String,
    },
    #[error("form `{value}`: {why}")]
    Form { value: String, why: String },
    #[error("{outer} outer batch axes on a `{form}` kernel: a kernel takes at most {max}", max = crate::ir::expr::MAX_OUTER)]
    Outer { outer: u8, form: Form },
    #[error("a kernel folding {rows} row and {cols} column axes of form `{form}` with {vec}-element blocks: only `tile` kernels of single elements fold (`thin` kernels their columns, `tall` ones of single elements their rows), at most {max} more axes per side", max = crate::ir::expr::MAX_FOLD)]
    Fold {
        rows: u8,
        cols: u8,
        form: Form,
        vec: u32,
    },
    #[error("a `{form}` kernel for sources of width {cols}: only `thin`, `squat` and `interleave` kernels are built per width")]
    Width { cols: u32, form: Form },
    #[error("a `{form}` kernel for sources of width {cols}: this one is built for widths {first} to {last}")]
    WidthRange {
        cols: u32,
        form: Form,
        first: u32,
        last: u32,
    },
    #[error("wider quotients on a `{form}` kernel: only a `small` kernel divides per element")]
    Quotients { form: Form },
    #[error("tiles taken down the columns on a `{form}` kernel: only the `tile`, `skew` and `realign` forms have rows and columns of tiles, and a `small` kernel of vectors of single elements a chunk of them")]
    Order { form: Form },
    #[error("layout `{layout}` is not one strategy `{strategy}` resolves to; build the kernel from the spec (`Kernel::build`) instead")]
    Layout { layout: String, strategy: Strategy },
    #[error("no XOR swizzle makes tile {tile} with {elem_bytes}-byte elements and {block_rows} thread rows conflict-free; use `strategy = pad` or another block_rows")]
    NoSwizzle {
        tile: u32,
        elem_bytes: u32,
        block_rows: u32,
    },
}

/// One tiled-transpose kernel, before its strategy is resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct TransposeSpec {
    /// What one block moves and how.
    #[serde(flatten)]
    pub geometry: Geometry,
    pub strategy: Strategy,
}

impl TransposeSpec {
    /// A validated spec with the default `block_rows` for the tile, one element per
    /// step, square tiles.
    pub fn new(tile: u32, elem_bytes: u32, strategy: Strategy) -> Result<Self, SpecError> {
        let spec = TransposeSpec {
            geometry: Geometry {
                form: Form::Tile,
                tile,
                block_rows: default_block_rows(tile),
                elem_bytes,
                vec: 1,
                split: false,
            },
            strategy,
        };
        spec.validate()?;
        Ok(spec)
    }

    /// The `small` kernel for `elem_bytes` (32 x 8 threads, `naive`, one 16-byte
    /// vector per step where the element divides 16), validated.
    pub fn small(elem_bytes: u32) -> Result<Self, SpecError> {
        TransposeSpec::new(32, elem_bytes, Strategy::Naive)?.with_form(Form::Small)
    }

    /// The `strip` kernel for `elem_bytes`, like [`TransposeSpec::small`].
    pub fn strip(elem_bytes: u32) -> Result<Self, SpecError> {
        TransposeSpec::new(32, elem_bytes, Strategy::Naive)?.with_form(Form::Strip)
    }

    /// The `copy` kernel for `elem_bytes` moving `vec` elements per access (32 x 8
    /// threads, `naive`), validated.
    pub fn copy(elem_bytes: u32, vec: u32) -> Result<Self, SpecError> {
        let spec = TransposeSpec {
            geometry: Geometry {
                form: Form::Copy,
                tile: 32,
                block_rows: 8,
                elem_bytes,
                vec,
                split: false,
            },
            strategy: Strategy::Naive,
        };
        spec.validate()?;
        Ok(spec)
    }

    /// The `interleave` kernel for 1- or 2-byte elements (32 x 8 threads, `pad`,
    /// one 16-byte vector per access: `vec = 16 / elem_bytes`), validated.
    ///
    /// ```
    /// use bankfree_gen::{Kernel, TransposeSpec};
    /// let k = Kernel::build(TransposeSpec::interleave(1)?)?;
    /// assert_eq!(k.entry_name(), "bankfree_transpose_t32_r8_e1_v16_pad0_interleave");
    /// assert!(k.verdict().conflict_free);
    /// assert!(TransposeSpec::interleave(4).is_err());
    /// # Ok::<(), bankfree_gen::SpecError>(())
    /// ```
    pub fn interleave(elem_bytes: u32) -> Result<Self, SpecError> {
        TransposeSpec::new(32, elem_bytes, Strategy::Pad(None))?.with_form(Form::Interleave)
    }

    /// The `planar` kernel for 1- or 2-byte elements (32 x 8 threads, `naive`, one
    /// 16-byte vector per access: `vec = 16 / elem_bytes`), validated.
    ///
    /// ```
    /// use bankfree_gen::{Kernel, TransposeSpec};
    /// let k = Kernel::build(TransposeSpec::planar(1)?)?;
    /// assert_eq!(k.entry_name(), "bankfree_transpose_t32_r8_e1_v16_naive_planar");
    /// assert!(TransposeSpec::planar(4).is_err());
    /// # Ok::<(), bankfree_gen::SpecError>(())
    /// ```
    pub fn planar(elem_bytes: u32) -> Result<Self, SpecError> {
        let spec = TransposeSpec {
            geometry: Geometry {
                form: Form::Planar,
                tile: 32,
                block_rows: 8,
                elem_bytes,
                vec: 16 / elem_bytes.max(1),
                split: false,
            },
            strategy: Strategy::Naive,
        };
        spec.validate()?;
        Ok(spec)
    }

    /// The `realign` kernel for 1- or 2-byte elements (32 x 10 threads, `vec = 4 /
    /// elem_bytes` elements to a word, its shared tile swizzled), validated.
    ///
    /// ```
    /// use bankfree_gen::{Kernel, TransposeSpec};
    /// let k = Kernel::build(TransposeSpec::realign(1)?)?;
    /// assert_eq!(k.entry_name(), "bankfree_transpose_t32_r10_e1_v4_xor328_realign");
    /// assert!(k.verdict().conflict_free);
    /// assert!(TransposeSpec::realign(4).is_err());
    /// # Ok::<(), bankfree_gen::SpecError>(())
    /// ```
    pub fn realign(elem_bytes: u32) -> Result<Self, SpecError> {
        TransposeSpec::new(32, elem_bytes, Strategy::Xor)?.with_form(Form::Realign)
    }

    /// The `wordvec` kernel for elements of an odd number of 32-bit words (12,
    /// 20, ... 60 bytes), of 8-byte units (24, 40, 56 bytes) or of 16-byte units
    /// (32, 48, 64 bytes): 32 x 8 threads, 16-byte vectors of those units (`vec
    /// = 4`, 2 or 1), its tile of units padded
    /// (the pad the analyzer finds conflict-free), validated.
    ///
    /// ```
    /// use bankfree_gen::{Kernel, TransposeSpec};
    /// let k = Kernel::build(TransposeSpec::wordvec(12)?)?;
    /// assert_eq!(k.entry_name(), "bankfree_transpose_t32_r8_e12_v4_pad3_wordvec");
    /// assert!(k.verdict().conflict_free);
    /// assert_eq!(Kernel::build(TransposeSpec::wordvec(24)?)?.entry_name(), "bankfree_transpose_t32_r8_e24_v2_pad3_wordvec");
    /// assert!(TransposeSpec::wordvec(16).is_err());
    /// # Ok::<(), bankfree_gen::SpecError>(())
    /// ```
    pub fn wordvec(elem_bytes: u32) -> Result<Self, SpecError> {
        TransposeSpec::new(32, elem_bytes, Strategy::Pad(None))?.with_form(Form::Wordvec)
    }

    /// The `thin` kernel for 1- or 2-byte elements (32 x 8 threads, `vec = 4 /
    /// elem_bytes` elements to a word, its stage unpadded and swizzled per
    /// width: [`crate::kernel::thin::stage_swizzle`]), validated.
    ///
    /// ```
    /// use bankfree_gen::{Kernel, TransposeSpec};
    /// let k = Kernel::build(TransposeSpec::thin(2)?)?;
    /// assert_eq!(k.entry_name(), "bankfree_transpose_t32_r8_e2_v2_pad0_thin");
    /// assert!(TransposeSpec::thin(4).is_err());
    /// # Ok::<(), bankfree_gen::SpecError>(())
    /// ```
    pub fn thin(elem_bytes: u32) -> Result<Self, SpecError> {
        TransposeSpec::new(32, elem_bytes, Strategy::Pad(None))?.with_form(Form::Thin)
    }

    /// The same `thin` spec splitting each lane's column words between two
    /// warps ([`Geometry::split`]), validated.
    ///
    /// ```
    /// use bankfree_gen::{Kernel, TransposeSpec};
    /// let k = Kernel::build(TransposeSpec::thin(1)?.with_split()?)?;
    /// assert_eq!(k.entry_name(), "bankfree_transpose_t32_r8_e1_v4_pad0_thin_split");
    /// assert!(TransposeSpec::squat(1)?.with_split().is_err());
    /// # Ok::<(), bankfree_gen::SpecError>(())
    /// ```
    pub fn with_split(self) -> Result<Self, SpecError> {
        self.with(|g| g.split = true)
    }

    /// The `squat` kernel for 1- or 2-byte elements, the mirror of
    /// [`TransposeSpec::thin`] (32 x 8 threads, `vec = 4 / elem_bytes`
    /// elements to a word, its stage unpadded and swizzled per width),
    /// validated.
    ///
    /// ```
    /// use bankfree_gen::{Kernel, TransposeSpec};
    /// let k = Kernel::build(TransposeSpec::squat(1)?)?;
    /// assert_eq!(k.entry_name(), "bankfree_transpose_t32_r8_e1_v4_pad0_squat");
    /// assert!(TransposeSpec::squat(8).is_err());
    /// # Ok::<(), bankfree_gen::SpecError>(())
    /// ```
    pub fn squat(elem_bytes: u32) -> Result<Self, SpecError> {
        TransposeSpec::new(32, elem_bytes, Strategy::Pad(None))?.with_form(Form::Squat)
    }

    /// The same spec in another [`Form`], validated. A `small` or `strip`
    /// kernel's `vec` is its element size's ([`small_vec`]), a tall kernel's of 1-
    /// or 2-byte elements the elements of a 32-bit word, a planar kernel's those
    /// of a 16-byte vector: a spec with `vec = 1` gets it.
    pub fn with_form(self, form: Form) -> Result<Self, SpecError> {
        self.with(|g| {
            if matches!(form, Form::Small | Form::Strip) && g.vec == 1 {
                g.vec = small_vec(form, g.elem_bytes);
            }
            if form == Form::Tall && g.elem_bytes < 4 && g.vec == 1 {
                g.vec = 4 / g.elem_bytes;
            }
            if matches!(form, Form::Planar | Form::Interleave) && g.vec == 1 {
                g.vec = 16 / g.elem_bytes.max(1);
            }
            if matches!(form, Form::Realign | Form::Thin | Form::Squat)
                && g.vec == 1
                && g.elem_bytes < 4
            {
                g.vec = 4 / g.elem_bytes;
            }
            if form == Form::Wordvec && g.vec == 1 {
                g.vec = wordvec_unit(g.elem_bytes).map_or(1, |(u, _)| WORDVEC_BYTES / u.bytes());
            }
            if form == Form::Realign && g.block_rows == 8 {
                g.block_rows = REALIGN_BLOCK_ROWS;
            }
            g.form = form;
        })
    }

    /// The same spec moving `vec x vec` blocks of elements per thread, validated.
    pub fn with_vec(self, vec: u32) -> Result<Self, SpecError> {
        self.with(|g| g.vec = vec)
    }

    /// The same spec with another `block_rows`, validated.
    pub fn with_block_rows(self, block_rows: u32) -> Result<Self, SpecError> {
        self.with(|g| g.block_rows = block_rows)
    }

    fn with(mut self, change: impl FnOnce(&mut Geometry)) -> Result<Self, SpecError> {
        change(&mut self.geometry);
        self.validate()?;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_round_trip() {
        for s in [
            "naive",
            "none",
            "pad",
            "pad(3)",
            "swizzle(xor)",
            "swizzle(rotate)",
        ] {
            let parsed: Strategy = s.parse().expect("valid");
            assert_eq!(parsed.to_string(), s);
        }
        assert_eq!("swizzle".parse::<Strategy>(), Ok(Strategy::Xor));
        assert_eq!("pad( 2 )".parse::<Strategy>(), Ok(Strategy::Pad(Some(2))));
        assert!(matches!(
            "pad(x)".parse::<Strategy>(),
            Err(SpecError::Strategy { .. })
        ));
        assert_eq!(
            "pad(65)".parse::<Strategy>(),
            Err(SpecError::Pad { value: 65 })
        );
        assert!("swizzle(foo)".parse::<Strategy>().is_err());
        assert_eq!("skew".parse::<Form>(), Ok(Form::Skew));
        assert!("square".parse::<Form>().is_err());
    }

    #[test]
    fn validation_names_field_value_and_allowed() {
        let e = TransposeSpec::new(24, 4, Strategy::Xor).unwrap_err();
        assert_eq!(e, SpecError::Tile { value: 24 });
        let e = TransposeSpec::new(64, 4, Strategy::Xor)
            .and_then(|s| s.with_block_rows(32))
            .unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("block_rows = 32") && msg.contains("1, 2, 4, 8, 16"),
            "{msg}"
        );
        let e = TransposeSpec::new(32, 6, Strategy::Xor).unwrap_err();
        assert!(e.to_string().contains("element size 6 bytes"));
        assert!(e.to_string().contains(ELEM_SIZES));
        assert!(TransposeSpec::new(32, 68, Strategy::Xor).is_err());
        assert!(TransposeSpec::new(32, 12, Strategy::Xor).is_ok());
    }
}
