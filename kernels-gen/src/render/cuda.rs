//! Renders a [`Kernel`] as CUDA C: deterministic, readable, no headers needed.
//!
//! ```
//! use bankfree_gen::{emit, Kernel, Strategy, TransposeSpec};
//! let k = Kernel::build(TransposeSpec::new(32, 4, Strategy::Xor)?)?;
//! let src = emit(&k);
//! assert!(src.contains("extern \"C\" __global__"));
//! assert!(src.contains("tile[(ty + j * 8) * 32 + (tx ^ ((ty + j * 8) & 31))]"));
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

use crate::check::index32::{INDEX64_DEFINE, INDEX64_SUFFIX};
use crate::ir::expr::{Env, Expr, Var};
use crate::ir::shape::SCALAR_PARAMS;
use crate::ir::shape::{fold_params, outer_params};
use crate::kernel::geometry::{Form, Quotients, MAX_NARROW, PLANAR_MAX_COLS, SMALL_ITERS};
use crate::kernel::launch::{dynamic_shared_bytes, MAX_GRID_X, MAX_GRID_Y};
use crate::kernel::layout::Layout;
use crate::kernel::order::TileOrder;
use crate::kernel::squat::squat_min_blocks;
use crate::kernel::thin::thin_min_blocks;
use crate::kernel::Kernel;
use crate::render::body::{access_type, body_of, INDEX_TYPE, VEC_TYPE};
use crate::render::realign::realign_tile;
use crate::render::squat::squat_tile;
use crate::render::thin::thin_tile;
use crate::render::writer::CWriter;
use std::fmt::{self, Write};

/// The kernel's CUDA C source.
pub fn emit(k: &Kernel) -> String {
    let mut w = CWriter::default();
    match write_kernel(&mut w, k) {
        Ok(()) => w.into_string(),
        // `CWriter` writes into a `String`, which never fails.
        Err(fmt::Error) => unreachable!("formatting into a String failed"),
    }
}

/// The two builds of one source: 32-bit indices by default, 64-bit ones (and the
/// entry point renamed) where the compile defines [`INDEX64_DEFINE`].
fn index_type(w: &mut CWriter, entry: &str) -> fmt::Result {
    writeln!(
        w,
        "#ifdef {INDEX64_DEFINE}\n\
         typedef unsigned long long {INDEX_TYPE}; // 64-bit build: any call\n\
         #define {entry} {entry}{INDEX64_SUFFIX}\n\
         #else\n\
         typedef unsigned {INDEX_TYPE}; // 32-bit build: calls whose indices provably fit\n\
         #endif\n"
    )
}

fn write_kernel(w: &mut CWriter, k: &Kernel) -> fmt::Result {
    header(w, k)?;
    // A thin kernel's source holds an entry point per width, each with its own
    // registers (`Kernel::entry_points`).
    match &k.entry_points()[..] {
        [one] => write_entry(w, one),
        many => many.iter().try_for_each(|one| {
            writeln!(w)?;
            write_entry(w, one)
        }),
    }
}

/// One `extern "C"` entry point (after the header).
fn write_entry(w: &mut CWriter, k: &Kernel) -> fmt::Result {
    let g = &k.spec.geometry;
    let ty = access_type(k);
    let name = k.entry_name();
    index_type(w, &name)?;
    if g.vec > 1 && !g.realigns() && !g.has_widths() {
        writeln!(
            w,
            "struct __align__({}) {VEC_TYPE} {{ {} e[{}]; }};\n",
            g.vec_bytes(),
            g.elem_unit().c_type(),
            g.vec
        )?;
    }
    // A thin or squat kernel names its blocks per SM, per index build
    // (`thin_min_blocks`, `squat_min_blocks`).
    let t = g.threads();
    let eb = g.elem_bytes;
    let min_blocks = |w, index64| {
        if g.squats() {
            squat_min_blocks(w, eb, index64)
        } else {
            thin_min_blocks(w, index64)
        }
    };
    let bounds = match k.width {
        Some(c) => format!(
            "\n#ifdef {INDEX64_DEFINE}\n__launch_bounds__({t}, {})\n#else\n__launch_bounds__({t}, {})\n#endif\n",
            min_blocks(c, true),
            min_blocks(c, false)
        ),
        None => format!(" __launch_bounds__({t})\n"),
    };
    writeln!(w, "extern \"C\" __global__ void{bounds}{name}(")?;
    w.indent();
    writeln!(w, "const {ty}* __restrict__ src,")?;
    write!(w, "{ty}* __restrict__ dst")?;
    for p in SCALAR_PARAMS {
        write!(w, ",\n{INDEX_TYPE} {p}")?;
    }
    for v in outer_params(k.outer).chain(fold_params(k.fold[0], k.fold[1])) {
        write!(w, ",\n{INDEX_TYPE} {}", v.c_name())?;
    }
    w.dedent();
    writeln!(w, ")")?;
    w.scope(|w| {
        // A realign kernel's shared tile holds 32-bit words.
        let ty = if g.realigns() || g.has_widths() { "unsigned" } else { ty };
        if k.layout != Layout::Direct {
            if dynamic_shared_bytes(k.shared_bytes()) > 0 {
                // One byte array for every kernel (extern shared arrays share one
                // symbol, so their types must agree), viewed as the tile's type.
                writeln!(
                    w,
                    "extern __shared__ __align__(16) unsigned char bf_shared[];\n{ty}* const tile = reinterpret_cast<{ty}*>(bf_shared);"
                )?;
            } else {
                writeln!(w, "__shared__ {ty} tile[{}];", k.shared_units())?;
            }
        }
        writeln!(
            w,
            "const unsigned tx = threadIdx.x;\nconst unsigned ty = threadIdx.y;"
        )?;
        if g.form == Form::Skew {
            // The launch's block: telling the compiler lets it drop the skew tile's
            // bounds arithmetic (docs/design.md); the vec tiles ran slower with it.
            writeln!(
                w,
                "__builtin_assume(tx < {});\n__builtin_assume(ty < {});",
                g.tile, g.block_rows
            )?;
        }
        if k.tile_lets.iter().any(|l| l.uses(Var::DstOff))
            || k.moves.iter().any(|m| m.to.index.uses(Var::DstOff))
            || k.thin.is_some()
            || k.squat.is_some()
        {
            // The pointer's position modulo the sector period (`Geometry::sector_phase`):
            // its address over the element's power-of-two part, times the inverse
            // of the odd rest (12-byte elements: `dst / 4 * 3`); in words for a
            // small kernel of word arrays (`Geometry::dst_off_of_address`).
            let (d, m) = g.dst_off_of_address();
            let times = if m > 1 { format!(" * {m}") } else { String::new() };
            writeln!(
                w,
                "const {INDEX_TYPE} {} = ({INDEX_TYPE})((unsigned long long)dst / {d}{times});",
                Var::DstOff.c_name(),
            )?;
        }
        if k.realign.is_some() || k.thin.is_some() || k.squat.is_some() {
            // The source pointer's position in elements: the kernel finds the
            // aligned 16-byte vectors around each row (or run) with it.
            writeln!(
                w,
                "const {INDEX_TYPE} {} = ({INDEX_TYPE})((unsigned long long)src / {});",
                Var::SrcOff.c_name(),
                g.elem_bytes
            )?;
        }
        for l in &k.kernel_lets {
            match (g.width_var(), k.width, l) {
                // An entry point's tile sizes and count with its width bound:
                // constants, where the parameter would hold a register (the
                // constant that shadows it is declared in the tile's scope).
                (Some(var), Some(n), Expr::Let(name, def)) => {
                    let mut env = Env::default();
                    env.set(var, i64::from(n));
                    let free: Vec<Var> = Var::ALL.into_iter().filter(|v| *v != var).collect();
                    w.decl(INDEX_TYPE, &Expr::named(name, def.bind(&env, &free)))?;
                }
                _ => w.decl(INDEX_TYPE, l)?,
            }
        }
        if g.folds_batch() {
            // The batch is part of the tile loop's run: no batch loop.
            return tile_loop(w, k);
        }
        let batches = format_args!("for ({INDEX_TYPE} b = blockIdx.y; b < batch; b += gridDim.y)");
        w.block(batches, |w| {
            for l in &k.batch_lets {
                w.decl(INDEX_TYPE, l)?;
            }
            tile_loop(w, k)
        })
    })
}

/// The grid-stride loop over tiles and, inside it, the moves.
fn tile_loop(w: &mut CWriter, k: &Kernel) -> fmt::Result {
    let more = k.more.c();
    let tiles = format_args!("for ({INDEX_TYPE} t = blockIdx.x; {more}; t += gridDim.x)");
    w.block(tiles, |w| {
        for l in &k.tile_lets {
            w.decl(INDEX_TYPE, l)?;
        }
        if let Some(r) = k.realign() {
            realign_tile(w, k, r)?;
        } else if let (Some(t), Some(cols)) = (k.thin(), k.width) {
            thin_tile(w, k, t, cols)?;
        } else if let (Some(q), Some(rows)) = (k.squat(), k.width) {
            squat_tile(w, k, q, rows)?;
        } else {
            for (i, mv) in k.moves.iter().enumerate() {
                if i > 0 {
                    writeln!(w, "__syncthreads();")?;
                }
                body_of(w, k, mv)?;
            }
        }
        if k.moves.len() > 1 {
            writeln!(
                w,
                "__syncthreads(); // the next tile reuses the shared tile"
            )?;
        }
        Ok(())
    })
}

fn header(h: &mut CWriter, k: &Kernel) -> fmt::Result {
    let (s, g) = (&k.spec, &k.spec.geometry);
    let elem = if g.thins() {
        format!(
            "{v} x {u} per 32-bit word; a lane transposes a block of {v} source rows",
            v = g.vec,
            u = g.elem_unit().c_type()
        )
    } else if g.squats() {
        format!(
            "{v} x {u} per 32-bit word; a lane transposes a block of {v} source columns",
            v = g.vec,
            u = g.elem_unit().c_type()
        )
    } else if g.realigns() {
        format!(
            "{v} x {u} per 32-bit word; a lane reads {c} columns of a row per step",
            v = g.vec,
            u = g.elem_unit().c_type(),
            c = g.realign_cols()
        )
    } else if g.form == Form::Planar {
        format!(
            "{v} x {u} per 16-byte vector; a thread step moves a block of {v} source rows",
            v = g.vec,
            u = g.elem_unit().c_type()
        )
    } else if g.vec > 1 && g.gathers() {
        format!(
            "{v} gathered {u} loads per thread step, stored as one {b}-byte vector",
            v = g.vec,
            u = k.unit.c_type(),
            b = g.vec_bytes()
        )
    } else if g.packs() {
        format!(
            "{v} x {u} per thread step, moved as one {b}-byte word",
            v = g.vec,
            u = k.unit.c_type(),
            b = g.vec_bytes()
        )
    } else if g.vec > 1 {
        format!(
            "{v} x {v} blocks per thread step: {v} loads of {b}-byte vectors, a register transpose, {v} stores; \
             shared memory holds {v} planes of vectors",
            v = g.vec,
            b = g.vec_bytes()
        )
    } else if k.words > 1 && g.gathers() {
        format!("{} x {}, moved word by word", k.words, k.unit.c_type())
    } else if k.words > 1 {
        format!(
            "{} x {} (word-planar in shared memory)",
            k.words,
            k.unit.c_type()
        )
    } else {
        k.unit.c_type().to_string()
    };
    writeln!(
        h,
        "// Generated by bankfree-gen {}. Do not edit: change the spec.",
        env!("CARGO_PKG_VERSION")
    )?;
    if g.gathers() || g.packs() || g.form == Form::Planar || g.realigns() || g.has_widths() {
        writeln!(
            h,
            "// spec:     block {t} x {r} threads ({i} steps per thread), {b}-byte elements ({elem})",
            t = g.tile,
            r = g.block_rows,
            i = k.moves.iter().map(|m| m.iters).max().unwrap_or(SMALL_ITERS),
            b = g.elem_bytes
        )?;
    } else {
        writeln!(
            h,
            "// spec:     tile {te}, block {t} x {r} threads ({i} rows per thread), {b}-byte elements ({elem})",
            te = g.tile_elems(),
            t = g.tile,
            r = g.block_rows,
            i = g.iters(),
            b = g.elem_bytes
        )?;
    }
    match g.form {
        Form::Tile => {}
        Form::Skew => {
            writeln!(
                h,
                "// form:     skew: each destination row's windows ({} of {} elements) start on a \
                 32-byte sector (shifted back by up to {} elements), so the tile holds {} source rows",
                g.skew_depth(),
                g.tile,
                g.sector_elems() - 1,
                k.shared_rows
            )?;
        }
        Form::Tall if g.packs() => {
            writeln!(
                h,
                "// form:     tall: cols <= {MAX_NARROW}, src_ld == cols; a block moves chunk = ({} / cols - {v}) / {w} * {w} rows \
                 (and the {v} before them) as {b}-byte words, each dst row's window shifted back to start on a word",
                g.chunk_elems(),
                v = g.word_shift(),
                w = 32 * g.vec,
                b = g.vec_bytes()
            )?;
        }
        Form::Tall | Form::Wide => {
            let (narrow, long, flat) = if g.form == Form::Tall {
                ("cols", "rows", "src_ld == cols")
            } else {
                ("rows", "cols", "dst_ld == rows")
            };
            writeln!(
                h,
                "// form:     {}: {narrow} <= {}, {flat}; a block moves chunk = {} / {narrow} / 32 * 32 {long} \
                 (flat in shared memory, as rows of {})",
                g.form,
                MAX_NARROW,
                g.chunk_elems(),
                g.tile
            )?;
        }
        Form::Strip => {
            writeln!(
                h,
                "// form:     strip: 2 <= rows <= {}, dst_ld == rows; a block moves {} consecutive \
                 destination elements, gathering each from the source",
                MAX_NARROW,
                g.small_chunk()
            )?;
        }
        Form::Copy => {
            writeln!(
                h,
                "// form:     copy: no transpose, dst (b, r, c) = dst[b * dst_batch_stride + r * dst_ld + c]; \
                 a block moves {} consecutive vectors of one batch item's rows",
                g.copy_chunk()
            )?;
        }
        Form::Realign => {
            writeln!(
                h,
                "// form:     realign: a tile of {n} x {n} and the {s} rows above it; a lane reads {c} columns of a row as \
                 the two aligned 16-byte vectors around them (element by element where those leave the matrix) and \
                 transposes blocks of {v} rows into column words; a warp writes a dst row's window from a 32-byte \
                 sector (up to {e} positions early: the tiles cover rows + {e}), each word funnel-shifted from two \
                 of the column's",
                n = g.tile_elems(),
                s = g.sector_elems(),
                c = g.realign_cols(),
                v = g.vec,
                e = g.sector_elems() - 1
            )?;
        }
        Form::Thin => {
            writeln!(
                h,
                "// form:     thin: cols from 2 to {m}, src_ld == cols; a block stages 8 / cols sub-tiles (1 from 9 cols) of {n} blocks of {v} source rows \
                 (cols words each) and the block before them as 16-byte vectors from the boundary below them, word w at w ^ ((w >> 5) & ((cols & -cols) - 1)); lane tx of warp ty transposes block \
                 {n} * si + 31 * ty + tx of each sub-tile si in registers and stores whole dst words, each funnel-shifted with the lane before's \
                 (lane 0 stores none); an entry point per width, cols a constant in each",
                m = crate::kernel::thin::THIN_MAX_COLS,
                n = crate::kernel::thin::THIN_BLOCKS - 1,
                v = g.vec
            )?;
        }
        Form::Squat => {
            writeln!(
                h,
                "// form:     squat: rows from 2 to {m}, dst_ld == rows; lane tx of warp ty of tile t owns block \
                 248 t + 31 ty + tx - 1 of {v} source columns: it loads the aligned word at the block in each row \
                 (the next from the next lane) and funnel-shifts the row's elements out, permutes the rows' words \
                 into the block's rows dst words, funnel-shifts each with the word before (the lane before's last; \
                 lane 0 writes none) and writes them to the stage, word w at w ^ ((w >> 5) & ((rows & -rows) - 1)); \
                 the block stores the stage as 16-byte vectors from the boundary below its first word; an entry \
                 point per width, rows a constant in each",
                m = crate::kernel::squat::SQUAT_MAX_ROWS,
                v = g.vec
            )?;
        }
        Form::Planar => {
            writeln!(
                h,
                "// form:     planar: cols <= {PLANAR_MAX_COLS}, src_ld == cols; a thread loads a block of {v} source rows as \
                 cols 16-byte vectors, transposes it in registers and stores one vector to each of the cols dst rows \
                 (a block moves {} blocks)",
                g.copy_chunk(),
                v = g.vec
            )?;
        }
        Form::Small => {
            writeln!(
                h,
                "// form:     small: 2 <= rows, rows * cols <= {}, dense matrices back to back; a block \
                 moves {} consecutive destination {} of the whole batch, gathering each from the source{}{}",
                k.quotients().max_elems(),
                g.small_chunk(),
                if g.gathers_words() { "words" } else { "elements" },
                if k.quotients() == Quotients::Narrow { "" } else { "; " },
                k.quotients().describe()
            )?;
        }
    }
    writeln!(h, "// strategy: {} -> {}", s.strategy, k.layout)?;
    let planes = if k.words > 1 && !g.packs() && !g.realigns() && !g.has_widths() {
        format!("{} planes of ", k.words)
    } else {
        String::new()
    };
    let shared = match (k.layout, g.form) {
        (Layout::Direct, _) => "none".to_string(),
        (Layout::Xor(z), Form::Tall) => format!(
            "{} bytes per block (tile[{}] of {}: the chunk, its words w at w ^ ((w >> {}) & (low - 1)), low = the lowest set bit of cols)",
            k.shared_bytes(),
            g.shared_units(k.layout),
            access_type(k),
            z.s
        ),
        (_, Form::Tall | Form::Wide) => format!(
            "{} bytes per block ({planes}tile[{}] of {}: the chunk, one unit of padding every period units)",
            k.shared_bytes(),
            g.shared_units(k.layout),
            access_type(k)
        ),
        (_, Form::Thin) => format!(
            "{} bytes per block (tile[{}] of unsigned: the stage, its blocks cols words apart, swizzled for even cols){}",
            k.shared_bytes(),
            k.shared_units(),
            match k.width {
                Some(c) => format!(", for {c} columns"),
                None => " for the widest source; each width's entry point sizes its own".into(),
            }
        ),
        (_, Form::Squat) => format!(
            "{} bytes per block (tile[{}] of unsigned: the stage, its blocks rows words apart, swizzled for even rows){}",
            k.shared_bytes(),
            k.shared_units(),
            match k.width {
                Some(r) => format!(", for {r} rows"),
                None => " for the widest source; each width's entry point sizes its own".into(),
            }
        ),
        (l, _) => format!(
            "{} bytes per block ({planes}tile[{}][{}] of {})",
            k.shared_bytes(),
            k.shared_rows,
            g.shared_row_units(l),
            if g.realigns() { "unsigned" } else { access_type(k) }
        ),
    };
    writeln!(h, "// shared:   {shared}")?;
    if dynamic_shared_bytes(k.shared_bytes()) > 0 {
        writeln!(
            h,
            "//           dynamic: launch with {} bytes and raise cudaFuncAttributeMaxDynamicSharedMemorySize",
            k.shared_bytes()
        )?;
    }
    writeln!(h, "// analyzer: hopper model: {}", k.verdict().text)?;
    writeln!(
        h,
        "// data:     src (b, r, c) = src[b * src_batch_stride + r * src_ld + c], rows x cols;\n\
         //           dst (b, c, r) = dst[b * dst_batch_stride + c * dst_ld + r]; all in elements"
    )?;
    if k.outer > 0 {
        writeln!(
            h,
            "//           b is a multi-index over {} batch axes: axis 0 (ext0 items, src_batch_stride and \
             dst_batch_stride apart), then axis k (src_stride<k>, dst_stride<k>)",
            k.outer + 1
        )?;
    }
    if k.fold != [0, 0] {
        writeln!(
            h,
            "//           r runs over {} axes (axis 0 of row_ext0 items; axis k row_src<k>, row_dst<k> apart), \
             c over {} (axis 0 of col_ext0 items; axis k col_src<k>, col_dst<k> apart)",
            k.fold[0] + 1,
            k.fold[1] + 1
        )?;
    }
    if g.vec > 1 && g.form == Form::Strip {
        writeln!(
            h,
            "//           each matrix's dst run stored in {}-byte vectors from where its address is aligned",
            g.vec_bytes()
        )?;
    } else if g.gathers_words() {
        writeln!(
            h,
            "//           stores {}-byte vectors where dst is {}-byte aligned, else word by word",
            g.vec_bytes(),
            g.vec_bytes()
        )?;
    } else if g.vec > 1 && g.gathers() {
        writeln!(h, "//           needs dst {}-byte aligned", g.vec_bytes())?;
    } else if g.thins() {
        writeln!(
            h,
            "//           any rows, dst pitch, stride and pointer; stores whole 32-bit words where they lie in the matrix"
        )?;
    } else if g.squats() {
        writeln!(
            h,
            "//           any cols, src pitch, stride and pointer; stores 16-byte vectors where they lie in the tile's run"
        )?;
    } else if g.realigns() {
        writeln!(
            h,
            "//           any shape, pitch, stride and pointer; stores whole 32-bit words where they lie in the matrix"
        )?;
    } else if g.form == Form::Planar {
        writeln!(
            h,
            "//           needs rows, dst_ld and batch strides divisible by {} and both pointers 16-byte aligned",
            g.vec
        )?;
    } else if g.vec > 1 && g.form == Form::Copy {
        writeln!(
            h,
            "//           needs cols, pitches and strides divisible by {} and both pointers {}-byte aligned",
            g.vec,
            g.vec_bytes()
        )?;
    } else if g.packs() {
        writeln!(
            h,
            "//           needs src {b}-byte aligned and (with more than one matrix) src_batch_stride divisible by {v}; \
             each dst row's words start where its address is {b}-byte aligned",
            v = g.vec,
            b = g.vec_bytes()
        )?;
    } else if g.vec > 1 {
        writeln!(
            h,
            "//           needs rows, cols, pitches and batch strides divisible by {} and both pointers {}-byte aligned",
            g.vec,
            g.vec_bytes()
        )?;
    }
    let tiles = match g.form {
        Form::Tile => format!("tiles of {}", g.tile_elems()),
        Form::Skew => format!(
            "ntiles = tiles of {} x {} with rows + {}",
            g.tile,
            g.skew_rows(),
            g.sector_elems() - 1
        ),
        Form::Tall | Form::Wide => "ntiles = chunks".to_string(),
        Form::Small => "ntiles = chunks of batch * rows * cols".to_string(),
        Form::Strip => "ntiles = chunks of rows * cols".to_string(),
        Form::Copy => "ntiles = chunks of rows * cols / vec".to_string(),
        Form::Planar => "ntiles = chunks of rows / vec".to_string(),
        Form::Thin => format!(
            "ntiles = runs of {} rows per sub-tile with rows + {}",
            g.thin_tile_rows(),
            g.vec - 1
        ),
        Form::Squat => format!(
            "ntiles = runs of {} cols with cols + {}",
            crate::kernel::squat::SQUAT_BLOCKS * g.vec,
            g.vec
        ),
        Form::Realign => format!(
            "ntiles = tiles of {} with rows + {}",
            g.tile_elems(),
            g.sector_elems() - 1
        ),
    };
    let (batches, loops) = if g.folds_batch() {
        ("1".to_string(), "the tile loop strides")
    } else {
        (format!("min(batch, {MAX_GRID_Y})"), "both loops stride")
    };
    writeln!(
        h,
        "// launch:   block ({}, {}, 1); grid (min({tiles}, {MAX_GRID_X}), {batches}, 1); \
         {loops} over the rest",
        g.tile, g.block_rows,
    )?;
    if k.order == TileOrder::Columns {
        writeln!(
            h,
            "// tiles:    taken {}: tile t is tile_r = t % tiles_y, tile_c = t / tiles_y, so consecutive \
             tiles write consecutive pieces of the same destination rows",
            k.order.describe()
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::emit;
    use crate::kernel::geometry::Form;
    use crate::kernel::spec::{Strategy, TransposeSpec};
    use crate::kernel::Kernel;

    fn staged(spec: TransposeSpec) -> bool {
        emit(&Kernel::build(spec).expect("buildable")).contains(" stage[")
    }

    fn spec(tile: u32, elem_bytes: u32, strategy: Strategy) -> TransposeSpec {
        TransposeSpec::new(tile, elem_bytes, strategy).expect("valid spec")
    }

    #[test]
    fn skew_naive_long_and_16_byte_vector_moves_are_not_staged() {
        let skew = spec(64, 4, Strategy::Pad(None)).with_form(Form::Skew);
        assert!(!staged(skew.expect("skew spec")));
        assert!(!staged(spec(32, 4, Strategy::Naive)));
        // Tile 64 with 8 thread rows: 8 iterations.
        assert!(!staged(spec(64, 4, Strategy::Pad(None))));
        let v4 = spec(32, 4, Strategy::Pad(None))
            .with_block_rows(16)
            .and_then(|s| s.with_vec(4));
        assert!(!staged(v4.expect("vec 4 spec")));
        // The plain f32 tile (4 iterations of 4 bytes) is.
        assert!(staged(spec(32, 4, Strategy::Pad(None))));
    }
}
