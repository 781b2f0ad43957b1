//! Runs a kernel on the CPU, block by block and phase by phase around each barrier,
//! from the kernel's own expressions.
//!
//! It fails (never panics) on any out-of-bounds access, on a shared-memory read of
//! a unit that this tile did not write (a stale read on the GPU), and unless every
//! destination element is written exactly once and nothing outside them is written.
//!
//! ```
//! use bankfree_gen::{check::sim, Kernel, Shape, Strategy, TransposeSpec};
//! let k = Kernel::build(TransposeSpec::new(8, 1, Strategy::Xor).unwrap()).unwrap();
//! let shape = Shape::new(3, 5);
//! let src: Vec<u8> = (0..15).collect();
//! let mut dst = vec![0xAA; 15];
//! sim::run(&k, &shape, &src, &mut dst, None).unwrap();
//! let mut want = vec![0xAA; 15];
//! sim::reference(&shape, 1, &src, &mut want).unwrap();
//! assert_eq!(dst, want);
//! ```

use crate::check::fit::kernel_refusal;
use crate::check::index32;
use crate::check::realign;
pub use crate::check::reference::{interleave_block, reference, transpose_block, transpose_elems};
use crate::check::walk::{admits, check_writes, each_thread, walk};
pub use crate::check::walk::{Grid, SimError, Stats};
use crate::check::{squat, thin};
use crate::ir::expr::{Env, Var};
use crate::ir::shape::{fold_params, outer_params, Shape};
use crate::ir::tape::{GuardTape, Tape};
use crate::kernel::geometry::Form;
use crate::kernel::launch::launch;
use crate::kernel::moves::{Mem, Move};
use crate::kernel::Kernel;

struct Buf<'a> {
    name: &'static str,
    bytes: &'a [u8],
    unit: usize,
}

fn unit_range(
    name: &'static str,
    index: i64,
    unit: usize,
    len: usize,
) -> Result<std::ops::Range<usize>, SimError> {
    let units = (len / unit) as u64;
    match u64::try_from(index) {
        Ok(i) if i < units => {
            let start = i as usize * unit;
            Ok(start..start + unit)
        }
        _ => Err(SimError::OutOfBounds {
            mem: name,
            index,
            len: units,
        }),
    }
}

impl Buf<'_> {
    fn read(&self, index: i64) -> Result<&[u8], SimError> {
        Ok(&self.bytes[unit_range(self.name, index, self.unit, self.bytes.len())?])
    }
}

/// Runs `kernel` over `src` into `dst` (byte buffers of whole elements), with the
/// launcher's grid or an explicit (smaller) one to exercise the grid-stride loops.
pub fn run(
    kernel: &Kernel,
    shape: &Shape,
    src: &[u8],
    dst: &mut [u8],
    grid: Option<Grid>,
) -> Result<Stats, SimError> {
    run_at(kernel, shape, src, dst, grid, 0)
}

/// [`run`] with the destination pointer at `dst_off`, counted as the kernel
/// counts it ([`dst_off_of_address`](crate::Geometry::dst_off_of_address): in
/// elements, or in words for a `small` kernel of word arrays): what a `skew`
/// kernel aligns its writes with, and where the word-array `small` kernel stores
/// whole vectors; the others ignore it. It computes in the build the launcher
/// would run ([`index32::runs`]).
pub fn run_at(
    kernel: &Kernel,
    shape: &Shape,
    src: &[u8],
    dst: &mut [u8],
    grid: Option<Grid>,
    dst_off: u64,
) -> Result<Stats, SimError> {
    let index32 = !shape.is_empty() && index32::runs(&kernel.spec.geometry, shape);
    run_as(kernel, shape, src, dst, grid, dst_off, index32)
}

/// [`run_at`] in the 32-bit build's arithmetic (`index32`) or the 64-bit one's.
pub fn run_as(
    kernel: &Kernel,
    shape: &Shape,
    src: &[u8],
    dst: &mut [u8],
    grid: Option<Grid>,
    dst_off: u64,
    index32: bool,
) -> Result<Stats, SimError> {
    let at = Offsets {
        src: 0,
        dst: dst_off,
    };
    run_offsets(kernel, shape, src, dst, grid, at, index32)
}

/// Where the pointers lie, in elements (their addresses over the element size;
/// for `dst`, as [`run_at`] counts it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offsets {
    pub src: u64,
    pub dst: u64,
}

/// [`run_as`] with the source pointer at `at.src` too: what a `realign` kernel
/// finds its aligned 16-byte vectors with.
pub fn run_offsets(
    kernel: &Kernel,
    shape: &Shape,
    src: &[u8],
    dst: &mut [u8],
    grid: Option<Grid>,
    at: Offsets,
    index32: bool,
) -> Result<Stats, SimError> {
    let dst_off = at.dst;
    let g = kernel.spec.geometry;
    let elem = g.elem_bytes as usize;
    shape.check_buffers((src.len() / elem) as u64, (dst.len() / elem) as u64)?;
    if shape.is_empty() {
        return Ok(Stats::default()); // the launcher does not launch
    }
    if let Some(r) = kernel_refusal(&g, kernel.quotients, shape) {
        return Err(SimError::Unfit(r));
    }
    if kernel.outer != shape.outer.n {
        return Err(SimError::OuterAxes {
            kernel: kernel.outer,
            shape: shape.outer.n,
        });
    }
    if kernel.fold != shape.fold.counts() {
        return Err(SimError::Fold {
            kernel: kernel.fold,
            shape: shape.fold.counts(),
        });
    }
    let grid = grid.unwrap_or_else(|| {
        let l = launch(&g, 0, shape.batch, shape.rows, shape.cols);
        Grid {
            x: u64::from(l.grid[0]),
            y: u64::from(l.grid[1]),
        }
    });
    if grid.x == 0 || grid.y == 0 {
        return Err(SimError::EmptyGrid(grid));
    }
    let unit = kernel.unit.bytes() as usize;
    let mut m = Memory {
        src: Buf {
            name: "src",
            bytes: src,
            unit,
        },
        dst,
        shared: vec![0u8; kernel.shared_bytes() as usize],
        fresh: vec![false; kernel.shared_units() as usize],
        writes: vec![0u8; 0],
        regs: Vec::with_capacity(kernel.words as usize),
        unit,
        block: (0, 0),
        dst_off: 0,
    };
    m.writes = vec![0u8; m.dst.len() / unit];

    let mut env = Env::default();
    env.set(Var::Rows, shape.rows as i64);
    env.set(Var::Cols, shape.cols as i64);
    env.set(Var::Batches, shape.batch as i64);
    env.set(Var::SrcLd, shape.src_ld as i64);
    env.set(Var::DstLd, shape.dst_ld as i64);
    env.set(Var::SrcBatchStride, shape.src_batch_stride as i64);
    env.set(Var::DstBatchStride, shape.dst_batch_stride as i64);
    for v in outer_params(shape.outer.n) {
        env.set(v, i64::try_from(shape.outer_value(v)).unwrap_or(i64::MAX));
    }
    for v in fold_params(shape.fold.rows.n, shape.fold.cols.n) {
        env.set(v, i64::try_from(shape.fold_value(v)).unwrap_or(i64::MAX));
    }
    env.set(Var::DstOff, i64::try_from(dst_off).unwrap_or(i64::MAX));
    if index32 {
        // The pointer's address enters the 32-bit build truncated.
        env.set(Var::DstOff, (dst_off & 0xFFFF_FFFF) as i64);
    }
    env.set(Var::SrcOff, i64::try_from(at.src).unwrap_or(i64::MAX));
    if index32 {
        env.set(Var::SrcOff, (at.src & 0xFFFF_FFFF) as i64);
    }
    env.index32 = index32;
    m.dst_off = env.get(Var::DstOff);
    let ntiles = u64::try_from(kernel.ntiles.eval(&env)?).unwrap_or(0);
    if let Some(r) = kernel.realign() {
        return realign::run(kernel, r, shape, (src, m.dst), grid, &mut env, ntiles);
    }
    if let Some(t) = kernel.thin() {
        return thin::run(kernel, t, shape, (src, m.dst), grid, &mut env, ntiles);
    }
    if let Some(q) = kernel.squat() {
        return squat::run(kernel, q, shape, (src, m.dst), grid, &mut env, ntiles);
    }

    let mut interior = 0;
    let mut stats = walk(kernel, shape, grid, &mut env, ntiles, |env, block| {
        m.block = block;
        let mut done = (0, 0);
        m.fresh.iter_mut().for_each(|f| *f = false);
        // An interior tile runs each move by its kept guard, which must agree
        // with the full one.
        let inside = match kernel.interior() {
            Some(i) => i.guard.eval(env)?,
            None => false,
        };
        interior += u64::from(inside);
        // One phase per move; the barrier between them is the loop boundary.
        for (i, mv) in kernel.moves.iter().enumerate() {
            let kept = (kernel.interior())
                .filter(|_| inside)
                .map(|t| GuardTape::per_thread(&t.kept[i], env));
            // What stays fixed for the tile is evaluated once.
            let bound = Bound {
                guard: GuardTape::per_thread(&mv.guard, env),
                full: mv
                    .pack
                    .as_ref()
                    .map(|p| GuardTape::per_thread(&p.full, env)),
                from: Tape::per_thread(&mv.from.index, env),
                to: Tape::per_thread(&mv.to.index, env),
            };
            let units = kernel.step_units(mv, env);
            each_thread(kernel, env, |env| {
                for j in 0..mv.iters {
                    env.set(Var::J, i64::from(j));
                    if let Some(full) = &bound.full {
                        let (units, vectors) = m.step_packed(kernel, mv, &bound, full, env)?;
                        done.0 += units;
                        done.1 += vectors;
                    } else if admits(&bound.guard, kept.as_ref(), block, env)? {
                        done.0 += m.step(kernel, mv, &bound, env, 0..units)?;
                    }
                }
                Ok(())
            })?;
        }
        Ok(done)
    })?;
    stats.interior = interior;
    check_writes(
        kernel,
        shape,
        &m.writes,
        stats.unit_writes,
        kernel.unit.bytes(),
    )?;
    Ok(stats)
}

/// A move's guard and indices with the tile's fixed variables bound, flattened.
struct Bound {
    guard: GuardTape,
    /// A packed move's whole-vector guard.
    full: Option<GuardTape>,
    from: Tape,
    to: Tape,
}

/// The simulated memories of one run.
struct Memory<'a> {
    src: Buf<'a>,
    dst: &'a mut [u8],
    shared: Vec<u8>,
    /// Shared units written by the current tile.
    fresh: Vec<bool>,
    /// Writes per destination unit.
    writes: Vec<u8>,
    /// One thread's units in flight.
    regs: Vec<[u8; 16]>,
    unit: usize,
    block: (u64, u64),
    /// The destination pointer's address in units (vector stores align with it).
    dst_off: i64,
}

impl Memory<'_> {
    /// One thread's step of a packed move: its `words` units gathered and stored
    /// as one vector (which must be aligned and contiguous; or each alone where
    /// the pack is not `whole`) where `full` holds,
    /// else unit by unit where the move's guard holds for that unit; returns the
    /// units written and the vectors stored whole (0 or 1).
    fn step_packed(
        &mut self,
        kernel: &Kernel,
        mv: &Move,
        bound: &Bound,
        full: &GuardTape,
        env: &mut Env,
    ) -> Result<(u64, u64), SimError> {
        let n = kernel.words;
        if full.eval(env)? {
            // The vector's units: contiguous, and aligned where the access is a
            // whole vector (the store; the load too where the move loads vectors).
            let whole = |tape: &Tape, mem: Mem, env: &mut Env| -> Result<(), SimError> {
                env.set(Var::K, 0);
                let first = tape.eval(env)?;
                let base = if mem == Mem::Dst { self.dst_off } else { 0 };
                for k in 0..n {
                    env.set(Var::K, i64::from(k));
                    if tape.eval(env)? != first + i64::from(k) || (base + first) % i64::from(n) != 0
                    {
                        return Err(SimError::Misaligned { index: first, n });
                    }
                }
                Ok(())
            };
            let stored_whole = mv.pack.as_ref().is_some_and(|p| p.whole);
            if stored_whole {
                whole(&bound.to, mv.to.mem, env)?;
            }
            if mv.pack.as_ref().is_some_and(|p| p.load) {
                whole(&bound.from, mv.from.mem, env)?;
            }
            let units = self.step(kernel, mv, bound, env, 0..n)?;
            return Ok((units, u64::from(stored_whole)));
        }
        let mut written = 0;
        for k in 0..n {
            env.set(Var::K, i64::from(k));
            if bound.guard.eval(env)? {
                written += self.step(kernel, mv, bound, env, k..k + 1)?;
            }
        }
        Ok((written, 0))
    }

    /// One thread's step of `mv` over its units `units` (all `words` of them but
    /// in a packed move's unit-by-unit path), transposed in registers where the
    /// move says so; returns the destination units written.
    fn step(
        &mut self,
        kernel: &Kernel,
        mv: &Move,
        bound: &Bound,
        env: &mut Env,
        units: std::ops::Range<u32>,
    ) -> Result<u64, SimError> {
        let unit = self.unit;
        let mut regs = std::mem::take(&mut self.regs);
        regs.clear();
        for k in units.clone() {
            env.set(Var::K, i64::from(k));
            let from = bound.from.eval(env)?;
            let mut value = [0u8; 16];
            match mv.from.mem {
                Mem::Src => value[..unit].copy_from_slice(self.src.read(from)?),
                Mem::Shared => {
                    let r = unit_range("tile", from, unit, self.shared.len())?;
                    if !self.fresh[r.start / unit] {
                        let (bx, by) = self.block;
                        return Err(SimError::StaleShared {
                            bx,
                            by,
                            index: from,
                        });
                    }
                    value[..unit].copy_from_slice(&self.shared[r]);
                }
                Mem::Dst => {
                    return Err(SimError::OutOfBounds {
                        mem: "dst (read)",
                        index: from,
                        len: 0,
                    })
                }
            }
            regs.push(value);
        }
        if mv.transpose {
            let g = &kernel.spec.geometry;
            let (elem, per) = (g.elem_bytes as usize, g.vec as usize);
            regs = if g.form == Form::Interleave {
                interleave_block(&regs, elem, per)
            } else {
                transpose_block(&regs, elem, per)
            };
        }
        let mut written = 0;
        for (k, value) in units.zip(regs.iter()) {
            env.set(Var::K, i64::from(k));
            let to = bound.to.eval(env)?;
            match mv.to.mem {
                Mem::Shared => {
                    let r = unit_range("tile", to, unit, self.shared.len())?;
                    self.fresh[r.start / unit] = true;
                    self.shared[r].copy_from_slice(&value[..unit]);
                }
                Mem::Dst => {
                    let r = unit_range("dst", to, unit, self.dst.len())?;
                    let w = &mut self.writes[r.start / unit];
                    *w = w.saturating_add(1);
                    written += 1;
                    self.dst[r].copy_from_slice(&value[..unit]);
                }
                Mem::Src => {
                    return Err(SimError::OutOfBounds {
                        mem: "src (write)",
                        index: to,
                        len: 0,
                    })
                }
            }
        }
        self.regs = regs;
        Ok(written)
    }
}
