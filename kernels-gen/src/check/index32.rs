//! 32-bit index math, and the proof per call that it computes what 64-bit math does.
//!
//! Every kernel is emitted once with its index type `bf_index` a typedef: `unsigned`
//! by default, `unsigned long long` when the source is compiled with
//! [`INDEX64_DEFINE`] defined (its entry point is then named with [`INDEX64_SUFFIX`]).
//! 32-bit math takes about half the instructions of 64-bit math, which is what the
//! issue-bound kernels (narrow chunks, scalar tiles) are limited by.
//!
//! The launcher runs the 32-bit build when [`proven`] shows, for that
//! call, that it computes every address the 64-bit build computes (and the kernel is
//! one of those it makes faster, [`pays`]):
//! * `+ - * <<` agree modulo 2^32 whatever the intermediate values (two's-complement
//!   arithmetic is a ring), and `& | ^` agree on the low 32 bits;
//! * so only the values that enter a division, a remainder, a right shift,
//!   `__umulhi`, `__ffs` or a comparison must be exact. Interval arithmetic over the
//!   call's ranges (threads, tiles, batches, parameters) bounds each expression's
//!   exact value, and those values must lie in `[0, 2^32)`;
//! * every address a kernel uses lies in its buffer (the simulator checks that), so
//!   buffers below 2^32 units make the final indices exact too.
//!
//! The simulator evaluates a call in the 32-bit build's arithmetic whenever the
//! launcher would run it ([`runs`]), so every simulated shape of
//! those kernels also tests the argument; a test runs both builds of every kernel.
//!
//! ```
//! use bankfree_gen::{check::index32::proven, Form, Geometry, Shape};
//! let g = Geometry { form: Form::Tile, tile: 32, block_rows: 8, elem_bytes: 4, vec: 1, split: false };
//! assert!(proven(&g, &Shape::new(8192, 8192)));
//! assert!(!proven(&g, &Shape::new(1 << 17, 1 << 16))); // 2^33 elements: 64-bit
//! ```

use crate::check::bound::{bound, exact, Ranges, Wide, U32};
use crate::ir::expr::{Env, Expr, Var, SLOTS};
use crate::ir::guard::Less;
use crate::ir::shape::Shape;
use crate::kernel::geometry::{Form, Geometry, Quotients};
use crate::kernel::launch::{MAX_GRID_X, MAX_GRID_Y};
use crate::kernel::layout::Layout;
use crate::kernel::order::TileOrder;
use crate::kernel::spec::{Strategy, TransposeSpec};
use crate::kernel::thin::{stage_iters, thin_subtiles};
use crate::kernel::Kernel;
use crate::memo::Memo;

/// The macro that selects the 64-bit build of a generated source.
pub const INDEX64_DEFINE: &str = "BANKFREE_INDEX64";
/// Appended to the entry point's name in the 64-bit build.
pub const INDEX64_SUFFIX: &str = "_i64";

/// What the check walks for one geometry: every expression the kernel evaluates,
/// and which of them are compared (and so must be exact).
struct Checks {
    ntiles: Expr,
    walked: Vec<Expr>,
    compared: Vec<Less>,
    max_iters: u32,
    words: u32,
}

fn checks(g: &Geometry, outer: u8, fold: [u8; 2]) -> Checks {
    let spec = TransposeSpec {
        geometry: *g,
        strategy: Strategy::None,
    };
    // The global side does not depend on the shared layout; the shared side's
    // values are tile-local (the analyzer and simulator cover every layout). A
    // small kernel's wider quotients ([`Kernel::with_quotients`]) take the plain
    // ones' operands, which must be exact alike, so this proof covers them (an exact
    // quotient's sum of its operand and that operand's high half stays below
    // 2^32, because the fit keeps the operands below 2^31).
    // A tile kernel's blocks may take its tiles in either order: both are walked
    // (the same tile count, loop condition and loops).
    let twins: Vec<Kernel> = TileOrder::ALL
        .into_iter()
        .filter(|o| o.takes(g))
        .map(|o| Kernel::assemble_outer(spec, Layout::Pad(0), outer, fold, Quotients::Narrow, o))
        .collect();
    let k = &twins[0];
    let mut walked = Vec::new();
    let mut compared = vec![k.more.clone()];
    for k in &twins {
        walked.extend(
            k.kernel_lets
                .iter()
                .chain(&k.batch_lets)
                .chain(&k.tile_lets)
                .cloned(),
        );
        if let Some(r) = k.realign() {
            walked.extend(r.lane.iter().cloned());
            walked.extend([&r.row, &r.at, &r.phase, &r.elem, &r.part_to].map(Expr::clone));
            walked.extend(r.next.iter().cloned());
            walked.extend(r.vecs.iter().cloned());
            let tail = &r.tail_move;
            walked.extend(tail.lets.iter().cloned());
            walked.extend([tail.from.index.clone(), tail.to.index.clone()]);
            for g in [
                &r.inside,
                &r.fast,
                &r.col,
                &r.part,
                &r.interior,
                &r.tail,
                &tail.guard,
            ] {
                compared.extend(g.0.iter().cloned());
            }
        }
        if let Some(t) = k.thin() {
            walked.extend(
                [
                    &t.r0,
                    &t.phase,
                    &t.start,
                    &t.vectors,
                    &t.vector,
                    &t.vector_at,
                    &t.load,
                    &t.elem,
                    &t.slot,
                    &t.turn,
                    &t.first_word,
                    &t.block,
                    &t.row_bytes,
                    &t.word,
                    &t.read,
                    &t.row_shift,
                    &t.dst_row,
                    &t.ts,
                    &t.word_end,
                    &t.shift,
                    &t.to,
                    &t.part_to,
                ]
                .map(Expr::clone),
            );
            walked.extend(t.first_step.iter().cloned());
            for g in [
                &t.staged,
                &t.whole,
                &t.elem_in,
                &t.stores,
                &t.full,
                &t.part,
                &t.interior,
            ] {
                compared.extend(g.0.iter().cloned());
            }
        }
        if let Some(q) = k.squat() {
            walked.extend(
                [
                    &q.block,
                    &q.word_at,
                    &q.row_phase,
                    &q.row_shift,
                    &q.load,
                    &q.elem,
                    &q.dst_phase,
                    &q.shift,
                    &q.tile_start,
                    &q.phase,
                    &q.word,
                    &q.put,
                    &q.vector,
                    &q.vector_at,
                    &q.to,
                    &q.part_to,
                    &q.first_word,
                    &q.slot,
                    &q.turn,
                ]
                .map(Expr::clone),
            );
            for g in [
                &q.whole,
                &q.elem_in,
                &q.stores,
                &q.staged,
                &q.full,
                &q.part,
                &q.interior,
                &q.full_in,
                &q.middle,
            ] {
                compared.extend(g.0.iter().cloned());
            }
        }
        if let Some(i) = k.interior() {
            compared.extend(i.guard.0.iter().cloned());
        }
        for mv in &k.moves {
            walked.extend(mv.lets.iter().cloned());
            walked.extend([mv.from.index.clone(), mv.to.index.clone()]);
            compared.extend(mv.guard.0.iter().cloned());
            compared.extend(mv.pack.iter().flat_map(|p| p.full.0.iter().cloned()));
        }
    }
    Checks {
        ntiles: k.ntiles.clone(),
        walked,
        compared,
        max_iters: k.moves.iter().map(|m| m.iters).max().unwrap_or(1),
        words: k.words,
    }
}

/// Whether the launcher runs the 32-bit build for `shape`: where it is exact
/// ([`proven`]) and the faster build ([`pays`]).
pub fn runs(g: &Geometry, shape: &Shape) -> bool {
    pays(g) && proven(g, shape)
}

/// Whether the 32-bit build is the faster one. It is for every kernel but the
/// square tiles of word-array elements (12 and 16 bytes): their loops unroll too
/// little to stage their loads, and their 64-bit build ran as fast or faster on the
/// H100 (docs/design.md).
pub fn pays(g: &Geometry) -> bool {
    !(g.form == Form::Tile && g.elem_bytes > 8)
}

/// Whether the 32-bit build of a kernel of geometry `g` computes every address of
/// a call over `shape` exactly (see the module docs); the 64-bit build runs the
/// rest. `shape` must be one the kernel fits. Memoized: the launcher asks on every
/// launch.
pub fn proven(g: &Geometry, shape: &Shape) -> bool {
    static PROOFS: Memo<(Geometry, Shape), bool> = Memo::new(1 << 12);
    *PROOFS.get_or_insert_with(&(*g, *shape), || prove(g, shape).is_ok())
}

fn prove(g: &Geometry, shape: &Shape) -> Result<(), Wide> {
    static CHECKS: Memo<(Geometry, u8, [u8; 2]), Checks> = Memo::new(1 << 12);
    let (params, n) = shape.params();
    if params[..n].iter().any(|&p| u32::try_from(p).is_err()) {
        return Err(Wide);
    }
    // Buffers in units (elements, words of a word array, or vectors; a realign
    // kernel indexes elements).
    let unit = u128::from(if g.realigns() || g.stages_words() {
        g.elem_bytes
    } else {
        g.unit_bytes()
    });
    let elem = u128::from(g.elem_bytes);
    for elems in [shape.src_elems(), shape.dst_elems()] {
        let elems = u128::from(elems.map_err(|_| Wide)?);
        if (elems * elem).div_ceil(unit) >= U32 as u128 {
            return Err(Wide);
        }
    }
    let key = (*g, shape.outer.n, shape.fold.counts());
    let c = CHECKS.get_or_insert_with(&key, || checks(g, key.1, key.2));
    let mut env = Env::default();
    env.set(Var::Rows, shape.rows as i64);
    env.set(Var::Cols, shape.cols as i64);
    let ntiles = i128::from(c.ntiles.eval(&env).map_err(|_| Wide)?.max(1));
    // The loops' counters run to their last value plus the grid's side.
    let last_t = ntiles - 1 + ntiles.min(i128::from(MAX_GRID_X));
    let batch = i128::from(shape.batch.max(1));
    let last_b = batch - 1 + batch.min(i128::from(MAX_GRID_Y));
    if last_t >= U32 || last_b >= U32 {
        return Err(Wide);
    }
    let p = |x: u64| (i128::from(x), i128::from(x));
    let mut vals = [(0, 0); SLOTS];
    for (v, range) in Var::ALL.iter().zip(vals.iter_mut()) {
        *range = match v {
            Var::Lane => (0, 31),
            Var::Tx => (0, i128::from(g.tile) - 1),
            Var::Ty => (0, i128::from(g.block_rows) - 1),
            // An interleave kernel's register step runs over the rows.
            Var::K if g.form == Form::Interleave => (0, i128::from(shape.rows.max(1)) - 1),
            _ if g.stages_words() && matches!(v, Var::J | Var::K | Var::Row) => {
                widths_range(*v, g, shape, &c)
            }
            Var::J => (0, i128::from(c.max_iters) - 1),
            Var::K => (0, i128::from(c.words) - 1),
            Var::Row => (0, i128::from(g.vec) - 1),
            Var::Sub if g.thins() => {
                let cols = u32::try_from(shape.cols).unwrap_or(u32::MAX);
                (0, i128::from(thin_subtiles(cols).max(1)) - 1)
            }
            Var::Sub => (0, 0),
            Var::Tile => (0, last_t),
            Var::Batch => (0, last_b),
            Var::Batches => p(shape.batch),
            Var::Rows => p(shape.rows),
            Var::Cols => p(shape.cols),
            Var::SrcLd => p(shape.src_ld),
            Var::DstLd => p(shape.dst_ld),
            Var::SrcBatchStride => p(shape.passed_batch_strides().0),
            Var::DstBatchStride => p(shape.passed_batch_strides().1),
            Var::DstOff | Var::SrcOff => (0, U32 - 1),
            Var::Ext(_) | Var::SrcStride(_) | Var::DstStride(_) => p(shape.outer_value(*v)),
            Var::RowExt(_)
            | Var::RowSrc(_)
            | Var::RowDst(_)
            | Var::ColExt(_)
            | Var::ColSrc(_)
            | Var::ColDst(_) => p(shape.fold_value(*v)),
        };
    }
    let r = Ranges(vals);
    for e in &c.walked {
        bound(e, &r)?;
    }
    for Less(a, b) in &c.compared {
        exact(bound(a, &r)?)?;
        exact(bound(b, &r)?)?;
    }
    Ok(())
}

/// The loop counters' ranges of a `thin` or `squat` kernel over `shape`.
fn widths_range(v: Var, g: &Geometry, shape: &Shape, c: &Checks) -> (i128, i128) {
    let (vec, per) = (i128::from(g.vec), i128::from(16 / g.elem_bytes.max(1)));
    let steps = i128::from(c.max_iters.max(1));
    let top = match (g.squats(), v) {
        (false, Var::K) => i128::from(shape.cols).max(per),
        (false, Var::J) => {
            let stage = u32::try_from(shape.cols).map_or(0, |c| stage_iters(g, c));
            ((i128::from(shape.cols) + vec - 1) / vec + 1 + steps).max(i128::from(stage))
        }
        (true, Var::K) => per,
        (true, Var::J) => i128::from(shape.rows).max(steps),
        (true, Var::Row) => i128::from(shape.rows),
        _ => vec,
    };
    (0, top - 1)
}

#[cfg(test)]
mod tests;
