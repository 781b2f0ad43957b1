//! The simulator and the bank analysis of a `squat` kernel
//! ([`crate::kernel::squat`]), both from the kernel's own expressions.
//!
//! The simulator runs each warp's lanes together, as the GPU does: every
//! source row's word pair (the second the next lane's first,
//! `__shfl_down_sync`, lane 31 loading its own; or the lane's own load in the
//! interior tiles of a kernel that loads both, [`squat_loads_pairs`]),
//! realigned by
//! `__funnelshift_r`, permuted by the same [`squat_perms`] the emitter prints,
//! each destination word realigned with the word before it (the lane before's
//! last, `__shfl_up_sync`) and written to the stage; then every thread's stage
//! vectors stored. Besides what every simulated kernel is checked for, it fails
//! on a word load or vector store that is not aligned for the pointers, on
//! storing a stage word no lane wrote, and on a tile run without checks where
//! one would fail.
//!
//! The analysis evaluates every stage write of the lanes and every vector read
//! of the stage, for every width the kernel runs and every position of the
//! destination pointer within a 16-byte vector.

use crate::check::memory::{run_tiles, same_width, State};
use crate::check::realign::{byte_perm, funnelshift_r, funnelshift_rc};
use crate::check::thin::{lanes, width_envs, Exec};
use crate::check::walk::{Grid, SimError, Stats};
use crate::ir::expr::{Env, Var};
use crate::ir::shape::Shape;
use crate::ir::tape::{GuardTape, Tape};
use crate::kernel::squat::{
    squat_iters, squat_loads_pairs, squat_perms, squat_widths, squat_word_reg, Squat,
};
use crate::kernel::Kernel;

/// Runs a `squat` kernel over a shape it fits, with `env` holding the call's
/// parameters and pointer phases.
pub(crate) fn run(
    kernel: &Kernel,
    q: &Squat,
    shape: &Shape,
    (src, dst): (&[u8], &mut [u8]),
    grid: Grid,
    env: &mut Env,
    ntiles: u64,
) -> Result<Stats, SimError> {
    same_width(kernel, shape.rows)?;
    let at = (grid, ntiles);
    run_tiles(kernel, shape, (src, dst), at, env, &q.interior, |s, env| {
        lanes_to_stage(kernel, q, s, env)?;
        stage_out(kernel, q, s, env)
    })
}

/// One word of a lane's pair (`Var::J` set): whole where it lies in the span,
/// else element by element.
fn pair_word(
    s: &State<'_>,
    (whole, load): (&GuardTape, &Tape),
    (elem_in, elem): (&GuardTape, &Tape),
    vec: usize,
    env: &mut Env,
) -> Result<u32, SimError> {
    if s.holds(whole, "whole source word", env)? {
        return s.src_word(load.eval(env)?, vec as i64);
    }
    let mut w = 0;
    for k in 0..vec {
        env.set(Var::K, k as i64);
        if elem_in.eval(env)? {
            w |= s.element(elem.eval(env)?)? << (8 * s.eb * k);
        }
    }
    Ok(w)
}

/// Every warp's lanes: their rows' words, permuted, realigned and written to
/// the stage.
fn lanes_to_stage(
    kernel: &Kernel,
    q: &Squat,
    s: &mut State<'_>,
    env: &mut Env,
) -> Result<(), SimError> {
    let g = &kernel.spec.geometry;
    let vec = g.vec as usize;
    let rows = u32::try_from(env.get(Var::Rows)).unwrap_or(0);
    let tp = |x| Tape::per_thread(x, env);
    let gt = |x| GuardTape::per_thread(x, env);
    let (load, elem, row_shift, shift, put) = (
        tp(&q.load),
        tp(&q.elem),
        tp(&q.row_shift),
        tp(&q.shift),
        tp(&q.put),
    );
    let (whole, elem_in, stores) = (gt(&q.whole), gt(&q.elem_in), gt(&q.stores));
    let perms = squat_perms(rows, g.elem_bytes);
    // A checked tile loads the rows between its first and last without checks
    // where `middle` holds; the interior tiles (`s.inside`) load every row so.
    let interior = s.inside;
    let middle = !interior && GuardTape::per_thread(&q.middle, env).eval(env)?;
    // The lanes load both words of their pairs (an interior tile's, where the
    // kernel does; a checked tile's rows shuffle).
    let pairs = interior && squat_loads_pairs(g.elem_bytes);
    let regs = squat_word_reg(rows, rows.saturating_sub(1)) + 1;
    for ty in 0..g.block_rows {
        env.set(Var::Ty, i64::from(ty));
        let mut p = vec![vec![0u32; regs]; 32];
        for row in 0..rows {
            let r = row as usize;
            env.set(Var::Row, i64::from(row));
            let unchecked = interior || (middle && 0 < row && row + 1 < rows);
            // Unchecked, a load whose word leaves the span fails the run.
            s.inside = unchecked;
            let mut lo = [0u32; 32];
            for (lane, lo) in lo.iter_mut().enumerate() {
                env.set(Var::Tx, lane as i64);
                env.set(Var::J, 0);
                *lo = pair_word(s, (&whole, &load), (&elem_in, &elem), vec, env)?;
            }
            for lane in 0..32 {
                env.set(Var::Tx, lane as i64);
                // The next lane's (`__shfl_down_sync(.., 1)`), or the lane's own
                // load where it loads both (lane 31 always does).
                let hi = if lane < 31 && !pairs {
                    lo[lane + 1]
                } else {
                    env.set(Var::J, 1);
                    pair_word(s, (&whole, &load), (&elem_in, &elem), vec, env)?
                };
                env.set(Var::J, 0);
                p[lane][r] = funnelshift_r(lo[lane], hi, row_shift.eval(env)? as u32);
            }
        }
        s.inside = interior;
        for regs in &mut p {
            for st in &perms {
                regs[st.out] = byte_perm(regs[st.a], regs[st.b], st.sel);
            }
        }
        let last = squat_word_reg(rows, rows - 1);
        for lane in 0..32usize {
            env.set(Var::Tx, lane as i64);
            if !stores.eval(env)? {
                continue;
            }
            // `__shfl_up_sync(.., 1)`: the lane before's last word.
            let mut prev = p[lane.saturating_sub(1)][last];
            for j in 0..rows {
                env.set(Var::J, i64::from(j));
                let cur = p[lane][squat_word_reg(rows, j)];
                let i = s.shared_index(put.eval(env)?)?;
                s.shared[i] = funnelshift_rc(prev, cur, shift.eval(env)? as u32);
                s.fresh[i] = true;
                prev = cur;
            }
        }
    }
    Ok(())
}

/// Every thread's stage vectors, stored whole where they lie in the tile's part
/// of the run, else element by element. Returns the destination elements
/// written and the vectors stored whole.
fn stage_out(
    kernel: &Kernel,
    q: &Squat,
    s: &mut State<'_>,
    env: &mut Env,
) -> Result<(u64, u64), SimError> {
    let g = &kernel.spec.geometry;
    let (eb, vec) = (s.eb, g.vec as usize);
    let per = 16 / eb;
    let rows = u32::try_from(env.get(Var::Rows)).unwrap_or(0);
    let tp = |x| Tape::per_thread(x, env);
    let gt = |x| GuardTape::per_thread(x, env);
    let (slot, turn, to, part_to) = (tp(&q.slot), tp(&q.turn), tp(&q.to), tp(&q.part_to));
    let (staged, full, part) = (gt(&q.staged), gt(&q.full), gt(&q.part));
    let full_in = gt(&q.full_in);
    let mut done = (0, 0);
    let (bx, by) = s.block;
    for ty in 0..g.block_rows {
        env.set(Var::Ty, i64::from(ty));
        for tx in 0..g.tile {
            env.set(Var::Tx, i64::from(tx));
            for j in 0..squat_iters(g, rows) {
                env.set(Var::J, i64::from(j));
                if !staged.eval(env)? {
                    continue;
                }
                let at = slot.eval(env)?;
                if at.rem_euclid(4) != 0 {
                    return Err(SimError::Misaligned { index: at, n: 4 });
                }
                let i = s.shared_index(at)?;
                s.shared_index(at + 3)?;
                let tn = turn.eval(env)?;
                if !(0..4).contains(&tn) {
                    return Err(SimError::Misaligned {
                        index: at + tn,
                        n: 4,
                    });
                }
                // Word `q` of the vector lies at `slot + (q ^ turn)`.
                let words: [(u32, bool, usize); 4] = std::array::from_fn(|q| {
                    let w = i + (q ^ tn as usize);
                    (s.shared[w], s.fresh[w], w)
                });
                let word = |q: usize| words[q];
                let stale = |w: usize| SimError::StaleShared {
                    bx,
                    by,
                    index: w as i64,
                };
                // An interior tile tests only its ends; the run's must hold too.
                let whole = if s.inside {
                    let w = full_in.eval(env)?;
                    if w && !full.eval(env)? {
                        return Err(SimError::Interior {
                            bx,
                            by,
                            guard: "vector inside the run",
                        });
                    }
                    w
                } else {
                    full.eval(env)?
                };
                if whole {
                    let at = to.eval(env)?;
                    s.dst_aligned(at, per as i64)?;
                    for qw in 0..4 {
                        let (value, fresh, w) = word(qw);
                        if !fresh {
                            return Err(stale(w));
                        }
                        done.0 += s.store(at + (qw * vec) as i64, value, vec)?;
                    }
                    done.1 += 1;
                    continue;
                }
                for k in 0..per {
                    env.set(Var::K, k as i64);
                    if part.eval(env)? {
                        let (value, fresh, w) = word(k / vec);
                        if !fresh {
                            return Err(stale(w));
                        }
                        let e = value >> (8 * eb * (k % vec));
                        done.0 += s.store(part_to.eval(env)?, e, 1)?;
                    }
                }
            }
        }
    }
    Ok(done)
}

/// The parameter sets of the analysis: a long matrix's second tile, for every
/// width and every destination pointer position within a 16-byte vector.
fn envs(kernel: &Kernel) -> Vec<Env> {
    let cols = 1 << 20;
    width_envs(kernel, squat_widths(), |r, off| {
        [
            (Var::Rows, r),
            (Var::Cols, cols),
            (Var::SrcLd, cols),
            (Var::DstLd, r),
            (Var::DstOff, off),
        ]
    })
}

/// Every execution of the lanes' stage write and the stage's vector read, over
/// every width, pointer position, warp and iteration.
pub(crate) fn executions<'a>(kernel: &Kernel, q: &'a Squat) -> Vec<Exec<'a>> {
    let g = &kernel.spec.geometry;
    let mut out = Vec::new();
    for env in envs(kernel) {
        let rows = u32::try_from(env.get(Var::Rows)).unwrap_or(0);
        // The lanes' word writes (`J` a word) and the vector reads (`J` a step),
        // each where its guard lets a lane in.
        let accesses = [
            ("store", &q.stores, &q.put, 4, rows),
            ("load", &q.staged, &q.slot, 16, squat_iters(g, rows)),
        ];
        for (kind, guard, index, width, trips) in accesses {
            let on = GuardTape::per_thread(guard, &env);
            let at = Tape::per_thread(index, &env);
            for warp in 0..g.block_rows {
                for j in 0..trips {
                    let addrs = lanes(&env, warp, |e| {
                        e.set(Var::J, i64::from(j));
                        Ok(if on.eval(e)? {
                            Some(at.eval(e)? * 4)
                        } else {
                            None
                        })
                    });
                    out.push(Exec {
                        kind,
                        index,
                        width,
                        at: [warp, j, 0],
                        addrs,
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::squat::squat_widths;

    /// The permutation puts run position `e` of the block (column `e / rows`,
    /// row `e % rows`) where the destination's run has it, for every width.
    #[test]
    fn the_perms_lay_the_block_out_as_its_run() {
        for eb in [1u32, 2] {
            let vec = 4 / eb;
            for rows in squat_widths() {
                let mut p = vec![0u32; 4 * rows as usize];
                // Row r's word: its elements are `(r, c)` coded as `r * 8 + c + 1`.
                for r in 0..rows {
                    p[r as usize] = (0..vec).fold(0, |w, c| {
                        let x = (r * 8 + c + 1) & ((1 << (8 * eb)) - 1);
                        w | (x << (8 * eb * c))
                    });
                }
                for s in squat_perms(rows, eb) {
                    p[s.out] = byte_perm(p[s.a], p[s.b], s.sel);
                }
                for j in 0..rows {
                    let w = p[squat_word_reg(rows, j)];
                    for k in 0..vec {
                        let e = j * vec + k;
                        let want = (e % rows) * 8 + e / rows + 1;
                        let got = (w >> (8 * eb * k)) & ((1 << (8 * eb)) - 1);
                        assert_eq!(got, want, "rows {rows}, {eb}-byte, word {j}, element {k}");
                    }
                }
            }
        }
    }
}
