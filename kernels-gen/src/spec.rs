//! What kernel to build: tile, thread rows, element size and strategy.
//!
//! ```
//! use bankfree_gen::spec::{Strategy, TransposeSpec};
//! let spec = TransposeSpec::new(32, 4, "pad".parse().unwrap()).unwrap();
//! assert_eq!(spec.block_rows, 8);
//! assert_eq!(spec.strategy, Strategy::Pad(None));
//! assert!(TransposeSpec::new(48, 4, Strategy::Naive).is_err());
//! ```

use crate::form::{Form, Geometry};
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// Tile sides accepted.
pub const TILES: [u32; 4] = [8, 16, 32, 64];
/// Most threads a block may have.
pub const MAX_THREADS: u32 = 1024;
/// Largest element, in bytes.
pub const MAX_ELEM_BYTES: u32 = 64;
/// Largest `pad(n)`, in elements.
pub const MAX_PAD: u32 = 64;

/// How the shared tile avoids bank conflicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// No shared memory: reads coalesced, writes strided (the seeds' baseline).
    Naive,
    /// A shared tile with no conflict avoidance, for comparison.
    None,
    /// `pad`: the smallest padding the analyzer proves conflict-free (`None`), or
    /// `pad(n)`: exactly `n` elements of padding per tile row.
    Pad(Option<u32>),
    /// `swizzle` / `swizzle(xor)`: an XOR swizzle, CuTe's `Swizzle<B,M,S>`.
    Xor,
    /// `swizzle(rotate)`: seed 000's `tile[y][(x + y) % tile]`.
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

fn check_pad(n: u32) -> Result<(), SpecError> {
    if n > MAX_PAD {
        return Err(SpecError::Pad { value: n });
    }
    Ok(())
}

/// A spec field that is out of range. Each message names the field, the value and
/// what is allowed.
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
    #[error("element size {value} bytes: supported are 1, 2, 4, 8, 16 and any other multiple of 4 up to 64 (12 for a float3, for example)")]
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
    #[error("no XOR swizzle makes tile {tile} with {elem_bytes}-byte elements and {block_rows} thread rows conflict-free; use `strategy = pad` or another block_rows")]
    NoSwizzle {
        tile: u32,
        elem_bytes: u32,
        block_rows: u32,
    },
}

/// How an element moves: as one C value of 1, 2, 4, 8 or 16 bytes, or as several
/// 32-bit words (stored word-planar in shared memory, seed 002's structure of arrays).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Unit {
    U8,
    U16,
    U32,
    U64,
    U128,
}

impl Unit {
    /// Bytes per unit.
    pub fn bytes(self) -> u32 {
        match self {
            Unit::U8 => 1,
            Unit::U16 => 2,
            Unit::U32 => 4,
            Unit::U64 => 8,
            Unit::U128 => 16,
        }
    }

    /// The CUDA C type (no headers needed: `uint4` is built in).
    pub fn c_type(self) -> &'static str {
        match self {
            Unit::U8 => "unsigned char",
            Unit::U16 => "unsigned short",
            Unit::U32 => "unsigned int",
            Unit::U64 => "unsigned long long",
            Unit::U128 => "uint4",
        }
    }
}

/// One tiled-transpose kernel, before its strategy is resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct TransposeSpec {
    /// Elements per tile side.
    pub tile: u32,
    /// Thread rows per block; each thread moves `tile / block_rows` elements.
    pub block_rows: u32,
    /// Bytes per element.
    pub elem_bytes: u32,
    pub strategy: Strategy,
    /// Side of the square block of elements each thread moves per step (1, 2 or 4).
    /// Above 1 a thread loads `vec` rows of `vec` elements as `vec` vector accesses
    /// of `vec * elem_bytes` bytes (4, 8 or 16), transposes the block in registers
    /// and stores `vec` vectors: the tile is then `tile * vec` elements square and
    /// shared memory holds it as `vec` planes of vectors. Such a kernel needs rows,
    /// cols, pitches and batch strides divisible by `vec` (see [`TransposeSpec::fits`]).
    pub vec: u32,
    /// What one block moves: a square tile, a skewed tile or a narrow chunk.
    pub form: Form,
}

impl TransposeSpec {
    /// A validated spec with the default `block_rows` for the tile.
    pub fn new(tile: u32, elem_bytes: u32, strategy: Strategy) -> Result<Self, SpecError> {
        let spec = TransposeSpec {
            tile,
            block_rows: default_block_rows(tile),
            elem_bytes,
            strategy,
            vec: 1,
            form: Form::Tile,
        };
        spec.validate()?;
        Ok(spec)
    }

    /// The same spec in another [`Form`], validated.
    pub fn with_form(self, form: Form) -> Result<Self, SpecError> {
        let spec = TransposeSpec { form, ..self };
        spec.validate()?;
        Ok(spec)
    }

    /// What the launcher needs to size the grid and check a shape.
    pub fn geometry(&self) -> Geometry {
        Geometry {
            form: self.form,
            tile: self.tile,
            block_rows: self.block_rows,
            elem_bytes: self.elem_bytes,
            vec: self.vec,
        }
    }

    /// The same spec moving `vec x vec` blocks of elements per thread, validated.
    pub fn with_vec(self, vec: u32) -> Result<Self, SpecError> {
        let spec = TransposeSpec { vec, ..self };
        spec.validate()?;
        Ok(spec)
    }

    /// Whether a kernel of this spec can run `shape`: with `vec > 1` every
    /// dimension, pitch and batch stride must be a multiple of `vec` (the launcher
    /// also needs both pointers aligned to [`TransposeSpec::vec_bytes`]). `Err` says
    /// which one is not.
    pub fn fits(&self, shape: &crate::shape::Shape) -> Result<(), String> {
        self.geometry().fits(shape)
    }

    /// Bytes per vector access (`vec * elem_bytes`; the element size when `vec` is 1).
    pub fn vec_bytes(&self) -> u32 {
        self.vec * self.elem_bytes
    }

    /// Elements per tile side (`tile * vec`).
    pub fn tile_elems(&self) -> u32 {
        self.tile * self.vec
    }

    /// The same spec with another `block_rows`, validated.
    pub fn with_block_rows(self, block_rows: u32) -> Result<Self, SpecError> {
        let spec = TransposeSpec { block_rows, ..self };
        spec.validate()?;
        Ok(spec)
    }

    /// Checks every field; the first problem is returned.
    pub fn validate(&self) -> Result<(), SpecError> {
        if !TILES.contains(&self.tile) {
            return Err(SpecError::Tile { value: self.tile });
        }
        let allowed = allowed_block_rows(self.tile);
        if !allowed.contains(&self.block_rows) {
            let list: Vec<String> = allowed.iter().map(u32::to_string).collect();
            return Err(SpecError::BlockRows {
                value: self.block_rows,
                tile: self.tile,
                allowed: list.join(", "),
            });
        }
        unit_of(self.elem_bytes)?;
        if self.vec != 1 {
            let bad = |why: &str| SpecError::Vec {
                value: self.vec,
                elem_bytes: self.elem_bytes,
                why: why.into(),
            };
            if !VECS.contains(&self.vec) {
                return Err(bad("vec must be 1, 2 or 4"));
            }
            if !matches!(self.elem_bytes, 1 | 2 | 4 | 8) {
                return Err(bad(
                    "vectors are built of 1-, 2-, 4- or 8-byte elements; use vec = 1",
                ));
            }
            if !matches!(self.vec_bytes(), 4 | 8 | 16) {
                return Err(bad(&format!(
                    "a vector must be 4, 8 or 16 bytes, and {} x {} is {}; allowed here: {}",
                    self.vec,
                    self.elem_bytes,
                    self.vec_bytes(),
                    allowed_vecs(self.elem_bytes)
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            if self.strategy == Strategy::Naive {
                return Err(bad(
                    "naive has no shared tile to transpose blocks through; use vec = 1",
                ));
            }
        }
        if let Strategy::Pad(Some(n)) = self.strategy {
            check_pad(n)?;
        }
        self.validate_form()
    }

    fn validate_form(&self) -> Result<(), SpecError> {
        if self.form == Form::Tile {
            return Ok(());
        }
        let bad = |why: String| {
            Err(SpecError::Form {
                value: self.form.to_string(),
                why,
            })
        };
        if self.vec != 1 {
            return bad(format!(
                "{} kernels move single elements; use vec = 1",
                self.form
            ));
        }
        if self.strategy == Strategy::Naive {
            return bad("it works through shared memory; naive has none".into());
        }
        if matches!(self.strategy, Strategy::Xor | Strategy::Rotate)
            && matches!(self.form, Form::Tall | Form::Wide)
        {
            return bad(format!(
                "a {} kernel's chunk is flat, with no rows to swizzle; use strategy = pad",
                self.form
            ));
        }
        if matches!(self.form, Form::Tall | Form::Wide) && self.elem_bytes < 4 {
            return bad(format!(
                "{}-byte elements of neighbouring rows share 32-bit bank words in a narrow chunk; \
                 tall and wide kernels take elements of 4 bytes or more (a tile kernel with vec > 1 runs these shapes)",
                self.elem_bytes
            ));
        }
        if self.form == Form::Skew {
            let sector = self.geometry().sector_elems();
            if !matches!(self.elem_bytes, 1 | 2 | 4 | 8 | 16) {
                return bad(format!(
                    "{}-byte elements never line up with 32-byte sectors; skew takes 1-, 2-, 4-, 8- and 16-byte elements",
                    self.elem_bytes
                ));
            }
            if self.tile < 2 * sector {
                return bad(format!(
                    "a skew tile shifts by up to {} rows, so it must be at least {} ({}-byte elements); use a larger tile",
                    sector - 1,
                    2 * sector,
                    self.elem_bytes
                ));
            }
        }
        Ok(())
    }

    /// The unit of one element (of one of its words for a word array).
    pub fn elem_unit(&self) -> Unit {
        unit_of(self.elem_bytes).map_or(Unit::U8, |(u, _)| u)
    }

    /// The unit one access moves, and how many units make one step of a thread (the
    /// words of a word-array element, or the `vec` rows of a block).
    pub fn unit(&self) -> (Unit, u32) {
        if self.vec > 1 {
            return unit_of(self.vec_bytes())
                .map(|(u, _)| (u, self.vec))
                .unwrap_or((Unit::U8, 1));
        }
        unit_of(self.elem_bytes).unwrap_or((Unit::U8, self.elem_bytes))
    }

    /// Threads per block.
    pub fn threads(&self) -> u32 {
        self.tile * self.block_rows
    }

    /// Rows each thread handles (`tile / block_rows`).
    pub fn iters(&self) -> u32 {
        self.tile / self.block_rows
    }
}

/// `vec` values accepted.
pub const VECS: [u32; 3] = [1, 2, 4];

/// The `vec` values valid for an element size.
pub fn allowed_vecs(elem_bytes: u32) -> Vec<u32> {
    VECS.into_iter()
        .filter(|&v| {
            v == 1 || (matches!(elem_bytes, 1 | 2 | 4 | 8) && matches!(v * elem_bytes, 4 | 8 | 16))
        })
        .collect()
}

/// The default thread rows: 8, or the tile if smaller.
pub fn default_block_rows(tile: u32) -> u32 {
    tile.min(8)
}

/// The `block_rows` values valid for a tile.
pub fn allowed_block_rows(tile: u32) -> Vec<u32> {
    (1..=tile)
        .filter(|r| tile.is_multiple_of(*r) && tile * r <= MAX_THREADS)
        .collect()
}

/// Whether `bytes` is a supported element size.
pub fn elem_bytes_ok(bytes: u32) -> bool {
    unit_of(bytes).is_ok()
}

fn unit_of(bytes: u32) -> Result<(Unit, u32), SpecError> {
    Ok(match bytes {
        1 => (Unit::U8, 1),
        2 => (Unit::U16, 1),
        4 => (Unit::U32, 1),
        8 => (Unit::U64, 1),
        16 => (Unit::U128, 1),
        b if b % 4 == 0 && b > 0 && b <= MAX_ELEM_BYTES => (Unit::U32, b / 4),
        value => return Err(SpecError::ElemBytes { value }),
    })
}

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
                            tile,
                            block_rows,
                            elem_bytes,
                            strategy,
                            vec,
                            form: Form::Tile,
                        });
                    }
                }
            }
        }
    }
    // The other forms at the tiles they are used with: skew at 32 and 64, the narrow
    // forms at 32 (32 x 8 threads), every element size they take.
    for (form, tiles) in [
        (Form::Skew, &[32, 64][..]),
        (Form::Tall, &[32]),
        (Form::Wide, &[32]),
    ] {
        for &tile in tiles {
            for elem_bytes in all_elem_bytes() {
                for &strategy in strategies {
                    if let Ok(spec) = TransposeSpec::new(tile, elem_bytes, strategy)
                        .and_then(|s| s.with_form(form))
                    {
                        out.push(spec);
                    }
                }
            }
        }
    }
    out
}

/// Every supported element size.
pub fn all_elem_bytes() -> Vec<u32> {
    (1..=MAX_ELEM_BYTES).filter(|&b| elem_bytes_ok(b)).collect()
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
        assert!(TransposeSpec::new(32, 68, Strategy::Xor).is_err());
        assert!(TransposeSpec::new(32, 12, Strategy::Xor).is_ok());
    }

    #[test]
    fn units() {
        let s = TransposeSpec::new(32, 12, Strategy::Naive).expect("valid");
        assert_eq!(s.unit(), (Unit::U32, 3));
        let s = TransposeSpec::new(32, 16, Strategy::Naive).expect("valid");
        assert_eq!(s.unit(), (Unit::U128, 1));
        assert_eq!(all_elem_bytes().len(), 18);
    }
}
