//! One tile of an `interleave` kernel's entry point for `n` rows rendered as
//! CUDA C ([`crate::kernel::interleave`]): the height as a constant, the load
//! move (the loads of every block a thread moves, then each block's register
//! interleave and stores to the shared stage), the barrier, and the store move,
//! an ordinary one ([`crate::render::body`]).

use crate::ir::expr::Var;
use crate::kernel::interleave::blocks_per_thread;
use crate::kernel::moves::Move;
use crate::kernel::Kernel;
use crate::render::body::{body_of, INDEX_TYPE};
use crate::render::writer::CWriter;
use std::fmt::{self, Write};

/// The tile body of `k`'s entry point for sources of `n` rows
/// ([`crate::Kernel::with_width`]; an interleave kernel's source holds one per
/// height, [`crate::Kernel::entry_points`]).
pub(crate) fn interleave_tile(w: &mut CWriter, k: &Kernel, n: u32) -> fmt::Result {
    writeln!(
        w,
        "constexpr {INDEX_TYPE} {} = {n}; // the launcher runs this height only",
        Var::Rows.c_name()
    )?;
    for (i, mv) in k.moves.iter().enumerate() {
        if i > 0 {
            writeln!(w, "__syncthreads();")?;
        }
        if mv.transpose {
            load(w, k, mv, n)?;
        } else {
            body_of(w, k, mv)?;
        }
    }
    Ok(())
}

/// The load move for sources of `n` rows: `n` units per step, the source's
/// rows, and `8 / n` steps, the thread's blocks. Every block's loads come
/// first, all in flight, then each block is interleaved in registers and
/// stored to the stage one vector at a time. The vectors are held as 32-bit
/// words and each output word is assembled from its bytes (`__byte_perm`s to
/// the compiler): addressed as 16 bytes, NVRTC 13.0 kept every byte in a
/// register of its own.
fn load(w: &mut CWriter, k: &Kernel, mv: &Move, n: u32) -> fmt::Result {
    let (from, to) = (mv.from.c(), mv.to.c());
    let e = k.spec.geometry.elem_bytes;
    let guard = mv.guard.c();
    let bpt = blocks_per_thread(&k.spec.geometry, n);
    let steps = |w: &mut CWriter, body: &dyn Fn(&mut CWriter) -> fmt::Result| {
        writeln!(w, "#pragma unroll")?;
        w.block(format_args!("for (unsigned j = 0; j < {bpt}; ++j)"), |w| {
            for l in &mv.lets {
                w.decl(INDEX_TYPE, l)?;
            }
            w.block(format_args!("if ({guard})"), body)
        })
    };
    let per_row = |w: &mut CWriter, body: &dyn Fn(&mut CWriter) -> fmt::Result| {
        writeln!(w, "#pragma unroll")?;
        w.block(format_args!("for (unsigned k = 0; k < {n}; ++k)"), body)
    };
    writeln!(w, "unsigned r[{}][4];", bpt * n)?;
    steps(w, &|w: &mut CWriter| {
        per_row(w, &|w: &mut CWriter| {
            writeln!(
                w,
                "const uint4 v = *reinterpret_cast<const uint4*>(&{from});"
            )?;
            writeln!(
                w,
                "r[j * {n} + k][0] = v.x; r[j * {n} + k][1] = v.y; r[j * {n} + k][2] = v.z; r[j * {n} + k][3] = v.w;"
            )
        })
    })?;
    steps(w, &|w: &mut CWriter| {
        per_row(w, &|w: &mut CWriter| {
            writeln!(w, "unsigned o[4];")?;
            writeln!(w, "#pragma unroll")?;
            w.block(format_args!("for (unsigned q = 0; q < 4; ++q)"), |w| {
                writeln!(w, "unsigned x = 0;")?;
                writeln!(w, "#pragma unroll")?;
                w.block(format_args!("for (unsigned b = 0; b < 4; ++b)"), |w| {
                    writeln!(
                        w,
                        "// byte b of word q: byte p % {e} of element p / {e} of the block's run,"
                    )?;
                    writeln!(
                        w,
                        "// byte s of row p / {e} % {n}"
                    )?;
                    writeln!(w, "const unsigned p = k * 16 + q * 4 + b;")?;
                    writeln!(w, "const unsigned s = p / {e} / {n} * {e} + p % {e};")?;
                    writeln!(
                        w,
                        "x |= ((r[j * {n} + p / {e} % {n}][s / 4] >> (8 * (s % 4))) & 0xffu) << (8 * b);"
                    )
                })?;
                writeln!(w, "o[q] = x;")
            })?;
            writeln!(
                w,
                "*reinterpret_cast<uint4*>(&{to}) = make_uint4(o[0], o[1], o[2], o[3]);"
            )
        })
    })
}
