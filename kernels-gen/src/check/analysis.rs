//! The bank analysis of a whole kernel: every shared store and load, every warp of
//! a block, every iteration of `j` and `k`, evaluated from the kernel's own index
//! expressions.
//!
//! The analysis runs an interior tile (or chunk) of a large matrix, with lanes
//! switched off where the kernel's guards say so: edge tiles only switch more lanes
//! off, which never adds wavefronts in either model. Parameters that move shared
//! addresses are tried at every value that matters: a `skew` kernel's `dst_ld` and
//! `dst_off` at every residue modulo the sector, a `realign` kernel's at every
//! residue of each beside the other's first, a narrow kernel's narrow side at
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

use crate::check::instruction::Op;
pub use crate::check::instruction::{At, Instruction};
use crate::check::thin::{executions, Exec};
use crate::hw::bank::{self, Model};
use crate::ir::expr::{Env, Var};
use crate::kernel::geometry::{Form, INTERLEAVE_MAX_ROWS, MAX_NARROW};
use crate::kernel::layout::Layout;
use crate::kernel::moves::{Mem, Move, Place};
use crate::kernel::spec::TransposeSpec;
use crate::kernel::Kernel;
use crate::memo::Memo;
use serde::Serialize;

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
    // A realign kernel's write reads four more words of each column.
    let next: Vec<Move> = kernel
        .realign()
        .zip(kernel.moves.last())
        .map(|(r, last)| {
            r.next
                .iter()
                .map(|index| Move {
                    from: Place {
                        mem: Mem::Shared,
                        index: index.clone(),
                    },
                    ..last.clone()
                })
                .collect()
        })
        .unwrap_or_default();
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
        Form::Tile | Form::Wordvec => vec![dense(square, square, 0, 0)],
        // A realign kernel rotates each column's words by its destination
        // row's phase in the sector: every residue of `dst_ld`, and of
        // `dst_off` beside it, gives the tile's columns every mix of phases.
        Form::Realign => {
            let s = u64::from(g.sector_elems());
            (0..s)
                .map(|ld| (ld, 0))
                .chain((1..s).map(|off| (1, off)))
                .map(|(ld, off)| dense(square, square, ld, off))
                .collect()
        }
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
        // Every height: each has its own stage mask and store stride.
        Form::Interleave => (1..=INTERLEAVE_MAX_ROWS)
            .map(|rows| dense(rows, 64 * u64::from(g.threads() * g.vec), 0, 0))
            .collect(),
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
