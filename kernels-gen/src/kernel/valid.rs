//! A spec's validation: every field checked against what its form and strategy
//! can build, the first problem returned as a [`SpecError`] that names the
//! field, its value and what would be accepted.
//!
//! ```
//! use bankfree_gen::{Form, Strategy, TransposeSpec};
//! let spec = TransposeSpec::new(32, 4, Strategy::Xor)?;
//! assert!(spec.with_vec(3).is_err());
//! assert!(spec.with_form(Form::Realign).is_err()); // 4-byte elements are not realigned
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

use crate::kernel::geometry::{
    allowed_block_rows, allowed_vecs, small_vec, unit_of, wordvec_unit, Form, REALIGN_BLOCK_ROWS,
    TILES, VECS, WORDVEC_BYTES,
};
use crate::kernel::spec::{check_pad, SpecError, Strategy, TransposeSpec};

impl TransposeSpec {
    /// Checks every field; the first problem is returned.
    pub fn validate(&self) -> Result<(), SpecError> {
        let g = &self.geometry;
        if !TILES.contains(&g.tile) {
            return Err(SpecError::Tile { value: g.tile });
        }
        if g.split && !g.thins() {
            return self.refuse(
                "only a thin kernel splits its lanes' column words between its warps; use split = false",
            );
        }
        if g.form == Form::Realign {
            return self.validate_realign();
        }
        if g.wordvecs() {
            return self.validate_wordvec();
        }
        if g.stages_words() {
            return self.validate_thin();
        }
        let allowed = allowed_block_rows(g.tile);
        if !allowed.contains(&g.block_rows) {
            let list: Vec<String> = allowed.iter().map(u32::to_string).collect();
            return Err(SpecError::BlockRows {
                value: g.block_rows,
                tile: g.tile,
                allowed: list.join(", "),
            });
        }
        if unit_of(g.elem_bytes).is_none() {
            return Err(SpecError::ElemBytes {
                value: g.elem_bytes,
            });
        }
        if g.gathers() {
            return self.validate_small();
        }
        if g.form == Form::Copy {
            return self.validate_copy();
        }
        if g.form == Form::Planar {
            return self.validate_planar();
        }
        if g.form == Form::Interleave {
            return self.validate_interleave();
        }
        if g.vec != 1 {
            let bad = |why: &str| SpecError::Vec {
                value: g.vec,
                elem_bytes: g.elem_bytes,
                why: why.into(),
            };
            if !VECS.contains(&g.vec) {
                return Err(bad("vec must be 1, 2 or 4"));
            }
            if !matches!(g.elem_bytes, 1 | 2 | 4 | 8) {
                return Err(bad(
                    "vectors are built of 1-, 2-, 4- or 8-byte elements; use vec = 1",
                ));
            }
            if !matches!(g.vec_bytes(), 4 | 8 | 16) {
                return Err(bad(&format!(
                    "a vector must be 4, 8 or 16 bytes, and {} x {} is {}; allowed here: {}",
                    g.vec,
                    g.elem_bytes,
                    g.vec_bytes(),
                    allowed_vecs(g.elem_bytes)
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            // (Other forms say why naive does not suit them.)
            if self.strategy == Strategy::Naive && g.form == Form::Tile {
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

    /// A `small` or `strip` kernel gathers without shared memory (`naive`) and
    /// stores one 16-byte vector per step ([`small_vec`]); a `small` one may
    /// store single elements instead (`vec = 1`), which needs no aligned `dst`.
    fn validate_small(&self) -> Result<(), SpecError> {
        let g = &self.geometry;
        if self.strategy != Strategy::Naive {
            return self.refuse(format!(
                    "a {} kernel gathers straight from the source, with no shared tile to {}; use strategy = naive",
                    g.form,
                    if matches!(self.strategy, Strategy::Xor | Strategy::Rotate) { "swizzle" } else { "pad" }
                ));
        }
        let want = small_vec(g.form, g.elem_bytes);
        // A small kernel of single elements stores at any alignment of `dst`.
        if g.vec != want && !(g.form == Form::Small && g.vec == 1) {
            return Err(SpecError::Vec {
                value: g.vec,
                elem_bytes: g.elem_bytes,
                why: format!("a {} kernel stores one 16-byte vector per step where the element divides 16 (a small one: where it is a whole number of 32-bit words, too), else one element; use vec = {want}", g.form),
            });
        }
        Ok(())
    }

    /// A `copy` kernel moves vectors of `vec` power-of-two elements (up to 16
    /// bytes) with no shared memory (`naive`).
    fn validate_copy(&self) -> Result<(), SpecError> {
        let g = &self.geometry;
        self.naive_only("a copy kernel has no shared tile")?;
        let pow2 = |x: u32| x.is_power_of_two() && x <= 16;
        if g.vec != 1 && !(pow2(g.elem_bytes) && pow2(g.vec) && pow2(g.vec_bytes())) {
            return Err(SpecError::Vec {
                value: g.vec,
                elem_bytes: g.elem_bytes,
                why: "a copy kernel's vector is a power of two of 1- to 16-byte elements, up to 16 bytes; use vec = 1".into(),
            });
        }
        Ok(())
    }

    /// A `planar` kernel moves 16-byte vectors of 1- or 2-byte elements with no
    /// shared memory (`naive`).
    fn validate_planar(&self) -> Result<(), SpecError> {
        self.naive_only("a planar kernel transposes in registers, with no shared tile")?;
        self.validate_vectors("a planar", "a tall kernel moves wider elements")
    }

    /// An `interleave` kernel moves 16-byte vectors of 1- or 2-byte elements
    /// with 32 x 8 threads (a lane per block of columns) through a shared stage
    /// the generator swizzles per height.
    fn validate_interleave(&self) -> Result<(), SpecError> {
        let g = &self.geometry;
        self.validate_vectors("an interleave", "a wide kernel moves wider elements")?;
        if (g.tile, g.block_rows) != (32, 8) {
            return self.refuse(format!(
                "an interleave kernel runs 32 x 8 threads (tile = 32, block_rows = 8: a lane per \
                 block of columns), not {} x {}",
                g.tile, g.block_rows
            ));
        }
        match self.strategy {
            Strategy::Pad(None | Some(0)) | Strategy::None => Ok(()),
            Strategy::Naive => self.refuse("it works through shared memory; naive has none"),
            _ => self.refuse(
                "an interleave kernel's stage is swizzled per height by the generator; use strategy = pad",
            ),
        }
    }

    /// 1- or 2-byte elements moved as 16-byte vectors (`vec = 16 /
    /// elem_bytes`): the `planar` and `interleave` forms, `a_form` naming the
    /// form with its article, `wider` what moves wider elements.
    fn validate_vectors(&self, a_form: &str, wider: &str) -> Result<(), SpecError> {
        let g = &self.geometry;
        if !matches!(g.elem_bytes, 1 | 2) {
            return self.refuse(format!(
                "{a_form} kernel moves 1- or 2-byte elements, not {}-byte ones; {wider}",
                g.elem_bytes
            ));
        }
        if g.vec_bytes() != 16 {
            return Err(SpecError::Vec {
                value: g.vec,
                elem_bytes: g.elem_bytes,
                why: format!(
                    "{a_form} kernel moves 16-byte vectors; use vec = {}",
                    16 / g.elem_bytes
                ),
            });
        }
        Ok(())
    }

    /// A kernel of 1- or 2-byte elements moved as 32-bit words (`vec = 4 /
    /// elem_bytes`): the `realign` and `thin` forms. `wider` says what moves
    /// wider elements.
    fn validate_words(&self, wider: &str) -> Result<(), SpecError> {
        let g = &self.geometry;
        if !matches!(g.elem_bytes, 1 | 2) {
            return self.refuse(format!(
                "a {} kernel packs 1- or 2-byte elements into 32-bit words, not {}-byte \
                     ones; {wider}",
                g.form, g.elem_bytes
            ));
        }
        if g.vec != 4 / g.elem_bytes {
            return Err(SpecError::Vec {
                value: g.vec,
                elem_bytes: g.elem_bytes,
                why: format!(
                    "a {} kernel moves 32-bit words; use vec = {}",
                    g.form,
                    4 / g.elem_bytes
                ),
            });
        }
        Ok(())
    }

    /// A `realign` kernel moves 1- or 2-byte elements as 32-bit words (`vec = 4 /
    /// elem_bytes`) in a 32-word tile with 32 x 10 threads (a band of 8 lanes per
    /// source row, one block of rows per band: the tile's 32 and the 8 of the
    /// sector above it), through shared memory.
    fn validate_realign(&self) -> Result<(), SpecError> {
        let g = &self.geometry;
        self.validate_words("a tile or skew kernel moves wider elements")?;
        if (g.tile, g.block_rows) != (32, REALIGN_BLOCK_ROWS) {
            return self.refuse(format!(
                "a realign kernel runs 32 x {REALIGN_BLOCK_ROWS} threads (tile = 32, block_rows = \
                 {REALIGN_BLOCK_ROWS}: a band of 8 lanes for each of its 40 blocks of rows), not {} x {}",
                g.tile, g.block_rows
            ));
        }
        match self.strategy {
            Strategy::Naive => self.refuse("it works through shared memory; naive has none"),
            Strategy::Pad(_) | Strategy::Rotate => self.refuse(
                "a realign kernel's warps store the columns of 8 lanes' 16-byte reads, whose \
                 words no padding spreads over the banks; use strategy = swizzle",
            ),
            Strategy::None | Strategy::Xor => Ok(()),
        }
    }

    /// A `wordvec` kernel moves elements of an odd number (3 or more) of 32-bit
    /// words, or of 8-byte units ([`wordvec_unit`]), as 16-byte vectors of
    /// those units (`vec = 16 / unit`), a tile of 32 x 32 elements with 32 x 8
    /// threads (a warp step: 4 rows of 8 lanes), through a padded tile of units.
    fn validate_wordvec(&self) -> Result<(), SpecError> {
        let g = &self.geometry;
        let Some((unit, _)) = wordvec_unit(g.elem_bytes) else {
            return self.refuse(format!(
                "a wordvec kernel moves elements of an odd number of 32-bit words (12, 20, 28, \
                 ... 60 bytes), of 8-byte units (24, 40, 56 bytes) or of 16-byte units (32, 48, \
                 64 bytes), not {}-byte ones; a tile or skew kernel moves the others",
                g.elem_bytes
            ));
        };
        let want = WORDVEC_BYTES / unit.bytes();
        if g.vec != want {
            return Err(SpecError::Vec {
                value: g.vec,
                elem_bytes: g.elem_bytes,
                why: format!(
                    "a wordvec kernel moves 16-byte vectors of {}-byte units; use vec = {want}",
                    unit.bytes()
                ),
            });
        }
        if (g.tile, g.block_rows) != (32, 8) {
            return self.refuse(format!(
                "a wordvec kernel runs 32 x 8 threads (tile = 32, block_rows = 8: each warp step \
                 4 rows of 8 lanes), not {} x {}",
                g.tile, g.block_rows
            ));
        }
        match self.strategy {
            Strategy::Pad(n) => n.map_or(Ok(()), check_pad),
            Strategy::None => Ok(()),
            Strategy::Naive => self.refuse("it works through shared memory; naive has none"),
            Strategy::Xor | Strategy::Rotate => self.refuse(
                "a wordvec kernel's rows are runs of words, each word of a vector its own \
                 access; padding by a row's words spreads them over the banks; use strategy = pad",
            ),
        }
    }

    /// A `thin` or `squat` kernel moves 1- or 2-byte elements as 32-bit words
    /// (`vec = 4 / elem_bytes`) with 32 x 8 threads (a lane per block of rows,
    /// or of columns, 31 blocks per warp), through a shared stage whose pitch is
    /// the width.
    fn validate_thin(&self) -> Result<(), SpecError> {
        let g = &self.geometry;
        let (form, wider, block) = if g.squats() {
            ("squat", "a wide kernel moves wider elements", "columns")
        } else {
            ("thin", "a tall kernel moves wider elements", "rows")
        };
        self.validate_words(wider)?;
        if (g.tile, g.block_rows) != (32, 8) {
            return self.refuse(format!(
                "a {form} kernel runs 32 x 8 threads (tile = 32, block_rows = 8: a lane per block \
                 of {block}, 31 blocks per warp), not {} x {}",
                g.tile, g.block_rows
            ));
        }
        match self.strategy {
            Strategy::Pad(_) | Strategy::None => Ok(()),
            Strategy::Naive => self.refuse("it works through shared memory; naive has none"),
            Strategy::Xor | Strategy::Rotate => self.refuse(format!(
                "a {form} kernel's stage is a flat run of blocks whose pitch is the width, \
                 swizzled per width by the generator; use strategy = pad"
            )),
        }
    }

    /// A form with no shared tile takes only `naive`: `why` says what it does
    /// instead.
    fn naive_only(&self, why: &str) -> Result<(), SpecError> {
        if self.strategy == Strategy::Naive {
            return Ok(());
        }
        self.refuse(format!("{why}; use strategy = naive"))
    }

    /// `Err(SpecError::Form)` for this spec's form, saying `why`.
    fn refuse(&self, why: impl Into<String>) -> Result<(), SpecError> {
        Err(SpecError::Form {
            value: self.geometry.form.to_string(),
            why: why.into(),
        })
    }

    fn validate_form(&self) -> Result<(), SpecError> {
        let g = &self.geometry;
        if g.form == Form::Tile {
            return Ok(());
        }
        // A tall kernel of 1- or 2-byte elements moves them as 32-bit words.
        let word = (g.form == Form::Tall && g.elem_bytes < 4).then(|| 4 / g.elem_bytes);
        if g.vec != word.unwrap_or(1) {
            return self.refuse(match word {
                Some(v) => format!(
                    "a tall kernel moves {}-byte elements as 32-bit words; use vec = {v}",
                    g.elem_bytes
                ),
                None => format!("{} kernels move single elements; use vec = 1", g.form),
            });
        }

        if self.strategy == Strategy::Naive {
            return self.refuse("it works through shared memory; naive has none");
        }
        if g.packs() && matches!(self.strategy, Strategy::Pad(_) | Strategy::Rotate) {
            return self.refuse(format!(
                "a tall kernel of {}-byte elements shifts each destination row's window by its \
                 address, and no padding keeps those gathers conflict-free; use strategy = swizzle",
                g.elem_bytes
            ));
        }
        if !g.packs()
            && matches!(self.strategy, Strategy::Xor | Strategy::Rotate)
            && matches!(g.form, Form::Tall | Form::Wide)
        {
            return self.refuse(format!(
                "a {} kernel's chunk is flat, with no rows to swizzle; use strategy = pad",
                g.form
            ));
        }
        if g.form == Form::Wide && g.elem_bytes < 4 {
            return self.refuse(format!(
                "{}-byte elements of neighbouring rows share 32-bit bank words in a wide chunk; \
                 wide kernels take elements of 4 bytes or more (a strip kernel runs these shapes)",
                g.elem_bytes
            ));
        }
        if g.form == Form::Skew {
            let sector = g.sector_elems();
            if g.elem_bytes > 16 {
                return self.refuse(format!(
                    "a skew tile of {}-byte elements is too large to keep enough blocks per SM; skew takes elements of 1 to 16 bytes",
                    g.elem_bytes
                ));
            }
            if g.tile < 2 * sector {
                return self.refuse(format!(
                    "a skew tile shifts by up to {} rows, so it must be at least {} ({}-byte elements); use a larger tile",
                    sector - 1,
                    2 * sector,
                    g.elem_bytes
                ));
            }
        }
        Ok(())
    }
}
