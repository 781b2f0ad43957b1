//! The simulator's memories for the kernels that run by their moves: the
//! source, destination and shared buffers of one run, and one thread's step of
//! a move (a vector gathered and stored whole, or unit by unit).

use crate::check::reference::{interleave_block, transpose_block};
use crate::check::walk::SimError;
use crate::ir::expr::{Env, Var};
use crate::ir::tape::{GuardTape, Tape};
use crate::kernel::geometry::Form;
use crate::kernel::moves::{Mem, Move};
use crate::kernel::Kernel;

/// A read-only buffer of `unit`-byte units, named in its errors.
pub(super) struct Buf<'a> {
    pub(super) name: &'static str,
    pub(super) bytes: &'a [u8],
    pub(super) unit: usize,
}

/// The bytes of unit `index` of a `len`-byte buffer, or the out-of-bounds error.
pub(super) fn unit_range(
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

/// A move's guard and indices with the tile's fixed variables bound, flattened.
pub(super) struct Bound {
    pub(super) guard: GuardTape,
    /// A packed move's whole-vector guard.
    pub(super) full: Option<GuardTape>,
    pub(super) from: Tape,
    pub(super) to: Tape,
}

/// The simulated memories of one run.
pub(super) struct Memory<'a> {
    pub(super) src: Buf<'a>,
    pub(super) dst: &'a mut [u8],
    pub(super) shared: Vec<u8>,
    /// Shared units written by the current tile.
    pub(super) fresh: Vec<bool>,
    /// Writes per destination unit.
    pub(super) writes: Vec<u8>,
    /// One thread's units in flight.
    pub(super) regs: Vec<[u8; 16]>,
    pub(super) unit: usize,
    pub(super) block: (u64, u64),
    /// The destination pointer's address in units (vector stores align with it).
    pub(super) dst_off: i64,
}

impl Memory<'_> {
    /// One thread's step of a packed move: its `words` units gathered and stored
    /// as one vector (which must be aligned and contiguous; or each alone where
    /// the pack is not `whole`) where `full` holds,
    /// else unit by unit where the move's guard holds for that unit; returns the
    /// units written and the vectors stored whole (0 or 1).
    pub(super) fn step_packed(
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
    pub(super) fn step(
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
