//! One move's `j` loop rendered as CUDA C: every load of the loop is issued before
//! the first store, where the loop unrolls fully.
//!
//! The moves' expressions come from the kernel; this module only decides the
//! statement order. With one load-store pair per `j` behind a bounds check, NVRTC
//! 13.0 branched around each pair in the `xor` kernels (the swizzled shared index
//! is not an immediate offset), so a thread had one row of loads in flight at a
//! time instead of all of them (docs/design.md). Staging the loads in registers
//! first keeps them all in flight whatever the compiler does with the checks.
//!
//! ```
//! use bankfree_gen::{emit, Kernel, Strategy, TransposeSpec};
//! let src = emit(&Kernel::build(TransposeSpec::new(32, 4, Strategy::Xor)?)?);
//! let load = src.find("stage[j] = src[").expect("staged loads");
//! let store = src.find("] = stage[j];").expect("staged stores");
//! assert!(load < store); // all 4 rows of the source tile are loaded, then stored
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

use crate::ir::expr::Var;
use crate::kernel::geometry::{Form, PLANAR_MAX_COLS};
use crate::kernel::layout::Layout;
use crate::kernel::moves::{Mem, Move, Pack};
use crate::kernel::Kernel;
use crate::render::writer::CWriter;
use std::fmt::{self, Write};

/// Most copies of a move's body one unrolled `j` loop holds. NVRTC 13.0 spilled
/// 4 to 28 bytes in 33 of the 1668 grid kernels (block_rows 1 and 2, wide word
/// arrays) with full unrolling, 5 at a cap of 16 and none at 8 (sm_75/80/90).
pub(crate) const UNROLL_CAP: u32 = 8;

/// Copies of the body allowed for `k`: vec kernels of 4- and 8-byte vectors with the
/// `pad` and `xor` layouts unroll up to 16 (their rows in flight are what makes them
/// fast; 16-byte vectors at 16 spilled 8 bytes in the 32-bit build of t32 r2/r4 e4
/// v4 xor on sm_90); the rest, `rotate` included (t64 r8 2-byte vec 2 spilled 8
/// bytes on sm_90 at 16), [`UNROLL_CAP`]; tall and wide kernels keep 32 bytes per
/// thread in flight per unrolled loop (their 8-byte kernel spilled 8 to 40 bytes on
/// sm_80/90 with 8 copies of its 64-bit addresses live; packed ones: [`move_cap`]);
/// skew kernels unroll up to 16
/// (the read of a 32 x 71 tile is 9 rows per thread, all of them in flight).
pub(crate) fn unroll_cap(k: &Kernel) -> u32 {
    if k.spec.geometry.gathers() || k.spec.geometry.wordvecs() {
        // Every gathered load of the chunk in flight: 4 steps of one vector;
        // every vector of a wordvec kernel's line.
        k.moves.iter().map(|m| m.iters).max().unwrap_or(1) * k.words
    } else if matches!(k.spec.geometry.form, Form::Tall | Form::Wide) {
        (32 * k.words / k.spec.geometry.elem_bytes).clamp(1, UNROLL_CAP)
    } else if k.spec.geometry.form == Form::Skew
        || (k.spec.geometry.vec > 1
            && k.spec.geometry.vec_bytes() < 16
            && matches!(k.layout, Layout::Pad(_) | Layout::Xor(_)))
    {
        2 * UNROLL_CAP
    } else {
        UNROLL_CAP
    }
}

/// [`unroll_cap`] for one move: a packed tall kernel stages 4 words of its flat
/// run at a time and unrolls its gathers from the chunk by 2 (NVRTC 13.0 used 74
/// to 128 registers with 8 of each, and spilled up to 16 bytes; with 4 and 2 it
/// uses 34 to 40).
fn move_cap(k: &Kernel, mv: &Move) -> u32 {
    match (
        k.spec.geometry.packs() && !k.spec.geometry.gathers(),
        mv.from.mem,
    ) {
        (true, Mem::Shared) => 2 * k.words,
        (true, _) => 4 * k.words,
        (false, _) => unroll_cap(k),
    }
}

/// How far the `j` loop unrolls: fully while `iters * words` copies of the body
/// stay within `cap`, else by the largest power of two that does.
fn unroll_by(iters: u32, words: u32, cap: u32) -> u32 {
    let mut u = iters;
    while u > 1 && u * words > cap {
        u /= 2;
    }
    u
}

/// The unroll factor a [`pragma`] names.
fn pragma_factor(pragma: &str, iters: u32) -> u32 {
    pragma
        .strip_prefix("#pragma unroll ")
        .and_then(|n| n.parse().ok())
        .unwrap_or(iters)
}

/// The `j` loop's pragma for an unroll factor `u` of `iters`.
fn pragma(u: u32, iters: u32) -> String {
    if u == iters {
        "#pragma unroll".into()
    } else {
        format!("#pragma unroll {u}")
    }
}

/// Whether `mv`, unrolled by `u`, is staged: a move of a `tile`-form kernel with a
/// shared tile that reads global memory, unrolls fully and has 2 to 4 iterations
/// of accesses narrower than 16 bytes. Measured on the H100: the skew
/// tile ran 0.3% slower staged (8191 x 8193 f32), the 12-byte tile, which unrolls 2
/// of its 8 rows, 0.6-1% slower staged 2 rows at a time; staging the reads of
/// shared memory too doubled some kernels' registers for loads of tens of cycles,
/// not hundreds. NVRTC 13.0 spilled 8 to 32 bytes staging 8 rows (tile 64, 8 thread
/// rows: f32 vec 2 and the naive 2-byte kernel, 64-bit builds on sm_90) and 16-byte
/// vectors (t32 r16 f32 vec 4 rotate, sm_75/80).
///
/// A `copy` kernel's move of vectors narrower than 16 bytes is staged too: with
/// one load-store pair per iteration NVRTC 13.0 kept one load in flight at a
/// time (H100, CuPy, the copy of `[59,4,71089]` by `[1,0,2]` f16 one element
/// per step: 0.55 of memcpy as emitted, 0.88 with its loads issued first, 8 a
/// thread; u8: 0.31 and 0.49).
fn stages(k: &Kernel, mv: &Move, u: u32) -> bool {
    let g = &k.spec.geometry;
    let tile = g.form == Form::Tile
        && k.layout != Layout::Direct
        && (2..=4).contains(&mv.iters)
        && k.unit.bytes() < 16;
    mv.from.mem == Mem::Src && u == mv.iters && (tile || g.copy_stages())
}

/// The C type of a `vec x vec` kernel's accesses: one row of a block.
pub(crate) const VEC_TYPE: &str = "bf_vec";

/// The C type of indices, loop counters and scalar parameters: `unsigned`, or
/// `unsigned long long` in the 64-bit build ([`crate::check::index32`]).
pub(crate) const INDEX_TYPE: &str = "bf_index";

/// The C type of one access of `k`.
pub(crate) fn access_type(k: &Kernel) -> &'static str {
    // A realign kernel's pointers are of elements (its shared tile of words).
    if k.spec.geometry.realigns() || k.spec.geometry.stages_words() {
        return k.spec.geometry.elem_unit().c_type();
    }
    // A packing kernel moves units and whole vectors through a cast, and so
    // does a wordvec kernel.
    if k.spec.geometry.vec > 1 && !k.spec.geometry.packs() && !k.spec.geometry.wordvecs() {
        VEC_TYPE
    } else {
        k.unit.c_type()
    }
}

/// Writes `mv`'s loop: staged ([`stages`]) as all its loads into registers, then
/// all its stores; else one load-store pair per iteration.
pub(crate) fn body_of(w: &mut CWriter, k: &Kernel, mv: &Move) -> fmt::Result {
    let u = unroll_by(mv.iters, k.words, move_cap(k, mv));
    // Values per iteration: the block's rows (transpose) or the element's words.
    let n = k.words;
    let (from, to) = (mv.from.c(), mv.to.c());
    if let Some(pack) = &mv.pack {
        return loop_packed(w, mv, &pragma(u, mv.iters), n, pack);
    }
    if k.spec.geometry.form == Form::Planar {
        return planar_body(w, k, mv, &pragma(u, mv.iters));
    }
    if !stages(k, mv, u) {
        let both = |w: &mut CWriter| {
            if mv.transpose {
                writeln!(w, "{VEC_TYPE} r[{n}];")?;
                per_k(w, n, &format!("r[k] = {from};"))?;
                transpose_store(w, n, &to, |a| format!("r[{a}]"))
            } else {
                per_k(w, n, &format!("{to} = {from};"))
            }
        };
        return loop_of(w, mv, &pragma(u, mv.iters), both);
    }
    let slot = |k_var: &str| {
        if n == 1 {
            "stage[j]".to_string()
        } else {
            format!("stage[j * {n} + {k_var}]")
        }
    };
    // A block of its own: each move stages in its own registers.
    w.scope(|w| {
        writeln!(w, "{} stage[{}];", access_type(k), mv.iters * n)?;
        loop_of(w, mv, "#pragma unroll", |w| {
            per_k(w, n, &format!("{} = {from};", slot("k")))
        })?;
        loop_of(w, mv, "#pragma unroll", |w| {
            if mv.transpose {
                transpose_store(w, n, &to, |a| slot(a))
            } else {
                per_k(w, n, &format!("{to} = {};", slot("k")))
            }
        })
    })
}

/// One `j` loop of `mv`: its pragma, its lets, its guard (where it has one), and
/// `inner` inside the guard.
fn loop_of(
    w: &mut CWriter,
    mv: &Move,
    pragma: &str,
    inner: impl FnOnce(&mut CWriter) -> fmt::Result,
) -> fmt::Result {
    j_loop(w, mv, pragma, |w| {
        if mv.guard.0.is_empty() {
            return inner(w);
        }
        w.block(format_args!("if ({})", mv.guard.c()), inner)
    })
}

/// `mv`'s `j` loop with its pragma and lets, and `body` after the lets.
fn j_loop(
    w: &mut CWriter,
    mv: &Move,
    pragma: &str,
    body: impl FnOnce(&mut CWriter) -> fmt::Result,
) -> fmt::Result {
    writeln!(w, "{pragma}")?;
    w.block(
        format_args!("for (unsigned j = 0; j < {}; ++j)", mv.iters),
        |w| {
            for l in &mv.lets {
                w.decl(INDEX_TYPE, l)?;
            }
            body(w)
        },
    )
}

/// A packed move's `j` loop: where `pack.full` holds, its `n` units gathered into
/// one vector and stored at once (`k = 0` names the vector's first unit), or
/// each to its own place (not `pack.whole`);
/// elsewhere unit by unit where its guard holds. A move that loads whole vectors
/// (`pack.load`) is staged: every iteration's vector (or units) is loaded into
/// registers first, then all are stored, so that a thread has all its loads in
/// flight (with the load and the store of one iteration behind one branch, NVRTC
/// issued them one at a time).
fn loop_packed(w: &mut CWriter, mv: &Move, pragma: &str, n: u32, pack: &Pack) -> fmt::Result {
    let (from, to) = (mv.from.c(), mv.to.c());
    let full = pack.full.c();
    let guard = mv.guard.c();
    // Where `full` holds, `whole`; else `unit` for each unit its guard admits.
    let both_ways = |w: &mut CWriter, whole: &dyn Fn(&mut CWriter) -> fmt::Result, unit: &str| {
        w.block(format_args!("if ({full})"), whole)?;
        w.block(format_args!("else"), |w| {
            writeln!(w, "#pragma unroll")?;
            w.block(format_args!("for (unsigned k = 0; k < {n}; ++k)"), |w| {
                writeln!(w, "if ({guard}) {unit}")
            })
        })
    };
    if pack.load {
        // In chunks of the unroll factor `u`: its loads, then its stores.
        let u = pragma_factor(pragma, mv.iters);
        let tail = !mv.iters.is_multiple_of(u);
        let chunk = |w: &mut CWriter, stmt: &dyn Fn(&mut CWriter) -> fmt::Result| {
            writeln!(w, "#pragma unroll")?;
            w.block(format_args!("for (unsigned jj = 0; jj < {u}; ++jj)"), |w| {
                writeln!(w, "const unsigned j = j0 + jj;")?;
                if tail {
                    writeln!(w, "if (j >= {}) break;", mv.iters)?;
                }
                for l in &mv.lets {
                    w.decl(INDEX_TYPE, l)?;
                }
                stmt(w)
            })
        };
        writeln!(w, "#pragma unroll 1")?;
        return w.block(
            format_args!("for (unsigned j0 = 0; j0 < {}; j0 += {u})", mv.iters),
            |w| {
                writeln!(w, "{VEC_TYPE} stage[{u}];")?;
                chunk(w, &|w: &mut CWriter| {
                    both_ways(
                        w,
                        &|w: &mut CWriter| {
                            writeln!(w, "const unsigned k = 0;")?;
                            writeln!(
                                w,
                                "stage[jj] = *reinterpret_cast<const {VEC_TYPE}*>(&{from});"
                            )
                        },
                        &format!("stage[jj].e[k] = {from};"),
                    )
                })?;
                chunk(w, &|w: &mut CWriter| {
                    both_ways(
                        w,
                        &|w: &mut CWriter| {
                            if !pack.whole {
                                return per_unit(w, n, &format!("{to} = stage[jj].e[k];"));
                            }
                            writeln!(w, "const unsigned k = 0;")?;
                            writeln!(w, "*reinterpret_cast<{VEC_TYPE}*>(&{to}) = stage[jj];")
                        },
                        &format!("{to} = stage[jj].e[k];"),
                    )
                })
            },
        );
    }
    j_loop(w, mv, pragma, |w| {
        both_ways(
            w,
            &|w: &mut CWriter| {
                writeln!(w, "{VEC_TYPE} v;")?;
                per_unit(w, n, &format!("v.e[k] = {from};"))?;
                if !pack.whole {
                    return per_unit(w, n, &format!("{to} = v.e[k];"));
                }
                writeln!(w, "const unsigned k = 0;")?;
                writeln!(w, "*reinterpret_cast<{VEC_TYPE}*>(&{to}) = v;")
            },
            &format!("{to} = {from};"),
        )
    })
}

/// A planar move: its `cols` units per step are the source's columns, so each
/// width up to [`PLANAR_MAX_COLS`] gets its own loop (a uniform branch per tile),
/// whose `cols` loads, register transpose and `cols` stores unroll fully.
fn planar_body(w: &mut CWriter, k: &Kernel, mv: &Move, pragma: &str) -> fmt::Result {
    let (from, to) = (mv.from.c(), mv.to.c());
    let per = k.spec.geometry.vec;
    w.block(format_args!("switch ({})", Var::Cols.c_name()), |w| {
        for n in 1..=PLANAR_MAX_COLS as u32 {
            writeln!(w, "case {n}:")?;
            w.scope(|w| {
                loop_of(w, mv, pragma, |w| {
                    writeln!(w, "{VEC_TYPE} r[{n}];")?;
                    writeln!(w, "#pragma unroll")?;
                    writeln!(w, "for (unsigned k = 0; k < {n}; ++k) r[k] = {from};")?;
                    block_store(w, n, per, &to)
                })?;
                writeln!(w, "break;")
            })?;
        }
        writeln!(w, "default: break; // the launcher runs no wider source")
    })
}

/// Transposes the block of `n` vectors `r[0..n]`, read as `per` rows of `n`
/// elements, and stores its `n` columns as vectors (the emitted form of
/// [`crate::check::sim::transpose_block`]).
fn block_store(w: &mut CWriter, n: u32, per: u32, to: &str) -> fmt::Result {
    writeln!(w, "{VEC_TYPE} o[{n}];")?;
    writeln!(w, "#pragma unroll")?;
    writeln!(w, "for (unsigned i = 0; i < {per}; ++i)")?;
    writeln!(w, "    #pragma unroll")?;
    writeln!(
        w,
        "    for (unsigned c = 0; c < {n}; ++c) o[c].e[i] = r[(i * {n} + c) / {per}].e[(i * {n} + c) % {per}];"
    )?;
    writeln!(w, "#pragma unroll")?;
    writeln!(w, "for (unsigned k = 0; k < {n}; ++k) {to} = o[k];")
}

/// `stmt` once, or for each `k < n` in an unrolled loop.
fn per_k(w: &mut CWriter, n: u32, stmt: &str) -> fmt::Result {
    if n == 1 {
        writeln!(w, "{stmt}")
    } else {
        writeln!(w, "#pragma unroll")?;
        writeln!(w, "for (unsigned k = 0; k < {n}; ++k) {stmt}")
    }
}

/// [`per_k`] for a packed move's statement of unit `k` of its vector (`.e[k]`),
/// which names `k` even where the vector holds one unit (a wordvec kernel of
/// 16-byte units).
fn per_unit(w: &mut CWriter, n: u32, stmt: &str) -> fmt::Result {
    if n == 1 {
        writeln!(w, "{{ const unsigned k = 0; {stmt} }}")
    } else {
        per_k(w, n, stmt)
    }
}

/// Transposes the `n x n` block whose row `a` is `row(a)` in registers and stores
/// its columns.
fn transpose_store(w: &mut CWriter, n: u32, to: &str, row: impl Fn(&str) -> String) -> fmt::Result {
    writeln!(w, "{VEC_TYPE} o[{n}];")?;
    writeln!(w, "#pragma unroll")?;
    writeln!(w, "for (unsigned a = 0; a < {n}; ++a)")?;
    writeln!(w, "    #pragma unroll")?;
    writeln!(
        w,
        "    for (unsigned c = 0; c < {n}; ++c) o[c].e[a] = {}.e[c];",
        row("a")
    )?;
    writeln!(w, "#pragma unroll")?;
    writeln!(w, "for (unsigned k = 0; k < {n}; ++k) {to} = o[k];")
}
