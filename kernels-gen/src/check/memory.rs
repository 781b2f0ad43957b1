//! The memory of one simulated run of a kernel that moves 32-bit words (the
//! `realign` and `thin` forms): the buffers, the shared words and which of them
//! the tile wrote, the writes per destination element, and the checks every
//! access makes (bounds, vector alignment for the source pointer, guards an
//! unchecked body leaves out).

use crate::check::walk::{check_writes, walk, Grid, SimError, Stats};
use crate::ir::expr::{Env, Var};
use crate::ir::guard::Guard;
use crate::ir::shape::Shape;
use crate::ir::tape::GuardTape;
use crate::kernel::Kernel;

/// The buffers and counters of one simulated run.
pub(crate) struct State<'a> {
    pub(crate) src: &'a [u8],
    pub(crate) dst: &'a mut [u8],
    pub(crate) shared: Vec<u32>,
    pub(crate) fresh: Vec<bool>,
    /// Writes per destination element.
    pub(crate) writes: Vec<u8>,
    pub(crate) eb: usize,
    pub(crate) src_off: i64,
    pub(crate) dst_off: i64,
    pub(crate) block: (u64, u64),
    /// The tile is run by the body without bounds checks.
    pub(crate) inside: bool,
}

impl<'a> State<'a> {
    /// The buffers of a run of `kernel` (its shared memory as words), with the
    /// pointer phases `env` holds.
    pub(crate) fn new(kernel: &Kernel, (src, dst): (&'a [u8], &'a mut [u8]), env: &Env) -> Self {
        let eb = kernel.spec.geometry.elem_bytes as usize;
        let words = kernel.shared_units() as usize;
        State {
            src,
            writes: vec![0; dst.len() / eb],
            dst,
            shared: vec![0; words],
            fresh: vec![false; words],
            eb,
            src_off: env.get(Var::SrcOff),
            dst_off: env.get(Var::DstOff),
            block: (0, 0),
            inside: false,
        }
    }

    /// A shared word this tile wrote (a stale one is a failed run).
    pub(crate) fn word(&self, index: i64) -> Result<u32, SimError> {
        let i = self.shared_index(index)?;
        if !self.fresh[i] {
            let (bx, by) = self.block;
            return Err(SimError::StaleShared { bx, by, index });
        }
        Ok(self.shared[i])
    }

    /// Bytes `n` from element `index` of a buffer of `len` bytes.
    pub(crate) fn bytes(
        mem: &'static str,
        index: i64,
        eb: usize,
        n: usize,
        len: usize,
    ) -> Result<std::ops::Range<usize>, SimError> {
        match usize::try_from(index) {
            Ok(i) if i * eb + n <= len => Ok(i * eb..i * eb + n),
            _ => Err(SimError::OutOfBounds {
                mem,
                index,
                len: (len / eb) as u64,
            }),
        }
    }

    pub(crate) fn element(&self, index: i64) -> Result<u32, SimError> {
        let r = Self::bytes("src", index, self.eb, self.eb, self.src.len())?;
        Ok(self.src[r]
            .iter()
            .rev()
            .fold(0, |v, &b| (v << 8) | u32::from(b)))
    }

    /// The 4 words of the 16 bytes from element `index`, which must start a
    /// 16-byte vector of the source pointer.
    pub(crate) fn vector(&self, index: i64) -> Result<[u32; 4], SimError> {
        aligned(index, self.src_off, 16 / self.eb as i64)?;
        let r = Self::bytes("src", index, self.eb, 16, self.src.len())?;
        let b = &self.src[r];
        Ok(std::array::from_fn(|q| {
            u32::from_le_bytes([b[4 * q], b[4 * q + 1], b[4 * q + 2], b[4 * q + 3]])
        }))
    }

    /// The 32-bit word of the `n` elements from element `index`, which must
    /// start a word of the source pointer.
    pub(crate) fn src_word(&self, index: i64, n: i64) -> Result<u32, SimError> {
        aligned(index, self.src_off, n)?;
        let r = Self::bytes("src", index, self.eb, 4, self.src.len())?;
        let b = &self.src[r];
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// That destination element `index` starts an `n`-element vector of the
    /// destination pointer.
    pub(crate) fn dst_aligned(&self, index: i64, n: i64) -> Result<(), SimError> {
        aligned(index, self.dst_off, n)
    }

    /// Stores the low `n` elements of `value` from destination element `index`.
    pub(crate) fn store(&mut self, index: i64, value: u32, n: usize) -> Result<u64, SimError> {
        let r = Self::bytes("dst", index, self.eb, n * self.eb, self.dst.len())?;
        let start = r.start / self.eb;
        self.dst[r].copy_from_slice(&value.to_le_bytes()[..n * self.eb]);
        for w in &mut self.writes[start..start + n] {
            *w = w.saturating_add(1);
        }
        Ok(n as u64)
    }

    /// Whether a guard holds; in a tile run by the body without bounds checks
    /// it must, since that body leaves it out.
    pub(crate) fn holds(
        &self,
        guard: &GuardTape,
        what: &'static str,
        env: &Env,
    ) -> Result<bool, SimError> {
        let ok = guard.eval(env)?;
        if self.inside && !ok {
            let (bx, by) = self.block;
            return Err(SimError::Interior {
                bx,
                by,
                guard: what,
            });
        }
        Ok(ok)
    }

    pub(crate) fn shared_index(&self, index: i64) -> Result<usize, SimError> {
        usize::try_from(index)
            .ok()
            .filter(|&i| i < self.shared.len())
            .ok_or(SimError::OutOfBounds {
                mem: "tile",
                index,
                len: self.shared.len() as u64,
            })
    }
}

/// That a kernel of one width ([`Kernel::with_width`]) runs a call of that
/// width `n` (a `thin` kernel's columns, a `squat` kernel's rows).
pub(crate) fn same_width(kernel: &Kernel, n: u64) -> Result<(), SimError> {
    match kernel.width() {
        Some(w) if u64::from(w) != n => Err(SimError::Width {
            kernel: w,
            shape: n,
        }),
        _ => Ok(()),
    }
}

/// That element `index` of a buffer whose pointer is `off` elements past an
/// `n`-element boundary starts an `n`-element vector.
fn aligned(index: i64, off: i64, n: i64) -> Result<(), SimError> {
    if (index + off).rem_euclid(n) == 0 {
        Ok(())
    } else {
        Err(SimError::Misaligned { index, n: n as u32 })
    }
}

/// Runs `tile` over every tile of a run of `kernel` that the grid walks
/// ([`walk`]), each with fresh shared memory and the `interior` guard (a tile
/// run by the body without bounds checks) evaluated, then checks that each
/// destination element was written once; counts the interior tiles.
pub(crate) fn run_tiles(
    kernel: &Kernel,
    shape: &Shape,
    buffers: (&[u8], &mut [u8]),
    (grid, ntiles): (Grid, u64),
    env: &mut Env,
    interior: &Guard,
    mut tile: impl FnMut(&mut State<'_>, &mut Env) -> Result<(u64, u64), SimError>,
) -> Result<Stats, SimError> {
    let mut s = State::new(kernel, buffers, env);
    let mut inside = 0;
    let mut stats = walk(kernel, shape, grid, env, ntiles, |env, block| {
        s.block = block;
        s.inside = interior.eval(env)?;
        inside += u64::from(s.inside);
        s.fresh.iter_mut().for_each(|f| *f = false);
        tile(&mut s, env)
    })?;
    let eb = kernel.spec.geometry.elem_bytes;
    check_writes(kernel, shape, &s.writes, stats.unit_writes, eb)?;
    stats.interior = inside;
    Ok(stats)
}
