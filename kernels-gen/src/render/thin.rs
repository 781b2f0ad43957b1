//! A `thin` kernel's tile as CUDA C ([`crate::kernel::thin`]), for one width
//! (`cols` a constant): the stage of the tile's run
//! as 16-byte vectors, then each lane's column words, transposed in registers
//! and stored whole, realigned with the lane before's. A tile that lies inside
//! the matrix ([`Thin::interior`]) runs without bounds checks.
//! Every index is the kernel's expression; this module writes the data path.

use crate::ir::expr::{Expr, Var};
use crate::kernel::realign::network_regs;
use crate::kernel::thin::{stage_group, stage_iters, thin_subtiles, warp_steps, Thin};
use crate::kernel::Kernel;
use crate::render::body::INDEX_TYPE;
use crate::render::realign::{gather_elements, network_steps, store_elements};
use crate::render::writer::CWriter;
use std::fmt::{self, Write};

/// The tile of an entry point for sources of `cols` columns: the parameter
/// shadowed by a constant, so the column loop unrolls and every index folds.
pub(crate) fn thin_tile(w: &mut CWriter, k: &Kernel, t: &Thin, cols: u32) -> fmt::Result {
    let name = Var::Cols.c_name();
    w.scope(|w| {
        writeln!(
            w,
            "constexpr {INDEX_TYPE} {name} = {cols}; // the launcher runs this width only"
        )?;
        width(w, k, t, cols)
    })
}

fn decl(w: &mut CWriter, e: &Expr) -> fmt::Result {
    w.decl(INDEX_TYPE, e)
}

/// One width's tile: the stage, a barrier, the columns, a barrier.
fn width(w: &mut CWriter, k: &Kernel, t: &Thin, cols: u32) -> fmt::Result {
    decl(w, &t.phase)?;
    decl(w, &t.start)?;
    let interior = t.interior.c();
    w.block(format_args!("if ({interior})"), |w| {
        stage(w, k, t, cols, true)
    })?;
    w.block(format_args!("else"), |w| stage(w, k, t, cols, false))?;
    writeln!(w, "__syncthreads();")?;
    // One column body: an interior tile stores every word whole without its
    // check (two bodies took registers enough for ptxas to spill). The guard
    // is evaluated again here: a flag kept across the barrier took registers.
    writeln!(w, "const bool inside = {interior};")?;
    columns(w, k, t, cols)?;
    writeln!(w, "__syncthreads(); // the next tile reuses the stage")
}

/// The stage: every vector loaded (into registers first, where the tile is
/// interior), then stored.
fn stage(w: &mut CWriter, k: &Kernel, t: &Thin, cols: u32, inside: bool) -> fmt::Result {
    let g = &k.spec.geometry;
    let iters = stage_iters(g, cols);
    let each = format!("for (unsigned j = 0; j < {iters}; ++j)");
    let load = format!("*reinterpret_cast<const uint4*>(&src[{}])", t.load.c());
    // The vector's words permuted by the swizzle's low bits (`turn`, 0 for an odd
    // width), then stored whole.
    let store = |w: &mut CWriter, x: &str| {
        decl(w, &t.first_word)?;
        decl(w, &t.turn)?;
        writeln!(w, "uint4 y = {x};")?;
        let tn = t.turn.c();
        writeln!(w, "if ({tn} & 1u) y = make_uint4(y.y, y.x, y.w, y.z);")?;
        writeln!(w, "if ({tn} & 2u) y = make_uint4(y.z, y.w, y.x, y.y);")?;
        writeln!(w, "*reinterpret_cast<uint4*>(&tile[{}]) = y;", t.slot.c())
    };
    let lets = |w: &mut CWriter| {
        decl(w, &t.vector)?;
        decl(w, &t.vector_at)
    };
    if inside {
        // A group of vectors loaded, then stored (`stage_group`).
        let group = stage_group(iters);
        writeln!(w, "#pragma unroll")?;
        let groups = format!("for (unsigned j0 = 0; j0 < {iters}; j0 += {group})");
        let each = format!("for (unsigned jj = 0; jj < {group}; ++jj)");
        return w.block(format_args!("{groups}"), |w| {
            writeln!(w, "uint4 x[{group}];")?;
            writeln!(w, "#pragma unroll")?;
            w.block(format_args!("{each}"), |w| {
                writeln!(w, "const unsigned j = j0 + jj;")?;
                lets(w)?;
                writeln!(w, "if (j < {iters} && {}) x[jj] = {load};", t.staged.c())
            })?;
            writeln!(w, "#pragma unroll")?;
            w.block(format_args!("{each}"), |w| {
                writeln!(w, "const unsigned j = j0 + jj;")?;
                decl(w, &t.vector)?;
                let stored = format!("if (j < {iters} && {})", t.staged.c());
                w.block(format_args!("{stored}"), |w| store(w, "x[jj]"))
            })
        });
    }
    let per = 16 / g.elem_bytes;
    // An edge tile's stage loop stays rolled: unrolled, its element-by-element
    // loads took registers enough for ptxas to spill.
    writeln!(w, "#pragma unroll 1")?;
    w.block(format_args!("{each}"), |w| {
        lets(w)?;
        w.block(format_args!("if ({})", t.staged.c()), |w| {
            writeln!(w, "uint4 x;")?;
            w.block(format_args!("if ({})", t.whole.c()), |w| {
                writeln!(w, "x = {load};")
            })?;
            w.block(format_args!("else"), |w| {
                writeln!(w, "unsigned e[4] = {{0u, 0u, 0u, 0u}};")?;
                gather_elements(w, (per, g.vec, g.elem_bytes), &t.elem_in, &t.elem, "e")?;
                writeln!(w, "x = make_uint4(e[0], e[1], e[2], e[3]);")
            })?;
            store(w, "x")
        })
    })
}

/// Each lane's block of each sub-tile, column word by column word: its rows'
/// words realigned, transposed, and each column's word stored realigned with
/// the lane before's.
fn columns(w: &mut CWriter, k: &Kernel, t: &Thin, cols: u32) -> fmt::Result {
    let g = &k.spec.geometry;
    let vec = g.vec;
    let words = cols.div_ceil(vec);
    let regs = network_regs(vec);
    let rk = Var::Row.c_name();
    let each_row = format!("for (unsigned {rk} = 0; {rk} < {vec}; ++{rk})");
    let si = Var::Sub.c_name();
    let subs = thin_subtiles(cols);
    writeln!(w, "#pragma unroll")?;
    let each_sub = format!("for (unsigned {si} = 0; {si} < {subs}; ++{si})");
    w.block(format_args!("{each_sub}"), |w| {
        decl(w, &t.block)?;
        // A kernel that splits its column words: the warp's first step.
        let first = match &t.first_step {
            Some(qs) => {
                decl(w, qs)?;
                qs.c()
            }
            None => "0".to_string(),
        };
        writeln!(w, "unsigned lo[{vec}];")?;
        writeln!(w, "#pragma unroll")?;
        w.block(format_args!("{each_row}"), |w| {
            decl(w, &t.row_bytes)?;
            writeln!(w, "const unsigned j = {first};")?;
            writeln!(w, "lo[{rk}] = tile[{}];", t.read.c())
        })?;
        writeln!(w, "#pragma unroll")?;
        let steps = warp_steps(g, cols);
        let each_step = if t.first_step.is_some() {
            format!("for (unsigned qq = 0; qq < {steps}; ++qq)")
        } else {
            format!("for (unsigned q = 0; q < {words}; ++q)")
        };
        w.block(format_args!("{each_step}"), |w| {
            if t.first_step.is_some() {
                // The second half's last step lies past the width where
                // the steps are odd.
                writeln!(w, "const unsigned q = {first} + qq;")?;
                writeln!(w, "if (q >= {words}) break;")?;
            }
            writeln!(w, "unsigned p[{regs}];")?;
            writeln!(w, "#pragma unroll")?;
            w.block(format_args!("{each_row}"), |w| {
                decl(w, &t.row_bytes)?;
                writeln!(w, "const unsigned j = q + 1;")?;
                writeln!(w, "const unsigned hi = tile[{}];", t.read.c())?;
                writeln!(
                    w,
                    "p[{rk}] = __funnelshift_r(lo[{rk}], hi, {});",
                    t.row_shift.c()
                )?;
                writeln!(w, "lo[{rk}] = hi;")
            })?;
            network_steps(w, vec)?;
            writeln!(w, "#pragma unroll")?;
            w.block(format_args!("for (unsigned m = 0; m < {vec}; ++m)"), |w| {
                let k_name = Var::K.c_name();
                writeln!(w, "const unsigned {k_name} = q * {vec} + m;")?;
                w.block(format_args!("if ({k_name} < {cols})"), |w| {
                    writeln!(w, "const unsigned out = p[{} + m];", regs - vec as usize)?;
                    writeln!(
                        w,
                        "const unsigned prev = __shfl_up_sync(0xffffffffu, out, 1);"
                    )?;
                    w.block(format_args!("if ({})", t.stores.c()), |w| {
                        for l in t.dst_lets.iter().chain([&t.dst_row, &t.ts, &t.word_end]) {
                            decl(w, l)?;
                        }
                        writeln!(
                            w,
                            "const unsigned wv = __funnelshift_rc(prev, out, {});",
                            t.shift.c()
                        )?;
                        let whole =
                            format!("*reinterpret_cast<unsigned*>(&dst[{}]) = wv;", t.to.c());
                        w.block(format_args!("if (inside || {})", t.full.c()), |w| {
                            writeln!(w, "{whole}")
                        })?;
                        w.block(format_args!("else"), |w| {
                            store_elements(w, k, ("wv", rk, 1), &t.part, &t.part_to)
                        })
                    })
                })
            })
        })
    })
}
