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
use crate::kernel::launch::launch;
use crate::kernel::Kernel;
use step::{Bound, Buf, Memory};

mod step;

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
