//! A kernel's names: its entry point, derived from what it is built from, and one
//! line that describes it for people.

use crate::kernel::geometry::{Form, Quotients, INTERLEAVE_MAX_ROWS, MAX_NARROW, PLANAR_MAX_COLS};
use crate::kernel::layout::Layout;
use crate::kernel::order::TileOrder;
use crate::kernel::spec::Strategy;
use crate::kernel::Kernel;

impl Kernel {
    /// One line for people: tile, threads, element size, strategy and its
    /// resolution, shared memory.
    pub fn describe(&self) -> String {
        let (s, g) = (&self.spec, &self.spec.geometry);
        let vec = if g.realigns() || g.stages_words() {
            format!(", {} elements per 32-bit word", g.vec)
        } else if g.vec > 1 && matches!(g.form, Form::Planar | Form::Interleave) {
            format!(", {} elements per 16-byte vector", g.vec)
        } else if g.vec > 1 && g.form == Form::Copy {
            format!(
                ", {} elements per access as one {}-byte vector",
                g.vec,
                g.vec_bytes()
            )
        } else if g.wordvecs() && g.vec == 1 {
            ", one 16-byte unit per thread step".to_string()
        } else if g.wordvecs() {
            format!(
                ", {} {}-byte units per thread step as one 16-byte vector",
                g.vec,
                self.unit.bytes()
            )
        } else if g.gathers_words() {
            format!(", {} words per thread step as one 16-byte vector", g.vec)
        } else if self.stores_units() {
            format!(
                ", {} elements per thread step, {} positions apart",
                g.vec, g.tile
            )
        } else if g.vec > 1 && g.gathers() {
            format!(", {} elements per thread step as one 16-byte vector", g.vec)
        } else if g.packs() {
            format!(", {} elements per thread step as one 32-bit word", g.vec)
        } else if g.vec > 1 {
            format!(
                ", {v} x {v} blocks per thread step as {b}-byte vectors",
                v = g.vec,
                b = g.vec_bytes()
            )
        } else {
            String::new()
        };
        let what = match g.form {
            Form::Tile => format!("tile {}", g.tile_elems()),
            Form::Skew => format!(
                "skew tile {} x {} (writes start on 32-byte sectors; {} extra source rows)",
                g.tile,
                g.skew_rows(),
                g.sector_elems() - 1
            ),
            Form::Tall | Form::Wide => format!(
                "{} chunks of {} elements (narrow side up to {})",
                g.form,
                g.chunk_elems(),
                MAX_NARROW
            ),
            Form::Small => format!(
                "small: runs of {} destination {} across a batch of matrices of up to {} elements, written as one dense run{}{}",
                g.small_chunk(),
                if g.gathers_words() { "words" } else { "elements" },
                self.quotients.max_elems(),
                if self.quotients == Quotients::Narrow { "" } else { ", " },
                self.quotients.describe()
            ),
            Form::Copy => format!(
                "copy: runs of {} vectors of a batch item's rows, no transpose",
                g.copy_chunk()
            ),
            Form::Strip => format!(
                "strip: runs of {} destination elements of matrices of up to {} rows, each matrix's destination one run",
                g.small_chunk(),
                MAX_NARROW
            ),
            Form::Wordvec => format!(
                "wordvec tile {0} x {0} (rows read and written as 16-byte vectors of their {1} {2}-byte units)",
                g.tile,
                g.tile * g.wordvec_units(),
                self.unit.bytes()
            ),
            Form::Realign => format!(
                "realign tile {0} x {0} (rows read as realigned 16-byte vectors, each destination row written as 16-byte vectors from a 32-byte sector boundary)",
                g.tile_elems()
            ),
            Form::Thin => format!(
                "thin: runs of {} blocks of {} source rows of up to {} columns (8 / cols such runs a tile, 1 from 9 columns), each lane transposing a block of each in registers and storing whole destination words{}",
                g.thin_subtile_blocks(),
                g.vec,
                crate::kernel::thin::THIN_MAX_COLS,
                if g.split {
                    ", its column words split between two warps"
                } else {
                    ""
                }
            ),
            Form::Squat => format!(
                "squat: runs of {} blocks of {} source columns of up to {} rows, each lane transposing a block in registers into whole destination words, staged and stored as 16-byte vectors",
                crate::kernel::squat::SQUAT_BLOCKS,
                g.vec,
                crate::kernel::squat::SQUAT_MAX_ROWS
            ),
            Form::Planar => format!(
                "planar: runs of {} blocks of {} source rows of up to {} columns, each transposed in registers",
                g.copy_chunk(),
                g.vec,
                PLANAR_MAX_COLS
            ),
            Form::Interleave => format!(
                "interleave: runs of {} blocks of {} source columns of up to {} rows, each interleaved in registers, staged and stored as 16-byte vectors",
                g.threads(),
                g.vec,
                INTERLEAVE_MAX_ROWS
            ),
        };
        let what = if self.order == TileOrder::Columns && g.form == Form::Small {
            format!("{what}, taken {}", self.order.describe(g.form))
        } else if self.order == TileOrder::Columns {
            format!("{what}, tiles taken {}", self.order.describe(g.form))
        } else {
            what
        };
        let what = if self.fold == [0, 0] {
            what
        } else {
            format!(
                "{what}, its rows over {} axes and its columns over {}",
                self.fold[0] + 1,
                self.fold[1] + 1
            )
        };
        format!(
            "{what} ({} x {} threads), {}-byte elements{vec}, strategy {} -> {}, {} bytes of shared memory per block",
            g.tile,
            g.block_rows,
            g.elem_bytes,
            s.strategy,
            self.layout,
            self.shared_bytes()
        )
    }

    /// The `extern "C"` entry point's name, derived from the spec.
    pub fn entry_name(&self) -> String {
        let (s, g) = (&self.spec, &self.spec.geometry);
        let strat = match self.layout {
            Layout::Direct => "naive".to_string(),
            Layout::Pad(0) if s.strategy == Strategy::None => "none".to_string(),
            Layout::Pad(n) => format!("pad{n}"),
            Layout::Xor(z) => format!("xor{}{}{}", z.b, z.m, z.s),
            Layout::Rotate => "rotate".to_string(),
        };
        let vec = if g.vec > 1 {
            format!("_v{}", g.vec)
        } else {
            String::new()
        };
        let form = match (g.form, g.split) {
            (Form::Tile, _) => String::new(),
            (f, true) => format!("_{f}_split"),
            (f, false) => format!("_{f}"),
        };
        let mut outer = if self.outer > 0 {
            format!("_o{}", self.outer)
        } else {
            String::new()
        };
        if self.fold != [0, 0] {
            outer.push_str(&format!("_f{}{}", self.fold[0], self.fold[1]));
        }
        match self.quotients {
            Quotients::Narrow => {}
            Quotients::Items => outer.push_str("_qx"),
            Quotients::Wide => outer.push_str("_qxm"),
            Quotients::Any => outer.push_str("_q64m"),
        }
        outer.push_str(self.order.suffix());
        if let Some(cols) = self.width {
            outer.push_str(&format!("_w{cols}"));
        }
        format!(
            "bankfree_transpose_t{}_r{}_e{}{vec}_{}{form}{outer}",
            g.tile, g.block_rows, g.elem_bytes, strat
        )
    }
}
