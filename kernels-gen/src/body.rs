//! One move's `j` loop rendered as CUDA C: every load of the loop is issued before
//! the first store, where the loop unrolls fully.
//!
//! The moves' expressions come from the kernel; this module only decides the
//! statement order. With one load-store pair per `j` behind a bounds check, NVRTC
//! 13.0 branched around each pair in the `xor` kernels (the swizzled shared index
//! is not an immediate offset), so a thread had one row of loads in flight at a
//! time instead of all of them (docs/perf.md, v7). Staging the loads in registers
//! first keeps them all in flight whatever the compiler does with the checks.
//!
//! ```
//! use bankfree_gen::{emit::emit, kernel::Kernel, spec::{Strategy, TransposeSpec}};
//! let k = Kernel::build(TransposeSpec::new(32, 4, Strategy::Xor).unwrap()).unwrap();
//! let src = emit(&k);
//! let (load, store) = (src.find("stage[j] = src[").unwrap(), src.find("] = stage[j];").unwrap());
//! assert!(load < store); // all 4 rows of the source tile are loaded, then stored
//! ```

use crate::emit::{access_type, VEC_TYPE};
use crate::form::Form;
use crate::kernel::{Kernel, Layout, Mem, Move};
use std::fmt::Write;

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
/// sm_80/90 with 8 copies of its 64-bit addresses live); skew kernels unroll up to 16
/// (the read of a 32 x 71 tile is 9 rows per thread, all of them in flight).
pub(crate) fn unroll_cap(k: &Kernel) -> u32 {
    if matches!(k.spec.form, Form::Tall | Form::Wide) {
        (32 * k.words / k.spec.elem_bytes).clamp(1, UNROLL_CAP)
    } else if k.spec.form == Form::Skew
        || (k.spec.vec > 1
            && k.spec.vec_bytes() < 16
            && matches!(k.layout, Layout::Pad(_) | Layout::Xor(_)))
    {
        2 * UNROLL_CAP
    } else {
        UNROLL_CAP
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
/// of accesses narrower than 16 bytes. Measured (H100, docs/perf.md v7): the skew
/// tile ran 0.3% slower staged (8191 x 8193 f32), the 12-byte tile, which unrolls 2
/// of its 8 rows, 0.6-1% slower staged 2 rows at a time; staging the reads of
/// shared memory too doubled some kernels' registers for loads of tens of cycles,
/// not hundreds. NVRTC 13.0 spilled 8 to 32 bytes staging 8 rows (tile 64, 8 thread
/// rows: f32 vec 2 and the naive 2-byte kernel, 64-bit builds on sm_90) and 16-byte
/// vectors (t32 r16 f32 vec 4 rotate, sm_75/80).
fn stages(k: &Kernel, mv: &Move, u: u32) -> bool {
    mv.from.mem == Mem::Src
        && k.spec.form == Form::Tile
        && k.layout != Layout::Direct
        && (2..=4).contains(&mv.iters)
        && u == mv.iters
        && k.unit.bytes() < 16
}

/// Writes `mv`'s loop: staged ([`stages`]) as all its loads into registers, then
/// all its stores; else one load-store pair per iteration.
pub(crate) fn body_of(out: &mut String, k: &Kernel, mv: &Move) {
    let u = unroll_by(mv.iters, k.words, unroll_cap(k));
    let staged = stages(k, mv, u);
    // Values per iteration: the block's rows (transpose) or the element's words.
    let n = k.words;
    let (from, to) = (mv.from.c(), mv.to.c());
    let ind = "            ";
    if !staged {
        let both = |out: &mut String, i: &str| {
            if mv.transpose {
                let _ = writeln!(out, "{i}{VEC_TYPE} r[{n}];");
                per_k(out, i, n, &format!("r[k] = {from};"));
                transpose_store(out, i, n, &to, |a| format!("r[{a}]"))
            } else {
                per_k(out, i, n, &format!("{to} = {from};"))
            }
        };
        loop_of(out, mv, ind, &pragma(u, mv.iters), &both);
        return;
    }
    let slot = |k_var: &str| {
        if n == 1 {
            "stage[j]".to_string()
        } else {
            format!("stage[j * {n} + {k_var}]")
        }
    };
    let load = |out: &mut String, i: &str| per_k(out, i, n, &format!("{} = {from};", slot("k")));
    let store = |out: &mut String, i: &str| {
        if mv.transpose {
            transpose_store(out, i, n, &to, |a| slot(a))
        } else {
            per_k(out, i, n, &format!("{to} = {};", slot("k")))
        }
    };
    // A block of its own: each move stages in its own registers.
    let i1 = format!("{ind}    ");
    let _ = writeln!(out, "{ind}{{");
    let _ = writeln!(out, "{i1}{} stage[{}];", access_type(k), mv.iters * n);
    loop_of(out, mv, &i1, "#pragma unroll", &load);
    loop_of(out, mv, &i1, "#pragma unroll", &store);
    let _ = writeln!(out, "{ind}}}");
}

/// One `j` loop of `mv` at indent `ind`: its lets, its guard, and `inner` inside
/// the guard.
fn loop_of(
    out: &mut String,
    mv: &Move,
    ind: &str,
    pragma: &str,
    inner: &dyn Fn(&mut String, &str),
) {
    let i1 = format!("{ind}    ");
    let _ = writeln!(out, "{ind}{pragma}");
    let _ = writeln!(out, "{ind}for (unsigned j = 0; j < {}; ++j) {{", mv.iters);
    for l in &mv.lets {
        crate::emit::decl(out, &i1, l);
    }
    let _ = writeln!(out, "{i1}if ({}) {{", mv.guard.c());
    inner(out, &format!("{i1}    "));
    let _ = writeln!(out, "{i1}}}");
    let _ = writeln!(out, "{ind}}}");
}

/// `stmt` once, or for each `k < n` in an unrolled loop.
fn per_k(out: &mut String, i: &str, n: u32, stmt: &str) {
    if n == 1 {
        let _ = writeln!(out, "{i}{stmt}");
    } else {
        let _ = writeln!(out, "{i}#pragma unroll");
        let _ = writeln!(out, "{i}for (unsigned k = 0; k < {n}; ++k) {stmt}");
    }
}

/// Transposes the `n x n` block whose row `a` is `row(a)` in registers and stores
/// its columns.
fn transpose_store(out: &mut String, i: &str, n: u32, to: &str, row: impl Fn(&str) -> String) {
    let _ = writeln!(out, "{i}{VEC_TYPE} o[{n}];");
    let _ = writeln!(out, "{i}#pragma unroll");
    let _ = writeln!(out, "{i}for (unsigned a = 0; a < {n}; ++a)");
    let _ = writeln!(out, "{i}    #pragma unroll");
    let _ = writeln!(
        out,
        "{i}    for (unsigned c = 0; c < {n}; ++c) o[c].e[a] = {}.e[c];",
        row("a")
    );
    let _ = writeln!(out, "{i}#pragma unroll");
    let _ = writeln!(out, "{i}for (unsigned k = 0; k < {n}; ++k) {to} = o[k];");
}

#[cfg(test)]
mod tests {
    use crate::choice::fast_kernel;
    use crate::emit::emit;
    use crate::form::Form;
    use crate::kernel::Kernel;
    use crate::spec::{Strategy, TransposeSpec};

    fn staged(spec: TransposeSpec) -> bool {
        emit(&Kernel::build(spec).expect("buildable")).contains(" stage[")
    }

    fn spec(tile: u32, elem_bytes: u32, strategy: Strategy) -> TransposeSpec {
        TransposeSpec::new(tile, elem_bytes, strategy).expect("valid spec")
    }

    #[test]
    fn the_measured_defaults_but_word_arrays_stage_their_loads() {
        for (e, want) in [
            (1, true),
            (2, true),
            (4, true),
            (8, true),
            (12, false),
            (16, false),
        ] {
            for s in [Strategy::Pad(None), Strategy::Xor] {
                let k = fast_kernel(&spec(32, e, s)).unwrap_or_else(|| {
                    Kernel::build(spec(32, e, s)).expect("the plain kernel builds")
                });
                assert_eq!(emit(&k).contains(" stage["), want, "{e}-byte {s:?}");
            }
        }
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

    #[test]
    fn a_staged_move_loads_everything_before_its_first_store() {
        let src = emit(&fast_kernel(&spec(32, 1, Strategy::Xor)).expect("1-byte default"));
        let last_load = src.rfind("] = src[").expect("a load");
        let first_store = src.find("] = stage[").expect("a shared store");
        assert!(last_load < first_store, "{src}");
    }
}
