//! The simulator and the bank analysis of a `thin` kernel
//! ([`crate::kernel::thin`]), both from the kernel's own expressions.
//!
//! The simulator runs a tile's stage thread by thread, then each warp's lanes
//! together, column word by column word, as the GPU does: each lane's rows
//! realigned by `__funnelshift_r`, transposed by the same
//! [`network`](crate::kernel::realign::network) the emitter prints, and
//! realigned to the destination's words with the word of the lane before
//! (`__shfl_up_sync`). Besides what every
//! simulated kernel is checked for, it fails on a 16-byte load or a word store
//! that is not aligned for the pointers, and on a tile run without bounds
//! checks where one would fail.
//!
//! The analysis evaluates every shared store of the stage and every shared load
//! of the lanes' blocks of every sub-tile, for every width the kernel runs and every position of
//! the source pointer within a 16-byte vector.

use crate::check::memory::{run_tiles, same_width, State};
use crate::check::realign::{funnelshift_r, funnelshift_rc, run_network};
use crate::check::walk::{each_thread, Grid, SimError, Stats};
use crate::ir::expr::{Env, Expr, Var};
use crate::ir::shape::Shape;
use crate::ir::tape::{GuardTape, Tape};
use crate::kernel::realign::network_regs;
use crate::kernel::thin::{stage_iters, thin_subtiles, warp_steps, widths_of, Thin};
use crate::kernel::Kernel;

/// Runs a `thin` kernel over a shape it fits, with `env` holding the call's
/// parameters and pointer phases.
pub(crate) fn run(
    kernel: &Kernel,
    t: &Thin,
    shape: &Shape,
    (src, dst): (&[u8], &mut [u8]),
    grid: Grid,
    env: &mut Env,
    ntiles: u64,
) -> Result<Stats, SimError> {
    same_width(kernel, shape.cols)?;
    let at = (grid, ntiles);
    run_tiles(kernel, shape, (src, dst), at, env, &t.interior, |s, env| {
        stage(kernel, t, s, env)?;
        columns(kernel, t, s, env)
    })
}

/// Every thread's stage vectors: loaded whole where they lie in the matrix,
/// else element by element, and stored to shared memory.
fn stage(kernel: &Kernel, t: &Thin, s: &mut State<'_>, env: &mut Env) -> Result<(), SimError> {
    let g = &kernel.spec.geometry;
    let (eb, vec) = (s.eb, g.vec as usize);
    let per = 16 / eb;
    let cols = u32::try_from(env.get(Var::Cols)).unwrap_or(0);
    let gt = |x| GuardTape::per_thread(x, env);
    let tp = |x| Tape::per_thread(x, env);
    let (staged, whole, elem_in) = (gt(&t.staged), gt(&t.whole), gt(&t.elem_in));
    let (load, elem, slot, turn) = (tp(&t.load), tp(&t.elem), tp(&t.slot), tp(&t.turn));
    each_thread(kernel, env, |env| {
        for j in 0..stage_iters(g, cols) {
            env.set(Var::J, i64::from(j));
            if !staged.eval(env)? {
                continue;
            }
            let mut x = [0u32; 4];
            if s.holds(&whole, "16-byte vector", env)? {
                x = s.vector(load.eval(env)?)?;
            } else {
                for k in 0..per {
                    env.set(Var::K, k as i64);
                    if elem_in.eval(env)? {
                        let e = s.element(elem.eval(env)?)?;
                        x[k / vec] |= e << (8 * eb * (k % vec));
                    }
                }
            }
            let at = slot.eval(env)?;
            if at.rem_euclid(4) != 0 {
                return Err(SimError::Misaligned { index: at, n: 4 });
            }
            let i = s.shared_index(at)?;
            s.shared_index(at + 3)?; // the vector's last word
                                     // Word `q` of the vector at `slot + (q ^ turn)`: the turn permutes the
                                     // vector's words, it never moves one out of the vector.
            let tn = turn.eval(env)?;
            if !(0..4).contains(&tn) {
                return Err(SimError::Misaligned {
                    index: at + tn,
                    n: 4,
                });
            }
            for (q, &word) in x.iter().enumerate() {
                s.shared[i + (q ^ tn as usize)] = word;
            }
            s.fresh[i..i + 4].iter_mut().for_each(|f| *f = true);
        }
        Ok(())
    })
}

/// Every warp's lanes together, sub-tile by sub-tile, column word by column
/// word.
/// Returns the destination elements written and the words stored whole.
fn columns(
    kernel: &Kernel,
    t: &Thin,
    s: &mut State<'_>,
    env: &mut Env,
) -> Result<(u64, u64), SimError> {
    let mut done = (0, 0);
    let g = &kernel.spec.geometry;
    let vec = g.vec as usize;
    let cols = usize::try_from(env.get(Var::Cols)).unwrap_or(0);
    let tp = |x| Tape::per_thread(x, env);
    let gt = |x| GuardTape::per_thread(x, env);
    let (read, row_shift, shift, to, part_to) = (
        tp(&t.read),
        tp(&t.row_shift),
        tp(&t.shift),
        tp(&t.to),
        tp(&t.part_to),
    );
    let (stores, full, part) = (gt(&t.stores), gt(&t.full), gt(&t.part));
    let regs = network_regs(g.vec);
    let subs = thin_subtiles(u32::try_from(cols).unwrap_or(0));
    let per_warp = warp_steps(g, u32::try_from(cols).unwrap_or(0)) as usize;
    let first_step = t.first_step.as_ref().map(|x| Tape::per_thread(x, env));
    for (si, ty) in (0..subs).flat_map(|si| (0..g.block_rows).map(move |ty| (si, ty))) {
        env.set(Var::Sub, i64::from(si));
        env.set(Var::Ty, i64::from(ty));
        let lane_env = |env: &mut Env, lane: usize| env.set(Var::Tx, lane as i64);
        // Each lane's word before the current one of each row.
        // The warp's column steps: all of them, or its half where the kernel
        // splits them.
        let first = match &first_step {
            Some(qs) => usize::try_from(qs.eval(env)?).unwrap_or(usize::MAX),
            None => 0,
        };
        let steps = first..cols.div_ceil(vec).min(first.saturating_add(per_warp));
        let mut lo = vec![vec![0u32; vec]; 32];
        for (lane, lo) in lo.iter_mut().enumerate() {
            lane_env(env, lane);
            env.set(Var::J, first as i64);
            for (rk, w) in lo.iter_mut().enumerate() {
                env.set(Var::Row, rk as i64);
                *w = s.word(read.eval(env)?)?;
            }
        }
        for q in steps {
            // Each column's word, per lane.
            let mut out = vec![[0u32; 32]; vec];
            for lane in 0..32 {
                lane_env(env, lane);
                env.set(Var::J, q as i64 + 1);
                let mut p = vec![0u32; regs];
                for (rk, reg) in p.iter_mut().take(vec).enumerate() {
                    env.set(Var::Row, rk as i64);
                    let hi = s.word(read.eval(env)?)?;
                    *reg = funnelshift_r(lo[lane][rk], hi, row_shift.eval(env)? as u32);
                    lo[lane][rk] = hi;
                }
                run_network(&mut p, g.vec);
                for (col, &word) in out.iter_mut().zip(&p[regs - vec..]) {
                    col[lane] = word;
                }
            }
            for (m, col) in out.iter().enumerate() {
                let c = q * vec + m;
                if c >= cols {
                    continue;
                }
                env.set(Var::K, c as i64);
                for lane in 0..32 {
                    lane_env(env, lane);
                    if !stores.eval(env)? {
                        continue;
                    }
                    // `__shfl_up_sync(.., 1)`: the lane before's value.
                    let prev = col[lane.saturating_sub(1)];
                    let wv = funnelshift_rc(prev, col[lane], shift.eval(env)? as u32);
                    if s.holds(&full, "whole-word store", env)? {
                        let at = to.eval(env)?;
                        s.dst_aligned(at, vec as i64)?;
                        done.0 += s.store(at, wv, vec)?;
                        done.1 += 1;
                    } else {
                        for rk in 0..vec {
                            env.set(Var::Row, rk as i64);
                            if part.eval(env)? {
                                done.0 += s.store(part_to.eval(env)?, wv >> (8 * s.eb * rk), 1)?;
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(done)
}

/// The parameter sets of the analysis: a large matrix's second tile, for every
/// width and every source pointer position within a 16-byte vector.
fn envs(kernel: &Kernel) -> Vec<Env> {
    let rows = 1 << 20;
    width_envs(kernel, widths_of(&kernel.spec.geometry), |c, off| {
        [
            (Var::Rows, rows),
            (Var::Cols, c),
            (Var::SrcLd, c),
            (Var::DstLd, rows),
            (Var::SrcOff, off),
        ]
    })
}

/// The analysis's parameter sets of a kernel with an entry point per width:
/// tile 1 of one matrix, with `vars` of every width and every pointer position
/// within a 16-byte vector.
pub(crate) fn width_envs(
    kernel: &Kernel,
    widths: impl Iterator<Item = u32>,
    vars: impl Fn(i64, i64) -> [(Var, i64); 5],
) -> Vec<Env> {
    let per = 16 / i64::from(kernel.spec.geometry.elem_bytes);
    widths
        .flat_map(|w| (0..per).map(move |off| (i64::from(w), off)))
        .map(|(w, off)| {
            let mut env = Env::default();
            env.set(Var::Batches, 1);
            env.set(Var::Tile, 1);
            for (v, x) in vars(w, off) {
                env.set(v, x);
            }
            env
        })
        .collect()
}

/// One warp's execution of one of the kernel's two shared instructions (the
/// analysis sums them into its report).
pub(crate) struct Exec<'a> {
    /// `store` or `load` (for a `thin` kernel the stage's vectors and the
    /// lanes' words, for a `squat` kernel the lanes' words and the vectors).
    pub kind: &'static str,
    /// Its shared index.
    pub index: &'a Expr,
    /// Access width in bytes.
    pub width: u32,
    /// Warp, iteration (`Var::J`) and row (`Var::Row`; 0 for the stage).
    pub at: [u32; 3],
    /// Each lane's byte address (`None` where it is off), or why one could
    /// not be evaluated.
    pub addrs: Result<Vec<Option<u64>>, String>,
}

/// Every execution of the stage's vector store and the lanes' word load, over
/// every width, pointer position, warp and iteration.
pub(crate) fn executions<'a>(kernel: &Kernel, t: &'a Thin) -> Vec<Exec<'a>> {
    let g = &kernel.spec.geometry;
    let mut out = Vec::new();
    for env in envs(kernel) {
        let cols = u32::try_from(env.get(Var::Cols)).unwrap_or(0);
        let staged = GuardTape::per_thread(&t.staged, &env);
        let (slot, read) = (
            Tape::per_thread(&t.slot, &env),
            Tape::per_thread(&t.read, &env),
        );
        for warp in 0..g.block_rows {
            for j in 0..stage_iters(g, cols) {
                let addrs = lanes(&env, warp, |e| {
                    e.set(Var::J, i64::from(j));
                    Ok(if staged.eval(e)? {
                        Some(slot.eval(e)? * 4)
                    } else {
                        None
                    })
                });
                out.push(Exec {
                    kind: "store",
                    index: &t.slot,
                    width: 16,
                    at: [warp, j, 0],
                    addrs,
                });
            }
            for (si, rk) in
                (0..thin_subtiles(cols)).flat_map(|si| (0..g.vec).map(move |rk| (si, rk)))
            {
                for j in 0..=cols.div_ceil(g.vec) {
                    let addrs = lanes(&env, warp, |e| {
                        e.set(Var::Sub, i64::from(si));
                        e.set(Var::Row, i64::from(rk));
                        e.set(Var::J, i64::from(j));
                        Ok(Some(read.eval(e)? * 4))
                    });
                    out.push(Exec {
                        kind: "load",
                        index: &t.read,
                        width: 4,
                        at: [warp, j, rk],
                        addrs,
                    });
                }
            }
        }
    }
    out
}

/// Each lane's byte address in warp `warp` (`None` where the lane is off), or
/// why one could not be evaluated.
pub(crate) fn lanes(
    base: &Env,
    warp: u32,
    addr: impl Fn(&mut Env) -> Result<Option<i64>, crate::ir::expr::EvalError>,
) -> Result<Vec<Option<u64>>, String> {
    let mut env = base.clone();
    env.set(Var::Ty, i64::from(warp));
    (0..32)
        .map(|lane| {
            env.set(Var::Tx, lane);
            match addr(&mut env) {
                Ok(a) => Ok(a.and_then(|a| u64::try_from(a).ok())),
                Err(e) => Err(e.to_string()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::bank::{self, Model};
    use crate::kernel::spec::TransposeSpec;

    #[test]
    fn the_swizzle_separates_the_blocks_of_an_even_width() {
        // Blocks an even number of words apart: unswizzled, the lanes' loads
        // conflict (2-way for a width of 6, 32-way for 32); the stage swizzle
        // puts them in 32 banks, as an odd width is by itself.
        let k = Kernel::build(TransposeSpec::thin(1).expect("spec")).expect("builds");
        let t = k.thin().expect("thin");
        for (cols, unswizzled) in [(6, 2), (32, 32), (7, 1)] {
            let mut env = envs(&k).remove(0);
            env.set(Var::Cols, cols);
            let ways = |index: &Expr| {
                let at = Tape::per_thread(index, &env);
                let addrs = lanes(&env, 0, |e| {
                    e.set(Var::Row, 1);
                    e.set(Var::J, 2);
                    Ok(Some(at.eval(e)? * 4))
                })
                .expect("addresses");
                let acc = bank::analyze(Model::Hopper, 4, &addrs).expect("analyzable");
                acc.wavefronts / acc.ideal
            };
            assert_eq!(ways(&t.word), unswizzled, "cols = {cols}");
            assert_eq!(ways(&t.read), 1, "cols = {cols}");
        }
        let report = k.analyze(Model::Hopper);
        assert!(report.conflict_free, "{}", report.verdict());
        assert_eq!(report.instructions.len(), 2);
        assert_eq!(report.instructions[0].width, 16);
    }
}
