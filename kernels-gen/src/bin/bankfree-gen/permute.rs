//! `bankfree-gen permute`: the plan of an N-d permute (merged axes, kernel, launch,
//! bank verdict), or with `gen` the CUDA C of its kernel.

use bankfree_gen::ir::expr::Var;
use bankfree_gen::ir::shape::Shape;
use bankfree_gen::kernel::launch::launch;
use bankfree_gen::kernel::squat::SQUAT_BLOCKS_PER_SM;
use bankfree_gen::select::permute::{pick, plan, plan_kernels, Kind, Permute, Plan};
use bankfree_gen::select::split::thin_split;
use bankfree_gen::{emit, Kernel, Model, Strategy, ELEM_SIZES};
use clap::{Args, Subcommand};
use serde_json::json;
use std::fmt::Write as _;

#[derive(Args)]
pub struct PermuteArgs {
    /// The source's extents, outermost first, e.g. `64,256,56,56`.
    #[arg(long, value_delimiter = ',', required = true)]
    dims: Vec<u64>,
    /// Output axis `i` is input axis `perm[i]`, e.g. `0,2,3,1` (NCHW -> NHWC).
    #[arg(long, value_delimiter = ',', required = true)]
    perm: Vec<usize>,
    #[arg(long, default_value_t = 4, help = format!("Element size: {ELEM_SIZES}"))]
    elem_bytes: u32,
    /// Source strides in elements, one per source axis (default: row-major).
    #[arg(long, value_delimiter = ',')]
    src_strides: Option<Vec<u64>>,
    /// Destination strides in elements, one per output axis (default: row-major).
    #[arg(long, value_delimiter = ',')]
    dst_strides: Option<Vec<u64>>,
    /// pad or swizzle (the tile layouts a transpose plan uses).
    #[arg(long, default_value = "swizzle")]
    strategy: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    #[command(subcommand)]
    action: Option<Action>,
}

#[derive(Subcommand)]
enum Action {
    /// Print the CUDA C of the kernel the plan runs.
    Gen,
}

/// The planned call and the kernel it runs (none for an empty plan).
fn planned(a: &PermuteArgs) -> Result<(Permute, Plan, Option<Kernel>, Vec<String>), String> {
    let strategy: Strategy = a.strategy.parse().map_err(|e| format!("--strategy: {e}"))?;
    if !matches!(strategy, Strategy::Xor | Strategy::Pad(None)) {
        return Err(format!(
            "--strategy {}: a permute takes pad or swizzle",
            a.strategy
        ));
    }
    let p = Permute {
        dims: a.dims.clone(),
        perm: a.perm.clone(),
        src_strides: a.src_strides.clone(),
        dst_strides: a.dst_strides.clone(),
        elem_bytes: a.elem_bytes,
    };
    let pl = plan(&p).map_err(|e| e.to_string())?;
    let kernels = plan_kernels(&pl, strategy).map_err(|e| e.to_string())?;
    let names = kernels.iter().map(Kernel::entry_name).collect();
    let chosen = pick(&kernels, &pl.shape).cloned();
    if chosen.is_none() && pl.kind != Kind::Empty {
        return Err(format!(
            "no kernel of the plan runs this shape ({:?}); please report it",
            pl.shape
        ));
    }
    Ok((p, pl, chosen, names))
}

/// The most SMs asked about when finding where a call takes the split twin.
const MAX_SMS: u32 = 1024;

/// What the runtime launches of `k` for a call of shape `s`: a `thin` (`squat`)
/// kernel's entry point for the call's width (height), else `k`; and for a
/// `thin` call, the split twin with the fewest SMs from which the runtime runs
/// it instead ([`thin_split`] asked of each SM count, so the rule is written once).
fn launched(k: &Kernel, s: &Shape) -> (Kernel, Option<(u32, Kernel)>) {
    let one = k
        .spec()
        .geometry
        .width_of(s)
        .and_then(|w| k.with_width(u32::try_from(w).ok()?).ok())
        .unwrap_or_else(|| k.clone());
    let split = (1..=MAX_SMS)
        .find(|&n| thin_split(&one, s.batch, s.rows, n))
        .and_then(|n| Some((n, one.with_split().ok()?)));
    (one, split)
}

pub fn run(o: &mut String, a: &PermuteArgs) -> Result<(), String> {
    let (p, pl, chosen, names) = planned(a)?;
    if let Some(Action::Gen) = a.action {
        match &chosen {
            Some(k) => o.push_str(&emit(k)),
            None => {
                let _ = writeln!(o, "// dims {:?} hold no element: no kernel runs", p.dims);
            }
        }
        return Ok(());
    }
    let s = &pl.shape;
    let runs = chosen.as_ref().map(|k| launched(k, s));
    let report = chosen.as_ref().map(|k| {
        let r = k.analyze(Model::Hopper);
        let l = launch(
            &k.spec().geometry,
            k.shared_bytes(),
            s.batch,
            s.rows,
            s.cols,
        );
        (k, r, l)
    });
    if a.json {
        // The launch's arguments after `src` and `dst`, in the kernel's order.
        let (args, n_args) = s.params();
        let v = json!({
            "dims": p.dims,
            "perm": p.perm,
            "elem_bytes": p.elem_bytes,
            "plan_elem_bytes": pl.elem_bytes,
            "unit": pl.unit,
            "axes": pl.axes,
            "plan": pl.kind,
            "shape": pl.shape,
            "args": &args[..n_args],
            "kernel": chosen.as_ref().map_or("none".to_string(), Kernel::entry_name),
            "entry": runs.as_ref().map(|(one, _)| one.entry_name()),
            "split": runs.as_ref().and_then(|(_, sp)| sp.as_ref()).map(|(n, k)| json!({
                "entry": k.entry_name(), "from_sms": n,
            })),
            "describe": chosen.as_ref().map(Kernel::describe),
            "candidates": names,
            "launch": report.as_ref().map(|(_, _, l)| json!({
                "grid": l.grid, "block": l.block, "dynamic_shared_bytes": l.dynamic_shared_bytes,
            })),
            "shared_bytes": chosen.as_ref().map_or(0, Kernel::shared_bytes),
            "conflict_free": report.as_ref().is_none_or(|(_, r, _)| r.conflict_free),
            "verdict": report.as_ref().map_or("no shared memory access".to_string(), |(_, r, _)| r.verdict()),
        });
        let _ = writeln!(o, "{v:#}");
        return Ok(());
    }
    let _ = writeln!(
        o,
        "permute of dims {:?} by perm {:?}, {}-byte elements",
        p.dims, p.perm, p.elem_bytes
    );
    if pl.unit > 1 {
        let _ = writeln!(
            o,
            "widened: the innermost axis stays in place, so each block of {} elements moves as one {}-byte element (where both pointers start on {} bytes; else as {}-byte elements)",
            pl.unit,
            pl.elem_bytes,
            pl.align(),
            p.elem_bytes
        );
    }
    let _ = writeln!(
        o,
        "merged axes, source order (extent: source stride, destination stride{}):",
        if pl.unit > 1 { ", in blocks" } else { "" }
    );
    for x in &pl.axes {
        let _ = writeln!(o, "  {:>10}: {:>12} {:>12}", x.ext, x.src, x.dst);
    }
    let Some((k, r, l)) = report else {
        let _ = writeln!(
            o,
            "plan: empty (an extent is 0): nothing to move, no kernel"
        );
        return Ok(());
    };
    let axes = if s.batch > 1 { 1 + s.outer.n } else { 0 };
    if pl.kind == Kind::Gather {
        let _ = writeln!(
            o,
            "plan: gather of runs of {} (the destination's innermost axis, source stride {}), batch {} over {axes} axes",
            s.rows, s.src_ld, s.batch
        );
    } else {
        let what = match pl.kind {
            Kind::Copy => "copy of rows",
            _ => "transpose",
        };
        let _ = writeln!(
            o,
            "plan: {what} {} x {} (src_ld {}, dst_ld {}), batch {} over {axes} axes",
            s.rows, s.cols, s.src_ld, s.dst_ld, s.batch
        );
    }
    let _ = writeln!(o, "kernel: {}: {}", k.entry_name(), k.describe());
    if let Some((one, split)) = &runs {
        if one.entry_name() != k.entry_name() {
            let side = if one.spec().geometry.width_var() == Some(Var::Rows) {
                "height"
            } else {
                "width"
            };
            let _ = writeln!(o, "entry point: {} (this call's {side})", one.entry_name());
        }
        if let Some((n, twin)) = split {
            let _ = writeln!(
                o,
                "on a GPU of {n} SMs or more (an H100 has 132): {}, whose tiles are half as many rows (fewer of this call's tiles than twice the blocks the GPU holds at once; BANKFREE_THIN_SPLIT=0 keeps the one above)",
                twin.entry_name()
            );
        }
    }
    let _ = writeln!(
        o,
        "launch: grid {:?}, block {:?}, {} bytes of dynamic shared memory",
        l.grid, l.block, l.dynamic_shared_bytes
    );
    if k.spec().geometry.squats() {
        let _ = writeln!(
            o,
            "  (the runtime caps grid.x at {SQUAT_BLOCKS_PER_SM} blocks an SM, {} on an H100's 132; the tile loop strides over the rest)",
            SQUAT_BLOCKS_PER_SM * 132
        );
    }
    let _ = writeln!(o, "banks ({}): {}", Model::Hopper, r.verdict());
    Ok(())
}
