//! A `realign` kernel's two moves as CUDA C ([`crate::kernel::realign`]): the
//! read of each lane's block of rows (every row's aligned 16-byte vectors loaded
//! first, then realigned by selects and funnel shifts; elements at the matrix's
//! first and last bytes), its register transpose ([`network`]) and the stores of
//! its columns' words to shared memory; then each warp's funnel-shifted,
//! 16-byte stores of its destination rows, 8 lanes to a row.
//! Every index is the kernel's expression; this module writes the data path.

use crate::ir::expr::{Expr, Var};
use crate::ir::guard::Guard;
use crate::kernel::moves::Move;
use crate::kernel::realign::{network, network_regs, Realign, STORE_WORDS};
use crate::kernel::Kernel;
use crate::render::body::INDEX_TYPE;
use crate::render::writer::CWriter;
use std::fmt::{self, Write};

/// A tile of a `realign` kernel: its read, then its write, by a body without
/// bounds where the whole tile lies inside the matrix ([`Realign::interior`]),
/// element by element where it is a tail tile ([`Realign::tail`]), else by the
/// guarded body.
pub(crate) fn realign_tile(w: &mut CWriter, k: &Kernel, r: &Realign) -> fmt::Result {
    let [rd, wr] = &k.moves[..] else {
        return Err(fmt::Error);
    };
    let tile = |w: &mut CWriter, inside: bool| {
        read(w, k, r, rd, inside)?;
        writeln!(w, "__syncthreads();")?;
        write(w, k, r, wr, inside)
    };
    // The tail test comes first: after the interior one, the column-order
    // kernel's interior tiles ran slower (CuPy over the emitted kernels, H200,
    // 1-byte 4097 x 4095 at 0.91 of memcpy against 0.97, 19731 x 1336 0.97
    // against 1.08; first, 0.98 and 1.08).
    w.block(format_args!("if ({})", r.tail.c()), |w| {
        tail(w, &r.tail_move)
    })?;
    w.block(format_args!("else if ({})", r.interior.c()), |w| {
        tile(w, true)
    })?;
    w.block(format_args!("else"), |w| tile(w, false))
}

/// A tail tile: each lane's position of the block's destination rows, source to
/// destination.
fn tail(w: &mut CWriter, mv: &Move) -> fmt::Result {
    writeln!(w, "#pragma unroll")?;
    w.block(
        format_args!("for (unsigned j = 0; j < {}; ++j)", mv.iters),
        |w| {
            for l in &mv.lets {
                decl(w, l)?;
            }
            writeln!(
                w,
                "if ({}) dst[{}] = src[{}];",
                mv.guard.c(),
                mv.to.index.c(),
                mv.from.index.c()
            )
        },
    )
}

fn decl(w: &mut CWriter, e: &Expr) -> fmt::Result {
    w.decl(INDEX_TYPE, e)
}

fn read(w: &mut CWriter, k: &Kernel, r: &Realign, mv: &Move, inside: bool) -> fmt::Result {
    let g = &k.spec.geometry;
    let (vec, cols) = (g.vec, g.realign_cols());
    w.scope(|w| {
        for l in &r.lane {
            decl(w, l)?;
        }
        writeln!(w, "unsigned rw[{vec}][4];")?;
        writeln!(w, "uint4 va[{vec}], vb[{vec}];")?;
        if inside {
            interior_rows(w, r, g.elem_bytes, vec)?;
        } else {
            edge_rows(w, r, g.elem_bytes, vec, cols)?;
        }
        writeln!(w, "unsigned cur[{cols}];")?;
        transpose(w, vec)?;
        writeln!(w, "#pragma unroll")?;
        writeln!(
            w,
            "for (unsigned k = 0; k < {cols}; ++k) {} = cur[k];",
            mv.to.c()
        )
    })
}

/// The source row's `rp`, `x` and `ph`.
fn row_lets(w: &mut CWriter, r: &Realign) -> fmt::Result {
    decl(w, &r.row)?;
    decl(w, &r.at)?;
    decl(w, &r.phase)
}

/// The row's two aligned 16-byte vectors.
fn loads(w: &mut CWriter, r: &Realign) -> fmt::Result {
    let rows = Var::Row.c_name();
    for (name, v) in ["va", "vb"].iter().zip(&r.vecs) {
        writeln!(
            w,
            "{name}[{rows}] = *reinterpret_cast<const uint4*>(&src[{}]);",
            v.c()
        )?;
    }
    Ok(())
}

/// An interior tile's rows: every row's vectors loaded before any is used.
fn interior_rows(w: &mut CWriter, r: &Realign, eb: u32, vec: u32) -> fmt::Result {
    let rows = Var::Row.c_name();
    let each_row = format!("for (unsigned {rows} = 0; {rows} < {vec}; ++{rows})");
    writeln!(w, "#pragma unroll")?;
    w.block(format_args!("{each_row}"), |w| {
        row_lets(w, r)?;
        loads(w, r)
    })?;
    writeln!(w, "#pragma unroll")?;
    w.block(format_args!("{each_row}"), |w| {
        row_lets(w, r)?;
        vectors(w, r, eb, None)
    })
}

/// An edge tile's rows, every row's loads issued before any is used, like an
/// interior tile's: the two vectors where they lie in the matrix; elsewhere the
/// row's elements loaded one by one into the first vector's words (none for a
/// row outside the matrix), which the realignment then takes unshifted. The
/// elements are gathered inside the load loop and the vectors realigned after
/// it, so no row's gathered words wait on the rows after it, and the kernel
/// keeps its interior body's registers.
fn edge_rows(w: &mut CWriter, r: &Realign, eb: u32, vec: u32, cols: u32) -> fmt::Result {
    let rows = Var::Row.c_name();
    let each_row = format!("for (unsigned {rows} = 0; {rows} < {vec}; ++{rows})");
    let fast = format!("{} && {}", r.inside.c(), r.fast.c());
    writeln!(w, "#pragma unroll")?;
    w.block(format_args!("{each_row}"), |w| {
        row_lets(w, r)?;
        w.block(format_args!("if ({fast})"), |w| loads(w, r))?;
        w.block(format_args!("else"), |w| {
            writeln!(w, "unsigned g[4] = {{0u, 0u, 0u, 0u}};")?;
            w.block(format_args!("if ({})", r.inside.c()), |w| {
                gather_elements(w, (cols, vec, eb), &r.col, &r.elem, "g")
            })?;
            writeln!(w, "va[{rows}] = make_uint4(g[0], g[1], g[2], g[3]);")?;
            writeln!(w, "vb[{rows}] = make_uint4(0u, 0u, 0u, 0u);")
        })
    })?;
    writeln!(w, "#pragma unroll")?;
    w.block(format_args!("{each_row}"), |w| {
        row_lets(w, r)?;
        vectors(w, r, eb, Some(&fast))
    })
}

/// Element `k` of `n` (`vec` to a word) loaded alone where `guard` holds and
/// or-ed into word `k / vec` of the array `words` (a word kernel's path for
/// elements outside the aligned vectors).
pub(crate) fn gather_elements(
    w: &mut CWriter,
    (n, vec, eb): (u32, u32, u32),
    guard: &Guard,
    index: &Expr,
    words: &str,
) -> fmt::Result {
    writeln!(w, "#pragma unroll")?;
    w.block(format_args!("for (unsigned k = 0; k < {n}; ++k)"), |w| {
        writeln!(
            w,
            "if ({}) {words}[k / {vec}] |= (unsigned)src[{}] << ({} * (k % {vec}));",
            guard.c(),
            index.c(),
            8 * eb
        )
    })
}

/// The `words` 32-bit words of `value` (a word, or an array of them) stored
/// element by element (`vec` to a word, the loop variable named `name`) where
/// `guard` holds: a word kernel's store at the matrix's ends.
pub(crate) fn store_elements(
    w: &mut CWriter,
    k: &Kernel,
    (value, name, words): (&str, &str, u32),
    guard: &Guard,
    index: &Expr,
) -> fmt::Result {
    let g = &k.spec.geometry;
    let (vec, elem) = (g.vec, g.elem_unit().c_type());
    let (word, at) = if words == 1 {
        (value.to_string(), name.to_string())
    } else {
        (
            format!("{value}[{name} / {vec}]"),
            format!("({name} % {vec})"),
        )
    };
    writeln!(w, "#pragma unroll")?;
    writeln!(
        w,
        "for (unsigned {name} = 0; {name} < {}; ++{name}) if ({}) dst[{}] = ({elem})({word} >> ({} * {at}));",
        words * vec,
        guard.c(),
        index.c(),
        8 * g.elem_bytes
    )
}

/// `p[out] = __byte_perm(p[a], p[b], sel)` for each step of the transpose
/// network of `vec` rows ([`network`]).
pub(crate) fn network_steps(w: &mut CWriter, vec: u32) -> fmt::Result {
    for s in network(vec) {
        writeln!(
            w,
            "p[{}] = __byte_perm(p[{}], p[{}], 0x{:04x});",
            s.out, s.a, s.b, s.sel
        )?;
    }
    Ok(())
}

/// The row's 16 bytes from the two aligned vectors around them: select by the
/// phase's 8- and 4-byte bits, then funnel-shift by its last 2 bits; where
/// `loaded` is given and false, the row's words are the first vector's as they
/// are (its elements gathered in order).
fn vectors(w: &mut CWriter, r: &Realign, eb: u32, loaded: Option<&str>) -> fmt::Result {
    let rows = Var::Row.c_name();
    writeln!(
        w,
        "const unsigned wv[8] = {{va[{rows}].x, va[{rows}].y, va[{rows}].z, va[{rows}].w, vb[{rows}].x, vb[{rows}].y, vb[{rows}].z, vb[{rows}].w}};"
    )?;
    let sb = format!("{} * {eb}u", r.phase.c());
    match loaded {
        Some(l) => writeln!(w, "const unsigned sb = ({l}) ? {sb} : 0u;")?,
        None => writeln!(w, "const unsigned sb = {sb};")?,
    }
    writeln!(w, "unsigned z[6], y[5];")?;
    writeln!(w, "#pragma unroll")?;
    writeln!(
        w,
        "for (unsigned i = 0; i < 6; ++i) z[i] = (sb & 8u) ? wv[i + 2] : wv[i];"
    )?;
    writeln!(w, "#pragma unroll")?;
    writeln!(
        w,
        "for (unsigned i = 0; i < 5; ++i) y[i] = (sb & 4u) ? z[i + 1] : z[i];"
    )?;
    writeln!(w, "#pragma unroll")?;
    writeln!(
        w,
        "for (unsigned i = 0; i < 4; ++i) rw[{rows}][i] = __funnelshift_r(y[i], y[i + 1], 8u * (sb & 3u));"
    )
}

/// Each word position's block of rows transposed into its columns' words.
fn transpose(w: &mut CWriter, vec: u32) -> fmt::Result {
    let regs = network_regs(vec);
    writeln!(w, "#pragma unroll")?;
    w.block(format_args!("for (unsigned i = 0; i < 4; ++i)"), |w| {
        writeln!(w, "unsigned p[{regs}];")?;
        for row in 0..vec {
            writeln!(w, "p[{row}] = rw[{row}][i];")?;
        }
        network_steps(w, vec)?;
        for m in 0..vec {
            writeln!(
                w,
                "cur[i * {vec} + {m}] = p[{}];",
                regs - vec as usize + m as usize
            )?;
        }
        Ok(())
    })
}

/// The `uint4` fields a lane's [`STORE_WORDS`] words go to, in order.
const FIELDS: [&str; STORE_WORDS as usize] = ["x", "y", "z", "w"];

fn write(w: &mut CWriter, k: &Kernel, r: &Realign, mv: &Move, inside: bool) -> fmt::Result {
    let n = STORE_WORDS;
    let full = mv.pack.as_ref().map_or("0".into(), |p| p.full.c());
    let store = |w: &mut CWriter| {
        writeln!(
            w,
            "*reinterpret_cast<uint4*>(&dst[{}]) = v;",
            mv.to.index.c()
        )
    };
    let elements = |w: &mut CWriter| {
        let words: Vec<String> = FIELDS.iter().map(|f| format!("v.{f}")).collect();
        writeln!(w, "const unsigned vw[{n}] = {{{}}};", words.join(", "))?;
        store_elements(w, k, ("vw", "k", n as u32), &r.part, &r.part_to)
    };
    let body = |w: &mut CWriter, lets: &[Expr]| {
        for l in lets {
            decl(w, l)?;
        }
        writeln!(w, "unsigned cw[{}];", n + 1)?;
        for (i, at) in std::iter::once(&mv.from.index).chain(&r.next).enumerate() {
            writeln!(w, "cw[{i}] = tile[{}];", at.c())?;
        }
        writeln!(w, "uint4 v;")?;
        for (i, f) in FIELDS.iter().enumerate() {
            writeln!(
                w,
                "v.{f} = __funnelshift_rc(cw[{i}], cw[{}], {});",
                i + 1,
                r.shift.c()
            )?;
        }
        if inside {
            return store(w);
        }
        w.block(format_args!("if ({full})"), store)?;
        w.block(format_args!("else"), elements)
    };
    writeln!(w, "#pragma unroll")?;
    w.block(
        format_args!("for (unsigned j = 0; j < {}; ++j)", mv.iters),
        |w| {
            let (lets, rest) = mv.lets.split_at(r.guard_lets.min(mv.lets.len()));
            for l in lets {
                decl(w, l)?;
            }
            let guard = if inside { &r.steps } else { &mv.guard };
            if guard.0.is_empty() {
                return body(w, rest);
            }
            w.block(format_args!("if ({})", guard.c()), |w| body(w, rest))
        },
    )
}
