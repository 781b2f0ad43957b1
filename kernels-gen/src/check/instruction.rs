//! One shared-memory instruction of a kernel, and its evaluation: every lane's
//! address at every parameter set, warp and iteration of `j` and `k`, from the
//! kernel's own index expressions, counted into its worst case and totals.

use crate::hw::bank::{self, Access, Model};
use crate::ir::expr::{Env, Var};
use crate::ir::tape::{GuardTape, Tape};
use crate::kernel::moves::{Move, Place};
use crate::kernel::Kernel;
use serde::Serialize;

/// Where the worst case of an instruction happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct At {
    pub warp: u32,
    pub j: u32,
    pub k: u32,
}

/// One shared-memory instruction of the source (unrolled over `j` and `k` on the GPU).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Instruction {
    /// `store` (st.shared) or `load` (ld.shared).
    pub kind: &'static str,
    /// The C statement's shared side, e.g. `tile[tx * 33 + (ty + j * 8)]`.
    pub access: String,
    /// Access width in bytes.
    pub width: u32,
    /// Worst case over warps and iterations.
    pub wavefronts: u32,
    /// Ideal wavefronts at that worst case.
    pub ideal: u32,
    /// Warp-instructions executed per block.
    pub executions: u64,
    pub total_wavefronts: u64,
    pub total_ideal: u64,
    /// Where the worst case happens, and its lane map.
    pub worst_at: At,
    pub worst: Access,
}

impl Instruction {
    /// Worst wavefronts over ideal: 1 means conflict-free, 32 a 32-way conflict.
    pub fn degree(&self) -> f64 {
        f64::from(self.wavefronts) / f64::from(self.ideal.max(1))
    }

    /// Average wavefronts per executed instruction (what ncu reports).
    pub fn mean_wavefronts(&self) -> f64 {
        self.total_wavefronts as f64 / self.executions.max(1) as f64
    }
}

/// A parameter set, with the move's guard and the place's index bound to it.
type Base<'a> = (&'a Env, &'a (GuardTape, Tape));

/// One shared instruction of a kernel: the shared side of one move.
pub(crate) struct Op<'a> {
    pub kernel: &'a Kernel,
    pub model: Model,
    /// Whether to count `k = 0`'s access for every `k` where that is exact.
    pub shortcut: bool,
    /// Whether to stop at the first access that conflicts.
    pub first_conflict: bool,
    pub mv: &'a Move,
    pub kind: &'static str,
    pub place: &'a Place,
}

impl Op<'_> {
    /// The instruction's worst case and totals over every parameter set, warp and
    /// iteration of `j` and `k`, in that order (the first worst case is kept).
    pub(crate) fn instruction(
        &self,
        envs: &[Env],
        errors: &mut Vec<String>,
    ) -> Option<Instruction> {
        let g = &self.kernel.spec.geometry;
        let warps = g.threads().div_ceil(32);
        let iters = self.mv.iters;
        // Where `k` only moves every lane by the same whole number of 32-bit words,
        // each `k` costs what `k = 0` costs (banks and words shift together), so
        // that access is computed once and counted for every `k`: the report is
        // the same, the first worst case being at `k = 0` anyway.
        let same_for_every_k = self.shortcut && self.same_for_every_k();
        // Per parameter set, what stays fixed for the block is evaluated once.
        // Sets under which the guard and index bind to the same per-thread tapes
        // cost the same: each is run once and counted for all of them (a `skew`
        // kernel's store does not depend on `dst_ld`, its load does).
        let mut bound: Vec<(Env, (GuardTape, Tape), u64)> = Vec::new();
        for env in envs {
            let tapes = (
                GuardTape::per_thread(&self.mv.guard, env),
                Tape::per_thread(&self.place.index, env),
            );
            let pure = tapes.0.reads_only(&Var::PER_THREAD) && tapes.1.reads_only(&Var::PER_THREAD);
            match bound.iter_mut().find(|b| pure && b.1 == tapes) {
                Some(same) => same.2 += 1,
                None => bound.push((env.clone(), tapes, 1)),
            }
        }
        let runs = bound.iter().flat_map(|(env, tapes, n)| {
            (0..warps).flat_map(move |warp| (0..iters).map(move |j| ((env, tapes), *n, warp, j)))
        });
        let mut inst: Option<Instruction> = None;
        for (base, n, warp, j) in runs {
            let mut same: Option<Access> = None;
            for k in 0..self.kernel.step_units(self.mv, base.0) {
                let at = At { warp, j, k };
                let acc = match &same {
                    Some(acc) => acc.clone(),
                    None => {
                        let Some(acc) = self.warp(base, at, errors) else {
                            continue;
                        };
                        if same_for_every_k {
                            same = Some(acc.clone());
                        }
                        acc
                    }
                };
                let conflict = acc.wavefronts > acc.ideal;
                match &mut inst {
                    None => {
                        let mut first = self.first(at, acc.clone());
                        first.add_more(n - 1, &acc);
                        inst = Some(first);
                    }
                    Some(i) => i.add(at, acc, n),
                }
                if self.first_conflict && (conflict || !errors.is_empty()) {
                    return inst;
                }
            }
        }
        inst
    }

    /// Whether every `k` moves the lanes by the same whole number of 32-bit words.
    pub(crate) fn same_for_every_k(&self) -> bool {
        self.kernel.words > 1
            && self.kernel.unit.bytes().is_multiple_of(4)
            && !self.mv.guard.uses(Var::K)
            && self
                .place
                .index
                .shifts_uniformly(Var::K, &[Var::Tx, Var::Ty, Var::Lane])
    }

    /// What one warp's execution at `at` costs, or `None` (with the reason in
    /// `errors`) where an address cannot be evaluated.
    fn warp(&self, base: Base<'_>, at: At, errors: &mut Vec<String>) -> Option<Access> {
        let addrs = self.lane_addresses(base, at, errors);
        let width = self.kernel.unit.bytes();
        match bank::analyze(self.model, width, &addrs) {
            Ok(acc) => Some(acc),
            Err(e) => {
                errors.push(format!("`{}`: {e}", self.place.c()));
                None
            }
        }
    }

    /// Each lane's byte address, `None` for lanes the guard switches off (or past
    /// the block's last thread).
    fn lane_addresses(
        &self,
        (base, (guard, index)): Base<'_>,
        at: At,
        errors: &mut Vec<String>,
    ) -> Vec<Option<u64>> {
        let g = &self.kernel.spec.geometry;
        let unit = u64::from(self.kernel.unit.bytes());
        let At { warp, j, k } = at;
        let mut addrs: Vec<Option<u64>> = vec![None; 32];
        for (lane, slot) in addrs.iter_mut().enumerate() {
            let tid = warp * 32 + lane as u32;
            if tid >= g.threads() {
                continue;
            }
            let mut env = base.clone();
            env.set(Var::Tx, i64::from(tid % g.tile));
            env.set(Var::Ty, i64::from(tid / g.tile));
            env.set(Var::J, i64::from(j));
            env.set(Var::K, i64::from(k));
            match guard.eval(&env) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => {
                    errors.push(format!("`{}`: {e}", self.mv.guard.c()));
                    continue;
                }
            }
            match index.eval(&env).map(u64::try_from) {
                Ok(Ok(i)) => *slot = Some(i * unit),
                _ => errors.push(format!(
                    "`{}` has no valid address for warp {warp} lane {lane} j {j} k {k}",
                    self.place.c()
                )),
            }
        }
        addrs
    }

    /// The instruction as its first execution found it.
    fn first(&self, at: At, acc: Access) -> Instruction {
        let width = self.kernel.unit.bytes();
        Instruction::first(self.kind, self.place.c(), width, at, acc)
    }
}

impl Instruction {
    /// An instruction of `width`-byte accesses as its first execution, at `at`,
    /// found it.
    pub(crate) fn first(
        kind: &'static str,
        access: String,
        width: u32,
        at: At,
        acc: Access,
    ) -> Instruction {
        Instruction {
            kind,
            access,
            width,
            wavefronts: acc.wavefronts,
            ideal: acc.ideal,
            executions: 1,
            total_wavefronts: u64::from(acc.wavefronts),
            total_ideal: u64::from(acc.ideal),
            worst_at: at,
            worst: acc,
        }
    }

    /// Adds `n` executions of `acc` to the totals.
    fn add_more(&mut self, n: u64, acc: &Access) {
        self.executions += n;
        self.total_wavefronts += n * u64::from(acc.wavefronts);
        self.total_ideal += n * u64::from(acc.ideal);
    }

    /// Counts `n` more executions of `acc`, keeping the first worst case.
    pub(crate) fn add(&mut self, at: At, acc: Access, n: u64) {
        self.add_more(n, &acc);
        if acc.wavefronts > self.wavefronts {
            self.wavefronts = acc.wavefronts;
            self.ideal = acc.ideal;
            self.worst_at = at;
            self.worst = acc;
        }
    }
}
