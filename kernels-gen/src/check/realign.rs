//! The simulator of a `realign` kernel ([`crate::kernel::realign`]): its two
//! phases thread by thread, from the kernel's own expressions, with its register
//! data path run as the GPU runs it (`__byte_perm`, `__funnelshift_r` and
//! `__funnelshift_rc`, over the same [`network`] the emitter prints).
//!
//! Besides what [`crate::check::sim`] checks of every kernel, it fails on a
//! 16-byte load or store that is not aligned for the pointers' phases, and on
//! a window of 8 lanes' vectors that does not start on a 32-byte sector.
//!
//! ```
//! use bankfree_gen::check::realign::{byte_perm, funnelshift_rc};
//! assert_eq!(byte_perm(0x0302_0100, 0x0706_0504, 0x5140), 0x0501_0400);
//! assert_eq!(funnelshift_rc(0xAABB_CCDD, 0x1122_3344, 24), 0x2233_44AA);
//! assert_eq!(funnelshift_rc(0xAABB_CCDD, 0x1122_3344, 32), 0x1122_3344);
//! ```

use crate::check::memory::{run_tiles, State};
use crate::check::walk::{each_thread, Grid, SimError, Stats};
use crate::ir::expr::{Env, Var};
use crate::ir::shape::Shape;
use crate::ir::tape::{GuardTape, Tape};
use crate::kernel::realign::{network, network_regs, Realign, STORE_WORDS};
use crate::kernel::Kernel;

/// `__byte_perm(x, y, s)`: byte `n` of the result is byte `(s >> 4n) & 7` of
/// the 8 bytes `y:x`.
pub fn byte_perm(x: u32, y: u32, s: u32) -> u32 {
    let all = u64::from(x) | (u64::from(y) << 32);
    (0..4).fold(0, |out, n| {
        let b = (s >> (4 * n)) & 7;
        out | ((((all >> (8 * b)) & 0xFF) as u32) << (8 * n))
    })
}

/// The transpose network of `vec` rows ([`network`], as the emitter prints
/// it) run over the registers `p`: rows in `p[..vec]`, columns' words out in
/// the last `vec`.
pub(crate) fn run_network(p: &mut [u32], vec: u32) {
    for step in network(vec) {
        p[step.out] = byte_perm(p[step.a], p[step.b], step.sel);
    }
}

/// `__funnelshift_r(lo, hi, s)`: the low word of `hi:lo >> (s & 31)`.
pub fn funnelshift_r(lo: u32, hi: u32, s: u32) -> u32 {
    ((u64::from(lo) | (u64::from(hi) << 32)) >> (s & 31)) as u32
}

/// `__funnelshift_rc(lo, hi, s)`: the low word of `hi:lo >> min(s, 32)`.
pub fn funnelshift_rc(lo: u32, hi: u32, s: u32) -> u32 {
    ((u64::from(lo) | (u64::from(hi) << 32)) >> s.min(32)) as u32
}

/// Runs a `realign` kernel over a shape it fits, with `env` holding the call's
/// parameters and pointer phases.
pub(crate) fn run(
    kernel: &Kernel,
    r: &Realign,
    shape: &Shape,
    (src, dst): (&[u8], &mut [u8]),
    grid: Grid,
    env: &mut Env,
    ntiles: u64,
) -> Result<Stats, SimError> {
    let at = (grid, ntiles);
    run_tiles(kernel, shape, (src, dst), at, env, &r.interior, |s, env| {
        if r.tail.eval(env)? {
            return tail(kernel, r, s, env);
        }
        read(kernel, r, s, env)?;
        write(kernel, r, s, env)
    })
}

/// A tail tile ([`Realign::tail`]): every thread's elements, source to
/// destination, where the move's guard holds.
fn tail(
    kernel: &Kernel,
    r: &Realign,
    s: &mut State<'_>,
    env: &mut Env,
) -> Result<(u64, u64), SimError> {
    let mv = &r.tail_move;
    let guard = GuardTape::per_thread(&mv.guard, env);
    let (from, to) = (
        Tape::per_thread(&mv.from.index, env),
        Tape::per_thread(&mv.to.index, env),
    );
    let mut done = 0;
    each_thread(kernel, env, |env| {
        for j in 0..mv.iters {
            env.set(Var::J, i64::from(j));
            if guard.eval(env)? {
                let e = s.element(from.eval(env)?)?;
                done += s.store(to.eval(env)?, e, 1)?;
            }
        }
        Ok(())
    })?;
    Ok((done, 0))
}

/// Every thread's block of rows: loaded, transposed, its columns' words stored
/// to shared memory.
fn read(kernel: &Kernel, r: &Realign, s: &mut State<'_>, env: &mut Env) -> Result<(), SimError> {
    let g = &kernel.spec.geometry;
    let (vec, cols) = (g.vec as usize, g.realign_cols() as usize);
    let mv = &kernel.moves[0];
    let t = |e| Tape::per_thread(e, env);
    let gt = |e| GuardTape::per_thread(e, env);
    let (row_in, fast, col_in) = (gt(&r.inside), gt(&r.fast), gt(&r.col));
    let (phase, elem, to) = (t(&r.phase), t(&r.elem), t(&mv.to.index));
    let vecs = [t(&r.vecs[0]), t(&r.vecs[1])];
    let regs = network_regs(g.vec);
    each_thread(kernel, env, |env| {
        env.set(Var::J, 0);
        let mut rw = vec![[0u32; 4]; vec];
        for (k, words) in rw.iter_mut().enumerate() {
            env.set(Var::Row, k as i64);
            if !s.holds(&row_in, "source row", env)? {
                continue;
            }
            // As the emitted edge body: a row outside the vectors' span has its
            // elements gathered in order into the first vector's words, and is
            // realigned by a phase of 0.
            let (wv, sb) = if s.holds(&fast, "16-byte vector", env)? {
                let v0 = s.vector(vecs[0].eval(env)?)?;
                let v1 = s.vector(vecs[1].eval(env)?)?;
                let sb = phase.eval(env)? as u32 * g.elem_bytes;
                ([v0, v1].concat(), sb)
            } else {
                let mut wv = vec![0u32; 8];
                for c in 0..cols {
                    env.set(Var::K, c as i64);
                    if col_in.eval(env)? {
                        let e = s.element(elem.eval(env)?)?;
                        wv[c / vec] |= e << (8 * g.elem_bytes as usize * (c % vec));
                    }
                }
                (wv, 0)
            };
            let z: Vec<u32> = (0..6)
                .map(|i| wv[if sb & 8 != 0 { i + 2 } else { i }])
                .collect();
            let y: Vec<u32> = (0..5)
                .map(|i| z[if sb & 4 != 0 { i + 1 } else { i }])
                .collect();
            for (i, w) in words.iter_mut().enumerate() {
                *w = funnelshift_r(y[i], y[i + 1], 8 * (sb & 3));
            }
        }
        for i in 0..4 {
            let mut p = vec![0u32; regs];
            for (row, words) in rw.iter().enumerate() {
                p[row] = words[i];
            }
            run_network(&mut p, g.vec);
            for m in 0..vec {
                env.set(Var::K, (i * vec + m) as i64);
                let at = s.shared_index(to.eval(env)?)?;
                s.shared[at] = p[regs - vec + m];
                s.fresh[at] = true;
            }
        }
        Ok(())
    })
}

/// Every warp's destination rows: each lane's 16 bytes funnel-shifted from
/// five of its column's words, stored as one vector where they lie in the
/// matrix, else element by element.
fn write(
    kernel: &Kernel,
    r: &Realign,
    s: &mut State<'_>,
    env: &mut Env,
) -> Result<(u64, u64), SimError> {
    let g = &kernel.spec.geometry;
    let mv = &kernel.moves[1];
    let full = mv
        .pack
        .as_ref()
        .map(|p| GuardTape::per_thread(&p.full, env));
    let (steps, guard, part) = (
        GuardTape::per_thread(&r.steps, env),
        GuardTape::per_thread(&mv.guard, env),
        GuardTape::per_thread(&r.part, env),
    );
    let words: Vec<Tape> = std::iter::once(&mv.from.index)
        .chain(&r.next)
        .map(|e| Tape::per_thread(e, env))
        .collect();
    let sh = Tape::per_thread(&r.shift, env);
    let (to, part_to) = (
        Tape::per_thread(&mv.to.index, env),
        Tape::per_thread(&r.part_to, env),
    );
    let vec = g.vec as usize;
    let n = STORE_WORDS as usize;
    let sector = i64::from(g.sector_elems());
    let mut done = (0, 0);
    each_thread(kernel, env, |env| {
        for j in 0..mv.iters {
            env.set(Var::J, i64::from(j));
            if !steps.eval(env)? || !s.holds(&guard, "destination row", env)? {
                continue;
            }
            let w = words
                .iter()
                .map(|at| s.word(at.eval(env)?))
                .collect::<Result<Vec<u32>, SimError>>()?;
            let shift = sh.eval(env)? as u32;
            let v: Vec<u32> = (0..n)
                .map(|i| funnelshift_rc(w[i], w[i + 1], shift))
                .collect();
            let whole = match &full {
                Some(f) => s.holds(f, "16-byte store", env)?,
                None => false,
            };
            if whole {
                let at = to.eval(env)?;
                s.dst_aligned(at, (n * vec) as i64)?;
                // The window of the lane's 8 (lane 0's vector) starts on a sector.
                let lane = env.get(Var::Tx) & 7;
                s.dst_aligned(at - lane * (n * vec) as i64, sector)?;
                for (i, word) in v.iter().enumerate() {
                    done.0 += s.store(at + (i * vec) as i64, *word, vec)?;
                }
                done.1 += 1;
            } else {
                for k in 0..n * vec {
                    env.set(Var::K, k as i64);
                    if part.eval(env)? {
                        let e = v[k / vec] >> (8 * g.elem_bytes as usize * (k % vec));
                        done.0 += s.store(part_to.eval(env)?, e, 1)?;
                    }
                }
            }
        }
        Ok(())
    })?;
    Ok(done)
}
