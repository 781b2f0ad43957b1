//! A `squat` kernel's tile as CUDA C ([`crate::kernel::squat`]), for one width
//! (`rows` a constant): each lane's rows read as realigned words, permuted
//! into its block's destination words, realigned with the word before and
//! written to the stage; then the stage stored as 16-byte vectors.
//! Every index is the kernel's expression; this module writes the data path.

use crate::ir::expr::{Expr, Var};
use crate::kernel::squat::{squat_iters, squat_loads_pairs, squat_perms, squat_word_reg, Squat};
use crate::kernel::Kernel;
use crate::render::body::INDEX_TYPE;
use crate::render::realign::gather_elements;
use crate::render::writer::CWriter;
use std::fmt::{self, Write};

/// The tile of an entry point for sources of `rows` rows: the parameter
/// shadowed by a constant, so the rows unroll and every index folds.
pub(crate) fn squat_tile(w: &mut CWriter, k: &Kernel, q: &Squat, rows: u32) -> fmt::Result {
    let name = Var::Rows.c_name();
    w.scope(|w| {
        writeln!(
            w,
            "constexpr {INDEX_TYPE} {name} = {rows}; // the launcher runs this width only"
        )?;
        let regs = squat_word_reg(rows, rows - 1) + 1;
        writeln!(w, "unsigned p[{regs}];")?;
        decl(w, &q.block)?;
        // The guard is evaluated again for the stores: a flag kept across the
        // loads would take a register.
        let interior = q.interior.c();
        w.block(format_args!("if ({interior})"), |w| {
            read(w, k, q, rows, false)
        })?;
        w.block(format_args!("else"), |w| read(w, k, q, rows, true))?;
        for s in squat_perms(rows, k.spec.geometry.elem_bytes) {
            writeln!(
                w,
                "p[{}] = __byte_perm(p[{}], p[{}], 0x{:04x});",
                s.out, s.a, s.b, s.sel
            )?;
        }
        write_stage(w, q, rows)?;
        writeln!(w, "__syncthreads();")?;
        store(w, k, q, rows)?;
        writeln!(w, "__syncthreads(); // the next tile reuses the stage")
    })
}

fn decl(w: &mut CWriter, e: &Expr) -> fmt::Result {
    w.decl(INDEX_TYPE, e)
}

/// One word of the pair (`Var::J`) into `into`: whole where it lies in the
/// span (`checked`; an interior tile's always do), else element by element.
fn word(
    w: &mut CWriter,
    k: &Kernel,
    q: &Squat,
    (j, checked): (u32, bool),
    into: &str,
) -> fmt::Result {
    let g = &k.spec.geometry;
    w.scope(|w| {
        writeln!(w, "const unsigned j = {j};")?;
        decl(w, &q.word_at)?;
        let load = format!(
            "{into} = *reinterpret_cast<const unsigned*>(&src[{}]);",
            q.load.c()
        );
        if !checked {
            return writeln!(w, "{load}");
        }
        w.block(format_args!("if ({})", q.whole.c()), |w| {
            writeln!(w, "{load}")
        })?;
        w.block(format_args!("else"), |w| {
            writeln!(w, "unsigned e[1] = {{0u}};")?;
            gather_elements(w, (g.vec, g.vec, g.elem_bytes), &q.elem_in, &q.elem, "e")?;
            writeln!(w, "{into} = e[0];")
        })
    })
}

/// Each source row's word of the lane's block, realigned from the pair of
/// aligned words around it, each word checked against the matrix's span or
/// not. A checked tile checks only its first and last rows where the rows
/// between lie in the span ([`Squat::middle`]); an interior tile's lanes load
/// both words of each pair where [`squat_loads_pairs`] says so.
fn read(w: &mut CWriter, k: &Kernel, q: &Squat, rows: u32, checked: bool) -> fmt::Result {
    let rk = Var::Row.c_name();
    let rows_from = |w: &mut CWriter, (from, to): (u32, u32), checked: bool, pairs: bool| {
        writeln!(w, "#pragma unroll")?;
        w.block(
            format_args!("for (unsigned {rk} = {from}; {rk} < {to}; ++{rk})"),
            |w| row(w, k, q, checked, pairs),
        )
    };
    if !checked {
        let pairs = squat_loads_pairs(k.spec.geometry.elem_bytes);
        return rows_from(w, (0, rows), false, pairs);
    }
    let one = |w: &mut CWriter, r: u32| {
        w.scope(|w| {
            writeln!(w, "const unsigned {rk} = {r};")?;
            row(w, k, q, true, false)
        })
    };
    one(w, 0)?;
    if rows > 2 {
        w.block(format_args!("if ({})", q.middle.c()), |w| {
            rows_from(w, (1, rows - 1), false, false)
        })?;
        w.block(format_args!("else"), |w| {
            rows_from(w, (1, rows - 1), true, false)
        })?;
    }
    one(w, rows - 1)
}

/// Row `Var::Row`'s word: with `pairs`, each lane loads both words; else
/// unchecked, lane 31 loads its own before the shuffle (a predicated load, no
/// branch between the rows); checked, after it (`__shfl_down_sync`).
fn row(w: &mut CWriter, k: &Kernel, q: &Squat, checked: bool, pairs: bool) -> fmt::Result {
    let rk = Var::Row.c_name();
    decl(w, &q.row_phase)?;
    writeln!(w, "unsigned lo = 0u;")?;
    word(w, k, q, (0, checked), "lo")?;
    if checked {
        writeln!(w, "unsigned hi = __shfl_down_sync(0xffffffffu, lo, 1);")?;
        w.block(format_args!("if (tx == 31)"), |w| {
            word(w, k, q, (1, checked), "hi")
        })?;
    } else if pairs {
        writeln!(w, "unsigned hi = 0u;")?;
        word(w, k, q, (1, checked), "hi")?;
    } else {
        writeln!(w, "unsigned last = 0u;")?;
        w.block(format_args!("if (tx == 31)"), |w| {
            word(w, k, q, (1, checked), "last")
        })?;
        writeln!(w, "unsigned hi = __shfl_down_sync(0xffffffffu, lo, 1);")?;
        writeln!(w, "if (tx == 31) hi = last;")?;
    }
    writeln!(w, "p[{rk}] = __funnelshift_r(lo, hi, {});", q.row_shift.c())
}

/// The block's destination words, each funnel-shifted with the one before
/// onto the destination's word boundary, into the stage.
fn write_stage(w: &mut CWriter, q: &Squat, rows: u32) -> fmt::Result {
    for l in [&q.dst_phase, &q.tile_start, &q.phase] {
        decl(w, l)?;
    }
    let last = squat_word_reg(rows, rows - 1);
    writeln!(
        w,
        "unsigned prev = __shfl_up_sync(0xffffffffu, p[{last}], 1);"
    )?;
    w.block(format_args!("if ({})", q.stores.c()), |w| {
        writeln!(w, "#pragma unroll")?;
        w.block(format_args!("for (unsigned j = 0; j < {rows}; ++j)"), |w| {
            writeln!(w, "const unsigned cur = p[{rows} + 3 * j + 2];")?;
            writeln!(
                w,
                "tile[{}] = __funnelshift_rc(prev, cur, {});",
                q.put.c(),
                q.shift.c()
            )?;
            writeln!(w, "prev = cur;")
        })
    })
}

/// The stage stored as 16-byte vectors, element by element where a vector
/// leaves the tile's part of the run.
fn store(w: &mut CWriter, k: &Kernel, q: &Squat, rows: u32) -> fmt::Result {
    let g = &k.spec.geometry;
    let iters = squat_iters(g, rows);
    let per = 16 / g.elem_bytes;
    let elem = g.elem_unit().c_type();
    let kk = Var::K.c_name();
    writeln!(w, "#pragma unroll")?;
    w.block(
        format_args!("for (unsigned j = 0; j < {iters}; ++j)"),
        |w| {
            decl(w, &q.vector)?;
            w.block(format_args!("if ({})", q.staged.c()), |w| {
                for l in [&q.vector_at, &q.first_word, &q.turn] {
                    decl(w, l)?;
                }
                let tn = q.turn.c();
                writeln!(
                    w,
                    "uint4 y = *reinterpret_cast<const uint4*>(&tile[{}]);",
                    q.slot.c()
                )?;
                writeln!(w, "if ({tn} & 1u) y = make_uint4(y.y, y.x, y.w, y.z);")?;
                writeln!(w, "if ({tn} & 2u) y = make_uint4(y.z, y.w, y.x, y.y);")?;
                // An interior tile's run lies in the matrix's: only the tile's
                // ends are tested.
                let whole = format!(
                    "if ({} ? ({}) : ({}))",
                    q.interior.c(),
                    q.full_in.c(),
                    q.full.c()
                );
                w.block(format_args!("{whole}"), |w| {
                    writeln!(
                        w,
                        "*reinterpret_cast<uint4*>(&dst[{}]) = y;",
                        q.to.c()
                    )
                })?;
                w.block(format_args!("else"), |w| {
                    writeln!(w, "const unsigned e[4] = {{y.x, y.y, y.z, y.w}};")?;
                    writeln!(w, "#pragma unroll")?;
                    writeln!(
                        w,
                        "for (unsigned {kk} = 0; {kk} < {per}; ++{kk}) if ({}) dst[{}] = ({elem})(e[{kk} / {v}] >> ({b} * ({kk} % {v})));",
                        q.part.c(),
                        q.part_to.c(),
                        v = g.vec,
                        b = 8 * g.elem_bytes
                    )
                })
            })
        },
    )
}
