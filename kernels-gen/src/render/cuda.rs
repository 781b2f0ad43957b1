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
use crate::kernel::geometry::Form;
use crate::kernel::launch::dynamic_shared_bytes;
use crate::kernel::layout::Layout;
use crate::kernel::moves::Move;
use crate::kernel::realign::realign_min_blocks;
use crate::kernel::squat::squat_min_blocks;
use crate::kernel::thin::thin_min_blocks;
use crate::kernel::Kernel;
use crate::render::body::{access_type, body_of, INDEX_TYPE, VEC_TYPE};
use crate::render::header::header;
use crate::render::interleave::interleave_tile;
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
        [one] => write_entry(w, one, true),
        many => many.iter().enumerate().try_for_each(|(i, one)| {
            writeln!(w)?;
            write_entry(w, one, i == 0)
        }),
    }
}

/// One `extern "C"` entry point (after the header), with the vector type where it is `first`.
fn write_entry(w: &mut CWriter, k: &Kernel, first: bool) -> fmt::Result {
    let g = &k.spec.geometry;
    let ty = access_type(k);
    let name = k.entry_name();
    index_type(w, &name)?;
    // A wordvec kernel's vector is one struct even where it holds one unit.
    // The vector type, once per source (an entry point per height shares it).
    if first && (g.vec > 1 || g.wordvecs()) && !g.realigns() && !g.stages_words() {
        writeln!(
            w,
            "struct __align__({}) {VEC_TYPE} {{ {} e[{}]; }};\n",
            g.vec_bytes(),
            if g.wordvecs() {
                k.unit.c_type()
            } else {
                g.elem_unit().c_type()
            },
            g.vec
        )?;
    }
    // A thin, squat or realign kernel names its blocks per SM, per index build
    // (`thin_min_blocks`, `squat_min_blocks`, `realign_min_blocks`).
    let t = g.threads();
    let eb = g.elem_bytes;
    let min_blocks = |w, index64| {
        if g.squats() {
            squat_min_blocks(w, eb, index64)
        } else {
            thin_min_blocks(w, index64)
        }
    };
    let per_build = |wide: u32, narrow: u32| {
        format!(
            "\n#ifdef {INDEX64_DEFINE}\n__launch_bounds__({t}, {wide})\n#else\n__launch_bounds__({t}, {narrow})\n#endif\n"
        )
    };
    let bounds = match k.width {
        Some(c) if g.stages_words() => per_build(min_blocks(c, true), min_blocks(c, false)),
        None if g.realigns() => {
            per_build(realign_min_blocks(eb, true), realign_min_blocks(eb, false))
        }
        _ => format!(" __launch_bounds__({t})\n"),
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
        let ty = if g.realigns() || g.stages_words() { "unsigned" } else { ty };
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
        // Launched as a programmatic dependent of the kernel before it in the
        // stream (sm_90 on; the runtime's launch), a kernel may start while that
        // one still runs: it waits here, after its parameters' arithmetic and
        // before any memory access, for that kernel to finish and its writes to
        // show (a no-op otherwise). At the kernel's first line it cost the
        // 12-byte skew tile 0.07 of memcpy (H200, 8192 x 8192: 0.83 against
        // 0.89); here nothing.
        writeln!(
            w,
            "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\nasm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n#endif"
        )?;
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
        } else if let (Form::Interleave, Some(rows)) = (k.spec.geometry.form, k.width) {
            interleave_tile(w, k, rows)?;
        } else if let Some(inside) = k.interior() {
            // Both branches are uniform over the block (tile-level values
            // only), so each holds its barriers.
            w.block(format_args!("if ({})", inside.guard.c()), |w| {
                let moves: Vec<Move> = (k.moves.iter().enumerate())
                    .map(|(i, mv)| inside.move_of(i, mv))
                    .collect();
                moves_of(w, k, &moves)
            })?;
            w.block(format_args!("else"), |w| moves_of(w, k, &k.moves))?;
        } else {
            moves_of(w, k, &k.moves)?;
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

/// `moves` in order, with a barrier between consecutive ones.
fn moves_of(w: &mut CWriter, k: &Kernel, moves: &[Move]) -> fmt::Result {
    for (i, mv) in moves.iter().enumerate() {
        if i > 0 {
            writeln!(w, "__syncthreads();")?;
        }
        body_of(w, k, mv)?;
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
