//! The bank analysis of a whole kernel: every shared store and load, every warp of
//! a block, every iteration of `j` and `k`, evaluated from the kernel's own index
//! expressions.
//!
//! The analysis runs an interior tile (or chunk) of a large matrix, with lanes
//! switched off where the kernel's guards say so: edge tiles only switch more lanes
//! off, which never adds wavefronts in either model. Parameters that move shared
//! addresses are tried at every value that matters: a `skew` kernel's `dst_ld` and
//! `dst_off` at every residue modulo the sector, a narrow kernel's narrow side at
//! every width from 1 to 32.
//!
//! ```
//! use bankfree_gen::{Kernel, Model, Strategy, TransposeSpec};
//! let k = Kernel::build(TransposeSpec::new(32, 4, Strategy::None)?)?;
//! let r = k.analyze(Model::Hopper);
//! assert!(!r.conflict_free);
//! assert_eq!(r.instructions[1].wavefronts, 32); // the transposed read is 32-way
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

use crate::check::thin::{executions, Exec};
use crate::hw::bank::{self, Access, Model};
use crate::ir::expr::{Env, Var};
use crate::ir::tape::{GuardTape, Tape};
use crate::kernel::geometry::{Form, MAX_NARROW};
use crate::kernel::layout::Layout;
use crate::kernel::moves::{Mem, Move, Place};
use crate::kernel::spec::TransposeSpec;
use crate::kernel::Kernel;
use crate::memo::Memo;
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

/// The analysis of a kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub model: Model,
    /// No shared instruction ever takes more than its ideal.
    pub conflict_free: bool,
    pub instructions: Vec<Instruction>,
    /// Addresses that could not be evaluated (a generator bug; never expected).
    pub errors: Vec<String>,
}

impl Report {
    /// The instruction with the highest conflict degree, if any conflicts.
    pub fn worst_conflict(&self) -> Option<&Instruction> {
        self.instructions
            .iter()
            .filter(|i| i.wavefronts > i.ideal)
            .max_by(|a, b| a.degree().total_cmp(&b.degree()))
    }

    /// One line: `conflict-free` or the worst conflict.
    pub fn verdict(&self) -> String {
        if let Some(e) = self.errors.first() {
            return format!("not analyzable: {e}");
        }
        if self.instructions.is_empty() {
            return "conflict-free (no shared memory)".into();
        }
        match self.worst_conflict() {
            None => "conflict-free".into(),
            Some(i) => format!(
                "{}-way bank conflict on the shared {} `{}` ({} wavefronts, ideal {})",
                fmt_degree(i.degree()),
                i.kind,
                i.access,
                i.wavefronts,
                i.ideal
            ),
        }
    }
}

fn fmt_degree(d: f64) -> String {
    if d.fract() == 0.0 {
        format!("{d:.0}")
    } else {
        format!("{d:.2}")
    }
}

impl Kernel {
    /// The bank analysis of every shared instruction ([`analyze`]). A kernel is a
    /// function of its spec and layout, so each (spec, layout, model) is analyzed
    /// once per process (the attribute asks for the same kernels many times in one
    /// crate).
    pub fn analyze(&self, model: Model) -> Report {
        static REPORTS: Memo<(TransposeSpec, Layout, Model), Report> = Memo::new(1 << 16);
        let key = (self.spec, self.layout, model);
        REPORTS
            .get_or_insert_with(&key, || analyze(self, model))
            .as_ref()
            .clone()
    }
}

impl Kernel {
    /// Whether the kernel is conflict-free under `model` ([`conflict_free`]), once
    /// per (spec, layout, model) and process.
    pub fn conflict_free(&self, model: Model) -> bool {
        static VERDICTS: Memo<(TransposeSpec, Layout, Model), bool> = Memo::new(1 << 16);
        *VERDICTS.get_or_insert_with(&(self.spec, self.layout, model), || {
            conflict_free(self, model)
        })
    }
}

/// Analyzes every shared access of `kernel` under `model`.
pub fn analyze(kernel: &Kernel, model: Model) -> Report {
    analyze_with(kernel, model, true, false)
}

/// Whether `kernel` is conflict-free under `model`: [`analyze`]'s
/// `conflict_free`, found faster where it is `false` (the walk stops at the first
/// conflicting access, which is what a layout search meets on each candidate it
/// rejects).
pub fn conflict_free(kernel: &Kernel, model: Model) -> bool {
    analyze_with(kernel, model, true, true).conflict_free
}

/// [`analyze`], with `shortcut = false` evaluating every `k` even where it only
/// shifts the lanes together (the tests compare the two), and with
/// `first_conflict` stopping at the first conflicting access (the report is then
/// partial; its `conflict_free` is exact).
fn analyze_with(kernel: &Kernel, model: Model, shortcut: bool, first_conflict: bool) -> Report {
    if let Some(t) = kernel.thin() {
        return staged_report(executions(kernel, t), model);
    }
    if let Some(q) = kernel.squat() {
        return staged_report(crate::check::squat::executions(kernel, q), model);
    }
    let envs = envs(kernel);
    let mut errors = Vec::new();
    let mut instructions = Vec::new();
    // A realign kernel's write reads a second word of each column.
    let next: Vec<Move> = kernel
        .realign()
        .and_then(|r| {
            let mut mv = kernel.moves.last()?.clone();
            mv.from = Place {
                mem: Mem::Shared,
                index: r.next.clone(),
            };
            Some(mv)
        })
        .into_iter()
        .collect();
    'moves: for mv in kernel.moves.iter().chain(&next) {
        for (kind, place) in [("store", &mv.to), ("load", &mv.from)] {
            if place.mem == Mem::Shared {
                let op = Op {
                    kernel,
                    model,
                    shortcut,
                    first_conflict,
                    mv,
                    kind,
                    place,
                };
                let inst = op.instruction(&envs, &mut errors);
                let conflict =
                    !errors.is_empty() || inst.as_ref().is_some_and(|i| i.wavefronts > i.ideal);
                instructions.extend(inst);
                if first_conflict && conflict {
                    break 'moves;
                }
            }
        }
    }
    let conflict_free = errors.is_empty()
        && instructions
            .iter()
            .all(|i| i.total_wavefronts <= i.total_ideal && i.wavefronts <= i.ideal);
    Report {
        model,
        conflict_free,
        instructions,
        errors,
    }
}

/// A `thin` or `squat` kernel's report: its two instructions' executions
/// ([`crate::check::thin::executions`], [`crate::check::squat::executions`])
/// summed.
fn staged_report(execs: Vec<Exec<'_>>, model: Model) -> Report {
    let mut errors = Vec::new();
    let mut instructions: Vec<Instruction> = Vec::new();
    for e in execs {
        let access = format!("tile[{}]", e.index.c());
        let acc = e
            .addrs
            .and_then(|a| bank::analyze(model, e.width, &a).map_err(|x| x.to_string()));
        let acc = match acc {
            Ok(acc) => acc,
            Err(x) => {
                errors.push(format!("`{access}`: {x}"));
                continue;
            }
        };
        let [warp, j, k] = e.at;
        let at = At { warp, j, k };
        match instructions.iter_mut().find(|i| i.kind == e.kind) {
            Some(i) => i.add(at, acc, 1),
            None => instructions.push(Instruction::first(e.kind, access, e.width, at, acc)),
        }
    }
    let conflict_free = errors.is_empty() && instructions.iter().all(|i| i.wavefronts <= i.ideal);
    Report {
        model,
        conflict_free,
        instructions,
        errors,
    }
}

/// A parameter set, with the move's guard and the place's index bound to it.
type Base<'a> = (&'a Env, &'a (GuardTape, Tape));

/// One shared instruction of a kernel: the shared side of one move.
struct Op<'a> {
    kernel: &'a Kernel,
    model: Model,
    /// Whether to count `k = 0`'s access for every `k` where that is exact.
    shortcut: bool,
    /// Whether to stop at the first access that conflicts.
    first_conflict: bool,
    mv: &'a Move,
    kind: &'static str,
    place: &'a Place,
}

impl Op<'_> {
    /// The instruction's worst case and totals over every parameter set, warp and
    /// iteration of `j` and `k`, in that order (the first worst case is kept).
    fn instruction(&self, envs: &[Env], errors: &mut Vec<String>) -> Option<Instruction> {
        let g = &self.kernel.spec.geometry;
        let warps = g.threads().div_ceil(32);
        let (iters, words) = (self.mv.iters, self.kernel.words);
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
            for k in 0..words {
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
    fn same_for_every_k(&self) -> bool {
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
    fn first(kind: &'static str, access: String, width: u32, at: At, acc: Access) -> Instruction {
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
    fn add(&mut self, at: At, acc: Access, n: u64) {
        self.add_more(n, &acc);
        if acc.wavefronts > self.wavefronts {
            self.wavefronts = acc.wavefronts;
            self.ideal = acc.ideal;
            self.worst_at = at;
            self.worst = acc;
        }
    }
}

/// The parameter sets the analysis runs under (see the module docs): a large
/// matrix whose middle tile (or chunk) the block moves.
fn envs(kernel: &Kernel) -> Vec<Env> {
    let g = kernel.spec.geometry;
    let dense = |rows: u64, cols: u64, dst_ld_extra: u64, dst_off: u64| {
        let mut env = Env::default();
        let set = |env: &mut Env, var, value: u64| env.set(var, value as i64);
        set(&mut env, Var::Rows, rows);
        set(&mut env, Var::Cols, cols);
        set(&mut env, Var::SrcLd, cols);
        set(&mut env, Var::DstLd, rows + dst_ld_extra);
        set(&mut env, Var::SrcBatchStride, rows * cols);
        set(&mut env, Var::DstBatchStride, (rows + dst_ld_extra) * cols);
        set(&mut env, Var::DstOff, dst_off);
        set(&mut env, Var::Batches, 1);
        let ntiles = kernel.ntiles.eval(&env).unwrap_or(0);
        env.set(Var::Tile, ntiles / 2 + 1);
        env
    };
    let square = 64 * u64::from(g.tile * g.vec);
    let long = 64 * u64::from(g.chunk_elems());
    match g.form {
        // A realign kernel's shared indices do not depend on the destination.
        Form::Tile | Form::Realign => vec![dense(square, square, 0, 0)],
        Form::Skew => {
            let s = u64::from(g.sector_elems());
            (0..s)
                .flat_map(|ld| (0..s).map(move |off| (ld, off)))
                .map(|(ld, off)| dense(square, square, ld, off))
                .collect()
        }
        // A packed tall kernel's window shifts with its destination row's address
        // modulo the word, the same for a warp's lanes (a warp's words lie in one
        // row): every pointer residue gives every warp every shift.
        Form::Tall => {
            let w = u64::from(g.word_shift().max(1));
            (1..=MAX_NARROW)
                .flat_map(|n| (0..w).map(move |off| dense(long, n, 0, off)))
                .collect()
        }
        Form::Wide => (1..=MAX_NARROW).map(|n| dense(n, long, 0, 0)).collect(),
        // No shared memory: one set, for the report's sake.
        Form::Small | Form::Strip | Form::Copy => vec![dense(8, square, 0, 0)],
        // A thin or squat kernel's analysis has its own sets (`check::thin`,
        // `check::squat`).
        Form::Thin | Form::Squat => Vec::new(),
        Form::Planar => vec![dense(long, 3, 0, 0)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::layout::swizzle_candidates;
    use crate::kernel::spec::Strategy;

    #[test]
    fn counting_k_once_reports_what_evaluating_every_k_does() {
        let mut shortcut_taken = 0;
        // Kernels found conflicting, and conflict-free.
        let mut verdicts = [0; 2];
        for (e, form, tile) in [
            (8, Form::Tile, 32),
            (12, Form::Tile, 32),
            (64, Form::Tile, 16),
            (20, Form::Tall, 32),
            (12, Form::Wide, 32),
            (16, Form::Skew, 32),
        ] {
            {
                let Ok(spec) =
                    TransposeSpec::new(tile, e, Strategy::None).and_then(|s| s.with_form(form))
                else {
                    continue; // a form may refuse an element size
                };
                let mut layouts = vec![Layout::Pad(0), Layout::Pad(1)];
                if form == Form::Tile {
                    layouts.extend([Layout::Rotate, Layout::Xor(swizzle_candidates(tile)[0])]);
                }
                for layout in layouts {
                    let k = Kernel::assemble(spec, layout);
                    let every = analyze_with(&k, Model::Hopper, false, false);
                    assert_eq!(
                        analyze_with(&k, Model::Hopper, true, false),
                        every,
                        "{spec:?} {layout}"
                    );
                    // Stopping at the first conflict gives the same verdict.
                    assert_eq!(conflict_free(&k, Model::Hopper), every.conflict_free);
                    verdicts[usize::from(every.conflict_free)] += 1;
                    for mv in &k.moves {
                        for place in [&mv.from, &mv.to] {
                            let op = Op {
                                kernel: &k,
                                model: Model::Hopper,
                                shortcut: true,
                                first_conflict: false,
                                mv,
                                kind: "",
                                place,
                            };
                            if place.mem == Mem::Shared && k.words > 1 {
                                // Every multi-word instruction of these kernels qualifies.
                                assert!(op.same_for_every_k(), "{spec:?} {layout} {}", place.c());
                                shortcut_taken += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(shortcut_taken >= 24, "{shortcut_taken}");
        assert!(verdicts.iter().all(|&n| n >= 4), "{verdicts:?}");
    }
}
